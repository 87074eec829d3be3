//! What an MCP caller may see and call under its identity: the identity the
//! HTTP guard admitted (stdio callers are the local admin), the tools its key's
//! scope names (Hecate's own under the server name `hecate`), and the calls its
//! role allows (a read-only key calls only tools marked `readOnlyHint`).

use super::server::HecateMcp;
use crate::domain::api_key::{Identity, OWN_TOOLS_SERVER, Role};
use crate::domain::error::ErrorType;
use rmcp::ErrorData;
use rmcp::model::{ErrorCode, Extensions, Tool};
use serde_json::json;

/// The identity a request acts as: the one the HTTP guard put on the request's
/// parts, or the admin for a caller without one (stdio).
pub(crate) fn identity_of(extensions: &Extensions) -> Identity {
    extensions
        .get::<axum::http::request::Parts>()
        .and_then(|p| p.extensions.get::<Identity>())
        .or_else(|| extensions.get::<Identity>())
        .cloned()
        .unwrap_or(Identity::Admin)
}

/// Whether a tool definition is marked read-only.
pub(crate) fn is_read_only(tool: &Tool) -> bool {
    tool.annotations
        .as_ref()
        .and_then(|a| a.read_only_hint)
        .unwrap_or(false)
}

/// Whether an upstream tool's stored definition is marked read-only.
pub(crate) fn definition_is_read_only(definition: &serde_json::Value) -> bool {
    definition
        .pointer("/annotations/readOnlyHint")
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// Why `identity` may not call `tool` of `server`, or `None` when it may.
pub(crate) fn call_refusal(
    identity: &Identity,
    server: &str,
    tool: &str,
    read_only: bool,
) -> Option<ErrorData> {
    let scope = identity.scope()?;
    // A key is named by its name, an access token by its holder (`idp:SUBJECT`).
    let who = match identity {
        Identity::Key(key) => json!({"key": key.name}),
        _ => json!({"identity": identity.label()}),
    };
    let data = |mut fields: serde_json::Value| {
        if let (Some(f), Some(w)) = (fields.as_object_mut(), who.as_object()) {
            f.extend(w.clone());
        }
        Some(fields)
    };
    if !scope.allows_tool(server, tool) {
        return Some(ErrorData::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "tool {tool:?} of {server:?} is not available to {} (its scope: {})",
                identity.describe(),
                scope.items().join(" ")
            ),
            data(json!({
                "type": ErrorType::NotFound.code(),
                "server": server,
                "tool": tool,
            })),
        ));
    }
    if scope.role < Role::Operator && !read_only {
        return Some(ErrorData::new(
            ErrorCode::INVALID_REQUEST,
            format!(
                "{} is read-only and tool {tool:?} is not marked read-only; \
                 calling it needs the operator role",
                identity.describe()
            ),
            data(json!({
                "type": "forbidden",
                "required_role": Role::Operator.as_str(),
            })),
        ));
    }
    None
}

impl HecateMcp {
    /// Whether `identity` may see resource `uri`: Hecate's own under the server
    /// name `hecate`, an upstream's under the server that listed it (a key limited
    /// to servers reads no upstream URI it has not been listed).
    pub(crate) fn may_see_resource(&self, identity: &Identity, uri: &str) -> bool {
        if identity.scope().is_none_or(|s| !s.limits_tools()) {
            return true;
        }
        if self.is_own_uri(uri) {
            return identity.allows_server(OWN_TOOLS_SERVER);
        }
        self.engine
            .mcp()
            .resource_owner(uri)
            .is_some_and(|server| identity.allows_server(&server))
    }

    /// Hecate's own tools `identity` sees.
    pub(crate) fn own_tools_for(&self, identity: &Identity) -> Vec<Tool> {
        self.own_tool_list()
            .into_iter()
            .filter(|t| identity.allows_tool(OWN_TOOLS_SERVER, &t.name))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::api_key::test_key_identity;

    fn key(scope: &[&str]) -> Identity {
        test_key_identity(scope)
    }

    #[test]
    fn refusals_by_scope_and_role() {
        assert!(call_refusal(&Identity::Admin, "x", "y", false).is_none());
        let read = key(&["read", "server:github"]);
        assert!(call_refusal(&read, "github", "list", true).is_none());
        let e = call_refusal(&read, "github", "delete", false).expect("read-only");
        assert_eq!(e.code, ErrorCode::INVALID_REQUEST);
        let e = call_refusal(&read, "jira", "list", true).expect("out of scope");
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        let op = key(&["operator"]);
        assert!(call_refusal(&op, "jira", "delete", false).is_none());
        assert!(definition_is_read_only(
            &json!({"annotations": {"readOnlyHint": true}})
        ));
        assert!(!definition_is_read_only(&json!({"name": "x"})));
    }
}
