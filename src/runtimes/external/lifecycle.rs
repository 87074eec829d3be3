//! How the runtime reattaches to an agent's native session and lets go of it:
//! `session/resume` when the agent offers it (no replay to discard), else
//! `session/load`; `session/close` (and `session/delete` when the Hecate
//! session is deleted) before the agent process is stopped.

use crate::adapters::acp::{AcpError, AgentConnection, AgentManifest, NativeSession};
use crate::domain::mcp::McpServerConfig;
use std::path::Path;

/// How a turn reached its native session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Attach {
    /// The live connection from an earlier turn in this process.
    Live,
    /// The agent reloaded its own session (`session/load`).
    Loaded,
    /// The agent resumed its own session without a replay (`session/resume`).
    Resumed,
    /// A fresh native session, primed with the stored transcript.
    Primed,
    /// A fresh native session for a new conversation.
    New,
}

/// Reattaches `conn` to native session `old`: resumed when the agent advertises
/// `session/resume`, else loaded (its replay discarded, since Hecate's
/// transcript already holds it) unless the manifest marks `session/load` broken.
/// `None` when neither is offered or both fail (the caller opens a fresh one).
pub(super) async fn reattach(
    conn: &AgentConnection,
    manifest: &AgentManifest,
    old: &str,
    ws: &Path,
    mcp_servers: &[McpServerConfig],
) -> Option<(NativeSession, Attach)> {
    if conn.agent_info().resume_session {
        match conn.resume_session(old, ws, mcp_servers).await {
            Ok(session) => return Some((session, Attach::Resumed)),
            Err(e) => tracing::warn!(error = %e, "session/resume failed; trying session/load"),
        }
    }
    if !conn.agent_info().load_session || manifest.quirks.broken_load_session {
        return None;
    }
    let (sink, _drop) = tokio::sync::mpsc::unbounded_channel();
    match conn.load_session(old, ws, mcp_servers, sink).await {
        Ok(session) => Some((session, Attach::Loaded)),
        Err(e) => {
            tracing::warn!(error = %e, "session/load failed; priming a fresh session");
            None
        }
    }
}

/// Lets go of native session `native_id` and stops its agent process: a live
/// agent that advertises them first gets `session/close` and, when `delete`,
/// `session/delete`; refusals are logged, the process is stopped either way.
pub(super) async fn release(conn: &AgentConnection, native_id: &str, delete: bool) {
    if conn.is_alive() {
        log_refusal("session/close", conn.close_session(native_id).await);
        if delete {
            log_refusal("session/delete", conn.delete_session(native_id).await);
        }
    }
    conn.shutdown().await;
}

/// Logs a lifecycle request the agent refused or failed (not one it never offered).
fn log_refusal(method: &str, result: Result<(), AcpError>) {
    match result {
        Ok(()) | Err(AcpError::Unsupported(_)) => {}
        Err(e) => tracing::warn!(error = %e, method, "the agent did not complete the request"),
    }
}
