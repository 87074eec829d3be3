//! The decisions of the task transitions that read before they write, taken the
//! same on both backends: the events a claim opens with, what a cancel records,
//! and whether and how an approval's resolution moves its run.

use crate::domain::error::{ErrorType, HecateError};
use crate::domain::task::{
    TaskApproval, TaskApprovalKind, TaskApprovalStatus, TaskRun, TaskRunStatus,
};
use crate::store::tasks::NewTaskEvent;
use serde_json::json;

/// The events a claimed run opens with: a gap when it was taken over from the
/// `previous` worker, whose lease expired, then its start under `owner`.
pub(crate) fn claim_events(previous: Option<&str>, owner: &str) -> Vec<NewTaskEvent> {
    let mut events = Vec::new();
    if let Some(previous) = previous {
        events.push(NewTaskEvent::new(
            "gap.run_disconnected",
            json!({"reason": "worker_lease_expired", "previous_worker": previous}),
        ));
    }
    events.push(NewTaskEvent::new(
        "run.started",
        json!({"status": "running", "worker": owner}),
    ));
    events
}

/// The event a cancel records: asked of the worker of a `running` run, or done.
pub(crate) fn cancel_event(running: bool) -> NewTaskEvent {
    if running {
        NewTaskEvent::new("run.cancel_requested", json!({"status": "running"}))
    } else {
        NewTaskEvent::new("run.cancelled", json!({"status": "cancelled"}))
    }
}

/// What resolving an approval does to its run, and the events it records.
pub(crate) struct Resolution {
    /// `None`: the run is queued again; otherwise it fails with this
    /// (error type, message).
    pub(crate) failure: Option<(String, String)>,
    /// The resolution's events, in order.
    pub(crate) events: Vec<NewTaskEvent>,
}

/// A `conflict` unless `approval` still waits for its resolution.
pub(crate) fn check_pending(approval: &TaskApproval) -> Result<(), HecateError> {
    if approval.status == TaskApprovalStatus::Pending {
        return Ok(());
    }
    Err(conflict(format!(
        "approval {} is already {}",
        approval.id,
        approval.status.as_str()
    )))
}

/// Resolves pending `approval` of `run` with `decision`: a `conflict` unless
/// the run waits for it.
pub(crate) fn resolve(
    approval: &TaskApproval,
    run: &TaskRun,
    decision: TaskApprovalStatus,
    note: &Option<String>,
    by: &Option<String>,
) -> Result<Resolution, HecateError> {
    if run.status != TaskRunStatus::AwaitingApproval {
        return Err(conflict(format!(
            "run {} no longer waits for this approval (it is {})",
            run.id,
            run.status.as_str()
        )));
    }
    let mut events = vec![NewTaskEvent::new(
        "approval.resolved",
        json!({"approval_id": approval.id, "kind": approval.kind.as_str(),
               "decision": decision.as_str(), "note": note, "by": by}),
    )];
    let requeue = decision == TaskApprovalStatus::Approved
        || approval.kind == TaskApprovalKind::AgentLoopToolCall;
    if requeue {
        events.push(NewTaskEvent::new("run.queued", json!({"status": "queued"})));
        return Ok(Resolution {
            failure: None,
            events,
        });
    }
    let error = (
        "approval_rejected".to_string(),
        format!("the {} approval was rejected", approval.kind.as_str()),
    );
    events.push(NewTaskEvent::new(
        "run.failed",
        json!({"status": "failed", "error_type": error.0, "error_message": error.1}),
    ));
    Ok(Resolution {
        failure: Some(error),
        events,
    })
}

fn conflict(message: String) -> HecateError {
    HecateError::new(ErrorType::Conflict, message)
}
