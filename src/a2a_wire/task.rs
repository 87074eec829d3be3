//! Tasks and what happens to them: a task's state and status, its artifacts,
//! the events a stream (or a push notification) carries, and the
//! `StreamResponse` that wraps one of them.

use super::message::{Message, Part};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};

/// Where a task is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
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
    /// Waiting for the client's next message (Hecate's server: an approval).
    #[serde(rename = "TASK_STATE_INPUT_REQUIRED")]
    InputRequired,
    /// Refused before it ran.
    #[serde(rename = "TASK_STATE_REJECTED")]
    Rejected,
    /// Waiting for authentication.
    #[serde(rename = "TASK_STATE_AUTH_REQUIRED")]
    AuthRequired,
    /// Not set, or (when read) a state this version does not know.
    #[serde(other, rename = "TASK_STATE_UNSPECIFIED")]
    Unspecified,
}

/// The wire names of the states, in the order of [`TaskState::ALL`].
const STATE_NAMES: [&str; 9] = [
    "TASK_STATE_UNSPECIFIED",
    "TASK_STATE_SUBMITTED",
    "TASK_STATE_WORKING",
    "TASK_STATE_COMPLETED",
    "TASK_STATE_FAILED",
    "TASK_STATE_CANCELED",
    "TASK_STATE_INPUT_REQUIRED",
    "TASK_STATE_REJECTED",
    "TASK_STATE_AUTH_REQUIRED",
];

impl TaskState {
    /// Every state, in the proto's order.
    pub const ALL: [Self; 9] = [
        Self::Unspecified,
        Self::Submitted,
        Self::Working,
        Self::Completed,
        Self::Failed,
        Self::Canceled,
        Self::InputRequired,
        Self::Rejected,
        Self::AuthRequired,
    ];

    /// The state's wire name (`TASK_STATE_COMPLETED`, …).
    pub fn name(self) -> &'static str {
        match self {
            Self::Unspecified => STATE_NAMES[0],
            Self::Submitted => STATE_NAMES[1],
            Self::Working => STATE_NAMES[2],
            Self::Completed => STATE_NAMES[3],
            Self::Failed => STATE_NAMES[4],
            Self::Canceled => STATE_NAMES[5],
            Self::InputRequired => STATE_NAMES[6],
            Self::Rejected => STATE_NAMES[7],
            Self::AuthRequired => STATE_NAMES[8],
        }
    }

    /// The state of wire name `name`, when it is one.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

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

/// Reads an optional state strictly: a name this version does not know is an
/// error rather than `TASK_STATE_UNSPECIFIED` (for a filter a client sends).
pub fn known_state<'de, D: Deserializer<'de>>(d: D) -> Result<Option<TaskState>, D::Error> {
    let Some(name) = Option::<String>::deserialize(d)? else {
        return Ok(None);
    };
    match TaskState::from_name(&name) {
        Some(s) => Ok(Some(s)),
        None => Err(serde::de::Error::unknown_variant(&name, &STATE_NAMES)),
    }
}

/// A task's state with the message explaining it and when it was reached.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    /// The state.
    pub state: TaskState,
    /// What the agent says about it (the answer, the error, the question asked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Message>,
    /// When the state was reached (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp: Option<String>,
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
    /// What it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its content.
    #[serde(default)]
    pub parts: Vec<Part>,
    /// Free-form metadata (Hecate's server: a changed file's `path`, line
    /// counts and whether it was created or deleted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<Map<String, Value>>,
}

/// A task: the unit of work a message starts (in Hecate's server, one turn of
/// a session).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task id.
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
    /// Free-form metadata (Hecate's server: `hecateSessionId`, `hecateAgent`).
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

/// What a send answers, a stream carries and a push notification posts: a
/// task snapshot, a direct message, a status change or an artifact piece, as
/// one keyed object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamResponse {
    /// The whole task as it is now.
    Task(Box<Task>),
    /// A direct answer without a task.
    Message(Message),
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
            Self::Message(_) | Self::ArtifactUpdate(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn states_use_the_proto_enum_names_and_unknown_ones_read_as_unspecified() {
        let s = serde_json::to_value(TaskState::InputRequired).expect("state");
        assert_eq!(s, json!("TASK_STATE_INPUT_REQUIRED"));
        let odd: TaskState = serde_json::from_value(json!("TASK_STATE_NEW")).expect("unknown");
        assert_eq!(odd, TaskState::Unspecified);
        for s in TaskState::ALL {
            assert_eq!(serde_json::to_value(s).expect("name"), json!(s.name()));
            assert_eq!(TaskState::from_name(s.name()), Some(s));
        }
    }

    #[test]
    fn a_filter_state_is_read_strictly() {
        #[derive(Debug, Deserialize)]
        struct Filter {
            #[serde(default, deserialize_with = "known_state")]
            status: Option<TaskState>,
        }
        let f: Filter =
            serde_json::from_value(json!({"status": "TASK_STATE_WORKING"})).expect("known");
        assert_eq!(f.status, Some(TaskState::Working));
        let none: Filter = serde_json::from_value(json!({})).expect("absent");
        assert_eq!(none.status, None);
        let e = serde_json::from_value::<Filter>(json!({"status": "TASK_STATE_NEW"}))
            .expect_err("unknown");
        assert!(e.to_string().contains("unknown variant"), "{e}");
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
    }

    #[test]
    fn only_final_and_interrupted_states_end_a_wait() {
        assert!(TaskState::Canceled.is_terminal());
        assert!(!TaskState::InputRequired.is_terminal());
        assert!(TaskState::InputRequired.ends_a_wait());
        assert!(TaskState::AuthRequired.ends_a_wait());
        assert!(!TaskState::Working.ends_a_wait());
        assert!(!TaskState::Submitted.ends_a_wait());
        assert!(!TaskState::Unspecified.ends_a_wait());
    }
}
