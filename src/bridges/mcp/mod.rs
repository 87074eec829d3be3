//! The MCP bridge: Hecate as an MCP server, on stdio (`hecate mcp`) and on
//! Streamable HTTP (a router the HTTP bridge mounts at `/mcp`). It exposes
//! engine tools (sessions, turns, delegation, approvals, grants, adapters),
//! resources and prompts, plus upstream MCP servers' tools through the engine.
//! Stdout carries protocol frames only.

mod args;
mod delegate;
mod elicit;
mod errors;
mod handler;
pub mod http;
mod prompts;
mod resources;
mod server;
mod stdio;
mod tools;
mod upstream;
mod uris;
mod watch;

pub use errors::McpBridgeError;
pub use http::{McpHttpConfig, router as http_router};
pub use server::{HecateMcp, McpServerOptions};

use crate::engine::Engine;
use rmcp::ServiceExt;
use rmcp::transport::async_rw::AsyncRwTransport;

/// Largest incoming stdio frame, in bytes; longer lines are dropped (the
/// connection stays up).
pub const MAX_STDIO_FRAME_BYTES: usize = 4 * 1024 * 1024;

/// Serves MCP on this process's stdin/stdout until the client closes stdin.
pub async fn serve_stdio(engine: Engine, opts: McpServerOptions) -> Result<(), McpBridgeError> {
    let (stdin, stdout) = (stdio::stdin(), stdio::stdout());
    let transport =
        AsyncRwTransport::new_server(stdin, stdout).with_max_line_length(MAX_STDIO_FRAME_BYTES);
    let running = HecateMcp::new(engine, opts)
        .serve(transport)
        .await
        .map_err(|e| McpBridgeError::Initialize(e.to_string()))?;
    running
        .waiting()
        .await
        .map_err(|e| McpBridgeError::Connection(e.to_string()))?;
    Ok(())
}
