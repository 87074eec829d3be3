//! The small bodies and queries of the task endpoints: run actions, continue,
//! retry from a turn, resolving a gate, and the event and task lists.

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
}

/// Query of `GET /hecate/v1/tasks`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TaskListQuery {
    /// At most this many (default 100).
    pub limit: Option<usize>,
}
