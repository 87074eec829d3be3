//! The engine's upstream-MCP half: upstream servers behind the client pool,
//! the aggregated catalog, proxied tool calls through the approval gate, the
//! audit writer, resources and prompts passthrough, hub-wide resource
//! subscriptions, the gateway sessions that own proxied-call approvals, and the
//! OAuth sign-ins of HTTP upstreams (`oauth.rs`, tokens kept in the store).
//!
//! `types` is the vocabulary (a leaf), `state` holds the hub's state and imports
//! only `types`; the other files add behaviour to `Engine` and import both.

pub(crate) mod audit;
mod catalog;
pub mod entry;
mod gateway;
mod oauth;
mod overview;
mod passthrough;
mod policies;
pub mod search;
pub(crate) mod state;
mod subscriptions;
mod tools;
pub mod types;

pub use crate::adapters::mcp::EntryInfo as PoolEntry;
pub use crate::adapters::mcp::oauth::SignIn;
pub use overview::{ServerOverview, ServerState, ServerTool, reach};
pub use search::ToolLoading;
pub use tools::{ApprovalPrompter, McpCallOptions, UpstreamNotice};
pub use types::{
    MAX_TOOL_NAME, McpCatalog, McpChange, ToolPolicy, UpstreamFailure, UpstreamServer,
    UpstreamTool, expose_names,
};
