//! A request's conversation as recorded messages: every message the client sent,
//! in the OpenAI Chat Completions shape whatever the client's format (an
//! Anthropic `system` becomes a leading system message, tool results become
//! `tool` messages), and the fingerprint two messages are matched by when a
//! resent history is compared with the stored one.

use crate::model_wire::answers::answer::text_of;
use crate::model_wire::error::TranslateError;
use crate::model_wire::format::WireFormat;
use crate::model_wire::requests::responses_request::responses_request_to_openai;
use crate::model_wire::requests::to_openai_request::anthropic_request_to_openai;
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

/// Whether `m` (in the recorded shape) is a system message saying exactly
/// `prompt`: a chat session's system prompt, sent back by the client or put in
/// front by the gateway, which is not recorded as a message of the session.
pub fn is_system_prompt(m: &Value, prompt: &str) -> bool {
    let f = Fingerprint::of(m);
    f.role == "system" && f.text == prompt.trim()
}

/// Puts a chat session's system prompt in front of a request whose
/// conversation does not start with a system message of its own: a leading
/// `system` message (OpenAI Chat Completions), `system` (Anthropic Messages) or
/// `instructions` (Responses). Answers whether it did.
pub fn apply_system_prompt(format: WireFormat, body: &mut Value, prompt: &str) -> bool {
    if prompt.is_empty() {
        return false;
    }
    let has_own = starts_with_system(format, body);
    let Some(obj) = body.as_object_mut().filter(|_| !has_own) else {
        return false;
    };
    match format {
        WireFormat::OpenAi => match obj.get_mut("messages").and_then(Value::as_array_mut) {
            Some(messages) => {
                messages.insert(0, serde_json::json!({"role": "system", "content": prompt}));
            }
            None => return false,
        },
        WireFormat::Anthropic => {
            obj.insert("system".into(), Value::String(prompt.to_string()));
        }
        WireFormat::Responses => {
            obj.insert("instructions".into(), Value::String(prompt.to_string()));
        }
    }
    true
}

/// Whether the request's conversation starts with a system message, read from
/// the field each format keeps it in (no translation of the whole request).
fn starts_with_system(format: WireFormat, body: &Value) -> bool {
    let leading_role = |items: &Value| {
        items
            .as_array()
            .and_then(|a| a.first())
            .and_then(|m| m["role"].as_str())
            .is_some_and(|r| matches!(r, "system" | "developer"))
    };
    let non_empty = |v: &Value| match v {
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        _ => false,
    };
    match format {
        WireFormat::OpenAi => leading_role(&body["messages"]),
        WireFormat::Anthropic => non_empty(&body["system"]),
        WireFormat::Responses => non_empty(&body["instructions"]) || leading_role(&body["input"]),
    }
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

#[cfg(test)]
mod prompt_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_session_prompt_goes_in_front_only_of_a_request_without_its_own() {
        let mut chat = json!({"messages": [{"role": "user", "content": "hi"}]});
        assert!(apply_system_prompt(
            WireFormat::OpenAi,
            &mut chat,
            "Be brief."
        ));
        assert_eq!(
            chat["messages"][0],
            json!({"role": "system", "content": "Be brief."})
        );
        assert_eq!(chat["messages"][1]["role"], "user");
        let mut own = json!({"messages": [{"role": "developer", "content": "Mine."},
                                          {"role": "user", "content": "hi"}]});
        assert!(!apply_system_prompt(
            WireFormat::OpenAi,
            &mut own,
            "Be brief."
        ));
        assert_eq!(own["messages"].as_array().map(Vec::len), Some(2));

        let mut messages =
            json!({"max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]});
        assert!(apply_system_prompt(
            WireFormat::Anthropic,
            &mut messages,
            "Be brief."
        ));
        assert_eq!(messages["system"], "Be brief.");
        let mut own = json!({"max_tokens": 5, "system": [{"type": "text", "text": "Mine."}],
                             "messages": [{"role": "user", "content": "hi"}]});
        assert!(!apply_system_prompt(
            WireFormat::Anthropic,
            &mut own,
            "Be brief."
        ));

        let mut responses = json!({"input": "hi"});
        assert!(apply_system_prompt(
            WireFormat::Responses,
            &mut responses,
            "Be brief."
        ));
        assert_eq!(responses["instructions"], "Be brief.");
        let mut own = json!({"input": "hi", "instructions": "Mine."});
        assert!(!apply_system_prompt(
            WireFormat::Responses,
            &mut own,
            "Be brief."
        ));
        assert_eq!(own["instructions"], "Mine.");
        assert!(!apply_system_prompt(WireFormat::OpenAi, &mut chat, ""));
    }

    #[test]
    fn the_session_prompt_is_recognised_in_either_content_form() {
        let prompt = "Be brief.";
        assert!(is_system_prompt(
            &json!({"role": "system", "content": "Be brief."}),
            prompt
        ));
        assert!(is_system_prompt(
            &json!({"role": "system", "content": [{"type": "text", "text": "Be brief."}]}),
            prompt
        ));
        assert!(!is_system_prompt(
            &json!({"role": "system", "content": "Be long."}),
            prompt
        ));
        assert!(!is_system_prompt(
            &json!({"role": "user", "content": "Be brief."}),
            prompt
        ));
    }
}
