//! `a2a`: what the A2A face adds to a turn of Hecate's agent. It starts the
//! fixture model server and the real `hecate serve`, then sends the same turns
//! (Hecate's agent on the echo fixture) two ways over loopback with keep-alive
//! connections, each loop bounded in time:
//!
//! - `POST /a2a/{agent}/message:send` (A2A's HTTP+JSON binding), one `contextId`
//!   per connection, a fresh one every `--turns-per-context` messages;
//! - `POST /hecate/v1/agent-chat/sessions/{id}/messages` on a `runtime_kind=agent`
//!   session of the same model, a fresh session as often.
//!
//! The ratio is A2A over `/hecate/v1`: both run the same engine turn, so it is
//! the cost of the A2A mapping (task registry, artifacts, the task as the answer).
//! No thresholds: the figures go into the docs.

use crate::http::{MODEL, PROVIDER, create_session_with, post_turns, prompt, start_serve};
use crate::load::{expect_ok, http_client, load, ratios, timed};
use crate::support::{TempDir, fixture_bin, fixture_model_server, num};
use anyhow::Context;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Arguments of the `a2a` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct A2aArgs {
    /// Duration of each timed request loop, in milliseconds.
    #[arg(long, default_value_t = 5000)]
    pub duration_ms: u64,
    /// Concurrent keep-alive connections in each request loop.
    #[arg(long, default_value_t = 4)]
    pub connections: usize,
    /// Messages per A2A context (and per Agent Chat session) before a connection
    /// moves to a fresh one, so both sides carry the same history.
    #[arg(long, default_value_t = 10)]
    pub turns_per_context: usize,
    /// The hecate-fixtures binary (default: the one of this build).
    #[arg(long)]
    pub fixture_bin: Option<PathBuf>,
    /// Print JSON instead of a text table.
    #[arg(long)]
    pub json: bool,
}

/// The A2A agent name of Hecate's agent on the benchmark's model, as one path
/// segment.
fn agent_segment() -> String {
    format!("hecate:{PROVIDER}%2F{MODEL}")
}

/// An A2A user message in `context`, working in `workspace`.
fn a2a_message(text: String, context: &str, workspace: &Path) -> Value {
    json!({"message": {
        "messageId": uuid::Uuid::new_v4().to_string(),
        "role": "ROLE_USER",
        "contextId": context,
        "parts": [{"text": text}],
        "metadata": {"workspace": workspace},
    }})
}

/// Checks once that each path answers a completed turn, so the loops time turns
/// and not refusals.
async fn warm_up(
    http: &reqwest::Client,
    base: &str,
    workspace: &Path,
    session: &str,
) -> anyhow::Result<()> {
    let body = expect_ok(
        http.post(format!("{base}/a2a/{}/message:send", agent_segment()))
            .json(&a2a_message(prompt(0), "warm-up", workspace)),
    )
    .await?;
    let v: Value = serde_json::from_slice(&body)?;
    anyhow::ensure!(
        v["task"]["status"]["state"] == "TASK_STATE_COMPLETED",
        "the A2A warm-up turn did not complete: {v}"
    );
    let body = expect_ok(
        http.post(format!(
            "{base}/hecate/v1/agent-chat/sessions/{session}/messages"
        ))
        .json(&json!({"content": prompt(0)})),
    )
    .await?;
    let v: Value = serde_json::from_slice(&body)?;
    let runs = v["data"]["runs"]
        .as_array()
        .context("the answer has no runs")?;
    anyhow::ensure!(
        runs.last().is_some_and(|r| r["status"] == "completed"),
        "the Agent Chat warm-up turn did not complete: {v}"
    );
    Ok(())
}

/// Runs the benchmark and returns its report.
pub async fn bench(args: &A2aArgs) -> anyhow::Result<Value> {
    let fixture_path = fixture_bin(args.fixture_bin.as_deref());
    let dir = TempDir::new("a2a")?;
    std::fs::create_dir_all(dir.path().join("data"))?;
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace)?;
    let fixture = fixture_model_server(&fixture_path).await?;
    let fixture_v1 = format!("{}/v1", fixture.base);
    let serve = start_serve(dir.path(), &fixture_v1, &[]).await?;
    let base = serve.base.clone();
    let conns = args.connections.max(1);
    let duration = Duration::from_millis(args.duration_ms.max(1));
    let per = args.turns_per_context.max(1);
    let http = http_client(conns)?;
    let session_body = json!({"runtime_kind": "agent", "workspace": workspace});
    let warm = create_session_with(&http, &base, session_body.clone()).await?;
    warm_up(&http, &base, &workspace, &warm).await?;

    let a2a = {
        let (http, url, ws) = (
            http.clone(),
            format!("{base}/a2a/{}/message:send", agent_segment()),
            workspace.clone(),
        );
        load(
            conns,
            duration,
            Arc::new(move |w, n| {
                let context = format!("bench-{w}-{}", n / per);
                let req = http.post(&url).json(&a2a_message(prompt(n), &context, &ws));
                Box::pin(timed(req))
            }),
        )
        .await?
    };
    let agent_chat = post_turns(&http, &base, conns, duration, per, session_body).await?;
    serve.process.stop().await;
    fixture.process.stop().await;
    Ok(json!({
        "benchmark": "a2a",
        "build": if cfg!(debug_assertions) { "debug" } else { "release" },
        "parameters": {
            "duration_ms": args.duration_ms,
            "connections": conns,
            "turns_per_context": per,
        },
        "a2a_send": a2a,
        "agent_chat_message": agent_chat,
        "ratio_a2a_vs_agent_chat": ratios(&a2a, &agent_chat),
        "note": "the same turn of Hecate's agent on the echo fixture: A2A message:send vs \
                 POST …/messages on a runtime_kind=agent session",
    }))
}

/// Renders the report as a text table.
pub fn table(report: &Value) -> String {
    let mut out = format!(
        "a2a benchmark ({} build, {} connections, {} ms per loop)\n\n{:<44} {:>10} {:>10} {:>10}\n",
        report["build"].as_str().unwrap_or("?"),
        report["parameters"]["connections"],
        report["parameters"]["duration_ms"],
        "request loop",
        "req/s",
        "p50 ms",
        "p99 ms"
    );
    for (name, v) in [
        ("A2A message:send", &report["a2a_send"]),
        (
            "POST …/messages, agent session (baseline)",
            &report["agent_chat_message"],
        ),
    ] {
        out.push_str(&format!(
            "{:<44} {:>10.0} {:>10.3} {:>10.3}\n",
            name,
            num(v, "requests_per_s"),
            num(v, "p50_ms"),
            num(v, "p99_ms"),
        ));
    }
    let r = &report["ratio_a2a_vs_agent_chat"];
    out.push_str(&format!(
        "{:<44} {:>10.3} {:>10.2} {:>10.2}  (ratios)\n",
        "A2A / Agent Chat",
        num(r, "requests_per_s"),
        num(r, "p50"),
        num(r, "p99"),
    ));
    out
}
