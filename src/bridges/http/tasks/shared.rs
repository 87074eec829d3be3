//! What the task handlers share: the ids of a run's path, and a run as the
//! answer (200, or 202 for a run that was queued).

use crate::bridges::resources::tasks::{TaskRunDto, TaskRunResponse};
use crate::domain::ids::{TaskId, TaskRunId};
use crate::domain::task::TaskRun;
use axum::Json;
use axum::http::StatusCode;

/// Path parameters `{id}` and `{run_id}`.
pub(super) fn ids(id: String, run_id: String) -> (TaskId, TaskRunId) {
    (TaskId::from(id), TaskRunId::from(run_id))
}

/// `{"object": "task_run", "data": …}` for `run`.
pub(super) fn run_response(run: &TaskRun) -> Json<TaskRunResponse> {
    Json(TaskRunResponse {
        object: "task_run".into(),
        data: TaskRunDto::from(run),
    })
}

/// 202 with `run`: a run that was queued.
pub(super) fn accepted_run(run: &TaskRun) -> (StatusCode, Json<TaskRunResponse>) {
    (StatusCode::ACCEPTED, run_response(run))
}
