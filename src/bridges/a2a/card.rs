//! Agent cards: what an A2A client reads before it calls an agent. Each agent's
//! card names its URL (`/a2a/{agent}`, where both the JSON-RPC and the
//! HTTP+JSON bindings answer), protocol version 1.0, streaming and push
//! notifications, the text and JSON modes, its skills and, when the server
//! requires a credential, the HTTP bearer scheme and the authenticated extended
//! card (`extended.rs` builds that one on this card).

use super::agents::{ExposedAgent, path_segment};
use crate::a2a_wire::{
    AGENT_CARD_PATH, AgentCapabilities, AgentCard, AgentInterface, AgentProvider, AgentSkill,
    BINDING_HTTP_JSON, BINDING_JSONRPC, PROTOCOL_VERSION,
};
use axum::http::HeaderMap;
use axum::http::header::HOST;
use serde_json::json;

/// The path under which every agent has its base URL.
pub const AGENTS_PATH: &str = "/a2a";
/// The well-known path of a card, relative to an agent's base URL (and, at the
/// server's root, the default agent's).
pub const CARD_PATH: &str = AGENT_CARD_PATH;

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
/// a credential (it then names the bearer scheme and offers the extended card).
pub fn card(agent: &ExposedAgent, origin: &str, bearer: bool) -> AgentCard {
    let url = agent_url(origin, agent);
    let interface = |binding: &str| AgentInterface {
        url: url.clone(),
        protocol_binding: binding.to_string(),
        protocol_version: Some(PROTOCOL_VERSION.to_string()),
    };
    let (security_schemes, security_requirements) = if bearer {
        let schemes = json!({"bearer": {"httpAuthSecurityScheme": {
            "scheme": "Bearer",
            "description": "The token of `hecate serve` ([server] token).",
        }}});
        (
            schemes.as_object().cloned(),
            Some(vec![json!({"schemes": {"bearer": {"list": []}}})]),
        )
    } else {
        (None, None)
    };
    AgentCard {
        name: agent.title.clone(),
        description: agent.description.clone(),
        supported_interfaces: vec![interface(BINDING_JSONRPC), interface(BINDING_HTTP_JSON)],
        provider: Some(AgentProvider {
            organization: "Hecate".into(),
            url: origin.to_string(),
        }),
        version: env!("CARGO_PKG_VERSION").into(),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            push_notifications: Some(true),
            extended_agent_card: Some(bearer),
            extensions: Vec::new(),
        },
        default_input_modes: vec!["text/plain".into(), "application/json".into()],
        default_output_modes: vec!["text/plain".into()],
        skills: skills(agent),
        security_schemes,
        security_requirements,
    }
}

/// What `agent` can be asked.
pub fn skills(agent: &ExposedAgent) -> Vec<AgentSkill> {
    let skill =
        |id: &str, name: &str, description: String, tags: &[&str], examples: &[&str]| AgentSkill {
            id: id.into(),
            name: name.into(),
            description,
            tags: tags.iter().map(|t| t.to_string()).collect(),
            examples: examples.iter().map(|e| e.to_string()).collect(),
        };
    if agent.is_external() {
        return vec![skill(
            "coding",
            &agent.title,
            format!(
                "Delegate a coding task to {} in its workspace; its permission requests \
                 come back as input-required.",
                agent.title
            ),
            &["coding", "acp", "external-agent"],
            &["Fix the failing test in src/lib.rs"],
        )];
    }
    vec![
        skill(
            "coding",
            "Coding in a workspace",
            "Reads, edits and runs commands in its workspace with Hecate's \
             tools; actions that need an approval come back as input-required."
                .into(),
            &["coding", "files", "shell"],
            &[
                "Read notes.txt and summarise it",
                "Rename foo to bar in src/",
            ],
        ),
        skill(
            "chat",
            "Questions",
            "Answers questions; a contextId keeps the conversation.".into(),
            &["chat"],
            &["What does this error mean?"],
        ),
    ]
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
        let c = serde_json::to_value(card(&agent(), "http://127.0.0.1:9", false)).expect("json");
        let ifaces = c["supportedInterfaces"].as_array().expect("interfaces");
        assert_eq!(ifaces.len(), 2);
        assert_eq!(ifaces[0]["url"], "http://127.0.0.1:9/a2a/hecate:fix%2Fm");
        assert_eq!(ifaces[1]["protocolBinding"], "HTTP+JSON");
        assert_eq!(ifaces[0]["protocolVersion"], "1.0");
        assert_eq!(c["capabilities"]["streaming"], true);
        assert_eq!(c["capabilities"]["pushNotifications"], true);
        assert_eq!(c["capabilities"]["extendedAgentCard"], false);
        assert!(c.get("securitySchemes").is_none());
    }

    #[test]
    fn a_token_adds_the_bearer_scheme() {
        let c = serde_json::to_value(card(&agent(), "http://h", true)).expect("json");
        assert_eq!(
            c["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
            "Bearer"
        );
        assert!(c["securityRequirements"][0]["schemes"]["bearer"]["list"].is_array());
        assert_eq!(c["capabilities"]["extendedAgentCard"], true);
        assert!(c["capabilities"].get("extensions").is_none());
    }
}
