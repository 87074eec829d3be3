//! Which role a request needs, by the surface it arrives on, its method and its
//! path: reading is `read`, acting (messages, approvals, tasks, model calls, an
//! editor's ACP connection) is `operator`, managing the hub (keys, tool
//! policies, upstream sign-ins, capability overrides, agent installs, killing processes) is
//! `admin`. MCP connections need `read`; each tool call is checked in the MCP
//! server, where the tool's annotations are known.

use crate::domain::api_key::Role;
use axum::http::Method;

/// The HTTP surface a request arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Surface {
    /// `/hecate/v1` and the other JSON API paths.
    Api,
    /// The model gateway, `/v1`.
    Gateway,
    /// ACP over a WebSocket, `/acp`.
    Acp,
    /// MCP over Streamable HTTP, `/mcp`.
    Mcp,
}

/// The role a request needs.
pub fn required_role(surface: Surface, method: &Method, path: &str) -> Role {
    let reads = matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    match surface {
        Surface::Mcp => Role::Read,
        Surface::Acp => Role::Operator,
        Surface::Gateway if reads => Role::Read,
        Surface::Gateway => Role::Operator,
        Surface::Api if manages_the_hub(method, path) => Role::Admin,
        Surface::Api if reads && shows_webhook_secrets(path) => Role::Operator,
        Surface::Api if reads => Role::Read,
        Surface::Api => Role::Operator,
    }
}

/// Whether a read shows A2A push notification configs, whose tokens and
/// credentials only a role that may set them (`operator`) may see.
fn shows_webhook_secrets(path: &str) -> bool {
    path.starts_with("/a2a/") && path.contains("/pushNotificationConfigs")
}

/// Whether an API request manages the hub rather than using it.
fn manages_the_hub(method: &Method, path: &str) -> bool {
    let segments: Vec<&str> = path
        .trim_start_matches("/hecate/v1/")
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let writes = !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS);
    match segments.as_slice() {
        ["keys", ..] => true,
        ["model-capabilities", "overrides"] => writes,
        ["agent-adapters", "processes", _, "kill"] => writes,
        ["agent-adapters", _, "install" | "refresh-launcher"] => writes,
        ["mcp", "servers", _, "tools", _, "policy"] => writes,
        ["mcp", "servers", _, "sign-in"] => writes,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_by_surface_method_and_path() {
        let api = |m: Method, p: &str| required_role(Surface::Api, &m, p);
        assert_eq!(
            api(Method::GET, "/hecate/v1/agent-chat/sessions"),
            Role::Read
        );
        assert_eq!(
            api(Method::POST, "/hecate/v1/agent-chat/sessions/s/messages"),
            Role::Operator
        );
        assert_eq!(
            api(Method::POST, "/hecate/v1/tasks/t/approvals/a/resolve"),
            Role::Operator
        );
        assert_eq!(api(Method::GET, "/hecate/v1/keys"), Role::Admin);
        assert_eq!(api(Method::DELETE, "/hecate/v1/keys/k"), Role::Admin);
        assert_eq!(
            api(Method::PUT, "/hecate/v1/mcp/servers/gh/tools/x/policy"),
            Role::Admin
        );
        assert_eq!(
            api(Method::DELETE, "/hecate/v1/mcp/servers/gh/sign-in"),
            Role::Admin
        );
        assert_eq!(
            api(Method::POST, "/hecate/v1/agent-adapters/codex/install"),
            Role::Admin
        );
        assert_eq!(
            api(Method::GET, "/hecate/v1/agent-adapters/codex/install"),
            Role::Read
        );
        assert_eq!(
            api(Method::POST, "/hecate/v1/agent-adapters/processes/p/kill"),
            Role::Admin
        );
        assert_eq!(
            api(Method::PUT, "/hecate/v1/model-capabilities/overrides"),
            Role::Admin
        );
        assert_eq!(api(Method::GET, "/a2a/hecate/tasks/t"), Role::Read);
        assert_eq!(
            api(Method::GET, "/a2a/hecate/tasks/t/pushNotificationConfigs/c"),
            Role::Operator
        );
        let gw = |m: Method| required_role(Surface::Gateway, &m, "/v1/x");
        assert_eq!(gw(Method::GET), Role::Read);
        assert_eq!(gw(Method::POST), Role::Operator);
        assert_eq!(
            required_role(Surface::Acp, &Method::GET, "/acp"),
            Role::Operator
        );
        assert_eq!(
            required_role(Surface::Mcp, &Method::POST, "/mcp"),
            Role::Read
        );
    }
}
