//! The outbound MCP adapter: a pool of rmcp client connections to upstream MCP
//! servers over stdio (sanitized environment, own process group, stderr tail) or
//! Streamable HTTP (headers with `$VAR` references). Results leave this module as
//! JSON values, verbatim. A leaf module: it uses no other layer of the crate;
//! its children are started through `crate::adapters::process`.

pub mod client;
pub mod error;
mod handler;
pub mod oauth;
pub mod pool;
pub mod spec;
pub mod tool_def;

pub use client::{Changed, Notice, Upstream};
pub use error::McpClientError;
pub use pool::{
    EntryInfo, Lease, McpProbe, Pool, PoolOptions, PoolStats, ProbeFailure, ProbeStage,
};
pub use spec::{ResolvedTransport, ServerSpec};

/// The sanitized environment an upstream child starts from: Hecate's
/// environment filtered by the shared allowlist (locale, paths, proxies; no keys).
pub fn base_env(env: &std::collections::HashMap<String, String>) -> Vec<(String, String)> {
    crate::adapters::process::env::sanitized_env(env, &[], &[])
}
