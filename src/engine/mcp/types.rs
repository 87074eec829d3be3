//! Upstream MCP servers as the engine sees them: their configuration and tool
//! policy, the aggregated catalog and its failures, the change feed's vocabulary,
//! the exposed-name rule, and how a pool failure becomes an engine error. Plain
//! data and pure functions; every other file of `engine/mcp/` builds on these.

use crate::adapters::mcp::McpClientError;
use crate::adapters::mcp::oauth::{OAuthClientSettings, login_fix};
use crate::domain::error::{ErrorType, HecateError};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

pub(crate) use crate::adapters::mcp::ServerSpec;

/// Longest tool or prompt name MCP clients accept.
pub const MAX_TOOL_NAME: usize = 64;

/// Default deadline of one proxied call, and of listing an upstream's catalog.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// Deadline of listing one upstream's tools, resources or prompts.
pub(crate) const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// What the hub does with calls to an upstream tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolPolicy {
    /// Call without asking.
    Auto,
    /// Ask through the approval coordinator first.
    RequireApproval,
    /// Never call; the tool is hidden.
    Block,
}

impl ToolPolicy {
    /// Parses `auto`, `require_approval` or `block`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Self::Auto),
            "require_approval" => Some(Self::RequireApproval),
            "block" => Some(Self::Block),
            _ => None,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::RequireApproval => "require_approval",
            Self::Block => "block",
        }
    }
}

/// One configured upstream server (`[mcp_servers.NAME]`).
#[derive(Debug, Clone)]
pub struct UpstreamServer {
    /// The alias; prefixes its tools (`NAME__tool`).
    pub name: String,
    /// How to reach it.
    pub spec: ServerSpec,
    /// Policy for its tools.
    pub policy: ToolPolicy,
    /// Whether the config set `policy` for the whole server; when it did not, a
    /// tool that calls itself destructive asks for approval.
    pub policy_configured: bool,
    /// Per-tool overrides of the policy, by the tool's own name.
    pub tool_policies: BTreeMap<String, ToolPolicy>,
    /// Deadline of one call (the hub default when absent).
    pub call_timeout: Option<Duration>,
    /// How an HTTP server's OAuth sign-in identifies Hecate
    /// (`[mcp_servers.NAME.oauth]`; the defaults when absent).
    pub oauth: OAuthClientSettings,
}

impl UpstreamServer {
    /// The policy that applies to `tool` by configuration alone (its own
    /// override, else the server's), whatever its annotations say.
    pub fn policy_for(&self, tool: &str) -> ToolPolicy {
        self.tool_policies.get(tool).copied().unwrap_or(self.policy)
    }

    /// The policy that applies to `tool`, whose definition is `def`: its own
    /// override, else the server's configured policy, else `require_approval`
    /// for a tool that says it is destructive ([`declares_destructive`]) and
    /// the server's default for the rest.
    pub fn policy_for_tool(&self, tool: &str, def: &Value) -> ToolPolicy {
        if let Some(p) = self.tool_policies.get(tool) {
            return *p;
        }
        if !self.policy_configured && declares_destructive(def) {
            return ToolPolicy::RequireApproval;
        }
        self.policy
    }
}

/// Whether a tool definition's annotations say it may destroy something:
/// `destructiveHint: true` on a tool that is not `readOnlyHint: true` (MCP
/// gives the destructive hint meaning only for tools that write). A tool with
/// no annotations is not taken as destructive.
pub fn declares_destructive(def: &Value) -> bool {
    let hints = &def["annotations"];
    hints["destructiveHint"] == Value::Bool(true) && hints["readOnlyHint"] != Value::Bool(true)
}

