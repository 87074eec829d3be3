//! `model`: the overhead of a model turn through Hecate's engine (session,
//! persisted prompt, streamed provider call, persisted answer) against the same
//! streaming Chat Completions request sent straight to the server, in one run.

use crate::support::{TempDir, num, summarize};
use futures::StreamExt;
use hecate::adapters::providers::pricing::Pricebook;
use hecate::adapters::providers::{ProviderClient, ProviderConfig, ProviderKind};
use hecate::domain::ids::SessionId;
use hecate::engine::{CreateSession, Engine, EngineConfig, SendMessage};
use hecate::runtimes::model::{DEFAULT_MAX_TOKENS, ModelRuntime};
use hecate::store::{SqliteStore, Store};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;

/// Arguments of the `model` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct ModelArgs {
    /// Base URL of an OpenAI-compatible server (e.g. the fixture model server's `/v1`).
    #[arg(long)]
    pub base_url: String,
    /// Model name.
    #[arg(long, default_value = "fixture-model")]
    pub model: String,
    /// Turns per path.
    #[arg(long, default_value_t = 200)]
    pub turns: usize,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

async fn direct_turn(http: &reqwest::Client, base_url: &str, model: &str) -> anyhow::Result<usize> {
    let body = json!({
        "model": model,
        "messages": [{"role": "user", "content": "benchmark prompt"}],
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": DEFAULT_MAX_TOKENS,
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
        let v: Value = serde_json::from_str(&ev.data)?;
        text += v["choices"][0]["delta"]["content"]
            .as_str()
            .map(str::len)
            .unwrap_or(0);
    }
    Ok(text)
}

/// A fresh session for one timed turn (its creation is timed apart).
async fn new_session(engine: &Engine, model: &str) -> anyhow::Result<SessionId> {
    let s = engine
        .create_session(
            "bench",
            CreateSession {
                model: Some(format!("bench/{model}")),
                ..Default::default()
            },
        )
        .await?;
    Ok(s.id)
}

/// One model turn through the engine on session `sid`, to its recorded end.
async fn hecate_turn(engine: &Engine, sid: &SessionId) -> anyhow::Result<()> {
    let mut turn = engine
        .send_message(
            "bench",
            sid,
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
    Ok(())
}

/// Runs the benchmark and returns its report.
pub async fn bench(args: &ModelArgs) -> anyhow::Result<Value> {
    let (base_url, model, turns) = (&args.base_url, &args.model, args.turns.max(1));
    let http = ProviderClient::default_http()?;
    let provider = ProviderConfig {
        name: "bench".into(),
        kind: ProviderKind::Openai,
        base_url: base_url.clone(),
        api_key: None,
        models: vec![],
    };
    let runtime = ModelRuntime::new(
        vec![ProviderClient::new(http.clone(), provider)],
        Pricebook::default(),
    );
    let dir = TempDir::new("model")?;
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.path().join("bench.db"))?);
    let (engine, _) = Engine::start(store, runtime.into(), EngineConfig::default()).await?;
    // Warm both paths.
    direct_turn(&http, base_url, model).await?;
    let warm = new_session(&engine, model).await?;
    hecate_turn(&engine, &warm).await?;
    let mut direct = Vec::new();
    let mut hecate = Vec::new();
    let mut create = Vec::new();
    for _ in 0..turns {
        let t = Instant::now();
        direct_turn(&http, base_url, model).await?;
        direct.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        let sid = new_session(&engine, model).await?;
        create.push(t.elapsed().as_secs_f64() * 1e3);
        let t = Instant::now();
        hecate_turn(&engine, &sid).await?;
        hecate.push(t.elapsed().as_secs_f64() * 1e3);
    }
    let d = summarize(direct);
    let h = summarize(hecate);
    let c = summarize(create);
    let ratio = num(&h, "median") / num(&d, "median").max(1e-9);
    let added = num(&h, "median") - num(&d, "median");
    Ok(json!({
        "benchmark": "model_turn",
        "turns": turns,
        "direct_ms": d,
        "hecate_ms": h,
        "create_session_ms": c,
        "median_ratio_hecate_vs_direct": ratio,
        "median_added_ms": added,
        "note": "Hecate path = one turn on a new session: persist the user message (with run, lease and header, one transaction) + streamed provider call + persist answer and provider call (with run end, header and lease release, one transaction), SQLite file, WAL; creating the session is timed apart (create_session_ms).",
    }))
}
