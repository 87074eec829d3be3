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

/// The resolution path (the reason) of an approval that was pending when the
/// process asking it stopped: startup reconciliation cancels it with this.
pub const HUB_RESTARTED_PATH: &str = "hub_restarted";

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
    /// How it was resolved (operator, grant, default_mode, timeout, request_cancelled, hub_restarted).
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
    /// Who decided it, when a person did through an authenticated face
    /// (`admin`, `key:NAME`, `cli`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_by: Option<String>,
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
    /// Who made it (`admin`, `key:NAME`, `cli`), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// How permission requests are answered when no grant applies.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    /// Ask whoever can answer (editor, MCP client, operator), with a timeout.
    #[default]
    Prompt,
    /// Allow once without asking.
    Auto,
    /// Reject without asking.
    Deny,
}

impl ApprovalMode {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Prompt => "prompt",
            Self::Auto => "auto",
            Self::Deny => "deny",
        }
    }

    /// Parses `prompt`, `auto` or `deny`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "prompt" => Some(Self::Prompt),
            "auto" => Some(Self::Auto),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
}

/// An operator's decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Allow.
    Approve,
    /// Refuse.
    Reject,
}

impl Decision {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Approve => "approve",
            Self::Reject => "reject",
        }
    }
}

/// How far a decision reaches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scope {
    /// This request only.
    #[default]
    Once,
    /// This tool kind for the rest of the session.
    Session,
    /// This tool kind in this workspace.
    WorkspaceTool,
    /// This tool kind for this adapter anywhere.
    AdapterTool,
}

impl Scope {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Once => "once",
            Self::Session => "session",
            Self::WorkspaceTool => "workspace_tool",
            Self::AdapterTool => "adapter_tool",
        }
    }

    /// Every scope, in the order they are offered.
    pub const ALL: [Scope; 4] = [
        Scope::Once,
        Scope::Session,
        Scope::WorkspaceTool,
        Scope::AdapterTool,
    ];
}

/// The scopes a decision on a session's approval can take: `once` and `session`
/// always, `workspace_tool` with a workspace, `adapter_tool` with an adapter.
pub fn scope_choices(has_workspace: bool, has_adapter: bool) -> Vec<Scope> {
    let mut scopes = vec![Scope::Once, Scope::Session];
    if has_workspace {
        scopes.push(Scope::WorkspaceTool);
    }
    if has_adapter {
        scopes.push(Scope::AdapterTool);
    }
    scopes
}

/// Picks the agent option that carries out `decision` at `scope`, by kind: allow-once
/// for a one-off approval, allow-always (else allow-once) for a wider one, reject-once
/// (else reject-always) for a rejection. `None` when the agent offered no such option.
pub fn pick_option(
    options: &[crate::domain::permission::PermissionOption],
    decision: Decision,
    scope: Scope,
) -> Option<String> {
    use crate::domain::permission::PermissionKind as K;
    let order: &[K] = match (decision, scope) {
        (Decision::Approve, Scope::Once) => &[K::AllowOnce, K::AllowAlways],
        (Decision::Approve, _) => &[K::AllowAlways, K::AllowOnce],
        (Decision::Reject, Scope::Once) => &[K::RejectOnce, K::RejectAlways],
        (Decision::Reject, _) => &[K::RejectAlways, K::RejectOnce],
    };
    order
        .iter()
        .find_map(|k| options.iter().find(|o| o.kind == *k))
        .map(|o| o.id.clone())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::permission::{PermissionKind, PermissionOption};

    fn opt(id: &str, kind: PermissionKind) -> PermissionOption {
        PermissionOption {
            id: id.into(),
            name: id.into(),
            kind,
        }
    }

    #[test]
    fn options_are_chosen_by_kind_never_by_id() {
        let codex = vec![
            opt("approved", PermissionKind::AllowOnce),
            opt("abort", PermissionKind::RejectOnce),
        ];
        assert_eq!(
            pick_option(&codex, Decision::Approve, Scope::Session).as_deref(),
            Some("approved")
        );
        assert_eq!(
            pick_option(&codex, Decision::Reject, Scope::Once).as_deref(),
            Some("abort")
        );
        let claude = vec![
            opt("allow_always", PermissionKind::AllowAlways),
            opt("allow", PermissionKind::AllowOnce),
            opt("reject", PermissionKind::RejectOnce),
        ];
        assert_eq!(
            pick_option(&claude, Decision::Approve, Scope::Once).as_deref(),
            Some("allow")
        );
        assert_eq!(
            pick_option(&claude, Decision::Approve, Scope::AdapterTool).as_deref(),
            Some("allow_always")
        );
        assert_eq!(pick_option(&[], Decision::Approve, Scope::Once), None);
    }
}
