//! The A2A 1.0 wire types the client reads and writes, in the ProtoJSON shape
//! of the official SDKs (`lowerCamelCase` fields, `TASK_STATE_*` / `ROLE_*`
//! enum names, one-of fields as a single present key). Only what Hecate uses
//! is typed; unknown fields are ignored.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum TaskState {
    /// Accepted, not yet running.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// Running.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// Answered.
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// Failed.
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// Cancelled.
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    /// Waiting for the client's next message.
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// Refused.
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    /// Waiting for authentication.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
    /// Not set, or a state this client does not know.
    #[serde(other, rename = "TASK_STATE_UNSPECIFIED")]
    Unspecified,
}

impl TaskState {
    /// Whether a stream or a blocking send stops at this state (terminal, or
    /// waiting for the client).
    pub fn ends_a_wait(self) -> bool {
        !matches!(self, Self::Submitted | Self::Working | Self::Unspecified)
    }
}

/// One piece of a message or an artifact: text, data, or a file by bytes or URL.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Part {
    /// Plain text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
    /// Structured data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    /// A file by reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A file's bytes, base64-encoded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
    /// The content's media type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    /// A file name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filename: Option<String>,
}

impl Part {
    /// A text part.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Message {
    /// The sender's id for it.
    pub message_id: String,
    /// The conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The task it continues.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// `ROLE_USER` or `ROLE_AGENT`.
    pub role: String,
    /// Its content.
    #[serde(default)]
    pub parts: Vec<Part>,
}

impl Message {
    /// A user message of `text`, in `context_id` and continuing `task_id` when given.
    pub fn user(text: &str, context_id: Option<String>, task_id: Option<String>) -> Self {
        Self {
            message_id: uuid::Uuid::new_v4().to_string(),
            context_id,
            task_id,
            role: "ROLE_USER".into(),
            parts: vec![Part::text(text)],
        }
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

/// A task's state and the message explaining it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// What the agent says about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
}

/// Something a task produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Its id within the task.
    pub artifact_id: String,
    /// A short name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its content.
    #[serde(default)]
    pub parts: Vec<Part>,
}

/// A task: the unit of work a message starts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task id.
    pub id: String,
    /// Its conversation.
    pub context_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What it produced.
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
}

/// A change of a task's state, as streamed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatusUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The new status.
    pub status: TaskStatus,
}

/// A piece of an artifact, as streamed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskArtifactUpdateEvent {
    /// The task.
    pub task_id: String,
    /// Its conversation.
    pub context_id: String,
    /// The artifact or the piece of it.
    pub artifact: Artifact,
    /// Whether the parts extend the artifact already sent under this id.
    #[serde(default)]
    pub append: bool,
}

/// What a send answers and what a stream carries: a task, a direct message, a
/// status change or an artifact piece.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// The whole task as it is now.
    Task(Task),
    /// A direct answer without a task.
    Message(Message),
    /// A state change.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact piece.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_what_the_python_sdk_streams() {
        let ev: StreamResponse = serde_json::from_value(json!({"statusUpdate": {
            "taskId": "t", "contextId": "c",
            "status": {"state": "TASK_STATE_INPUT_REQUIRED", "timestamp": "x",
                "message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "ok?"}]}}
        }}))
        .expect("status update");
        let StreamResponse::StatusUpdate(s) = ev else {
            panic!("not a status update: {ev:?}");
        };
        assert_eq!(s.status.state, TaskState::InputRequired);
        assert!(s.status.state.ends_a_wait());
        assert_eq!(s.status.message.map(|m| m.text()).as_deref(), Some("ok?"));
        let odd: TaskState = serde_json::from_value(json!("TASK_STATE_NEW")).expect("unknown");
        assert_eq!(odd, TaskState::Unspecified);
    }

    #[test]
    fn a_user_message_is_proto_json() {
        let m = serde_json::to_value(Message::user("hi", Some("c".into()), None)).expect("json");
        assert_eq!(m["role"], "ROLE_USER");
        assert_eq!(m["contextId"], "c");
        assert!(m.get("taskId").is_none());
        assert_eq!(m["parts"][0]["text"], "hi");
    }
}
