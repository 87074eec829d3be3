//! Runs (turns): one prompt and everything it caused, with an ordered event log.

use crate::domain::ids::{RunId, SessionId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The status of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// In progress.
    Running,
    /// Blocked on an approval.
    AwaitingApproval,
    /// Finished normally.
    Completed,
    /// Finished with an error.
    Failed,
    /// Stopped on request.
    Cancelled,
}

impl RunStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::AwaitingApproval => "awaiting_approval",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a stored status; unknown values read as `failed`.
    pub fn parse(s: &str) -> Self {
        match s {
            "running" => Self::Running,
            "awaiting_approval" => Self::AwaitingApproval,
            "completed" => Self::Completed,
            "cancelled" => Self::Cancelled,
            _ => Self::Failed,
        }
    }

    /// Whether the run has ended.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// The reason stored on runs that a dead process left running.
pub const INTERRUPTED_REASON: &str = "interrupted";

/// A stored run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// Run id.
    pub id: RunId,
    /// Owning session.
    pub session_id: SessionId,
    /// Status.
    pub status: RunStatus,
    /// Error type when failed (`interrupted` after a crash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// Error message when failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Correlation id of the request that started the run.
    pub request_id: String,
    /// Trace id, when tracing exported one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// The id of the turn's own span (`agent_chat.run`) in that trace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span_id: Option<String>,
    /// Start time.
    pub started_at: String,
    /// End time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Duration in milliseconds, once ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
}

/// One persisted event of a run, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunEvent {
    /// Owning run.
    pub run_id: RunId,
    /// Position within the run.
    pub sequence: i64,
    /// Event type (see `event::EngineEvent::kind`).
    #[serde(rename = "type")]
    pub event_type: String,
    /// Event payload.
    pub data: Value,
    /// When it happened.
    pub occurred_at: String,
}
