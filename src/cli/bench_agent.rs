//! `hecate bench agent`: streaming overhead of an external-agent turn through Hecate
//! (engine, store, event bus) against Hecate's ACP client talking to the same fixture
//! agent directly, plus probe time per available catalog agent.

use super::bench::fixture_bin;
use crate::adapters::acp::catalog::BUILTIN_MANIFESTS;
use crate::adapters::acp::{
    AcpOptions, AgentConnection, Catalog, LaunchSource, LaunchSpec, LauncherOptions, ProbeOptions,
    TurnIo, probe,
};
use crate::domain::event::{EngineEvent, RuntimeEvent};
use crate::domain::ids::{RunId, SessionId};
use crate::domain::message::ContentBlock;
use crate::domain::permission::FixedAnswer;
use crate::domain::session::RuntimeKind;
use crate::engine::bus::Received;
use crate::engine::{CreateSession, Engine, EngineConfig, Runtimes, SendMessage};
use crate::runtimes::external::ExternalRuntime;
use crate::runtimes::model::ModelRuntime;
use crate::store::{SqliteStore, Store};
use serde_json::json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// One measured turn: total wall time and time to the first text chunk.
struct Timing {
    total_ms: f64,
    first_chunk_ms: f64,
    chunks: usize,
}

fn write_script(dir: &Path, chunks: usize) -> anyhow::Result<PathBuf> {
    let path = dir.join(format!("stream-{chunks}.json"));
    let script = json!({"turns": [{"actions": [{"stream": {"count": chunks, "text": "x"}}]}]});
    std::fs::write(&path, script.to_string())?;
    Ok(path)
}

async fn direct(bin: &Path, script: &Path, ws: &Path) -> anyhow::Result<Timing> {
    let spec = LaunchSpec {
        program: bin.to_path_buf(),
        args: vec![
            "acp-agent".into(),
            "--script".into(),
            script.display().to_string(),
        ],
        source: LaunchSource::Direct,
    };
    let env: Vec<(String, String)> = std::env::vars().filter(|(k, _)| k == "PATH").collect();
    let conn = AgentConnection::start(&spec, ws, env, AcpOptions::default()).await?;
    let native = conn.new_session(ws, &[]).await?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let started = Instant::now();
    let counter = tokio::spawn(async move {
        let mut first = None;
        let mut n = 0usize;
        while let Some(ev) = rx.recv().await {
            if let RuntimeEvent::TextDelta { .. } = ev {
                first.get_or_insert_with(|| started.elapsed());
                n += 1;
            }
        }
        (first, n)
    });
    let io = TurnIo {
        events: tx,
        asker: Arc::new(FixedAnswer { allow: true }),
        session_id: SessionId::from("bench"),
        run_id: RunId::from("bench"),
        cancel: CancellationToken::new(),
        delegate: None,
    };
    conn.prompt(
        &native.id,
        vec![ContentBlock::Text { text: "go".into() }],
        io,
    )
    .await?;
    let total = started.elapsed();
    conn.shutdown().await;
    let (first, chunks) = counter.await?;
    Ok(Timing {
        total_ms: total.as_secs_f64() * 1e3,
        first_chunk_ms: first.unwrap_or(total).as_secs_f64() * 1e3,
        chunks,
    })
}

async fn through_hecate(engine: &Engine, adapter: &str, ws: &Path) -> anyhow::Result<Timing> {
    let s = engine
        .create_session(
            "bench",
            CreateSession {
                runtime_kind: Some(RuntimeKind::ExternalAgent),
                adapter_id: Some(adapter.into()),
                workspace: Some(ws.display().to_string()),
                ..Default::default()
            },
        )
        .await?;
    let started = Instant::now();
    let mut turn = engine
        .send_message(
            "bench",
            &s.id,
            SendMessage {
                content: "go".into(),
                ..Default::default()
            },
        )
        .await?;
    let mut first = None;
    let mut chunks = 0usize;
    while let Some(r) = turn.events.recv().await {
        match r {
            Received::Event(EngineEvent::Runtime {
                update: RuntimeEvent::TextDelta { .. },
                ..
            }) => {
                first.get_or_insert_with(|| started.elapsed());
                chunks += 1;
            }
            Received::Event(EngineEvent::TurnFinished { .. }) => break,
            _ => {}
        }
    }
    let result = turn.wait().await;
    let total = started.elapsed();
    if let Some(e) = result.error {
        return Err(e.into());
    }
    engine.close_session("bench", &s.id).await?;
    Ok(Timing {
        total_ms: total.as_secs_f64() * 1e3,
        first_chunk_ms: first.unwrap_or(total).as_secs_f64() * 1e3,
        chunks,
    })
}

