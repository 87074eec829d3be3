//! The authenticated extended card (`GetExtendedAgentCard` over JSON-RPC, `GET
//! {agent}/extendedAgentCard` over HTTP+JSON), served only when the server
//! requires a credential. It is the agent's public card plus what a caller
//! who showed a credential may learn: the skills of every other agent it may
//! send messages to (none for a `read` key or token), how the server
//! authenticates (which credentials, the identity provider's issuer and
//! audience, the role each operation needs), and, as the extension
//! [`ACCESS_EXTENSION`], who the card was served to and which operations that
//! identity may call over each binding.

use super::agents::{ExposedAgent, list};
use super::card::{agent_url, card, skills};
use super::error::A2aError;
use super::state::A2aState;
use crate::a2a_wire::{AgentCard, AgentExtension, AgentSkill, BINDING_HTTP_JSON, BINDING_JSONRPC};
use crate::bridges::roles::{Surface, required_role};
use crate::domain::api_key::Identity;
use axum::http::Method;
use serde_json::{Map, Value, json};

/// The URI of the extension by which the extended card says who it was served
/// to (`identity`, `role`, `namespace`), which agents' skills it lists
/// (`agents`) and which operations that identity may call (`operations`, per
/// binding).
pub const ACCESS_EXTENSION: &str = "urn:hecate:a2a:access:v1";

/// Each operation with the HTTP+JSON request (method, path under the agent's
/// URL) that carries it; over JSON-RPC every operation is a `POST` to the
/// agent's URL.
const OPERATIONS: [(&str, Method, &str); 11] = [
    ("SendMessage", Method::POST, "/message:send"),
    ("SendStreamingMessage", Method::POST, "/message:stream"),
    ("GetTask", Method::GET, "/tasks/ID"),
    ("ListTasks", Method::GET, "/tasks"),
    ("CancelTask", Method::POST, "/tasks/ID:cancel"),
    ("SubscribeToTask", Method::GET, "/tasks/ID:subscribe"),
    (
        "CreateTaskPushNotificationConfig",
        Method::POST,
        "/tasks/ID/pushNotificationConfigs",
    ),
    (
        "GetTaskPushNotificationConfig",
        Method::GET,
        "/tasks/ID/pushNotificationConfigs/ID",
    ),
    (
        "ListTaskPushNotificationConfigs",
        Method::GET,
        "/tasks/ID/pushNotificationConfigs",
    ),
    (
        "DeleteTaskPushNotificationConfig",
        Method::DELETE,
        "/tasks/ID/pushNotificationConfigs/ID",
    ),
    ("GetExtendedAgentCard", Method::GET, "/extendedAgentCard"),
];

/// The extended card of `agent` for `identity`, served from `origin`; on a
/// server without a credential (everyone sees everything) the operation is
/// unsupported, as the public card says.
pub async fn extended_card(
    state: &A2aState,
    agent: &ExposedAgent,
    identity: &Identity,
    origin: &str,
) -> Result<AgentCard, A2aError> {
    if !state.bearer {
        return Err(A2aError::UnsupportedOperation(
            "this server requires no credential ([server] token or [server.idp]), so there is \
             no authenticated extended card: every client reads the same public card at \
             .well-known/agent-card.json"
                .into(),
        ));
    }
    let mut out = card(agent, origin, true);
    let mut agents = vec![agent.name.clone()];
    if allowed(identity, &Method::POST, "/message:send") {
        for other in list(&state.engine).await {
            if other.name != agent.name {
                out.skills.extend(delegated_skills(&other, origin));
                agents.push(other.name);
            }
        }
    }
    if let Some(schemes) = out.security_schemes.as_mut() {
        schemes.insert("bearer".into(), bearer_scheme(state));
    }
    let params = json!({
        "identity": identity.label(),
        "role": identity.role().as_str(),
        "namespace": &*state.namespace,
        "agents": agents,
        "operations": operations(identity),
    });
    out.capabilities.extensions.push(AgentExtension {
        uri: ACCESS_EXTENSION.into(),
        description: "Who this extended card was served to, the agents whose skills it lists \
                      and the operations that identity may call over each binding."
            .into(),
        required: false,
        params: params.as_object().cloned(),
    });
    Ok(out)
}