/// One upstream tool as the hub exposes it.
#[derive(Debug, Clone, Serialize)]
pub struct UpstreamTool {
    /// Server alias.
    pub server: String,
    /// The tool's own name upstream.
    pub tool: String,
    /// The name callers use.
    pub exposed: String,
    /// The policy that applies.
    pub policy: ToolPolicy,
    /// The definition to list: the upstream's, verbatim, with `name` replaced by
    /// `exposed` and the origin recorded under `_meta["hecate/upstream"]`.
    /// Shared, so the call path's lookups do not copy large schemas.
    pub definition: Arc<Value>,
}

/// An upstream that could not be listed.
#[derive(Debug, Clone, Serialize)]
pub struct UpstreamFailure {
    /// Server alias.
    pub server: String,
    /// Why.
    pub error: HecateError,
}

/// The aggregated tools of every upstream, with the ones that failed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct McpCatalog {
    /// Tools, in configuration order.
    pub tools: Vec<UpstreamTool>,
    /// Upstreams that could not be listed.
    pub failures: Vec<UpstreamFailure>,
}

/// Something bridges should tell their MCP clients about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpChange {
    /// The aggregated tool list changed.
    Tools,
    /// The aggregated resource list changed.
    Resources,
    /// The aggregated prompt list changed.
    Prompts,
    /// One upstream resource changed.
    ResourceUpdated(String),
}

/// Converts a pool failure into the engine's error, keeping the stderr tail.
pub(crate) fn client_error(server: &str, e: &McpClientError) -> HecateError {
    let err = HecateError::gateway(format!("upstream MCP server {server:?}: {e}"))
        .with_detail("server", server)
        .with_operator_action(
            "Check the [mcp_servers] entry (`hecate mcp probe` runs it alone) and the upstream's stderr.",
        );
    match e {
        McpClientError::Secret { name } => {
            HecateError::invalid(format!("upstream MCP server {server:?}: {e}"))
                .with_detail("server", server)
                .with_detail("variable", name.clone())
        }
        McpClientError::Config(_) => {
            HecateError::invalid(format!("upstream MCP server {server:?}: {e}"))
                .with_detail("server", server)
        }
        McpClientError::Timeout { .. } => err.with_detail("timeout", true),
        McpClientError::AuthRequired { .. } => HecateError::new(
            ErrorType::AuthRequired,
            format!("upstream MCP server {server:?}: {e}"),
        )
        .with_detail("server", server)
        .with_detail("reason", ErrorType::AuthRequired.code())
        .with_detail("auth_required", true)
        .with_operator_action(login_fix(server)),
        _ => err,
    }
}