/// Runs the benchmark and returns its report.
pub async fn bench(
    chunk_counts: &[usize],
    repeats: usize,
    fixture: Option<&Path>,
    with_probes: bool,
) -> anyhow::Result<serde_json::Value> {
    let bin = fixture_bin(fixture)?;
    let dir = std::env::temp_dir().join(format!(
        "hecate-bench-agent-{}",
        uuid::Uuid::new_v4().simple()
    ));
    let ws = dir.join("ws");
    std::fs::create_dir_all(&ws)?;
    let mut results = Vec::new();
    for &n in chunk_counts {
        let script = write_script(&dir, n)?;
        let manifest = format!(
            "id = \"bench\"\nname = \"bench\"\ncommand = {:?}\nargs = [\"acp-agent\", \"--script\", {:?}]\n",
            bin.display().to_string(),
            script.display().to_string()
        );
        let user = dir.join(format!("adapters-{n}"));
        std::fs::create_dir_all(&user)?;
        std::fs::write(user.join("bench.toml"), manifest)?;
        let (catalog, errors) = Catalog::load(&[], Some(&user));
        anyhow::ensure!(errors.is_empty(), "bench manifest: {errors:?}");
        let env: HashMap<String, String> = std::env::vars().filter(|(k, _)| k == "PATH").collect();
        let external = ExternalRuntime::new(
            catalog,
            LauncherOptions::default(),
            env,
            HashMap::new(),
            AcpOptions::default(),
        );
        let store: Arc<dyn Store> =
            Arc::new(SqliteStore::open(&dir.join(format!("bench-{n}.db")))?);
        let (engine, _) = Engine::start(
            store,
            Runtimes {
                model: ModelRuntime::default(),
                external: Some(external),
            },
            EngineConfig::default(),
        )
        .await?;
        // Warm both paths (process start-up, page cache).
        direct(&bin, &script, &ws).await?;
        through_hecate(&engine, "bench", &ws).await?;
        let (mut d_total, mut h_total, mut d_first, mut h_first) = (vec![], vec![], vec![], vec![]);
        for _ in 0..repeats {
            let d = direct(&bin, &script, &ws).await?;
            let h = through_hecate(&engine, "bench", &ws).await?;
            anyhow::ensure!(
                d.chunks == n && h.chunks == n,
                "lost chunks: direct {} hecate {}",
                d.chunks,
                h.chunks
            );
            d_total.push(d.total_ms);
            h_total.push(h.total_ms);
            d_first.push(d.first_chunk_ms);
            h_first.push(h.first_chunk_ms);
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(|a, b| a.total_cmp(b));
            v[v.len() / 2]
        };
        let (dt, ht, df, hf) = (
            med(&mut d_total),
            med(&mut h_total),
            med(&mut d_first),
            med(&mut h_first),
        );
        results.push(json!({
            "chunks": n,
            "repeats": repeats,
            "direct_turn_ms_median": dt,
            "hecate_turn_ms_median": ht,
            "wall_ratio_hecate_vs_direct": ht / dt.max(1e-9),
            "added_us_per_update": (ht - dt) * 1e3 / n as f64,
            "direct_first_chunk_ms_median": df,
            "hecate_first_chunk_ms_median": hf,
            "note": "the Hecate path includes session creation, persisting the prompt, the run events (batched) and the answer",
        }));
    }
    let mut probes = Vec::new();
    if with_probes {
        let (catalog, _) = Catalog::load(BUILTIN_MANIFESTS, None);
        let env: HashMap<String, String> = std::env::vars().collect();
        for entry in catalog.entries() {
            let r = probe(
                &entry.manifest,
                &ProbeOptions {
                    launcher: LauncherOptions::default(),
                    acp: AcpOptions::default(),
                    base_env: env.clone(),
                    extra_env: Vec::new(),
                },
            )
            .await;
            probes.push(json!({"adapter_id": r.adapter_id, "status": r.status, "stage": r.stage, "duration_ms": r.duration_ms}));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    Ok(json!({"benchmark": "agent_streaming", "results": results, "probes": probes}))
}
