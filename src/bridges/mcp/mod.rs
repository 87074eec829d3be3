//! The MCP bridge: Hecate as an MCP server, on stdio (`hecate mcp`) and on
//! Streamable HTTP (a router the HTTP bridge mounts at `/mcp`). It exposes
//! engine tools (sessions, turns, delegation, approvals, grants, adapters,
//! durable tasks, client-hosted chats), resources and prompts, plus upstream MCP servers' tools
//! through the engine. Stdout carries protocol frames only.

mod access;
mod args;
mod chat_tools;
mod delegate;
mod elicit;
mod errors;
mod flow_chat_tools;
mod handler;
mod memory_tools;
mod modern;
mod prompts;
mod resources;
mod server;
mod tasks;
mod tool_search;
mod tools;
mod upstream;
mod uris;
mod watch;
pub mod wire;

pub use errors::McpBridgeError;
pub use server::{HecateMcp, McpServerOptions};
pub use wire::http::{McpHttpConfig, router as http_router};

use crate::engine::Engine;
use rmcp::ServiceExt;
use std::time::Duration;

/// Largest incoming stdio frame, in bytes; longer lines are refused with an
/// error (the connection stays up).
pub const MAX_STDIO_FRAME_BYTES: usize = 4 * 1024 * 1024;

/// How long the exit waits for replies still queued for stdout.
const STDOUT_DRAIN: Duration = Duration::from_secs(5);

/// Serves MCP on this process's stdin/stdout until the client closes stdin.
pub async fn serve_stdio(engine: Engine, opts: McpServerOptions) -> Result<(), McpBridgeError> {
    let (transport, drained) = wire::lines::guarded_lines(
        wire::stdio::stdin(),
        wire::stdio::stdout(),
        MAX_STDIO_FRAME_BYTES,
    );
    let served = async {
        let running = HecateMcp::new(engine, opts)
            .serve(transport)
            .await
            .map_err(|e| McpBridgeError::Initialize(e.to_string()))?;
        running
            .waiting()
            .await
            .map_err(|e| McpBridgeError::Connection(e.to_string()))
    }
    .await;
    drained.wait(STDOUT_DRAIN).await;
    served.map(|_| ())
}
