//! The task tables: their column lists, how a row becomes a task, run, step,
//! artifact, approval or event (a name the domain does not know is a corrupt row),
//! and what a run's status change writes.

use super::StoredRow;
use crate::domain::ids::{TaskApprovalId, TaskArtifactId, TaskId, TaskRunId, TaskStepId};
use crate::domain::task::{
    Task, TaskApproval, TaskApprovalKind, TaskApprovalStatus, TaskArtifact, TaskEvent, TaskRun,
    TaskRunStatus, TaskStep, TaskStepStatus,
};
use crate::domain::time::now_rfc3339;

/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const RUN_COLUMNS: &str = "id, task_id, number, status, error_type, error_message, \
    resumed_from_run_id, workspace, total_cost_micros_usd, prior_cost_micros_usd, model, \
    provider, cancel_requested, created_at, started_at, finished_at";
/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const STEP_COLUMNS: &str = "id, run_id, task_id, idx, kind, status, input_json, exit_code, \
    error_type, error_message, started_at, finished_at";
/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const ARTIFACT_COLUMNS: &str =
    "id, task_id, run_id, step_id, kind, name, content, size_bytes, truncated, status, created_at";
/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const APPROVAL_COLUMNS: &str =
    "id, task_id, run_id, kind, status, reason, note, created_at, resolved_at";
/// The tables holding a task's runs and what they made, each keyed by
/// `task_id`, in the order deleting a task empties them.
pub(crate) const TASK_CHILD_TABLES: [&str; 6] = [
    "task_events",
    "task_artifacts",
    "task_approvals",
    "task_steps",
    "task_queue",
    "task_runs",
];

/// The columns a row must start with for its decoder, in the order it reads them.
pub(crate) const TASK_COLUMNS: &str = "id, namespace, spec_json, latest_run_id, created_at, updated_at, \
     (SELECT status FROM task_runs WHERE task_runs.id = tasks.latest_run_id) AS latest_run_status";

/// A task from a row that starts with its columns.
pub(crate) fn task<R: StoredRow>(r: &R) -> Result<Task, R::Error> {
    Ok(Task {
        id: TaskId(r.col(0)?),
        namespace: r.col(1)?,
        spec: r.json(2)?,
        latest_run_id: r.col::<Option<String>>(3)?.map(TaskRunId),
        latest_run_status: match r.col::<Option<String>>(6)? {
            Some(_) => Some(r.named(6, "run status", TaskRunStatus::parse)?),
            None => None,
        },
        created_at: r.col(4)?,
        updated_at: r.col(5)?,
    })
}

/// A task run from a row that starts with its columns.
pub(crate) fn run<R: StoredRow>(r: &R) -> Result<TaskRun, R::Error> {
    Ok(TaskRun {
        id: TaskRunId(r.col(0)?),
        task_id: TaskId(r.col(1)?),
        number: r.col(2)?,
        status: r.named(3, "run status", TaskRunStatus::parse)?,
        error_type: r.col(4)?,
        error_message: r.col(5)?,
        resumed_from_run_id: r.col::<Option<String>>(6)?.map(TaskRunId),
        workspace: r.col(7)?,
        total_cost_micros_usd: r.col(8)?,
        prior_cost_micros_usd: r.col(9)?,
        model: r.col(10)?,
        provider: r.col(11)?,
        cancel_requested: r.col(12)?,
        created_at: r.col(13)?,
        started_at: r.col(14)?,
        finished_at: r.col(15)?,
    })
}

/// What a task run's status change writes, the same on both backends: the
/// status, the error (type and message) and, for a terminal status, the time
/// it finished (`None` keeps the run's own).
pub(crate) struct RunStatusChange<'a> {
    /// The new status, as stored.
    pub(crate) status: &'static str,
    /// The error's type, when there is one.
    pub(crate) error_type: Option<&'a str>,
    /// The error's message, when there is one.
    pub(crate) error_message: Option<&'a str>,
    /// Now, when the new status is terminal.
    pub(crate) finished_at: Option<String>,
}

impl<'a> RunStatusChange<'a> {
    /// A change to `status` with `error` (type, message) when given.
    pub(crate) fn new(status: TaskRunStatus, error: Option<&'a (String, String)>) -> Self {
        Self {
            status: status.as_str(),
            error_type: error.map(|e| e.0.as_str()),
            error_message: error.map(|e| e.1.as_str()),
            finished_at: status.is_terminal().then(now_rfc3339),
        }
    }
}

/// A task step from a row that starts with its columns.
pub(crate) fn step<R: StoredRow>(r: &R) -> Result<TaskStep, R::Error> {
    Ok(TaskStep {
        id: TaskStepId(r.col(0)?),
        run_id: TaskRunId(r.col(1)?),
        task_id: TaskId(r.col(2)?),
        index: r.col(3)?,
        kind: r.col(4)?,
        status: r.named(5, "step status", TaskStepStatus::parse)?,
        input: r.json(6)?,
        exit_code: r.col(7)?,
        error_type: r.col(8)?,
        error_message: r.col(9)?,
        started_at: r.col(10)?,
        finished_at: r.col(11)?,
    })
}

/// A task artifact from a row that starts with its columns.
pub(crate) fn artifact<R: StoredRow>(r: &R) -> Result<TaskArtifact, R::Error> {
    Ok(TaskArtifact {
        id: TaskArtifactId(r.col(0)?),
        task_id: TaskId(r.col(1)?),
        run_id: TaskRunId(r.col(2)?),
        step_id: r.col::<Option<String>>(3)?.map(TaskStepId),
        kind: r.col(4)?,
        name: r.col(5)?,
        content: r.col(6)?,
        size_bytes: r.col(7)?,
        truncated: r.col(8)?,
        status: r.col(9)?,
        created_at: r.col(10)?,
    })
}

/// A task approval gate from a row that starts with its columns.
pub(crate) fn approval<R: StoredRow>(r: &R) -> Result<TaskApproval, R::Error> {
    Ok(TaskApproval {
        id: TaskApprovalId(r.col(0)?),
        task_id: TaskId(r.col(1)?),
        run_id: TaskRunId(r.col(2)?),
        kind: r.named(3, "approval kind", TaskApprovalKind::parse)?,
        status: r.named(4, "approval status", TaskApprovalStatus::parse)?,
        reason: r.col(5)?,
        note: r.col(6)?,
        created_at: r.col(7)?,
        resolved_at: r.col(8)?,
    })
}

/// A task event from a row that starts with its columns.
pub(crate) fn event<R: StoredRow>(r: &R) -> Result<TaskEvent, R::Error> {
    Ok(TaskEvent {
        sequence: r.col(0)?,
        task_id: TaskId(r.col(1)?),
        run_id: TaskRunId(r.col(2)?),
        event_type: r.col(3)?,
        data: r.json(4)?,
        occurred_at: r.col(5)?,
    })
}
