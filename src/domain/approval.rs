//! Approvals and grants: pending decisions about a tool or permission, and standing
//! answers that pre-resolve future ones within a scope.

use crate::domain::ids::{ApprovalId, GrantId, RunId, SessionId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    /// Waiting for a decision.
    Pending,
    /// Approved.
    Approved,
    /// Rejected.
    Rejected,
    /// Nobody answered in time (or the process died).
    TimedOut,
    /// The request died before an answer.
    Cancelled,
}

impl ApprovalStatus {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::TimedOut => "timed_out",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a stored status; unknown values read as `cancelled`.
    pub fn parse(s: &str) -> Self {
        match s {
            "pending" => Self::Pending,
            "approved" => Self::Approved,
            "rejected" => Self::Rejected,
            "timed_out" => Self::TimedOut,
            _ => Self::Cancelled,
        }
    }
}

/// The resolution path written by startup reconciliation.
pub const STARTUP_RECONCILE_PATH: &str = "startup_reconcile";

/// A stored approval request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    /// Approval id.
    pub id: ApprovalId,
    /// Owning session.
    pub session_id: SessionId,
    /// Owning run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<RunId>,
    /// Status.
    pub status: ApprovalStatus,
    /// Tool kind (file_write, execute, ...).
    pub tool_kind: String,
    /// Human tool name or title.
    pub tool_name: String,
    /// The options the agent offered, verbatim.
    pub options: Value,
    /// `approve` or `reject`, once decided.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision: Option<String>,
    /// Scope of the decision (once, session, workspace_tool, adapter_tool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// How it was resolved (operator, grant, default_mode, timeout, request_cancelled, startup_reconcile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The agent option chosen, verbatim.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selected_option: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// Deadline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Resolution time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<String>,
}

/// A standing answer to future approvals within a scope.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Grant {
    /// Grant id.
    pub id: GrantId,
    /// Namespace.
    pub namespace: String,
    /// Scope: session, workspace_tool or adapter_tool.
    pub scope: String,
    /// Session, for session scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<SessionId>,
    /// Adapter, for adapter scopes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub adapter_id: Option<String>,
    /// Workspace, for workspace scope.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Tool kind covered.
    pub tool_kind: String,
    /// `approve` or `reject`.
    pub decision: String,
    /// Creation time.
    pub created_at: String,
    /// Expiry, when any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}
