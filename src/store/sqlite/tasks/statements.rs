//! The single statements the task transactions are built from: appending
//! events under the log's own sequence, reading a task or run, setting a run's
//! status, queueing a run, storing an artifact.

use super::super::OpResult;
use super::super::reads::one;
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::ids::{TaskId, TaskRunId};
use crate::domain::task::{Task, TaskApproval, TaskArtifact, TaskEvent, TaskRun, TaskStep};
use crate::domain::time::{now_millis, now_rfc3339};
use crate::store::rows::tasks::{
    self as decode, APPROVAL_COLUMNS, ARTIFACT_COLUMNS, RUN_COLUMNS, RunStatusChange, STEP_COLUMNS,
    TASK_COLUMNS,
};
use crate::store::tasks::NewTaskEvent;
use rusqlite::{Connection, OptionalExtension, params};

/// Appends events of a run inside the caller's transaction, numbered by the
/// log's own sequence.
pub(super) fn append_events(
    tx: &Connection,
    task_id: &TaskId,
    run_id: &TaskRunId,
    events: Vec<NewTaskEvent>,
) -> OpResult<Vec<TaskEvent>> {
    let mut out = Vec::with_capacity(events.len());
    let mut insert = tx.prepare_cached(
        "INSERT INTO task_events (task_id, run_id, type, data_json, occurred_at) \
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    for e in events {
        let at = now_rfc3339();
        insert.execute(params![
            task_id.as_str(),
            run_id.as_str(),
            e.event_type,
            serde_json::to_string(&e.data)?,
            at
        ])?;
        out.push(e.stored(tx.last_insert_rowid(), task_id, run_id, at));
    }
    Ok(out)
}

pub(super) fn select_run(
    c: &Connection,
    task_id: &TaskId,
    run_id: &TaskRunId,
) -> OpResult<TaskRun> {
    one(
        c,
        &format!("SELECT {RUN_COLUMNS} FROM task_runs WHERE id = ?1 AND task_id = ?2"),
        params![run_id.as_str(), task_id.as_str()],
        |r| decode::run(r),
        "run",
        run_id.as_str(),
    )
}

pub(super) fn select_run_by_id(c: &Connection, run_id: &TaskRunId) -> OpResult<TaskRun> {
    one(
        c,
        &format!("SELECT {RUN_COLUMNS} FROM task_runs WHERE id = ?1"),
        params![run_id.as_str()],
        |r| decode::run(r),
        "run",
        run_id.as_str(),
    )
}

pub(super) fn select_task(c: &Connection, namespace: Option<&str>, id: &TaskId) -> OpResult<Task> {
    let task = c
        .query_row(
            &format!("SELECT {TASK_COLUMNS} FROM tasks WHERE id = ?1"),
            params![id.as_str()],
            |r| decode::task(r),
        )
        .optional()?
        .filter(|t| namespace.is_none_or(|ns| t.namespace == ns));
    task.ok_or_else(|| HecateError::not_found("task", id.as_str()).into())
}

/// Writes a run's status change.
pub(super) fn set_run_status(
    c: &Connection,
    run_id: &TaskRunId,
    change: RunStatusChange<'_>,
) -> OpResult<()> {
    c.execute(
        "UPDATE task_runs SET status = ?2, error_type = ?3, error_message = ?4, \
         finished_at = COALESCE(?5, finished_at) WHERE id = ?1",
        params![
            run_id.as_str(),
            change.status,
            change.error_type,
            change.error_message,
            change.finished_at,
        ],
    )?;
    Ok(())
}

pub(super) fn enqueue(c: &Connection, run: &TaskRun, priority: i64) -> OpResult<()> {
    c.execute(
        "INSERT INTO task_queue (run_id, task_id, priority, enqueued_ms) VALUES (?1, ?2, ?3, ?4) \
         ON CONFLICT(run_id) DO UPDATE SET lease_owner = NULL, lease_expires_ms = NULL",
        params![
            run.id.as_str(),
            run.task_id.as_str(),
            priority,
            now_millis()
        ],
    )?;
    Ok(())
}

pub(super) fn conflict(message: String) -> HecateError {
    HecateError::new(ErrorType::Conflict, message)
}

pub(super) fn insert_artifact(c: &Connection, a: &TaskArtifact) -> OpResult<()> {
    c.prepare_cached(&format!(
        "INSERT INTO task_artifacts ({ARTIFACT_COLUMNS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11)"
    ))?
    .execute(params![
            a.id.as_str(),
            a.task_id.as_str(),
            a.run_id.as_str(),
            a.step_id.as_ref().map(|s| s.as_str()),
            a.kind,
            a.name,
            a.content,
            a.size_bytes,
            a.truncated as i64,
            a.status,
            a.created_at
        ])?;
    Ok(())
}

pub(super) fn insert_approval(c: &Connection, a: &TaskApproval) -> OpResult<()> {
    c.execute(
        &format!(
            "INSERT INTO task_approvals ({APPROVAL_COLUMNS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)"
        ),
        params![
            a.id.as_str(),
            a.task_id.as_str(),
            a.run_id.as_str(),
            a.kind.as_str(),
            a.status.as_str(),
            a.reason,
            a.note,
            a.created_at,
            a.resolved_at
        ],
    )?;
    Ok(())
}

pub(super) fn insert_step(c: &Connection, step: &TaskStep) -> OpResult<()> {
    c.prepare_cached(&format!(
        "INSERT INTO task_steps ({STEP_COLUMNS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12)"
    ))?
    .execute(params![
        step.id.as_str(),
        step.run_id.as_str(),
        step.task_id.as_str(),
        step.index,
        step.kind,
        step.status.as_str(),
        serde_json::to_string(&step.input)?,
        step.exit_code,
        step.error_type,
        step.error_message,
        step.started_at,
        step.finished_at
    ])?;
    Ok(())
}

pub(super) fn update_step_end(c: &Connection, step: &TaskStep) -> OpResult<()> {
    c.prepare_cached(
        "UPDATE task_steps SET status = ?2, exit_code = ?3, error_type = ?4, \
         error_message = ?5, finished_at = ?6 WHERE id = ?1",
    )?
    .execute(params![
        step.id.as_str(),
        step.status.as_str(),
        step.exit_code,
        step.error_type,
        step.error_message,
        step.finished_at
    ])?;
    Ok(())
}

/// Fails with `conflict` unless `owner` holds the lease on the run.
pub(super) fn check_lease(c: &Connection, run_id: &TaskRunId, owner: &str) -> OpResult<()> {
    let held: Option<String> = c
        .prepare_cached("SELECT lease_owner FROM task_queue WHERE run_id = ?1")?
        .query_row(params![run_id.as_str()], |r| r.get(0))
        .optional()?
        .flatten();
    if held.as_deref() != Some(owner) {
        return Err(conflict(format!("the lease on run {run_id} is no longer held")).into());
    }
    Ok(())
}
