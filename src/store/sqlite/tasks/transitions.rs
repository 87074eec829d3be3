//! The queue and state transitions that read before they write, each one
//! `BEGIN IMMEDIATE` transaction: claiming the next run under a lease (taking
//! over an expired one), cancelling a run, resolving an approval, and an agent
//! loop's checkpoints and approval pauses under the worker's lease.

use super::super::OpResult;
use super::statements::*;
use crate::domain::error::HecateError;
use crate::domain::ids::{TaskId, TaskRunId};
use crate::domain::task::{TaskApproval, TaskEvent, TaskRun, TaskRunStatus};
use crate::domain::time::{now_millis, now_rfc3339};
use crate::store::rows::tasks::{self as decode, APPROVAL_COLUMNS, RunStatusChange};
use crate::store::task_transitions::{self as decide, cancel_event, check_pending, claim_events};
use crate::store::tasks::{ClaimedRun, RunCheckpoint, TaskApprovalDecision, TaskRunPark};
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

pub(super) fn claim(
    c: &mut Connection,
    owner: &str,
    lease_ms: i64,
) -> OpResult<Option<ClaimedRun>> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let now = now_millis();
    let next: Option<(String, Option<String>)> = tx
        .query_row(
            "SELECT run_id, lease_owner FROM task_queue \
             WHERE lease_owner IS NULL OR lease_expires_ms < ?1 \
             ORDER BY priority DESC, enqueued_ms LIMIT 1",
            params![now],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((run_id, previous)) = next else {
        return Ok(None);
    };
    let run_id = TaskRunId(run_id);
    tx.execute(
        "UPDATE task_queue SET lease_owner = ?2, lease_expires_ms = ?3, claims = claims + 1 \
         WHERE run_id = ?1",
        params![run_id.as_str(), owner, now + lease_ms],
    )?;
    tx.execute(
        "UPDATE task_runs SET status = 'running', started_at = COALESCE(started_at, ?2) \
         WHERE id = ?1",
        params![run_id.as_str(), now_rfc3339()],
    )?;
    let run = select_run_by_id(&tx, &run_id)?;
    let task = select_task(&tx, None, &run.task_id)?;
    let reclaimed = previous.is_some();
    if let Some(previous) = &previous {
        // The step the dead worker was running ended with it.
        tx.execute(
            "UPDATE task_steps SET status = 'failed', error_type = 'worker_lease_expired', \
             error_message = ?2, finished_at = ?3 WHERE run_id = ?1 AND status = 'running'",
            params![
                run.id.as_str(),
                format!("worker {previous} stopped renewing its lease"),
                now_rfc3339()
            ],
        )?;
    }
    let events = claim_events(previous.as_deref(), owner);
    let events = append_events(&tx, &run.task_id, &run.id, events)?;
    tx.commit()?;
    Ok(Some(ClaimedRun {
        task,
        run,
        reclaimed,
        events,
    }))
}

pub(super) fn cancel(
    c: &mut Connection,
    task_id: &TaskId,
    run_id: &TaskRunId,
) -> OpResult<(TaskRun, Vec<TaskEvent>)> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let run = select_run(&tx, task_id, run_id)?;
    let told = match run.status {
        s if s.is_terminal() => {
            return Err(conflict(format!("run {run_id} is already {}", s.as_str())).into());
        }
        TaskRunStatus::Running => {
            tx.execute(
                "UPDATE task_runs SET cancel_requested = 1 WHERE id = ?1",
                params![run_id.as_str()],
            )?;
            append_events(&tx, task_id, run_id, vec![cancel_event(true)])?
        }
        _ => {
            set_run_status(
                &tx,
                run_id,
                RunStatusChange::new(TaskRunStatus::Cancelled, None),
            )?;
            tx.execute(
                "DELETE FROM task_queue WHERE run_id = ?1",
                params![run_id.as_str()],
            )?;
            tx.execute(
                "UPDATE task_approvals SET status = 'cancelled', resolved_at = ?2 \
                 WHERE run_id = ?1 AND status = 'pending'",
                params![run_id.as_str(), now_rfc3339()],
            )?;
            append_events(&tx, task_id, run_id, vec![cancel_event(false)])?
        }
    };
    let run = select_run(&tx, task_id, run_id)?;
    tx.commit()?;
    Ok((run, told))
}

