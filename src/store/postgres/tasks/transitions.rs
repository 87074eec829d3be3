//! The queue and state transitions that read before they write, each one
//! transaction: claiming the next run under a lease (`FOR UPDATE SKIP LOCKED`,
//! so concurrent workers on any replica never take the same run), cancelling a
//! run, resolving an approval, and an agent loop's checkpoints and approval
//! pauses under the worker's lease.

use super::super::{OpResult, conflict};
use super::statements::*;
use crate::domain::error::HecateError;
use crate::domain::ids::{TaskId, TaskRunId};
use crate::domain::task::{TaskApproval, TaskEvent, TaskRun, TaskRunStatus};
use crate::domain::time::{now_millis, now_rfc3339};
use crate::store::rows::tasks::{self as decode, APPROVAL_COLUMNS, RunStatusChange};
use crate::store::task_transitions::{self as decide, cancel_event, check_pending, claim_events};
use crate::store::tasks::{ClaimedRun, RunCheckpoint, TaskApprovalDecision, TaskRunPark};
use deadpool_postgres::{GenericClient, Transaction};

pub(super) async fn claim(
    tx: &Transaction<'_>,
    owner: &str,
    lease_ms: i64,
) -> OpResult<Option<ClaimedRun>> {
    let now = now_millis();
    let next = tx
        .query_opt(
            "SELECT run_id, lease_owner FROM task_queue \
             WHERE lease_owner IS NULL OR lease_expires_ms < $1 \
             ORDER BY priority DESC, enqueued_ms LIMIT 1 FOR UPDATE SKIP LOCKED",
            &[&now],
        )
        .await?;
    let Some(next) = next else {
        return Ok(None);
    };
    let run_id = TaskRunId(next.try_get(0)?);
    let previous: Option<String> = next.try_get(1)?;
    tx.execute(
        "UPDATE task_queue SET lease_owner = $2, lease_expires_ms = $3, claims = claims + 1 \
         WHERE run_id = $1",
        &[&run_id.as_str(), &owner, &(now + lease_ms)],
    )
    .await?;
    tx.execute(
        "UPDATE task_runs SET status = 'running', started_at = COALESCE(started_at, $2) \
         WHERE id = $1",
        &[&run_id.as_str(), &now_rfc3339()],
    )
    .await?;
    let run = select_run_by_id(tx, &run_id).await?;
    let task = select_task(tx, None, &run.task_id, false).await?;
    let reclaimed = previous.is_some();
    if let Some(previous) = &previous {
        // The step the dead worker was running ended with it.
        tx.execute(
            "UPDATE task_steps SET status = 'failed', error_type = 'worker_lease_expired', \
             error_message = $2, finished_at = $3 WHERE run_id = $1 AND status = 'running'",
            &[
                &run.id.as_str(),
                &format!("worker {previous} stopped renewing its lease"),
                &now_rfc3339(),
            ],
        )
        .await?;
    }
    let events = claim_events(previous.as_deref(), owner);
    let events = append_events(tx, &run.task_id, &run.id, events).await?;
    Ok(Some(ClaimedRun {
        task,
        run,
        reclaimed,
        events,
    }))
}

pub(super) async fn cancel(
    tx: &Transaction<'_>,
    task_id: &TaskId,
    run_id: &TaskRunId,
) -> OpResult<(TaskRun, Vec<TaskEvent>)> {
    tx.execute(
        "SELECT 1 FROM task_runs WHERE id = $1 FOR UPDATE",
        &[&run_id.as_str()],
    )
    .await?;
    let run = select_run(tx, task_id, run_id).await?;
    let told = match run.status {
        s if s.is_terminal() => {
            return Err(conflict(format!("run {run_id} is already {}", s.as_str())).into());
        }
        TaskRunStatus::Running => {
            tx.execute(
                "UPDATE task_runs SET cancel_requested = TRUE WHERE id = $1",
                &[&run_id.as_str()],
            )
            .await?;
            append_events(tx, task_id, run_id, vec![cancel_event(true)]).await?
        }
        _ => {
            set_run_status(
                tx,
                run_id,
                RunStatusChange::new(TaskRunStatus::Cancelled, None),
            )
            .await?;
            tx.execute(
                "DELETE FROM task_queue WHERE run_id = $1",
                &[&run_id.as_str()],
            )
            .await?;
            tx.execute(
                "UPDATE task_approvals SET status = 'cancelled', resolved_at = $2 \
                 WHERE run_id = $1 AND status = 'pending'",
                &[&run_id.as_str(), &now_rfc3339()],
            )
            .await?;
            append_events(tx, task_id, run_id, vec![cancel_event(false)]).await?
        }
    };
    let run = select_run(tx, task_id, run_id).await?;
    Ok((run, told))
}

