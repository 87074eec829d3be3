//! One upstream MCP server as an operator sees it: how it is reached (secrets
//! left out), its policy, its state (`ok`, `auth_required`, `failed`) with the
//! error and fix behind it, each tool it lists with the policy that applies and
//! the name clients see (none when blocked), its resources and prompts, its
//! pooled connections and, for an HTTP server that signs in through OAuth, its
//! stored sign-in.

use super::types::{ToolPolicy, UpstreamServer};
use crate::adapters::mcp::oauth::SignIn;
use crate::adapters::mcp::tool_def::name_of;
use crate::adapters::mcp::{EntryInfo, ServerSpec};
use crate::domain::error::{ErrorType, HecateError};
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

/// How an upstream server stands now, decided by the type of its error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerState {
    /// Its tools were listed and its last call was not refused for a sign-in.
    Ok,
    /// Its last connect, listing or call was refused for want of a sign-in
    /// (error type `auth_required`): `hecate mcp login NAME` is the fix.
    AuthRequired,
    /// Its tools could not be listed for another reason.
    Failed,
}

impl ServerState {
    /// The state of a server whose standing error is `error` (none when it is fine).
    pub fn of(error: Option<&HecateError>) -> Self {
        match error {
            None => Self::Ok,
            Some(e) if e.error_type == ErrorType::AuthRequired => Self::AuthRequired,
            Some(_) => Self::Failed,
        }
    }

    /// The stable name: `ok`, `auth_required` or `failed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::AuthRequired => ErrorType::AuthRequired.code(),
            Self::Failed => "failed",
        }
    }
}

/// An upstream server with what it offers now.
#[derive(Debug, Clone)]
pub struct ServerOverview {
    /// The configured server (its env and header values are not shown by bridges).
    pub server: UpstreamServer,
    /// How it stands: [`ServerState::of`] its `error`.
    pub state: ServerState,
    /// Why it is not `ok`: the listing's failure, or the refused sign-in of its
    /// last call while its tools are still known. Its `operator_action` is the fix.
    pub error: Option<HecateError>,
    /// Its tools (empty when they could not be listed).
    pub tools: Vec<ServerTool>,
    /// How many resources it lists (0 when blocked).
    pub resources: usize,
    /// How many prompts it lists (0 when blocked).
    pub prompts: usize,
    /// Its pooled connections.
    pub connections: Vec<EntryInfo>,
    /// Its stored OAuth sign-in, for an HTTP server that sends no
    /// `Authorization` header of its own (`None` for the others); an error when
    /// what is stored could not be read (signing out clears it).
    pub sign_in: Option<Result<SignIn, HecateError>>,
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
    /// Every configured upstream server with its state, tools, resources,
    /// prompts and connections; a server that cannot be listed, or whose last
    /// call was refused for want of a sign-in, carries its error.
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
            let (tools, error) = match tools {
                Ok(tools) => (tools, self.sign_in_refusal(&s.name)),
                Err(e) => (Vec::new(), Some(e)),
            };
            let sign_in = if s.spec.signs_in() {
                Some(self.sign_in(&s.name).await)
            } else {
                None
            };
            out.push(ServerOverview {
                sign_in,
                state: ServerState::of(error.as_ref()),
                error,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_state_follows_the_error_type_not_its_text() {
        assert_eq!(ServerState::of(None), ServerState::Ok);
        let refused = HecateError::new(ErrorType::AuthRequired, "the server answered 401");
        assert_eq!(ServerState::of(Some(&refused)), ServerState::AuthRequired);
        let worded = HecateError::gateway("needs a sign-in (auth_required): 401");
        assert_eq!(ServerState::of(Some(&worded)), ServerState::Failed);
        assert_eq!(
            [
                ServerState::Ok,
                ServerState::AuthRequired,
                ServerState::Failed
            ]
            .map(ServerState::as_str),
            ["ok", "auth_required", "failed"]
        );
    }
}
