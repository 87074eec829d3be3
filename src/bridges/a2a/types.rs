//! The A2A 1.0 wire types this server reads and writes, in the ProtoJSON shape
//! the official SDKs send (`lowerCamelCase` fields, `TASK_STATE_*` / `ROLE_*`
//! enum names, one-of fields as a single present key). Requests also accept the
//! proto's `snake_case` field names, as ProtoJSON parsers do.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The protocol version of every interface this server publishes.
pub const PROTOCOL_VERSION: &str = "1.0";

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Role {
    /// Not set (refused on input).
    #[serde(rename = "ROLE_UNSPECIFIED")]
    Unspecified,
    /// The client.
    #[serde(rename = "ROLE_USER")]
    User,
    /// The agent.
    #[serde(rename = "ROLE_AGENT")]
    Agent,
}

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TaskState {
    /// Not set.
    #[serde(rename = "TASK_STATE_UNSPECIFIED")]
    Unspecified,
    /// Accepted, not yet running.
    #[serde(rename = "TASK_STATE_SUBMITTED")]
    Submitted,
    /// The turn is running.
    #[serde(rename = "TASK_STATE_WORKING")]
    Working,
    /// The turn answered.
    #[serde(rename = "TASK_STATE_COMPLETED")]
    Completed,
    /// The turn failed.
    #[serde(rename = "TASK_STATE_FAILED")]
    Failed,
    /// The turn was cancelled.
    #[serde(rename = "TASK_STATE_CANCELED")]
    Canceled,
    /// The turn waits for an approval the client answers with its next message.
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// Refused before it ran.
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    /// Waits for authentication.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
}

impl TaskState {
    /// Whether nothing more happens to a task in this state.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            Self::Completed | Self::Failed | Self::Canceled | Self::Rejected
        )
    }

    /// Whether a stream or a blocking send stops at this state (terminal, or
    /// waiting for the client).
    pub fn ends_a_wait(self) -> bool {
        self.is_terminal() || matches!(self, Self::InputRequired | Self::AuthRequired)
    }
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
    /// The conversation (a Hecate session of this agent).
    #[serde(default, alias = "context_id", skip_serializing_if = "Option::is_none")]
    pub context_id: Option<String>,
    /// The task this message continues (a turn waiting for input).
    #[serde(default, alias = "task_id", skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// Who wrote it.
    pub role: Role,
    /// Its content.
    pub parts: Vec<Part>,
    /// Free-form metadata (`workspace` names the directory a new conversation
    /// works in).
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

/// A task's state with the message explaining it and when it was reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// What the agent says about it (the answer, the error, the approval asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When the state was reached (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
}

/// Something a task produced (here: the answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// Its id within the task.
    pub artifact_id: String,
    /// A short name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its content.
    pub parts: Vec<Part>,
}

/// A task: one turn of a Hecate session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task id (the turn's run id).
    pub id: String,
    /// The conversation it belongs to.
    pub context_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What it produced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
    /// The messages exchanged in it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub history: Vec<Message>,
    /// Hecate's ids for it (`hecate_session_id`, `hecate_agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
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
    /// Whether this is the artifact's last piece.
    #[serde(default)]
    pub last_chunk: bool,
}

/// One event of a stream: a task snapshot, a status change or an artifact piece.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// The whole task as it is now.
    Task(Box<Task>),
    /// A state change.
    StatusUpdate(TaskStatusUpdateEvent),
    /// An artifact piece.
    ArtifactUpdate(TaskArtifactUpdateEvent),
}

impl StreamResponse {
    /// The state this event leaves its task in, when it says.
    pub fn state(&self) -> Option<TaskState> {
        match self {
            Self::Task(t) => Some(t.status.state),
            Self::StatusUpdate(s) => Some(s.status.state),
            Self::ArtifactUpdate(_) => None,
        }
    }
}

/// The answer of `SendMessage`: here always the task.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageResponse {
    /// The task the message started or continued.
    pub task: Task,
}

/// How the client wants a send handled.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageConfiguration {
    /// Output media types the client accepts.
    #[serde(default, alias = "accepted_output_modes")]
    pub accepted_output_modes: Vec<String>,
    /// How many history messages the answer carries.
    #[serde(default, alias = "history_length")]
    pub history_length: Option<i32>,
    /// Answer at once with the working task instead of waiting for its end.
    #[serde(default, alias = "return_immediately")]
    pub return_immediately: bool,
}

/// `SendMessage` / `SendStreamingMessage` parameters.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SendMessageRequest {
    /// The tenant (unused; one tenant per server).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The message.
    pub message: Message,
    /// How to handle it.
    #[serde(default)]
    pub configuration: Option<SendMessageConfiguration>,
    /// Free-form metadata.
    #[serde(default)]
    pub metadata: Option<Map<String, Value>>,
}

/// `GetTask` / `CancelTask` / `SubscribeToTask` parameters.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskIdRequest {
    /// The tenant (unused).
    #[serde(default)]
    pub tenant: Option<String>,
    /// The task id.
    pub id: String,
    /// How many history messages to include (`GetTask`).
    #[serde(default, alias = "history_length")]
    pub history_length: Option<i32>,
}

/// `ListTasks` parameters.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksRequest {
    /// The tenant (unused).
    #[serde(default)]
    pub tenant: Option<String>,
    /// Only tasks of this conversation.
    #[serde(default, alias = "context_id")]
    pub context_id: Option<String>,
    /// Only tasks in this state.
    #[serde(default)]
    pub status: Option<TaskState>,
    /// Most tasks per page (50 by default, 100 at most).
    #[serde(default, alias = "page_size")]
    pub page_size: Option<i32>,
    /// Where the page starts (from a previous `nextPageToken`).
    #[serde(default, alias = "page_token")]
    pub page_token: Option<String>,
    /// How many history messages each task carries.
    #[serde(default, alias = "history_length")]
    pub history_length: Option<i32>,
    /// Whether tasks carry their artifacts.
    #[serde(default, alias = "include_artifacts")]
    pub include_artifacts: Option<bool>,
}

/// The answer of `ListTasks`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListTasksResponse {
    /// This page, newest first.
    pub tasks: Vec<Task>,
    /// The token of the next page, empty on the last.
    pub next_page_token: String,
    /// The page size used.
    pub page_size: i32,
    /// How many tasks match in all.
    pub total_size: i32,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn states_and_roles_use_the_proto_enum_names() {
        let s = serde_json::to_value(TaskState::InputRequired).expect("state");
        assert_eq!(s, json!("TASK_STATE_INPUT_REQUIRED"));
        let r: Role = serde_json::from_value(json!("ROLE_USER")).expect("role");
        assert_eq!(r, Role::User);
        assert!(serde_json::from_value::<Role>(json!("user")).is_err());
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
    fn a_stream_event_is_one_keyed_object() {
        let ev = StreamResponse::StatusUpdate(TaskStatusUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            status: TaskStatus {
                state: TaskState::Completed,
                message: None,
                timestamp: None,
            },
        });
        let v = serde_json::to_value(&ev).expect("event");
        assert_eq!(v["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED");
        assert_eq!(v.as_object().map(|o| o.len()), Some(1));
        assert_eq!(ev.state(), Some(TaskState::Completed));
    }

    #[test]
    fn only_final_and_interrupted_states_end_a_wait() {
        assert!(TaskState::Canceled.is_terminal());
        assert!(!TaskState::InputRequired.is_terminal());
        assert!(TaskState::InputRequired.ends_a_wait());
        assert!(!TaskState::Working.ends_a_wait());
    }
}
