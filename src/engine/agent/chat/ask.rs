//! A task run's approval gate put to an Agent Chat session as a permission
//! request, the way an external agent's tool call is: three options (approve
//! once, approve always — a session grant for the tool's kind that answers
//! later gates of that kind — and reject), answered by the session's approval path (a grant, the turn's
//! mode, the CLI prompt, `hecate approvals resolve` or the HTTP approval
//! endpoints), and read back as the task approval's decision.

use super::events::grant_kind;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::permission::{
    PermissionKind, PermissionOption, PermissionOutcome, PermissionRequest,
};
use crate::domain::task::TaskApproval;
use serde_json::{Value, json};

/// The option id that approves the gated call.
const APPROVE: &str = "approve";
/// The option id that approves it and grants its kind for the session.
const APPROVE_ALWAYS: &str = "approve_always";
/// The option id that rejects the gated call.
const REJECT: &str = "reject";

/// The permission request asking about `approval`; `requested` is the data of
/// its `approval.requested` event (tool, arguments, tool call id), when read.
pub(super) fn permission_request(
    session_id: &SessionId,
    run_id: &RunId,
    approval: &TaskApproval,
    requested: Option<&Value>,
) -> PermissionRequest {
    let tool = requested
        .and_then(|d| d["tool"].as_str())
        .unwrap_or_default();
    let call_id = requested
        .and_then(|d| d["tool_call_id"].as_str())
        .unwrap_or(approval.id.as_str());
    PermissionRequest {
        session_id: session_id.clone(),
        run_id: run_id.clone(),
        tool_call_id: call_id.to_string(),
        title: approval.reason.clone(),
        tool_kind: Some(grant_kind(tool).to_string()),
        raw: json!({
            "task_id": approval.task_id,
            "task_run_id": approval.run_id,
            "task_approval_id": approval.id,
            "tool": tool,
            "arguments": requested.map(|d| d["arguments"].clone()).unwrap_or(Value::Null),
        }),
        options: vec![
            PermissionOption {
                id: APPROVE.to_string(),
                name: "Approve".to_string(),
                kind: PermissionKind::AllowOnce,
            },
            PermissionOption {
                id: APPROVE_ALWAYS.to_string(),
                name: "Approve always".to_string(),
                kind: PermissionKind::AllowAlways,
            },
            PermissionOption {
                id: REJECT.to_string(),
                name: "Reject".to_string(),
                kind: PermissionKind::RejectOnce,
            },
        ],
    }
}

/// Whether the outcome approves the call (`None`: nobody chose).
pub(super) fn approves(outcome: &PermissionOutcome) -> Option<bool> {
    match outcome {
        PermissionOutcome::Selected { option_id } => {
            Some(option_id == APPROVE || option_id == APPROVE_ALWAYS)
        }
        PermissionOutcome::Cancelled => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::approval::{Decision, Scope, pick_option};
    use crate::domain::ids::{TaskApprovalId, TaskId, TaskRunId};
    use crate::domain::task::{TaskApprovalKind, TaskApprovalStatus};

    #[test]
    fn every_session_answer_maps_to_a_task_decision() {
        let approval = TaskApproval {
            id: TaskApprovalId::from("tappr_1"),
            task_id: TaskId::from("task_1"),
            run_id: TaskRunId::from("trun_1"),
            kind: TaskApprovalKind::AgentLoopToolCall,
            status: TaskApprovalStatus::Pending,
            reason: "the agent wants to use file_write".into(),
            note: None,
            created_at: String::new(),
            resolved_at: None,
        };
        let requested = json!({"tool": "file_write", "tool_call_id": "c1", "arguments": {}});
        let req = permission_request(
            &SessionId::from("s"),
            &RunId::from("r"),
            &approval,
            Some(&requested),
        );
        assert_eq!(req.tool_kind.as_deref(), Some("edit"));
        assert_eq!(req.tool_call_id, "c1");
        for scope in [Scope::Once, Scope::Session, Scope::WorkspaceTool] {
            let yes = pick_option(&req.options, Decision::Approve, scope).expect("approve");
            let no = pick_option(&req.options, Decision::Reject, scope).expect("reject");
            assert_eq!(
                approves(&PermissionOutcome::Selected { option_id: yes }),
                Some(true)
            );
            assert_eq!(
                approves(&PermissionOutcome::Selected { option_id: no }),
                Some(false)
            );
        }
        assert_eq!(
            pick_option(&req.options, Decision::Approve, Scope::Session).as_deref(),
            Some(APPROVE_ALWAYS),
            "approving for the session picks the option that says so"
        );
        assert_eq!(approves(&PermissionOutcome::Cancelled), None);
    }
}
