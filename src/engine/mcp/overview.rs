//! One upstream MCP server as an operator sees it: how it is reached (secrets
//! left out), its policy, each tool it lists with the policy that applies and
//! the name clients see (none when blocked), its resources and prompts, and its
//! pooled connections.

use super::types::{ToolPolicy, UpstreamServer};
use crate::adapters::mcp::tool_def::name_of;
use crate::adapters::mcp::{EntryInfo, ServerSpec};
use crate::domain::error::HecateError;
use crate::domain::redact::redact_url;
use crate::engine::Mcp;
use serde_json::Value;

/// One tool of an upstream server.
#[derive(Debug, Clone)]
pub struct ServerTool {
    /// Its own name upstream.
    pub name: String,
    /// The name clients call it by; `None` while it is blocked.
    pub exposed: Option<String>,
    /// The policy that applies to it.
    pub policy: ToolPolicy,
    /// Its description.
    pub description: Option<String>,
}

/// An upstream server with what it offers now.
#[derive(Debug, Clone)]
pub struct ServerOverview {
    /// The configured server (its env and header values are not shown by bridges).
    pub server: UpstreamServer,
    /// Its tools, or why they could not be listed.
    pub tools: Result<Vec<ServerTool>, HecateError>,
    /// How many resources it lists (0 when blocked).
    pub resources: usize,
    /// How many prompts it lists (0 when blocked).
    pub prompts: usize,
    /// Its pooled connections.
    pub connections: Vec<EntryInfo>,
}

/// `stdio` or `http`, and the program or the URL with credentials redacted
/// (never its arguments, env or headers), as the pool shows it.
pub fn reach(spec: &ServerSpec) -> (&'static str, String) {
    match spec {
        ServerSpec::Stdio { command, .. } => ("stdio", command.clone()),
        ServerSpec::Http { url, .. } => ("http", redact_url(url)),
    }
}

impl<'e> Mcp<'e> {
    /// Every configured upstream server with its tools, resources, prompts and
    /// connections; a server that cannot be listed carries its error.
    pub async fn overview(self) -> Vec<ServerOverview> {
        let servers = self.servers();
        let catalog = self.tools().await;
        let resources = self.resources().await;
        let prompts = self.prompts().await;
        let entries = self.pool_entries();
        let mut out = Vec::new();
        for s in servers.iter() {
            let tools = self.upstream_tools(s).await.map(|list| {
                list.iter()
                    .map(|def| {
                        let name = name_of(def);
                        let exposed = catalog
                            .tools
                            .iter()
                            .find(|t| t.server == s.name && t.tool == name)
                            .map(|t| t.exposed.clone());
                        ServerTool {
                            policy: s.policy_for(&name),
                            description: def
                                .get("description")
                                .and_then(Value::as_str)
                                .map(str::to_string),
                            exposed,
                            name,
                        }
                    })
                    .collect()
            });
            out.push(ServerOverview {
                tools,
                resources: resources.iter().filter(|(n, _)| n == &s.name).count(),
                prompts: prompts.iter().filter(|(n, ..)| n == &s.name).count(),
                connections: entries
                    .iter()
                    .filter(|e| e.servers.contains(&s.name))
                    .cloned()
                    .collect(),
                server: s.clone(),
            });
        }
        out
    }
}
