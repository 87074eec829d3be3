//! The single statements the task transactions are built from: appending
//! events under the log's own sequence, reading a task or run, setting a run's
//! status, queueing a run, storing an artifact.

use super::super::{OpResult, conflict};
use crate::domain::error::HecateError;
use crate::domain::ids::{TaskId, TaskRunId};
use crate::domain::task::{Task, TaskApproval, TaskArtifact, TaskEvent, TaskRun, TaskStep};
use crate::domain::time::{now_millis, now_rfc3339};
use crate::store::rows::tasks::{
    self as decode, APPROVAL_COLUMNS, ARTIFACT_COLUMNS, RUN_COLUMNS, RunStatusChange, STEP_COLUMNS,
    TASK_COLUMNS,
};
use crate::store::tasks::NewTaskEvent;
use deadpool_postgres::GenericClient;

/// The advisory lock held while task events are numbered: the transaction that
/// takes a sequence commits before the next one takes its own, so a reader
/// following the log by sequence never skips an event that commits late.
const EVENT_LOCK: i64 = 0x6865_6361_7465 + 1;

/// Appends events of a run inside the caller's transaction, numbered by the
/// log's own sequence.
pub(super) async fn append_events<C: GenericClient>(
    tx: &C,
    task_id: &TaskId,
    run_id: &TaskRunId,
    events: Vec<NewTaskEvent>,
) -> OpResult<Vec<TaskEvent>> {
    if events.is_empty() {
        return Ok(Vec::new());
    }
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&EVENT_LOCK])
        .await?;
    let insert = tx
        .prepare_cached(
            "INSERT INTO task_events (task_id, run_id, type, data_json, occurred_at) \
             VALUES ($1, $2, $3, $4, $5) RETURNING sequence",
        )
        .await?;
    let mut out = Vec::with_capacity(events.len());
    for e in events {
        let at = now_rfc3339();
        let data = serde_json::to_string(&e.data)?;
        let sequence: i64 = tx
            .query_one(
                &insert,
                &[
                    &task_id.as_str(),
                    &run_id.as_str(),
                    &e.event_type,
                    &data,
                    &at,
                ],
            )
            .await?
            .try_get(0)?;
        out.push(e.stored(sequence, task_id, run_id, at));
    }
    Ok(out)
}

pub(super) async fn select_run<C: GenericClient>(
    c: &C,
    task_id: &TaskId,
    run_id: &TaskRunId,
) -> OpResult<TaskRun> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM task_runs WHERE id = $1 AND task_id = $2");
    match c
        .query_opt(sql.as_str(), &[&run_id.as_str(), &task_id.as_str()])
        .await?
    {
        Some(row) => decode::run(&row),
        None => Err(HecateError::not_found("run", run_id.as_str()).into()),
    }
}

pub(super) async fn select_run_by_id<C: GenericClient>(
    c: &C,
    run_id: &TaskRunId,
) -> OpResult<TaskRun> {
    let sql = format!("SELECT {RUN_COLUMNS} FROM task_runs WHERE id = $1");
    match c.query_opt(sql.as_str(), &[&run_id.as_str()]).await? {
        Some(row) => decode::run(&row),
        None => Err(HecateError::not_found("run", run_id.as_str()).into()),
    }
}

/// Reads a task (in `namespace` when given), or `not_found`; with `lock`, holds
/// its row until the transaction ends.
pub(super) async fn select_task<C: GenericClient>(
    c: &C,
    namespace: Option<&str>,
    id: &TaskId,
    lock: bool,
) -> OpResult<Task> {
    let sql = format!(
        "SELECT {TASK_COLUMNS} FROM tasks WHERE id = $1{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    let task = match c.query_opt(sql.as_str(), &[&id.as_str()]).await? {
        Some(row) => Some(decode::task(&row)?),
        None => None,
    }
    .filter(|t| namespace.is_none_or(|ns| t.namespace == ns));
    task.ok_or_else(|| HecateError::not_found("task", id.as_str()).into())
}