pub(super) async fn resolve(
    tx: &Transaction<'_>,
    d: TaskApprovalDecision,
) -> OpResult<(TaskApproval, Vec<TaskEvent>)> {
    let (task_id, id, decision, note) = (&d.task_id, &d.id, d.decision, d.note.clone());
    let select = format!(
        "SELECT {APPROVAL_COLUMNS} FROM task_approvals WHERE id = $1 AND task_id = $2 FOR UPDATE"
    );
    let approval = match tx
        .query_opt(select.as_str(), &[&id.as_str(), &task_id.as_str()])
        .await?
    {
        Some(row) => decode::approval(&row)?,
        None => return Err(HecateError::not_found("approval", id.as_str()).into()),
    };
    check_pending(&approval)?;
    let run = select_run(tx, task_id, &approval.run_id).await?;
    let outcome = decide::resolve(&approval, &run, decision, &note, &d.by)?;
    tx.execute(
        "UPDATE task_approvals SET status = $2, note = $3, resolved_at = $4 WHERE id = $1",
        &[&id.as_str(), &decision.as_str(), &note, &now_rfc3339()],
    )
    .await?;
    match &outcome.failure {
        None => {
            let task = select_task(tx, None, task_id, false).await?;
            set_run_status(
                tx,
                &run.id,
                RunStatusChange::new(TaskRunStatus::Queued, None),
            )
            .await?;
            enqueue(tx, &run, task.spec.priority).await?;
        }
        Some(error) => {
            set_run_status(
                tx,
                &run.id,
                RunStatusChange::new(TaskRunStatus::Failed, Some(error)),
            )
            .await?;
        }
    }
    let told = append_events(tx, task_id, &run.id, outcome.events).await?;
    let row = tx
        .query_one(select.as_str(), &[&id.as_str(), &task_id.as_str()])
        .await?;
    Ok((decode::approval(&row)?, told))
}

pub(super) async fn checkpoint(
    tx: &Transaction<'_>,
    cp: RunCheckpoint,
) -> OpResult<Vec<TaskEvent>> {
    check_lease(tx, &cp.run_id, &cp.owner).await?;
    let run = select_run_by_id(tx, &cp.run_id).await?;
    if let Some(end) = &cp.step {
        update_step_end(tx, &end.step).await?;
        for a in &end.artifacts {
            insert_artifact(tx, a).await?;
        }
    }
    if let Some(step) = &cp.start {
        insert_step(tx, step).await?;
    }
    for a in &cp.replace {
        tx.execute(
            "DELETE FROM task_artifacts WHERE run_id = $1 AND kind = $2 AND name = $3",
            &[&cp.run_id.as_str(), &a.kind, &a.name],
        )
        .await?;
        insert_artifact(tx, a).await?;
    }
    if let Some(cost) = &cp.cost {
        tx.execute(
            "UPDATE task_runs SET total_cost_micros_usd = $2, model = $3, provider = $4 \
             WHERE id = $1",
            &[
                &cp.run_id.as_str(),
                &cost.total_cost_micros_usd,
                &cost.model,
                &cost.provider,
            ],
        )
        .await?;
    }
    let mut events = cp.events;
    if let Some(end) = cp.step {
        events.splice(0..0, end.events);
    }
    append_events(tx, &run.task_id, &run.id, events).await
}

pub(super) async fn park(tx: &Transaction<'_>, park: TaskRunPark) -> OpResult<Vec<TaskEvent>> {
    let run_id = &park.run_id;
    check_lease(tx, run_id, &park.owner).await?;
    let run = select_run_by_id(tx, run_id).await?;
    set_run_status(
        tx,
        run_id,
        RunStatusChange::new(TaskRunStatus::AwaitingApproval, None),
    )
    .await?;
    tx.execute(
        "DELETE FROM task_queue WHERE run_id = $1",
        &[&run_id.as_str()],
    )
    .await?;
    insert_approval(tx, &park.approval).await?;
    append_events(tx, &run.task_id, run_id, park.events).await
}
