//! Row shapes of the task tables: the column lists and how a row becomes a
//! domain value (a value the domain does not know is a corrupt row).

use super::super::{OpError, OpResult};
use crate::domain::error::HecateError;
use crate::domain::ids::{TaskApprovalId, TaskArtifactId, TaskId, TaskRunId, TaskStepId};
use crate::domain::task::{
    Task, TaskApproval, TaskApprovalKind, TaskApprovalStatus, TaskArtifact, TaskEvent, TaskRun,
    TaskRunStatus, TaskStep, TaskStepStatus,
};
use tokio_postgres::Row;

pub(super) const RUN_COLUMNS: &str = "id, task_id, number, status, error_type, error_message, \
    resumed_from_run_id, workspace, total_cost_micros_usd, prior_cost_micros_usd, model, \
    provider, cancel_requested, created_at, started_at, finished_at";
pub(super) const STEP_COLUMNS: &str = "id, run_id, task_id, idx, kind, status, input_json, exit_code, \
    error_type, error_message, started_at, finished_at";
pub(super) const ARTIFACT_COLUMNS: &str =
    "id, task_id, run_id, step_id, kind, name, content, size_bytes, truncated, status, created_at";
pub(super) const APPROVAL_COLUMNS: &str =
    "id, task_id, run_id, kind, status, reason, note, created_at, resolved_at";
pub(super) const TASK_COLUMNS: &str =
    "id, namespace, spec_json, latest_run_id, created_at, updated_at";

fn corrupt(what: &str, value: &str) -> OpError {
    HecateError::store(format!("corrupt stored {what} {value:?}")).into()
}

pub(super) fn row_to_task(r: &Row) -> OpResult<Task> {
    let spec: String = r.try_get(2)?;
    Ok(Task {
        id: TaskId(r.try_get(0)?),
        namespace: r.try_get(1)?,
        spec: serde_json::from_str(&spec).map_err(|_| corrupt("task spec", &spec))?,
        latest_run_id: r.try_get::<_, Option<String>>(3)?.map(TaskRunId),
        created_at: r.try_get(4)?,
        updated_at: r.try_get(5)?,
    })
}

pub(super) fn row_to_run(r: &Row) -> OpResult<TaskRun> {
    let status: String = r.try_get(3)?;
    Ok(TaskRun {
        id: TaskRunId(r.try_get(0)?),
        task_id: TaskId(r.try_get(1)?),
        number: r.try_get(2)?,
        status: TaskRunStatus::parse(&status).ok_or_else(|| corrupt("run status", &status))?,
        error_type: r.try_get(4)?,
        error_message: r.try_get(5)?,
        resumed_from_run_id: r.try_get::<_, Option<String>>(6)?.map(TaskRunId),
        workspace: r.try_get(7)?,
        total_cost_micros_usd: r.try_get(8)?,
        prior_cost_micros_usd: r.try_get(9)?,
        model: r.try_get(10)?,
        provider: r.try_get(11)?,
        cancel_requested: r.try_get(12)?,
        created_at: r.try_get(13)?,
        started_at: r.try_get(14)?,
        finished_at: r.try_get(15)?,
    })
}

pub(super) fn row_to_step(r: &Row) -> OpResult<TaskStep> {
    let status: String = r.try_get(5)?;
    let input: String = r.try_get(6)?;
    Ok(TaskStep {
        id: TaskStepId(r.try_get(0)?),
        run_id: TaskRunId(r.try_get(1)?),
        task_id: TaskId(r.try_get(2)?),
        index: r.try_get(3)?,
        kind: r.try_get(4)?,
        status: TaskStepStatus::parse(&status).ok_or_else(|| corrupt("step status", &status))?,
        input: serde_json::from_str(&input).map_err(|_| corrupt("step input", &input))?,
        exit_code: r.try_get(7)?,
        error_type: r.try_get(8)?,
        error_message: r.try_get(9)?,
        started_at: r.try_get(10)?,
        finished_at: r.try_get(11)?,
    })
}

pub(super) fn row_to_artifact(r: &Row) -> OpResult<TaskArtifact> {
    Ok(TaskArtifact {
        id: TaskArtifactId(r.try_get(0)?),
        task_id: TaskId(r.try_get(1)?),
        run_id: TaskRunId(r.try_get(2)?),
        step_id: r.try_get::<_, Option<String>>(3)?.map(TaskStepId),
        kind: r.try_get(4)?,
        name: r.try_get(5)?,
        content: r.try_get(6)?,
        size_bytes: r.try_get(7)?,
        truncated: r.try_get(8)?,
        status: r.try_get(9)?,
        created_at: r.try_get(10)?,
    })
}

pub(super) fn row_to_approval(r: &Row) -> OpResult<TaskApproval> {
    let kind: String = r.try_get(3)?;
    let status: String = r.try_get(4)?;
    Ok(TaskApproval {
        id: TaskApprovalId(r.try_get(0)?),
        task_id: TaskId(r.try_get(1)?),
        run_id: TaskRunId(r.try_get(2)?),
        kind: TaskApprovalKind::parse(&kind).ok_or_else(|| corrupt("approval kind", &kind))?,
        status: TaskApprovalStatus::parse(&status)
            .ok_or_else(|| corrupt("approval status", &status))?,
        reason: r.try_get(5)?,
        note: r.try_get(6)?,
        created_at: r.try_get(7)?,
        resolved_at: r.try_get(8)?,
    })
}

pub(super) fn row_to_event(r: &Row) -> OpResult<TaskEvent> {
    let data: String = r.try_get(4)?;
    Ok(TaskEvent {
        sequence: r.try_get(0)?,
        task_id: TaskId(r.try_get(1)?),
        run_id: TaskRunId(r.try_get(2)?),
        event_type: r.try_get(3)?,
        data: serde_json::from_str(&data).map_err(|_| corrupt("event data", &data))?,
        occurred_at: r.try_get(5)?,
    })
}
