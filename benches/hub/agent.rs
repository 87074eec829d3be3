//! `agent`: streaming overhead of an external-agent turn through Hecate (engine,
//! store, event bus) against Hecate's ACP client talking to the same fixture
//! agent directly, time to the first chunk, plus probe time per catalog agent.

use crate::support::{TempDir, fixture_bin};
use hecate::adapters::acp::catalog::BUILTIN_MANIFESTS;
use hecate::adapters::acp::{
    AcpOptions, AgentConnection, Catalog, LaunchSource, LaunchSpec, LauncherOptions, ProbeOptions,
    TurnIo, probe,
};
use hecate::domain::event::{EngineEvent, RuntimeEvent};
use hecate::domain::ids::{RunId, SessionId};
use hecate::domain::message::ContentBlock;
use hecate::domain::permission::FixedAnswer;
use hecate::domain::session::RuntimeKind;
use hecate::engine::bus::Received;
use hecate::engine::{CreateSession, Engine, EngineConfig, Runtimes, SendMessage};
use hecate::runtimes::external::ExternalRuntime;
use hecate::runtimes::model::ModelRuntime;
use hecate::store::{SqliteStore, Store};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Arguments of the `agent` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct AgentArgs {
    /// Chunks per turn.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
    pub chunks: Vec<usize>,
    /// Turns per path and size.
    #[arg(long, default_value_t = 5)]
    pub repeats: usize,
    /// The hecate-fixtures binary (default: the one of this build).
    #[arg(long)]
    pub fixture_bin: Option<PathBuf>,
    /// Also probe every catalog agent.
    #[arg(long)]
    pub probes: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

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

/// An engine whose external runtime knows one adapter, `bench`, that runs the
/// fixture agent with `script`; its store lives in `dir`.
async fn engine(dir: &Path, bin: &Path, script: &Path, n: usize) -> anyhow::Result<Engine> {
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
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.join(format!("bench-{n}.db")))?);
    let (engine, _) = Engine::start(
        store,
        Runtimes {
            model: ModelRuntime::default(),
            external: Some(external),
        },
        EngineConfig::default(),
    )
    .await?;
    Ok(engine)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Probes every built-in catalog agent once.
async fn probes() -> Vec<Value> {
    let (catalog, _) = Catalog::load(BUILTIN_MANIFESTS, None);
    let env: HashMap<String, String> = std::env::vars().collect();
    let mut out = Vec::new();
    for entry in catalog.entries() {
        let r = probe(
            &entry.manifest,
            &ProbeOptions {
                launcher: LauncherOptions::default(),
                acp: AcpOptions::default(),
                base_env: env.clone(),
                extra_env: Vec::new(),
                limit: hecate::adapters::acp::agent::probe::PROBE_LIMIT,
            },
        )
        .await;
        out.push(json!({"adapter_id": r.adapter_id, "status": r.status, "stage": r.stage, "duration_ms": r.duration_ms}));
    }
    out
}

/// Runs the benchmark and returns its report.
pub async fn bench(args: &AgentArgs) -> anyhow::Result<Value> {
    let bin = fixture_bin(args.fixture_bin.as_deref());
    let repeats = args.repeats.max(1);
    let dir = TempDir::new("agent")?;
    let ws = dir.path().join("ws");
    std::fs::create_dir_all(&ws)?;
    let mut results = Vec::new();
    for &n in &args.chunks {
        let script = write_script(dir.path(), n)?;
        let engine = engine(dir.path(), &bin, &script, n).await?;
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
        let (dt, ht) = (median(&mut d_total), median(&mut h_total));
        results.push(json!({
            "chunks": n,
            "repeats": repeats,
            "direct_turn_ms_median": dt,
            "hecate_turn_ms_median": ht,
            "wall_ratio_hecate_vs_direct": ht / dt.max(1e-9),
            "added_us_per_update": (ht - dt) * 1e3 / n.max(1) as f64,
            "direct_first_chunk_ms_median": median(&mut d_first),
            "hecate_first_chunk_ms_median": median(&mut h_first),
            "note": "the Hecate path includes session creation, persisting the prompt, the run events (batched) and the answer",
        }));
    }
    let probes = if args.probes {
        probes().await
    } else {
        Vec::new()
    };
    Ok(json!({"benchmark": "agent_streaming", "results": results, "probes": probes}))
}
