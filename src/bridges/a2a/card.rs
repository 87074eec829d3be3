//! Agent cards: what an A2A client reads before it calls an agent. Each agent's
//! card names its URL (`/a2a/{agent}`, where both the JSON-RPC and the
//! HTTP+JSON bindings answer), protocol version 1.0, streaming, the text and
//! JSON modes, its skills and, when the server has a token, the HTTP bearer
//! scheme.

use super::agents::{ExposedAgent, path_segment};
use super::types::PROTOCOL_VERSION;
use axum::http::HeaderMap;
use axum::http::header::HOST;
use serde_json::{Value, json};

/// The path under which every agent has its base URL.
pub const AGENTS_PATH: &str = "/a2a";
/// The well-known path of a card, relative to an agent's base URL (and, at the
/// server's root, the default agent's).
pub const CARD_PATH: &str = "/.well-known/agent-card.json";

/// `http://HOST` as the client reached this server.
pub fn origin(headers: &HeaderMap) -> String {
    let host = headers
        .get(HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("127.0.0.1");
    format!("http://{host}")
}

/// The base URL of `agent` on this server.
pub fn agent_url(origin: &str, agent: &ExposedAgent) -> String {
    format!("{origin}{AGENTS_PATH}/{}", path_segment(&agent.name))
}

/// The card of `agent`, served from `origin`; `bearer` when the server requires
/// its token.
pub fn card(agent: &ExposedAgent, origin: &str, bearer: bool) -> Value {
    let url = agent_url(origin, agent);
    let mut card = json!({
        "name": agent.title,
        "description": agent.description,
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": PROTOCOL_VERSION},
            {"url": url, "protocolBinding": "HTTP+JSON", "protocolVersion": PROTOCOL_VERSION},
        ],
        "provider": {"organization": "Hecate", "url": origin},
        "version": env!("CARGO_PKG_VERSION"),
        "capabilities": {
            "streaming": true,
            "pushNotifications": false,
            "extendedAgentCard": false,
        },
        "defaultInputModes": ["text/plain", "application/json"],
        "defaultOutputModes": ["text/plain"],
        "skills": skills(agent),
    });
    if bearer && let Some(c) = card.as_object_mut() {
        c.insert(
            "securitySchemes".into(),
            json!({"bearer": {"httpAuthSecurityScheme": {
                "scheme": "Bearer",
                "description": "The token of `hecate serve` ([server] token).",
            }}}),
        );
        c.insert(
            "securityRequirements".into(),
            json!([{"schemes": {"bearer": {"list": []}}}]),
        );
    }
    card
}

/// What `agent` can be asked.
fn skills(agent: &ExposedAgent) -> Value {
    if agent.is_external() {
        return json!([{
            "id": "coding",
            "name": agent.title,
            "description": format!(
                "Delegate a coding task to {} in its workspace; its permission requests \
                 come back as input-required.",
                agent.title
            ),
            "tags": ["coding", "acp", "external-agent"],
            "examples": ["Fix the failing test in src/lib.rs"],
        }]);
    }
    json!([
        {
            "id": "coding",
            "name": "Coding in a workspace",
            "description": "Reads, edits and runs commands in its workspace with Hecate's \
                            tools; actions that need an approval come back as input-required.",
            "tags": ["coding", "files", "shell"],
            "examples": ["Read notes.txt and summarise it", "Rename foo to bar in src/"],
        },
        {
            "id": "chat",
            "name": "Questions",
            "description": "Answers questions; a contextId keeps the conversation.",
            "tags": ["chat"],
            "examples": ["What does this error mean?"],
        },
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::targets::TargetRef;

    fn agent() -> ExposedAgent {
        ExposedAgent {
            name: "hecate:fix/m".into(),
            title: "Hecate agent on fix/m".into(),
            description: "d".into(),
            target: TargetRef::Hecate {
                model: Some(("fix".into(), "m".into())),
            },
        }
    }

    #[test]
    fn a_card_names_both_bindings_at_the_agent_url() {
        let c = card(&agent(), "http://127.0.0.1:9", false);
        let ifaces = c["supportedInterfaces"].as_array().expect("interfaces");
        assert_eq!(ifaces.len(), 2);
        assert_eq!(ifaces[0]["url"], "http://127.0.0.1:9/a2a/hecate:fix%2Fm");
        assert_eq!(ifaces[1]["protocolBinding"], "HTTP+JSON");
        assert_eq!(ifaces[0]["protocolVersion"], "1.0");
        assert_eq!(c["capabilities"]["streaming"], true);
        assert!(c.get("securitySchemes").is_none());
    }

    #[test]
    fn a_token_adds_the_bearer_scheme() {
        let c = card(&agent(), "http://h", true);
        assert_eq!(
            c["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
            "Bearer"
        );
        assert!(c["securityRequirements"][0]["schemes"]["bearer"]["list"].is_array());
    }
}
