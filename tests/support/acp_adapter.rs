//! Helpers for the ACP adapter tests: launch the fixture agent, run turns, and
//! read the events they produced.

use hecate::adapters::acp::{
    AcpError, AcpOptions, AgentConnection, LaunchSource, LaunchSpec, PromptOutcome, StopReason,
    TurnIo,
};
use hecate::adapters::process::env::{current_env, sanitized_env};
use hecate::domain::event::RuntimeEvent;
use hecate::domain::ids::{RunId, SessionId};
use hecate::domain::permission::{FixedAnswer, PermissionAsker};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The fixture binary.
pub fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_hecate-fixtures"))
}

/// A launch spec for `hecate-fixtures acp-agent <args>`.
pub fn spec(args: &[&str]) -> LaunchSpec {
    let mut all = vec!["acp-agent".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    LaunchSpec {
        program: fixture(),
        args: all,
        source: LaunchSource::Direct,
    }
}

/// Options with a short cancel grace (tests never assert on timing).
pub fn options() -> AcpOptions {
    AcpOptions {
        cancel_grace: Duration::from_millis(500),
        ..AcpOptions::default()
    }
}

/// The env the tests give agents: Hecate's own, sanitized.
pub fn agent_env() -> Vec<(String, String)> {
    sanitized_env(&current_env(), &[], &[])
}

/// Writes `script` next to the workspace and returns its path as an argument.
pub fn script_file(dir: &Path, script: Value) -> String {
    let path = dir.join(format!("script-{}.json", uuid::Uuid::new_v4().simple()));
    std::fs::write(&path, script.to_string()).expect("write script");
    path.display().to_string()
}

/// Starts the fixture agent in `ws` with extra arguments.
pub async fn start(ws: &Path, args: &[&str]) -> AgentConnection {
    AgentConnection::start(&spec(args), ws, agent_env(), options())
        .await
        .expect("agent starts")
}

/// Starts a fixture agent running `script` and opens a session in `ws`.
pub async fn scripted(ws: &Path, script_dir: &Path, script: Value) -> (AgentConnection, String) {
    let script = script_file(script_dir, script);
    let conn = start(ws, &["--script", &script]).await;
    let session = conn.new_session(ws, &[]).await.expect("session/new");
    (conn, session.id)
}

/// The outcome of a turn and every event it produced.
pub struct TurnResult {
    /// The prompt's result.
    pub result: Result<StopReason, AcpError>,
    /// The usage and cost the agent reported, when the turn ended normally.
    pub outcome: Option<PromptOutcome>,
    /// The events, in order.
    pub events: Vec<RuntimeEvent>,
}

impl TurnResult {
    /// Splits a prompt's outcome into the stop reason and what was reported.
    pub fn new(prompted: Result<PromptOutcome, AcpError>, events: Vec<RuntimeEvent>) -> Self {
        let outcome = prompted.as_ref().ok().cloned();
        Self {
            result: prompted.map(|o| o.stop_reason),
            outcome,
            events,
        }
    }
}

impl TurnResult {
    /// The concatenated text deltas.
    pub fn text(&self) -> String {
        self.events
            .iter()
            .filter_map(|e| match e {
                RuntimeEvent::TextDelta { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The raw diagnostics (not raw update frames).
    pub fn diagnostics(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter_map(|e| match e {
                RuntimeEvent::Raw { data } if data.get("source").is_none() => Some(data),
                _ => None,
            })
            .collect()
    }
}

/// A turn's io with fresh ids.
pub fn turn_io(
    asker: Arc<dyn PermissionAsker>,
    cancel: CancellationToken,
) -> (TurnIo, tokio::sync::mpsc::UnboundedReceiver<RuntimeEvent>) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let io = TurnIo {
        events: tx,
        asker,
        session_id: SessionId::generate(),
        run_id: RunId::generate(),
        cancel,
        delegate: None,
    };
    (io, rx)
}

/// Runs one text prompt with `asker` and collects its events.
pub async fn turn_with(
    conn: &AgentConnection,
    native: &str,
    prompt: &str,
    asker: Arc<dyn PermissionAsker>,
) -> TurnResult {
    let (io, mut rx) = turn_io(asker, CancellationToken::new());
    let blocks = vec![hecate::domain::message::ContentBlock::Text {
        text: prompt.to_string(),
    }];
    let result = tokio::time::timeout(Duration::from_secs(60), conn.prompt(native, blocks, io))
        .await
        .expect("turn finishes");
    let mut events = Vec::new();
    while let Ok(e) = rx.try_recv() {
        events.push(e);
    }
    TurnResult::new(result, events)
}

/// Runs one text prompt, allowing every permission request.
pub async fn turn(conn: &AgentConnection, native: &str, prompt: &str) -> TurnResult {
    turn_with(conn, native, prompt, Arc::new(FixedAnswer { allow: true })).await
}
