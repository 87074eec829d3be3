//! Row shapes of the task tables: the column lists and how a row becomes a
//! domain value (a value the domain does not know is a corrupt row).

use crate::domain::ids::{TaskApprovalId, TaskArtifactId, TaskId, TaskRunId, TaskStepId};
use crate::domain::task::{
    Task, TaskApproval, TaskApprovalKind, TaskApprovalStatus, TaskArtifact, TaskEvent, TaskRun,
    TaskRunStatus, TaskStep, TaskStepStatus,
};
use rusqlite::Row;

pub(super) const RUN_COLUMNS: &str = "id, task_id, number, status, error_type, error_message, \
    resumed_from_run_id, workspace, total_cost_micros_usd, prior_cost_micros_usd, model, \
    provider, cancel_requested, created_at, started_at, finished_at";
pub(super) const STEP_COLUMNS: &str = "id, run_id, task_id, idx, kind, status, input_json, exit_code, \
    error_type, error_message, started_at, finished_at";
pub(super) const ARTIFACT_COLUMNS: &str =
    "id, task_id, run_id, step_id, kind, name, content, size_bytes, truncated, status, created_at";
pub(super) const APPROVAL_COLUMNS: &str =
    "id, task_id, run_id, kind, status, reason, note, created_at, resolved_at";

pub(super) fn corrupt(what: &str, value: &str) -> rusqlite::Error {
    rusqlite::Error::InvalidColumnType(0, format!("{what} {value:?}"), rusqlite::types::Type::Text)
}

pub(super) fn row_to_task(r: &Row<'_>) -> rusqlite::Result<Task> {
    let spec: String = r.get(2)?;
    Ok(Task {
        id: TaskId(r.get(0)?),
        namespace: r.get(1)?,
        spec: serde_json::from_str(&spec).map_err(|_| corrupt("task spec", &spec))?,
        latest_run_id: r.get::<_, Option<String>>(3)?.map(TaskRunId),
        created_at: r.get(4)?,
        updated_at: r.get(5)?,
    })
}

pub(super) fn row_to_run(r: &Row<'_>) -> rusqlite::Result<TaskRun> {
    let status: String = r.get(3)?;
    Ok(TaskRun {
        id: TaskRunId(r.get(0)?),
        task_id: TaskId(r.get(1)?),
        number: r.get(2)?,
        status: TaskRunStatus::parse(&status).ok_or_else(|| corrupt("run status", &status))?,
        error_type: r.get(4)?,
        error_message: r.get(5)?,
        resumed_from_run_id: r.get::<_, Option<String>>(6)?.map(TaskRunId),
        workspace: r.get(7)?,
        total_cost_micros_usd: r.get(8)?,
        prior_cost_micros_usd: r.get(9)?,
        model: r.get(10)?,
        provider: r.get(11)?,
        cancel_requested: r.get::<_, i64>(12)? != 0,
        created_at: r.get(13)?,
        started_at: r.get(14)?,
        finished_at: r.get(15)?,
    })
}

pub(super) fn row_to_step(r: &Row<'_>) -> rusqlite::Result<TaskStep> {
    let status: String = r.get(5)?;
    let input: String = r.get(6)?;
    Ok(TaskStep {
        id: TaskStepId(r.get(0)?),
        run_id: TaskRunId(r.get(1)?),
        task_id: TaskId(r.get(2)?),
        index: r.get(3)?,
        kind: r.get(4)?,
        status: TaskStepStatus::parse(&status).ok_or_else(|| corrupt("step status", &status))?,
        input: serde_json::from_str(&input).map_err(|_| corrupt("step input", &input))?,
        exit_code: r.get(7)?,
        error_type: r.get(8)?,
        error_message: r.get(9)?,
        started_at: r.get(10)?,
        finished_at: r.get(11)?,
    })
}

pub(super) fn row_to_artifact(r: &Row<'_>) -> rusqlite::Result<TaskArtifact> {
    Ok(TaskArtifact {
        id: TaskArtifactId(r.get(0)?),
        task_id: TaskId(r.get(1)?),
        run_id: TaskRunId(r.get(2)?),
        step_id: r.get::<_, Option<String>>(3)?.map(TaskStepId),
        kind: r.get(4)?,
        name: r.get(5)?,
        content: r.get(6)?,
        size_bytes: r.get(7)?,
        truncated: r.get::<_, i64>(8)? != 0,
        status: r.get(9)?,
        created_at: r.get(10)?,
    })
}

pub(super) fn row_to_approval(r: &Row<'_>) -> rusqlite::Result<TaskApproval> {
    let kind: String = r.get(3)?;
    let status: String = r.get(4)?;
    Ok(TaskApproval {
        id: TaskApprovalId(r.get(0)?),
        task_id: TaskId(r.get(1)?),
        run_id: TaskRunId(r.get(2)?),
        kind: TaskApprovalKind::parse(&kind).ok_or_else(|| corrupt("approval kind", &kind))?,
        status: TaskApprovalStatus::parse(&status)
            .ok_or_else(|| corrupt("approval status", &status))?,
        reason: r.get(5)?,
        note: r.get(6)?,
        created_at: r.get(7)?,
        resolved_at: r.get(8)?,
    })
}

pub(super) fn row_to_event(r: &Row<'_>) -> rusqlite::Result<TaskEvent> {
    let data: String = r.get(4)?;
    Ok(TaskEvent {
        sequence: r.get(0)?,
        task_id: TaskId(r.get(1)?),
        run_id: TaskRunId(r.get(2)?),
        event_type: r.get(3)?,
        data: serde_json::from_str(&data).map_err(|_| corrupt("event data", &data))?,
        occurred_at: r.get(5)?,
    })
}
