//! How MCP reaches the bridge: stdio on the reactor (`stdio`), the guarded line
//! transport in front of rmcp's serving loop (`lines`), the triage that answers
//! malformed frames the way JSON-RPC asks (`triage`, shared with HTTP), and the
//! Streamable HTTP router mounted at `/mcp` (`http`) with its JSON-RPC-shaped
//! error responses (`reply`).

pub mod http;
pub(super) mod lines;
pub mod reply;
pub(super) mod stdio;
mod triage;
