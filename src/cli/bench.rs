//! `hecate bench store|model`: measurements that report ratios against the direct
//! path in the same run. No thresholds: figures go into the docs.

use super::Cli;
use super::output::{print_resource, print_text};
use crate::adapters::providers::pricing::Pricebook;
use crate::adapters::providers::{ProviderClient, ProviderConfig, ProviderKind};
use crate::domain::ids::SegmentId;
use crate::domain::message::{NewMessage, Role, RuntimeSnapshot};
use crate::domain::session::{RuntimeKind, Session};
use crate::engine::{CreateSession, Engine, EngineConfig, SendMessage};
use crate::runtimes::model::ModelRuntime;
use crate::store::{MessageStore, SessionStore, SqliteStore, Store};
use futures::StreamExt;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The `hecate-fixtures` binary the benchmarks start their fake peers from:
/// `explicit` (a `--fixture-bin` option) or the one next to this `hecate`.
pub(crate) fn fixture_bin(
    explicit: Option<&std::path::Path>,
) -> anyhow::Result<std::path::PathBuf> {
    if let Some(p) = explicit {
        return Ok(p.to_path_buf());
    }
    let me = std::env::current_exe()?;
    let sibling = me.with_file_name("hecate-fixtures");
    anyhow::ensure!(
        sibling.exists(),
        "hecate-fixtures not found next to {}: build it (cargo build --bin hecate-fixtures) \
         or pass --fixture-bin",
        me.display()
    );
    Ok(sibling)
}