/// Writes a run's status change.
pub(super) async fn set_run_status<C: GenericClient>(
    c: &C,
    run_id: &TaskRunId,
    change: RunStatusChange<'_>,
) -> OpResult<()> {
    c.execute(
        "UPDATE task_runs SET status = $2, error_type = $3, error_message = $4, \
         finished_at = COALESCE($5, finished_at) WHERE id = $1",
        &[
            &run_id.as_str(),
            &change.status,
            &change.error_type,
            &change.error_message,
            &change.finished_at,
        ],
    )
    .await?;
    Ok(())
}

pub(super) async fn enqueue<C: GenericClient>(c: &C, run: &TaskRun, priority: i64) -> OpResult<()> {
    c.execute(
        "INSERT INTO task_queue (run_id, task_id, priority, enqueued_ms) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (run_id) DO UPDATE SET lease_owner = NULL, lease_expires_ms = NULL",
        &[
            &run.id.as_str(),
            &run.task_id.as_str(),
            &priority,
            &now_millis(),
        ],
    )
    .await?;
    Ok(())
}

pub(super) async fn insert_artifact<C: GenericClient>(c: &C, a: &TaskArtifact) -> OpResult<()> {
    let sql = format!(
        "INSERT INTO task_artifacts ({ARTIFACT_COLUMNS}) \
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)"
    );
    c.execute(
        sql.as_str(),
        &[
            &a.id.as_str(),
            &a.task_id.as_str(),
            &a.run_id.as_str(),
            &a.step_id.as_ref().map(|s| s.as_str()),
            &a.kind,
            &a.name,
            &a.content,
            &a.size_bytes,
            &a.truncated,
            &a.status,
            &a.created_at,
        ],
    )
    .await?;
    Ok(())
}

pub(super) async fn insert_approval<C: GenericClient>(c: &C, a: &TaskApproval) -> OpResult<()> {
    let sql = format!(
        "INSERT INTO task_approvals ({APPROVAL_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)"
    );
    c.execute(
        sql.as_str(),
        &[
            &a.id.as_str(),
            &a.task_id.as_str(),
            &a.run_id.as_str(),
            &a.kind.as_str(),
            &a.status.as_str(),
            &a.reason,
            &a.note,
            &a.created_at,
            &a.resolved_at,
        ],
    )
    .await?;
    Ok(())
}

pub(super) async fn insert_step<C: GenericClient>(c: &C, step: &TaskStep) -> OpResult<()> {
    let sql = format!(
        "INSERT INTO task_steps ({STEP_COLUMNS}) \
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12)"
    );
    c.execute(
        sql.as_str(),
        &[
            &step.id.as_str(),
            &step.run_id.as_str(),
            &step.task_id.as_str(),
            &step.index,
            &step.kind,
            &step.status.as_str(),
            &serde_json::to_string(&step.input)?,
            &step.exit_code,
            &step.error_type,
            &step.error_message,
            &step.started_at,
            &step.finished_at,
        ],
    )
    .await?;
    Ok(())
}

pub(super) async fn update_step_end<C: GenericClient>(c: &C, step: &TaskStep) -> OpResult<()> {
    c.execute(
        "UPDATE task_steps SET status = $2, exit_code = $3, error_type = $4, \
         error_message = $5, finished_at = $6 WHERE id = $1",
        &[
            &step.id.as_str(),
            &step.status.as_str(),
            &step.exit_code,
            &step.error_type,
            &step.error_message,
            &step.finished_at,
        ],
    )
    .await?;
    Ok(())
}

/// Fails with `conflict` unless `owner` holds the lease on the run (and holds
/// the queue row until the transaction ends).
pub(super) async fn check_lease<C: GenericClient>(
    c: &C,
    run_id: &TaskRunId,
    owner: &str,
) -> OpResult<()> {
    let held: Option<String> = match c
        .query_opt(
            "SELECT lease_owner FROM task_queue WHERE run_id = $1 FOR UPDATE",
            &[&run_id.as_str()],
        )
        .await?
    {
        Some(row) => row.try_get(0)?,
        None => None,
    };
    if held.as_deref() != Some(owner) {
        return Err(conflict(format!("the lease on run {run_id} is no longer held")).into());
    }
    Ok(())
}
