//! A pending task approval put to the MCP client's user by elicitation, in the
//! words agent-session approvals use (what is asked for, the gate, and here the
//! task and run ids): the user approves, rejects (declining the form rejects
//! too, with a note), or gives no answer, which leaves the approval pending. A
//! question whose approval was resolved elsewhere first is withdrawn. The form
//! reaches the user as the client's revision allows ([`Reach`]).

use crate::bridges::mcp::elicit::{Reach, decision_field, form_params, parse_choice};
use crate::domain::approval::Decision;
use crate::domain::task::TaskApproval;
use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitationAction, ServerRequest,
};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The note kept on an approval whose form the user declined without a note.
pub const DECLINED_NOTE: &str = "declined by the MCP client's user";

/// The note kept on an approval the user rejected without a note.
pub const REJECTED_NOTE: &str = "rejected by the MCP client's user";

/// The `_meta` key of the form naming the approval, its task and run.
pub const META_KEY: &str = "hecate/task_approval";

/// What the client's user said about a task approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskVerdict {
    /// Approve it, with the user's note.
    Approve(Option<String>),
    /// Reject it, with the user's note (or a note saying who rejected it).
    Reject(String),
    /// Dismissed, not answerable or not answered in time: it stays pending.
    Unanswered,
    /// Taken back because the approval no longer waits for an answer.
    Withdrawn,
}

/// The elicitation form asking about `a`.
pub fn task_form(a: &TaskApproval) -> Value {
    json!({
        "message": format!(
            "Hecate: permission requested for \"{}\" ({}) by task {}, run {}. Allow it?",
            a.reason,
            a.kind.as_str(),
            a.task_id,
            a.run_id
        ),
        "requestedSchema": {
            "type": "object",
            "properties": {
                "decision": decision_field(
                    "approve_once (the run goes ahead) or reject (the run fails)",
                    &["approve_once", "reject"],
                ),
                "note": {
                    "type": "string",
                    "title": "Note",
                    "description": "Kept on the approval"
                }
            },
            "required": ["decision"]
        },
        "_meta": {
            META_KEY: {
                "approval_id": a.id,
                "task_id": a.task_id,
                "run_id": a.run_id,
                "kind": a.kind.as_str(),
                "reason": a.reason
            }
        }
    })
}

/// Reads the client's answer to the form: the chosen decision with the note,
/// a decline as a rejection, anything else as no answer.
pub fn verdict(action: ElicitationAction, content: Option<&Value>) -> TaskVerdict {
    let field = |name: &str| {
        content
            .and_then(|c| c.get(name))
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    let note = field("note").map(str::to_string);
    match action {
        ElicitationAction::Accept => match field("decision").and_then(parse_choice) {
            Some((Decision::Approve, _)) => TaskVerdict::Approve(note),
            Some((Decision::Reject, _)) => {
                TaskVerdict::Reject(note.unwrap_or_else(|| REJECTED_NOTE.into()))
            }
            None => TaskVerdict::Unanswered,
        },
        ElicitationAction::Decline => {
            TaskVerdict::Reject(note.unwrap_or_else(|| DECLINED_NOTE.into()))
        }
        _ => TaskVerdict::Unanswered,
    }
}

/// Asks the client's user about `a` and waits at most `timeout` for the
/// answer; when `withdraw` fires first, a request on the session is cancelled
/// at the client (a question of a round is left unanswered).
pub async fn ask_task(
    reach: &Reach,
    a: &TaskApproval,
    timeout: Duration,
    withdraw: &CancellationToken,
) -> TaskVerdict {
    let Some(params) = form_params(task_form(a)) else {
        return TaskVerdict::Unanswered;
    };
    let peer = match reach {
        Reach::Session(peer) => peer,
        Reach::Rounds(_) => {
            return tokio::select! {
                answer = reach.elicit(params, Some(timeout)) => match answer {
                    Ok(r) => verdict(r.action, r.content.as_ref()),
                    Err(e) => {
                        tracing::info!(error = %e, approval_id = %a.id, "task approval elicitation got no answer");
                        TaskVerdict::Unanswered
                    }
                },
                _ = withdraw.cancelled() => TaskVerdict::Withdrawn,
            };
        }
    };
    let request = ServerRequest::ElicitRequest(ElicitRequest::new(params));
    let handle = match peer
        .send_request_with_option(request, PeerRequestOptions::with_timeout(timeout))
        .await
    {
        Ok(h) => h,
        Err(e) => {
            tracing::warn!(error = %e, "elicitation for a task approval could not be sent");
            return TaskVerdict::Unanswered;
        }
    };
    let id = handle.id.clone();
    tokio::select! {
        answer = handle.await_response() => match answer {
            Ok(ClientResult::ElicitResult(r)) => verdict(r.action, r.content.as_ref()),
            Ok(_) => TaskVerdict::Unanswered,
            Err(e) => {
                tracing::info!(error = %e, approval_id = %a.id, "task approval elicitation got no answer");
                TaskVerdict::Unanswered
            }
        },
        _ = withdraw.cancelled() => {
            let reason = format!("approval {} no longer waits for an answer", a.id);
            let cancelled = CancelledNotificationParam::new(Some(id), Some(reason));
            if peer.notify_cancelled(cancelled).await.is_err() {
                tracing::debug!("withdrawing a task approval elicitation failed");
            }
            TaskVerdict::Withdrawn
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::{TaskApprovalId, TaskId, TaskRunId};
    use crate::domain::task::{TaskApprovalKind, TaskApprovalStatus};
    use rmcp::model::ElicitRequestParams;

    fn approval() -> TaskApproval {
        TaskApproval {
            id: TaskApprovalId::from("tappr_1"),
            task_id: TaskId::from("task_1"),
            run_id: TaskRunId::from("trun_1"),
            kind: TaskApprovalKind::ShellCommand,
            status: TaskApprovalStatus::Pending,
            reason: "run `make test`".into(),
            note: None,
            created_at: String::new(),
            resolved_at: None,
        }
    }

    #[test]
    fn the_form_names_the_gate_the_command_the_task_and_the_run() {
        let form = task_form(&approval());
        let message = form["message"].as_str().expect("message");
        for part in ["run `make test`", "shell_command", "task_1", "trun_1"] {
            assert!(message.contains(part), "{part} in {message}");
        }
        assert_eq!(form["_meta"][META_KEY]["approval_id"], "tappr_1");
        assert!(serde_json::from_value::<ElicitRequestParams>(form).is_ok());
    }

    #[test]
    fn answers_map_to_approve_reject_or_pending() {
        let accept = |c: Value| verdict(ElicitationAction::Accept, Some(&c));
        assert_eq!(
            accept(json!({"decision": "approve_once"})),
            TaskVerdict::Approve(None)
        );
        assert_eq!(
            accept(json!({"decision": "approve_once", "note": " ok "})),
            TaskVerdict::Approve(Some("ok".into()))
        );
        assert_eq!(
            accept(json!({"decision": "reject", "note": "no"})),
            TaskVerdict::Reject("no".into())
        );
        assert_eq!(
            accept(json!({"decision": "reject"})),
            TaskVerdict::Reject(REJECTED_NOTE.into())
        );
        assert_eq!(
            accept(json!({"decision": "maybe"})),
            TaskVerdict::Unanswered
        );
        assert_eq!(
            verdict(ElicitationAction::Decline, None),
            TaskVerdict::Reject(DECLINED_NOTE.into())
        );
        assert_eq!(
            verdict(ElicitationAction::Cancel, None),
            TaskVerdict::Unanswered
        );
    }
}