/// The `bench` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum BenchCommand {
    /// Append throughput and last-50 load latency across session sizes.
    Store {
        /// Session sizes to load from (messages).
        #[arg(long, value_delimiter = ',', default_value = "1000,100000,1000000")]
        sizes: Vec<usize>,
        /// Single-message appends to time.
        #[arg(long, default_value_t = 2000)]
        single: usize,
        /// Messages per batch for the batched-append figure.
        #[arg(long, default_value_t = 100)]
        batch: usize,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// External-agent streaming overhead through Hecate vs Hecate's ACP client direct
    /// to the same fixture agent, time to first chunk, and probe time per agent.
    Agent {
        /// Chunks per turn.
        #[arg(long, value_delimiter = ',', default_value = "1000,10000")]
        chunks: Vec<usize>,
        /// Turns per path and size.
        #[arg(long, default_value_t = 5)]
        repeats: usize,
        /// The hecate-fixtures binary (default: next to hecate).
        #[arg(long)]
        fixture_bin: Option<std::path::PathBuf>,
        /// Also probe every catalog agent.
        #[arg(long)]
        probes: bool,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// `hecate acp` vs the direct path: cold start to `initialize` and a streamed turn.
    Acp(super::bench_acp::AcpBenchArgs),
    /// The HTTP API vs its direct paths: `GET` of a large session vs `/healthz`,
    /// `POST …/messages` vs the fixture model direct, SSE fan-out and server memory.
    Http(super::bench_http::HttpBenchArgs),
    /// Model-turn overhead of Hecate vs the same streaming request sent directly.
    Model {
        /// Base URL of an OpenAI-compatible server (e.g. the fixture model server's `/v1`).
        #[arg(long)]
        base_url: String,
        /// Model name.
        #[arg(long, default_value = "fixture-model")]
        model: String,
        /// Turns per path.
        #[arg(long, default_value_t = 200)]
        turns: usize,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

pub async fn run(_cli: &Cli, cmd: &BenchCommand) -> anyhow::Result<i32> {
    let report = match cmd {
        BenchCommand::Store {
            sizes,
            single,
            batch,
            ..
        } => {
            let (sizes, single, batch) = (sizes.clone(), *single, (*batch).max(1));
            tokio::task::spawn_blocking(move || bench_store(&sizes, single, batch)).await??
        }
        BenchCommand::Model {
            base_url,
            model,
            turns,
            ..
        } => bench_model(base_url, model, (*turns).max(1)).await?,
        BenchCommand::Acp(a) => super::bench_acp::bench(a).await?,
        BenchCommand::Http(a) => {
            let report = super::bench_http::bench(a).await?;
            if !a.json {
                print_text(&super::bench_http::table(&report))?;
                return Ok(0);
            }
            report
        }
        BenchCommand::Agent {
            chunks,
            repeats,
            fixture_bin,
            probes,
            ..
        } => {
            super::bench_agent::bench(chunks, (*repeats).max(1), fixture_bin.as_deref(), *probes)
                .await?
        }
    };
    let json = match cmd {
        BenchCommand::Store { json, .. }
        | BenchCommand::Model { json, .. }
        | BenchCommand::Agent { json, .. } => *json,
        BenchCommand::Acp(a) => a.json,
        BenchCommand::Http(a) => a.json,
    };
    if json {
        print_resource("bench", &report)?;
    } else {
        print_text(&format!("{}\n", serde_json::to_string_pretty(&report)?))?;
    }
    Ok(0)
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

fn summarize(mut samples: Vec<f64>) -> serde_json::Value {
    samples.sort_by(|a, b| a.total_cmp(b));
    json!({
        "n": samples.len(),
        "median": percentile(&samples, 0.5),
        "p99": percentile(&samples, 0.99),
        "min": samples.first().copied().unwrap_or(0.0),
    })
}

fn new_session(store: &SqliteStore) -> anyhow::Result<Session> {
    let s = Session {
        provider: Some("bench".into()),
        model: Some("bench".into()),
        ..Session::new_idle(
            "bench",
            crate::domain::ids::SessionId::generate(),
            "bench",
            RuntimeKind::Model,
        )
    };
    store.create_session(&s)?;
    Ok(s)
}

fn message(i: usize) -> NewMessage {
    let role = if i.is_multiple_of(2) {
        Role::User
    } else {
        Role::Assistant
    };
    NewMessage::text(
        role,
        format!("message {i}: a typical short chat line of about eighty bytes for the benchmark."),
        RuntimeSnapshot {
            runtime_kind: RuntimeKind::Model,
            segment_id: SegmentId::from("seg_bench"),
            provider: Some("bench".into()),
            model: Some("bench".into()),
            adapter_id: None,
        },
    )
}

fn bench_store(sizes: &[usize], single: usize, batch: usize) -> anyhow::Result<serde_json::Value> {
    let dir = tempfile_dir()?;
    let store = SqliteStore::open(&dir.join("bench.db"))?;
    let s = new_session(&store)?;
    let started = Instant::now();
    for i in 0..single {
        store.append_exchange(&s.id, vec![message(i)], None)?;
    }
    let single_rate = single as f64 / started.elapsed().as_secs_f64();
    let batched_total = (single * 10).max(batch);
    let started = Instant::now();
    let mut i = 0;
    while i < batched_total {
        let n = batch.min(batched_total - i);
        store.append_exchange(&s.id, (i..i + n).map(message).collect(), None)?;
        i += n;
    }
    let batched_rate = batched_total as f64 / started.elapsed().as_secs_f64();

    let mut loads = Vec::new();
    let mut base_median = None;
    for &size in sizes {
        let s = new_session(&store)?;
        let fill = Instant::now();
        let mut i = 0;
        while i < size {
            let n = 10_000.min(size - i);
            store.append_exchange(&s.id, (i..i + n).map(message).collect(), None)?;
            i += n;
        }
        let fill_s = fill.elapsed().as_secs_f64();
        let mut samples = Vec::new();
        for _ in 0..200 {
            let t = Instant::now();
            let got = store.last_messages(&s.id, 50)?;
            samples.push(t.elapsed().as_secs_f64() * 1e6);
            anyhow::ensure!(got.len() == 50.min(size), "loaded {} messages", got.len());
        }
        let summary = summarize(samples);
        let median = summary["median"].as_f64().unwrap_or(0.0);
        let base = *base_median.get_or_insert(median);
        loads.push(json!({
            "session_messages": size,
            "fill_seconds": fill_s,
            "load_last_50_us": summary,
            "ratio_vs_smallest": if base > 0.0 { median / base } else { 0.0 },
        }));
    }
    let health = store.health()?;
    drop(store);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(json!({
        "benchmark": "store",
        "single_append_msgs_per_s": single_rate,
        "batched_append_msgs_per_s": batched_rate,
        "batch_size": batch,
        "batched_vs_single_ratio": batched_rate / single_rate,
        "load_last_50": loads,
        "database_bytes": health.size_bytes,
    }))
}

fn tempfile_dir() -> anyhow::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("hecate-bench-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

async fn direct_turn(http: &reqwest::Client, base_url: &str, model: &str) -> anyhow::Result<usize> {
    let body = json!({
        "model": model,
        "messages": [{"role": "user", "content": "benchmark prompt"}],
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": crate::runtimes::model::DEFAULT_MAX_TOKENS,
    });
    let resp = http
        .post(format!(
            "{}/chat/completions",
            base_url.trim_end_matches('/')
        ))
        .json(&body)
        .send()
        .await?
        .error_for_status()?;
    let mut stream = eventsource_stream::Eventsource::eventsource(resp.bytes_stream());
    let mut text = 0;
    while let Some(ev) = stream.next().await {
        let ev = ev?;
        if ev.data.trim() == "[DONE]" {
            break;
        }
        let v: serde_json::Value = serde_json::from_str(&ev.data)?;
        text += v["choices"][0]["delta"]["content"]
            .as_str()
            .map(str::len)
            .unwrap_or(0);
    }
    Ok(text)
}

async fn bench_model(
    base_url: &str,
    model: &str,
    turns: usize,
) -> anyhow::Result<serde_json::Value> {
    let http = ProviderClient::default_http()?;
    let provider = ProviderConfig {
        name: "bench".into(),
        kind: ProviderKind::Openai,
        base_url: base_url.to_string(),
        api_key: None,
        models: vec![],
    };
    let runtime = ModelRuntime::new(
        vec![ProviderClient::new(http.clone(), provider)],
        Pricebook::default(),
    );
    let dir = tempfile_dir()?;
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.join("bench.db"))?);
    let (engine, _) = Engine::start(store, runtime.into(), EngineConfig::default()).await?;
    // Warm both paths.
    direct_turn(&http, base_url, model).await?;
    hecate_turn(&engine, model).await?;
    let mut direct = Vec::new();
    let mut hecate = Vec::new();
    for _ in 0..turns {
        let t = Instant::now();
        direct_turn(&http, base_url, model).await?;
        direct.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        hecate_turn(&engine, model).await?;
        hecate.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let d = summarize(direct);
    let h = summarize(hecate);
    let ratio = h["median"].as_f64().unwrap_or(0.0) / d["median"].as_f64().unwrap_or(1.0).max(1e-9);
    let added = h["median"].as_f64().unwrap_or(0.0) - d["median"].as_f64().unwrap_or(0.0);
    let _ = std::fs::remove_dir_all(&dir);
    Ok(json!({
        "benchmark": "model_turn",
        "turns": turns,
        "direct_ms": d,
        "hecate_ms": h,
        "median_ratio_hecate_vs_direct": ratio,
        "median_added_ms": added,
        "note": "Hecate path = create session + persist user message + streamed provider call + persist answer and provider call (SQLite file, WAL).",
    }))
}

async fn hecate_turn(engine: &Engine, model: &str) -> anyhow::Result<()> {
    let s = engine
        .create_session(
            "bench",
            CreateSession {
                model: Some(format!("bench/{model}")),
                ..Default::default()
            },
        )
        .await?;
    let mut turn = engine
        .send_message(
            "bench",
            &s.id,
            SendMessage {
                content: "benchmark prompt".into(),
                ..Default::default()
            },
        )
        .await?;
    let r = turn.wait().await;
    if let Some(e) = r.error {
        return Err(e.into());
    }
    tokio::time::sleep(Duration::ZERO).await;
    Ok(())
}
