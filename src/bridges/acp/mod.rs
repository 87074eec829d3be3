//! Hecate as an ACP agent on stdio (`hecate acp`) and over a WebSocket (`/acp` of
//! `hecate serve`, in `websocket`): each editor thread is a durable Hecate session
//! answered by a model or a supervised external agent, chosen through ACP session
//! modes and a `target` config option. Translates ACP to engine calls and engine
//! events back to `session/update`; touches nothing but the engine.

mod convert;
mod error;
mod handlers;
mod in_flight;
mod permission;
mod prompt;
mod render;
mod sessions;
mod signin;
mod state;
pub mod transport;
pub mod websocket;
mod workspace;

use crate::engine::Engine;
use agent_client_protocol::Agent;
use std::sync::Arc;

pub use error::AcpBridgeError;
pub use state::BridgeConfig;

/// Serves ACP on this process's stdin/stdout (lines over
/// [`transport::MAX_FRAME_BYTES`] refused) until the client closes stdin or stops
/// the process with SIGTERM, SIGINT or SIGHUP; then cancels running turns and
/// shuts down every supervised agent.
pub async fn serve_stdio(engine: Engine, config: BridgeConfig) -> Result<(), AcpBridgeError> {
    let shared = Arc::new(state::Shared::new(engine.clone(), config));
    shared.set_local_editor();
    let (stdio, drained) = transport::stdio(transport::MAX_FRAME_BYTES);
    let result = tokio::select! {
        r = handlers::connect(shared, stdio) => r,
        signal = stop_signal() => {
            tracing::info!(signal, "stopping on a signal");
            Ok(())
        }
    };
    engine.shutdown().await;
    drained.wait(std::time::Duration::from_secs(2)).await;
    result
}

/// Resolves on SIGTERM, SIGINT or SIGHUP (clients that stop their agent with a
/// signal instead of closing stdin still get every supervised agent shut down).
async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int), Ok(mut hup)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
        signal(SignalKind::hangup()),
    ) else {
        tracing::warn!("cannot watch for signals");
        return std::future::pending().await;
    };
    tokio::select! {
        _ = term.recv() => "SIGTERM",
        _ = int.recv() => "SIGINT",
        _ = hup.recv() => "SIGHUP",
    }
}

/// The agent role builder (exposed for in-process tests over other transports).
pub fn agent_role() -> Agent {
    Agent
}