/// Exposed names for `(server, name)` pairs, in order: `server__name` with
/// characters outside `[A-Za-z0-9_.-]` replaced, shortened with a hash suffix
/// past [`MAX_TOOL_NAME`], and suffixed `_2`, `_3`, ... on collision.
pub fn expose_names(pairs: &[(String, String)]) -> Vec<String> {
    let mut used: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(pairs.len());
    for (server, name) in pairs {
        let raw = format!("{server}__{name}");
        let clean: String = raw
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let base = if clean.len() > MAX_TOOL_NAME {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            raw.hash(&mut h);
            let suffix = format!("_{:08x}", h.finish() as u32);
            format!("{}{suffix}", &clean[..MAX_TOOL_NAME - suffix.len()])
        } else {
            clean
        };
        let mut candidate = base.clone();
        let mut n = 2;
        while used.contains(&candidate) {
            let suffix = format!("_{n}");
            let keep = base.len().min(MAX_TOOL_NAME - suffix.len());
            candidate = format!("{}{suffix}", &base[..keep]);
            n += 1;
        }
        used.insert(candidate.clone());
        out.push(candidate);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str, n: &str) -> (String, String) {
        (s.to_string(), n.to_string())
    }

    #[test]
    fn names_are_namespaced_unique_and_short_enough() {
        let long = "x".repeat(80);
        let names = expose_names(&[
            p("fs", "read_file"),
            p("other", "read_file"),
            p("a", "b__c"),
            p("a__b", "c"),
            p("srv", &long),
            p("srv", &format!("{long}y")),
            p("we ird", "na/me"),
        ]);
        assert_eq!(names[0], "fs__read_file");
        assert_eq!(names[1], "other__read_file");
        assert_eq!(names[2], "a__b__c");
        assert_eq!(names[3], "a__b__c_2", "collisions get a suffix");
        assert!(names.iter().all(|n| n.len() <= MAX_TOOL_NAME), "{names:?}");
        assert_ne!(names[4], names[5]);
        assert_eq!(names[6], "we_ird__na_me");
        let unique: HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
    }

    #[test]
    fn per_tool_policy_overrides_the_server() {
        let s = UpstreamServer {
            name: "fs".into(),
            spec: ServerSpec::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: BTreeMap::new(),
            },
            policy: ToolPolicy::Auto,
            policy_configured: false,
            tool_policies: [("write".to_string(), ToolPolicy::RequireApproval)].into(),
            call_timeout: None,
            oauth: Default::default(),
        };
        assert_eq!(s.policy_for("write"), ToolPolicy::RequireApproval);
        assert_eq!(s.policy_for("read"), ToolPolicy::Auto);
        assert_eq!(ToolPolicy::parse("block"), Some(ToolPolicy::Block));
        assert_eq!(ToolPolicy::parse("nope"), None);
    }

    #[test]
    fn a_destructive_tool_asks_unless_the_config_says_otherwise() {
        let destructive =
            serde_json::json!({"name": "rm", "annotations": {"destructiveHint": true}});
        let read_only = serde_json::json!({"name": "ls",
            "annotations": {"destructiveHint": true, "readOnlyHint": true}});
        let plain = serde_json::json!({"name": "echo"});
        assert!(declares_destructive(&destructive));
        assert!(
            !declares_destructive(&read_only),
            "the hint means nothing on a read-only tool"
        );
        assert!(
            !declares_destructive(&plain),
            "no annotations: not taken as destructive"
        );
        let mut s = UpstreamServer {
            name: "fs".into(),
            spec: ServerSpec::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: BTreeMap::new(),
            },
            policy: ToolPolicy::Auto,
            policy_configured: false,
            tool_policies: [("rm_ok".to_string(), ToolPolicy::Auto)].into(),
            call_timeout: None,
            oauth: Default::default(),
        };
        assert_eq!(
            s.policy_for_tool("rm", &destructive),
            ToolPolicy::RequireApproval
        );
        assert_eq!(s.policy_for_tool("ls", &read_only), ToolPolicy::Auto);
        assert_eq!(s.policy_for_tool("echo", &plain), ToolPolicy::Auto);
        // A per-tool override wins over the hint.
        assert_eq!(s.policy_for_tool("rm_ok", &destructive), ToolPolicy::Auto);
        // So does a policy the config set for the whole server.
        s.policy_configured = true;
        assert_eq!(s.policy_for_tool("rm", &destructive), ToolPolicy::Auto);
        s.policy = ToolPolicy::Block;
        assert_eq!(s.policy_for_tool("rm", &destructive), ToolPolicy::Block);
    }

    #[test]
    fn a_refused_sign_in_is_auth_required_with_the_server_and_the_fix() {
        let e = client_error(
            "gh",
            &McpClientError::AuthRequired {
                server: "gh".into(),
                reason: "the server answered 401 to the request".into(),
            },
        );
        assert_eq!(e.error_type, ErrorType::AuthRequired);
        assert_eq!(e.details["server"], "gh");
        assert_eq!(e.details["reason"], "auth_required");
        assert_eq!(e.details["auth_required"], true);
        assert!(e.operator_action.contains("hecate mcp login gh"), "{e:?}");
        assert!(e.message.contains("hecate mcp login gh"), "{e:?}");
        let other = client_error(
            "gh",
            &McpClientError::Closed {
                message: "gone".into(),
                stderr_tail: String::new(),
            },
        );
        assert_eq!(other.error_type, ErrorType::GatewayError);
    }
}
