//! Messages and their parts: who wrote a message (`ROLE_*`), and the pieces of
//! content a message or an artifact carries (text, data, a file by bytes or by
//! URL).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// Not set (a server refuses it on input).
    #[serde(rename = "ROLE_UNSPECIFIED")]
    Unspecified,
    /// The client.
    #[serde(rename = "ROLE_USER")]
    User,
    /// The agent.
    #[serde(rename = "ROLE_AGENT")]
    Agent,
}

/// One piece of a message or an artifact: exactly one of `text`, `raw`
/// (base64), `url` or `data`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Plain text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Bytes, base64-encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// A file by reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Structured data (any JSON value).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// Free-form metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// A file name, for `raw` and `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
    /// The media type of the content.
    #[serde(default, alias = "media_type", skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A data part.
    pub fn data(data: Value) -> Self {
        Self {
            data: Some(data),
            ..Self::default()
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// The sender's id for this message.
    #[serde(alias = "message_id")]
    pub message_id: String,
    /// The conversation it belongs to.
    #[serde(default, alias = "context_id", skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The task this message continues (a task waiting for input).
    #[serde(default, alias = "task_id", skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Who wrote it.
    pub role: Role,
    /// Its content. A message without parts reads as one with none, as ProtoJSON
    /// leaves out an empty list.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Free-form metadata (Hecate's server reads `workspace` from it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
    /// Extensions the message uses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<String>,
    /// Tasks the message refers to.
    #[serde(
        default,
        alias = "reference_task_ids",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub reference_task_ids: Vec<String>,
}

impl Message {
    /// A message from `role` with `parts`, in `context_id` and continuing
    /// `task_id` when given, under a new random id.
    pub fn new(
        role: Role,
        parts: Vec<Part>,
        context_id: Option<String>,
        task_id: Option<String>,
    ) -> Self {
        Self {
            message_id: uuid::Uuid::new_v4().to_string(),
            context_id,
            task_id,
            role,
            parts,
            metadata: None,
            extensions: Vec::new(),
            reference_task_ids: Vec::new(),
        }
    }

    /// A user message of `text`, in `context_id` and continuing `task_id` when
    /// given.
    pub fn user(text: &str, context_id: Option<String>, task_id: Option<String>) -> Self {
        Self::new(Role::User, vec![Part::text(text)], context_id, task_id)
    }

    /// The text of its text parts, joined by newlines.
    pub fn text(&self) -> String {
        parts_text(&self.parts)
    }
}

/// The text of `parts`' text parts, joined by newlines.
pub fn parts_text(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| p.text.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn roles_use_the_proto_enum_names_and_refuse_others() {
        let r: Role = serde_json::from_value(json!("ROLE_USER")).expect("role");
        assert_eq!(r, Role::User);
        assert!(serde_json::from_value::<Role>(json!("user")).is_err());
        let a = serde_json::to_value(Role::Agent).expect("role");
        assert_eq!(a, json!("ROLE_AGENT"));
    }

    #[test]
    fn a_message_reads_camel_and_snake_case_and_writes_camel_case() {
        let m: Message = serde_json::from_value(json!({
            "message_id": "m1", "context_id": "c1", "role": "ROLE_USER",
            "parts": [{"text": "hi"}, {"data": {"decision": "approve"}}]
        }))
        .expect("snake case");
        assert_eq!(m.context_id.as_deref(), Some("c1"));
        let out = serde_json::to_value(&m).expect("write");
        assert_eq!(out["messageId"], "m1");
        assert_eq!(out["contextId"], "c1");
        assert_eq!(out["parts"][0], json!({"text": "hi"}));
        assert!(out.get("taskId").is_none(), "{out}");
    }

    #[test]
    fn a_user_message_is_proto_json_in_field_order() {
        let m = Message::user("hi", Some("c".into()), None);
        let text = serde_json::to_string(&m).expect("json");
        let expected = format!(
            r#"{{"messageId":"{}","contextId":"c","role":"ROLE_USER","parts":[{{"text":"hi"}}]}}"#,
            m.message_id
        );
        assert_eq!(text, expected);
        assert_eq!(m.text(), "hi");
    }

    #[test]
    fn a_part_keeps_the_proto_field_order() {
        let p = Part {
            text: None,
            raw: Some("AA==".into()),
            url: None,
            data: None,
            metadata: None,
            filename: Some("a.bin".into()),
            media_type: Some("application/octet-stream".into()),
        };
        assert_eq!(
            serde_json::to_string(&p).expect("json"),
            r#"{"raw":"AA==","filename":"a.bin","mediaType":"application/octet-stream"}"#
        );
    }

    #[test]
    fn an_empty_list_of_parts_may_be_left_out() {
        let m: Message =
            serde_json::from_value(json!({"messageId": "m", "role": "ROLE_AGENT"})).expect("m");
        assert!(m.parts.is_empty());
        assert_eq!(m.text(), "");
    }
}
