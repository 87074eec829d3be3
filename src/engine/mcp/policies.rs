//! Tool policies an operator sets at runtime (the console, the API): kept in the
//! store per namespace, laid over the config's `[mcp_servers.NAME.tools]` when
//! the servers are configured and as soon as one is set, so a tool set to
//! `block` leaves every client's list at once (they are told it changed).

use super::types::{ToolPolicy, UpstreamServer};
use crate::adapters::mcp::tool_def::name_of;
use crate::domain::error::{HecateError, Result};
use crate::domain::time::now_rfc3339;
use crate::engine::Mcp;
use crate::store::McpToolPolicy;

/// Longest tool name a policy may name.
const MAX_TOOL_NAME_LEN: usize = 256;

/// `servers` with `policies` laid over their own tool policies; a stored policy
/// naming a server that is not configured (or a value no longer known) is skipped.
fn overlay(mut servers: Vec<UpstreamServer>, policies: &[McpToolPolicy]) -> Vec<UpstreamServer> {
    for p in policies {
        let (Some(server), Some(policy)) = (
            servers.iter_mut().find(|s| s.name == p.server),
            ToolPolicy::parse(&p.policy),
        ) else {
            continue;
        };
        server.tool_policies.insert(p.tool.clone(), policy);
    }
    servers
}

impl<'e> Mcp<'e> {
    /// Configures the upstream servers of the config with the tool policies an
    /// operator set in `namespace` over them.
    pub async fn configure(self, namespace: &str, servers: Vec<UpstreamServer>) -> Result<()> {
        let stored = self
            .engine
            .store()
            .list_mcp_tool_policies(namespace)
            .await?;
        self.configure_servers(overlay(servers, &stored))
    }

    /// Sets the policy of `tool` on upstream `server` for `namespace`: stored, then
    /// applied at once. An unknown server, or a tool the server does not list, is
    /// `not_found`; a server that cannot be listed now answers its error.
    pub async fn set_tool_policy(
        self,
        namespace: &str,
        server: &str,
        tool: &str,
        policy: ToolPolicy,
    ) -> Result<McpToolPolicy> {
        if tool.is_empty() || tool.len() > MAX_TOOL_NAME_LEN {
            return Err(HecateError::invalid(format!(
                "a tool name is 1 to {MAX_TOOL_NAME_LEN} bytes"
            ))
            .with_detail("field", "tool"));
        }
        let upstream = self.mcp_server(server)?;
        let listed = self.upstream_tool_names(&upstream).await?;
        if !listed.iter().any(|t| t == tool) {
            return Err(HecateError::not_found("MCP tool", tool)
                .with_detail("server", server)
                .with_detail("tools", listed));
        }
        let record = McpToolPolicy {
            namespace: namespace.to_string(),
            server: server.to_string(),
            tool: tool.to_string(),
            policy: policy.as_str().to_string(),
            updated_at: now_rfc3339(),
        };
        self.engine.store().set_mcp_tool_policy(&record).await?;
        let servers = overlay(
            self.servers().as_ref().clone(),
            std::slice::from_ref(&record),
        );
        self.configure_servers(servers)?;
        Ok(record)
    }

    /// The names of the tools `server` lists (blocked ones included).
    pub async fn upstream_tool_names(self, server: &UpstreamServer) -> Result<Vec<String>> {
        Ok(self
            .upstream_tools(server)
            .await?
            .iter()
            .map(name_of)
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::mcp::ServerSpec;
    use std::collections::BTreeMap;

    fn server(name: &str) -> UpstreamServer {
        UpstreamServer {
            name: name.into(),
            spec: ServerSpec::Http {
                url: "http://127.0.0.1:9/mcp".into(),
                headers: BTreeMap::new(),
            },
            policy: ToolPolicy::Auto,
            policy_configured: false,
            tool_policies: BTreeMap::from([("write".to_string(), ToolPolicy::RequireApproval)]),
            call_timeout: None,
            oauth: Default::default(),
        }
    }

    fn stored(server: &str, tool: &str, policy: &str) -> McpToolPolicy {
        McpToolPolicy {
            namespace: "default".into(),
            server: server.into(),
            tool: tool.into(),
            policy: policy.into(),
            updated_at: "t".into(),
        }
    }

    #[test]
    fn stored_policies_override_the_configs_and_unknown_ones_are_skipped() {
        let out = overlay(
            vec![server("fs")],
            &[
                stored("fs", "write", "block"),
                stored("fs", "read", "require_approval"),
                stored("gone", "x", "block"),
                stored("fs", "odd", "sometimes"),
            ],
        );
        assert_eq!(out[0].policy_for("write"), ToolPolicy::Block);
        assert_eq!(out[0].policy_for("read"), ToolPolicy::RequireApproval);
        assert_eq!(out[0].policy_for("odd"), ToolPolicy::Auto);
        assert_eq!(out.len(), 1);
    }
}
