//! Agent cards: what an agent publishes about itself (its interfaces with their
//! binding and protocol version, its capabilities, input and output modes,
//! skills and security schemes), as Hecate's server writes them and its client
//! reads a remote agent's.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The path of a card relative to an agent's base URL (and, at a server's
/// root, its default agent's).
pub const AGENT_CARD_PATH: &str = "/.well-known/agent-card.json";

/// The card's name of the JSON-RPC 2.0 binding.
pub const BINDING_JSONRPC: &str = "JSONRPC";

/// The card's name of the HTTP+JSON (REST) binding.
pub const BINDING_HTTP_JSON: &str = "HTTP+JSON";

/// An agent's card. Reading is lenient about what Hecate does not use: only
/// `name` is required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCard {
    /// The agent's name.
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Where and how it can be called.
    #[serde(default)]
    pub supported_interfaces: Vec<AgentInterface>,
    /// Who offers it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider: Option<AgentProvider>,
    /// The agent's own version.
    #[serde(default)]
    pub version: String,
    /// The optional features it supports.
    #[serde(default)]
    pub capabilities: AgentCapabilities,
    /// The media types it accepts.
    #[serde(default)]
    pub default_input_modes: Vec<String>,
    /// The media types it answers in.
    #[serde(default)]
    pub default_output_modes: Vec<String>,
    /// What it can be asked.
    #[serde(default)]
    pub skills: Vec<AgentSkill>,
    /// The security schemes it names, by name (free-form ProtoJSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_schemes: Option<Map<String, Value>>,
    /// Which schemes a call must satisfy (free-form ProtoJSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_requirements: Option<Vec<Value>>,
}

/// One interface of an agent: a URL, the binding spoken there, and the
/// protocol version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentInterface {
    /// The interface's URL.
    pub url: String,
    /// Its binding ([`BINDING_JSONRPC`], [`BINDING_HTTP_JSON`], `GRPC`, …).
    pub protocol_binding: String,
    /// The A2A version spoken there (`1.0`), when the card says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
}

/// Who offers an agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentProvider {
    /// The organization.
    #[serde(default)]
    pub organization: String,
    /// Its URL.
    #[serde(default)]
    pub url: String,
}

/// The optional features an agent supports; each is unknown when the card
/// leaves it out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentCapabilities {
    /// Whether it streams (`SendStreamingMessage`, `SubscribeToTask`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Whether it posts push notifications to registered webhooks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub push_notifications: Option<bool>,
    /// Whether it serves an extended card to authenticated clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extended_agent_card: Option<bool>,
    /// The protocol extensions it supports or describes itself with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<AgentExtension>,
}

/// A protocol extension an agent names on its card: a URI, what it is, and
/// its parameters (free-form JSON).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentExtension {
    /// The URI that identifies the extension.
    #[serde(default)]
    pub uri: String,
    /// What the extension is for.
    #[serde(default)]
    pub description: String,
    /// Whether a client must understand it.
    #[serde(default)]
    pub required: bool,
    /// Its parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub params: Option<Map<String, Value>>,
}

/// Something an agent can be asked.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// Its id.
    #[serde(default)]
    pub id: String,
    /// Its name.
    #[serde(default)]
    pub name: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Keywords.
    #[serde(default)]
    pub tags: Vec<String>,
    /// Example requests.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub examples: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_card_reads_with_only_a_name_and_keeps_its_interfaces() {
        let c: AgentCard = serde_json::from_value(json!({
            "name": "a",
            "supportedInterfaces": [{"url": "http://h", "protocolBinding": "JSONRPC"}],
            "capabilities": {"streaming": true},
            "somethingNew": 1
        }))
        .expect("card");
        assert_eq!(c.supported_interfaces[0].protocol_binding, BINDING_JSONRPC);
        assert_eq!(c.supported_interfaces[0].protocol_version, None);
        assert_eq!(c.capabilities.streaming, Some(true));
        assert_eq!(c.capabilities.push_notifications, None);
        assert!(serde_json::from_value::<AgentCard>(json!({"description": "x"})).is_err());
    }

    #[test]
    fn a_card_writes_its_fields_in_proto_order() {
        let c = AgentCard {
            name: "n".into(),
            description: "d".into(),
            supported_interfaces: vec![AgentInterface {
                url: "http://h".into(),
                protocol_binding: BINDING_HTTP_JSON.into(),
                protocol_version: Some("1.0".into()),
            }],
            provider: None,
            version: "1".into(),
            capabilities: AgentCapabilities {
                streaming: Some(true),
                push_notifications: Some(true),
                extended_agent_card: Some(false),
                extensions: Vec::new(),
            },
            default_input_modes: vec!["text/plain".into()],
            default_output_modes: vec!["text/plain".into()],
            skills: Vec::new(),
            security_schemes: None,
            security_requirements: None,
        };
        assert_eq!(
            serde_json::to_string(&c).expect("json"),
            concat!(
                r#"{"name":"n","description":"d","supportedInterfaces":[{"url":"http://h","#,
                r#""protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}],"version":"1","#,
                r#""capabilities":{"streaming":true,"pushNotifications":true,"extendedAgentCard":false},"#,
                r#""defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],"skills":[]}"#
            )
        );
    }
}