/// Whether `identity`'s role covers an HTTP+JSON request `method` to `path`
/// under an agent's URL, as the access guard decides it.
fn allowed(identity: &Identity, method: &Method, path: &str) -> bool {
    identity.role() >= required_role(Surface::Api, method, &format!("/a2a/agent{path}"))
}

/// The operations `identity` may call, per binding.
fn operations(identity: &Identity) -> Value {
    let names = |over_rpc: bool| -> Vec<&str> {
        OPERATIONS
            .iter()
            .filter(|(_, method, path)| {
                if over_rpc {
                    allowed(identity, &Method::POST, "")
                } else {
                    allowed(identity, method, path)
                }
            })
            .map(|(name, _, _)| *name)
            .collect()
    };
    let mut by_binding = Map::new();
    by_binding.insert(BINDING_JSONRPC.into(), json!(names(true)));
    by_binding.insert(BINDING_HTTP_JSON.into(), json!(names(false)));
    Value::Object(by_binding)
}

/// The skills of `other`, named as its (`AGENT#SKILL`) and pointing at its URL.
fn delegated_skills(other: &ExposedAgent, origin: &str) -> Vec<AgentSkill> {
    let url = agent_url(origin, other);
    skills(other)
        .into_iter()
        .map(|s| AgentSkill {
            id: format!("{}#{}", other.name, s.id),
            name: format!("{}: {}", other.title, s.name),
            description: format!("{} Served by the agent at {url}.", s.description),
            tags: s.tags.into_iter().chain([other.name.clone()]).collect(),
            examples: s.examples,
        })
        .collect()
}

/// The bearer scheme with the details the public card leaves out: which
/// credentials the server takes and the role each kind of call needs.
fn bearer_scheme(state: &A2aState) -> Value {
    let idp = state.guard.idp().map_or(String::new(), |idp| {
        let s = idp.settings();
        format!(
            ", or an access token issued by {} for {} (its `{}` scopes map to the roles)",
            s.issuer, s.audience, s.scope_prefix
        )
    });
    json!({"httpAuthSecurityScheme": {
        "scheme": "Bearer",
        "description": format!(
            "Authorization: Bearer CREDENTIAL, the credential being the server's token \
             ([server] token), a named API key (hecate keys create NAME --scope ROLE){idp}. \
             Over HTTP+JSON a GET (tasks, subscribe, this card) needs the read role and \
             everything else operator; every JSON-RPC call needs operator, as does anything \
             about push notification configs. A key or token limited to other namespaces \
             is refused."
        ),
    }})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::api_key::test_key_identity;

    fn key(scope: &[&str]) -> Identity {
        test_key_identity(scope)
    }

    #[test]
    fn operations_follow_the_role_per_binding() {
        let read = operations(&key(&["read"]));
        assert_eq!(read[BINDING_JSONRPC], json!([]));
        assert_eq!(
            read[BINDING_HTTP_JSON],
            json!([
                "GetTask",
                "ListTasks",
                "SubscribeToTask",
                "GetExtendedAgentCard"
            ])
        );
        let op = operations(&key(&["operator"]));
        assert_eq!(op[BINDING_JSONRPC].as_array().map(Vec::len), Some(11));
        assert_eq!(op[BINDING_HTTP_JSON], op[BINDING_JSONRPC]);
        assert_eq!(operations(&Identity::Admin), op);
    }

    #[test]
    fn another_agents_skills_name_it_and_its_url() {
        let other = ExposedAgent {
            name: "agent:codex".into(),
            title: "Codex".into(),
            description: "d".into(),
            target: crate::engine::targets::TargetRef::External {
                adapter_id: "codex".into(),
            },
        };
        let s = delegated_skills(&other, "http://h");
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].id, "agent:codex#coding");
        assert!(s[0].description.contains("http://h/a2a/agent:codex"));
        assert!(s[0].tags.contains(&"agent:codex".to_string()));
    }
}
