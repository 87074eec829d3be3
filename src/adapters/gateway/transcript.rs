//! A request's conversation as recorded messages: every message the client sent,
//! in the OpenAI Chat Completions shape whatever the client's format (an
//! Anthropic `system` becomes a leading system message, tool results become
//! `tool` messages), and the fingerprint two messages are matched by when a
//! resent history is compared with the stored one.

use super::answer::text_of;
use super::{TranslateError, WireFormat, anthropic_request_to_openai, responses_request_to_openai};
use serde_json::Value;

/// The request's messages in the recorded shape.
pub fn request_messages(format: WireFormat, body: &Value) -> Result<Vec<Value>, TranslateError> {
    let openai;
    let messages = match format {
        WireFormat::OpenAi => &body["messages"],
        WireFormat::Anthropic => {
            openai = anthropic_request_to_openai(body, "")?;
            &openai["messages"]
        }
        WireFormat::Responses => {
            openai = responses_request_to_openai(body, "")?;
            &openai["messages"]
        }
    };
    Ok(messages.as_array().cloned().unwrap_or_default())
}

/// What identifies a message when a resent history is matched against the
/// stored one: its role, its text, the ids of its tool calls and the tool call
/// it answers. Formatting the client may change (content as a string or as
/// parts, `null` or empty content beside tool calls) does not count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fingerprint {
    role: String,
    text: String,
    tool_call_ids: Vec<String>,
    tool_call_id: String,
}

impl Fingerprint {
    /// The fingerprint of a message in the recorded shape.
    pub fn of(m: &Value) -> Self {
        let role = match m["role"].as_str().unwrap_or_default() {
            "developer" => "system",
            r => r,
        };
        Self {
            role: role.to_string(),
            text: text_of(&m["content"]).trim().to_string(),
            tool_call_ids: m["tool_calls"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| c["id"].as_str().unwrap_or_default().to_string())
                .collect(),
            tool_call_id: m["tool_call_id"].as_str().unwrap_or_default().to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn anthropic_history_matches_its_recorded_openai_shape() {
        let body = json!({
            "system": "be brief",
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": [
                    {"type": "text", "text": "calling"},
                    {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "42"}
                ]}
            ]
        });
        let got = request_messages(WireFormat::Anthropic, &body).expect("translates");
        let roles: Vec<_> = got.iter().map(|m| m["role"].as_str()).collect();
        assert_eq!(
            roles,
            [
                Some("system"),
                Some("user"),
                Some("assistant"),
                Some("tool")
            ]
        );
        let stored = json!({"role": "assistant", "content": "calling", "tool_calls": [
            {"id": "t1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
        ]});
        assert_eq!(Fingerprint::of(&got[2]), Fingerprint::of(&stored));
        let plain = json!({"role": "user", "content": [{"type": "text", "text": "hi"}]});
        assert_eq!(Fingerprint::of(&got[1]), Fingerprint::of(&plain));
    }
}
