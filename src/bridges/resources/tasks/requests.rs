//! The small bodies and queries of the task endpoints: run actions, continue,
//! retry from a turn, resolving a gate, and the event and task lists.

use crate::domain::HecateError;
use crate::domain::ids::TaskId;
use crate::domain::task::{ExecutionKind, TaskListFilter, TaskRunStatus};
use serde::Deserialize;
use utoipa::{IntoParams, ToSchema};

/// Body of the retry, resume and cancel endpoints (all optional).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunActionRequest {
    /// Why (recorded on the new run's `run.resumed_from_event`).
    pub reason: Option<String>,
}

/// Body of `POST …/runs/{run_id}/continue`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContinueRunRequest {
    /// The follow-up instruction appended to the run's conversation.
    pub prompt: String,
    /// Why (recorded on the new run's `run.resumed_from_event`).
    pub reason: Option<String>,
}

/// Body of `POST …/runs/{run_id}/retry-from-turn`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryFromTurnRequest {
    /// The model turn (1-based) the new run takes again.
    pub turn: u32,
    /// Why (recorded on the new run's `run.resumed_from_event`).
    pub reason: Option<String>,
}

/// Body of `POST …/approvals/{approval_id}/resolve`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveTaskApprovalRequest {
    /// `approve` or `reject`.
    pub decision: String,
    /// A note kept on the approval.
    pub note: Option<String>,
}

/// One event a client appends to a run's log.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ClientEventRequest {
    /// Its type: a-z, 0-9, `.`, `_`, `-`, not one of Hecate's own prefixes
    /// (`run.`, `step.`, `approval.`, `artifact.`, `tool.`, `agent.`, `patch.`).
    #[serde(rename = "type")]
    pub event_type: String,
    /// Its data, an object (`{}` when absent).
    #[schema(value_type = Option<Object>)]
    pub data: Option<serde_json::Value>,
}

/// Body of `POST …/runs/{run_id}/events`: 1 to 100 events, appended in order.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendTaskEventsRequest {
    /// The events.
    pub events: Vec<ClientEventRequest>,
}

/// Query of the event lists.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TaskEventsQuery {
    /// Only events after this sequence.
    pub after_sequence: Option<i64>,
    /// Comma-separated event types (any of them).
    pub event_type: Option<String>,
    /// Only this task (process-wide feed).
    pub task_id: Option<String>,
    /// At most this many (default 500, at most 5,000).
    pub limit: Option<usize>,
    /// The newest this many (1–500) instead: a list answers them oldest first;
    /// a stream replays them first, then follows (`Last-Event-ID` still wins).
    pub tail: Option<usize>,
}

/// Query of `GET /hecate/v1/tasks`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TaskListQuery {
    /// At most this many (default 100, at most 1,000).
    pub limit: Option<usize>,
    /// Only tasks whose newest run has this status (`queued`, `running`,
    /// `awaiting_approval`, `completed`, `failed`, `cancelled`).
    pub status: Option<String>,
    /// Only tasks of this kind (`shell`, `git`, `file`, `agent_loop`).
    pub execution_kind: Option<String>,
    /// Only tasks working in this directory (exactly as the task shows it).
    pub working_directory: Option<String>,
    /// The cursor: only tasks older than this task id (the last of the
    /// previous page).
    pub before: Option<String>,
}

impl TaskListQuery {
    /// The store filter for `namespace`; a status or kind Hecate does not know
    /// is `invalid_request` naming the field.
    pub fn filter(self, namespace: &str) -> Result<TaskListFilter, HecateError> {
        let status = match self.status.as_deref().filter(|s| !s.is_empty()) {
            Some(s) => Some(TaskRunStatus::parse(s).ok_or_else(|| {
                HecateError::invalid(format!(
                    "status must be queued, running, awaiting_approval, completed, failed or cancelled, got {s:?}"
                ))
                .with_detail("field", "status")
            })?),
            None => None,
        };
        let execution_kind = match self.execution_kind.as_deref().filter(|s| !s.is_empty()) {
            Some(k) => Some(ExecutionKind::parse(k).ok_or_else(|| {
                HecateError::invalid(format!(
                    "execution_kind must be shell, git, file or agent_loop, got {k:?}"
                ))
                .with_detail("field", "execution_kind")
            })?),
            None => None,
        };
        Ok(TaskListFilter {
            namespace: namespace.to_string(),
            status,
            execution_kind,
            working_directory: self.working_directory.filter(|w| !w.is_empty()),
            before: self.before.filter(|b| !b.is_empty()).map(TaskId::from),
            limit: self.limit.unwrap_or(100).clamp(1, 1000),
        })
    }
}