pub(super) fn resolve(
    c: &mut Connection,
    d: TaskApprovalDecision,
) -> OpResult<(TaskApproval, Vec<TaskEvent>)> {
    let (task_id, id, decision, note) = (&d.task_id, &d.id, d.decision, d.note.clone());
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let select =
        format!("SELECT {APPROVAL_COLUMNS} FROM task_approvals WHERE id = ?1 AND task_id = ?2");
    let approval = tx
        .query_row(&select, params![id.as_str(), task_id.as_str()], |r| {
            decode::approval(r)
        })
        .optional()?
        .ok_or_else(|| HecateError::not_found("approval", id.as_str()))?;
    check_pending(&approval)?;
    let run = select_run(&tx, task_id, &approval.run_id)?;
    let outcome = decide::resolve(&approval, &run, decision, &note, &d.by)?;
    tx.execute(
        "UPDATE task_approvals SET status = ?2, note = ?3, resolved_at = ?4 WHERE id = ?1",
        params![id.as_str(), decision.as_str(), note, now_rfc3339()],
    )?;
    match &outcome.failure {
        None => {
            let task = select_task(&tx, None, task_id)?;
            set_run_status(
                &tx,
                &run.id,
                RunStatusChange::new(TaskRunStatus::Queued, None),
            )?;
            enqueue(&tx, &run, task.spec.priority)?;
        }
        Some(error) => set_run_status(
            &tx,
            &run.id,
            RunStatusChange::new(TaskRunStatus::Failed, Some(error)),
        )?,
    }
    let told = append_events(&tx, task_id, &run.id, outcome.events)?;
    let approval = tx.query_row(&select, params![id.as_str(), task_id.as_str()], |r| {
        decode::approval(r)
    })?;
    tx.commit()?;
    Ok((approval, told))
}

pub(super) fn checkpoint(c: &mut Connection, cp: RunCheckpoint) -> OpResult<Vec<TaskEvent>> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    check_lease(&tx, &cp.run_id, &cp.owner)?;
    let run = select_run_by_id(&tx, &cp.run_id)?;
    if let Some(end) = &cp.step {
        update_step_end(&tx, &end.step)?;
        for a in &end.artifacts {
            insert_artifact(&tx, a)?;
        }
    }
    if let Some(step) = &cp.start {
        insert_step(&tx, step)?;
    }
    for a in &cp.replace {
        tx.prepare_cached(
            "DELETE FROM task_artifacts WHERE run_id = ?1 AND kind = ?2 AND name = ?3",
        )?
        .execute(params![cp.run_id.as_str(), a.kind, a.name])?;
        insert_artifact(&tx, a)?;
    }
    if let Some(cost) = &cp.cost {
        tx.prepare_cached(
            "UPDATE task_runs SET total_cost_micros_usd = ?2, model = ?3, provider = ?4 \
             WHERE id = ?1",
        )?
        .execute(params![
            cp.run_id.as_str(),
            cost.total_cost_micros_usd,
            cost.model,
            cost.provider
        ])?;
    }
    let mut events = cp.events;
    if let Some(end) = cp.step {
        events.splice(0..0, end.events);
    }
    let events = append_events(&tx, &run.task_id, &run.id, events)?;
    tx.commit()?;
    Ok(events)
}

pub(super) fn park(c: &mut Connection, park: TaskRunPark) -> OpResult<Vec<TaskEvent>> {
    let run_id = &park.run_id;
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    check_lease(&tx, run_id, &park.owner)?;
    let run = select_run_by_id(&tx, run_id)?;
    set_run_status(
        &tx,
        run_id,
        RunStatusChange::new(TaskRunStatus::AwaitingApproval, None),
    )?;
    tx.execute(
        "DELETE FROM task_queue WHERE run_id = ?1",
        params![run_id.as_str()],
    )?;
    insert_approval(&tx, &park.approval)?;
    let events = append_events(&tx, &run.task_id, run_id, park.events)?;
    tx.commit()?;
    Ok(events)
}
