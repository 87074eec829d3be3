//! Payloads of the discrete SSE events of a session stream (`approval.requested`,
//! `approval.resolved`); `snapshot` and `done` carry a `SessionResponse`.

use crate::domain::approval::{Approval, Scope};
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// One server-sent event as a client parses it from a stream: its `data` (one
/// JSON document in Hecate's streams, or `[DONE]` at the end of a Chat
/// Completions stream), and its `event` name and `id` when it has them. The
/// per-event schema of every `text/event-stream` answer in the API document.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SseEventDto {
    /// The event's data lines, joined with newlines.
    pub data: String,
    /// The event name (`message` when the stream names none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// The event id, when the stream gives one (a resume point).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The reconnection delay in milliseconds, when the stream sets one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<u64>,
}

/// `event: approval.requested`: a permission request waits for a decision.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ApprovalRequestedDto {
    /// Approval id (`appr_…`).
    pub approval_id: String,
    /// Session.
    pub session_id: String,
    /// The turn that asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Tool kind (file_write, execute, ...).
    pub tool_kind: String,
    /// Human tool name or title.
    pub tool_name: String,
    /// The options the agent offered, verbatim.
    #[schema(value_type = Object)]
    pub options: Value,
    /// Creation time.
    pub created_at: String,
    /// Deadline, when the request times out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The adapter that asked, for an external agent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_id: Option<String>,
    /// The scopes a decision can take: `once`, `session`, and `workspace_tool` /
    /// `adapter_tool` when the session has a workspace / an adapter.
    pub scope_choices: Vec<String>,
}

impl ApprovalRequestedDto {
    /// The event for approval `a` of a session run by `adapter_id`, decidable at
    /// `scopes`.
    pub fn new(a: &Approval, adapter_id: Option<&str>, scopes: &[Scope]) -> Self {
        Self {
            approval_id: a.id.to_string(),
            session_id: a.session_id.to_string(),
            run_id: a.run_id.as_ref().map(|r| r.to_string()),
            tool_kind: a.tool_kind.clone(),
            tool_name: a.tool_name.clone(),
            options: a.options.clone(),
            created_at: a.created_at.clone(),
            expires_at: a.expires_at.clone(),
            adapter_id: adapter_id.map(str::to_string),
            scope_choices: scopes.iter().map(|s| s.as_str().to_string()).collect(),
        }
    }
}

/// `event: approval.resolved`: a permission request was decided.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ApprovalResolvedDto {
    /// Approval id.
    pub approval_id: String,
    /// Session.
    pub session_id: String,
    /// `approved`, `rejected`, `timed_out` or `cancelled`.
    pub status: String,
    /// `approve` or `reject`, when decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// Scope of the decision.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// How it was resolved: operator, grant, default_mode, timeout, request_cancelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The agent option chosen.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selected_option: Option<String>,
    /// Resolution time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
}

impl From<&Approval> for ApprovalResolvedDto {
    fn from(a: &Approval) -> Self {
        Self {
            approval_id: a.id.to_string(),
            session_id: a.session_id.to_string(),
            status: a.status.as_str().to_string(),
            decision: a.decision.clone(),
            scope: a.scope.clone(),
            path: a.path.clone(),
            selected_option: a.selected_option.clone(),
            resolved_at: a.resolved_at.clone(),
        }
    }
}
