//! A task's runs (list, read, cancel, retry, resume), their steps and artifacts.

use super::super::HttpState;
use super::super::envelope::{ApiError, ErrorEnvelope};
use super::super::extract::{ApiOptionalJson, ApiPath};
use super::super::path_params::{TaskArtifactPath, TaskPath, TaskRunPath, TaskStepPath};
use super::shared::{accepted_run, ids, run_response};
use crate::bridges::resources::tasks::{
    RunActionRequest, TaskArtifactDto, TaskArtifactListResponse, TaskArtifactResponse, TaskRunDto,
    TaskRunListResponse, TaskRunResponse, TaskStepDto, TaskStepListResponse, TaskStepResponse,
};
use crate::domain::ids::{TaskArtifactId, TaskId, TaskStepId};
use crate::domain::task::{TaskArtifact, TaskRun};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

/// The runs of a task, oldest first.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/runs",
    operation_id = "list_task_runs",
    tag = "tasks",
    params(TaskPath),
    responses(
        (status = 200, description = "Runs", body = TaskRunListResponse),
        (status = 404, description = "No such task", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiPath(TaskPath { id }): ApiPath<TaskPath>,
) -> Result<Json<TaskRunListResponse>, ApiError> {
    let runs = state
        .engine
        .tasks()
        .list_runs(&state.namespace, &TaskId::from(id))
        .await?;
    Ok(Json(TaskRunListResponse {
        object: "task_runs".into(),
        data: runs.iter().map(TaskRunDto::from).collect(),
    }))
}

/// One run.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}",
    operation_id = "get_task_run",
    tag = "tasks",
    params(TaskRunPath),
    responses(
        (status = 200, description = "The run", body = TaskRunResponse),
        (status = 404, description = "No such task or run", body = ErrorEnvelope)
    )
)]
pub async fn get(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<TaskRunPath>,
) -> Result<Json<TaskRunResponse>, ApiError> {
    Ok(run_response(&on_run(&state, path, RunOp::Get).await?))
}

/// Cancels a run: at once when queued or awaiting approval (its approval is
/// cancelled), through its worker when running.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/cancel",
    operation_id = "cancel_task_run",
    tag = "tasks",
    params(TaskRunPath),
    request_body(content = RunActionRequest, description = "Optional"),
    responses(
        (status = 200, description = "The run (cancelled, or running with cancel_requested)", body = TaskRunResponse),
        (status = 404, description = "No such task or run", body = ErrorEnvelope),
        (status = 409, description = "The run already ended", body = ErrorEnvelope)
    )
)]
pub async fn cancel(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<TaskRunPath>,
    ApiOptionalJson(_body): ApiOptionalJson<RunActionRequest>,
) -> Result<Json<TaskRunResponse>, ApiError> {
    Ok(run_response(&on_run(&state, path, RunOp::Cancel).await?))
}

/// A new run from a failed or cancelled one, in a fresh workspace.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/retry",
    operation_id = "retry_task_run",
    tag = "tasks",
    params(TaskRunPath),
    request_body(content = RunActionRequest, description = "Optional"),
    responses(
        (status = 202, description = "The new run", body = TaskRunResponse),
        (status = 404, description = "No such task or run", body = ErrorEnvelope),
        (status = 409, description = "The run is not failed or cancelled, or another run is active", body = ErrorEnvelope)
    )
)]
pub async fn retry(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<TaskRunPath>,
    ApiOptionalJson(body): ApiOptionalJson<RunActionRequest>,
) -> Result<(StatusCode, Json<TaskRunResponse>), ApiError> {
    Ok(accepted_run(
        &on_run(&state, path, RunOp::Retry(body.reason)).await?,
    ))
}

/// A new run that continues a finished one in its workspace, carrying its cost.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/resume",
    operation_id = "resume_task_run",
    tag = "tasks",
    params(TaskRunPath),
    request_body(content = RunActionRequest, description = "Optional"),
    responses(
        (status = 202, description = "The new run", body = TaskRunResponse),
        (status = 404, description = "No such task or run", body = ErrorEnvelope),
        (status = 409, description = "The run has not ended, or another run is active", body = ErrorEnvelope)
    )
)]
pub async fn resume(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<TaskRunPath>,
    ApiOptionalJson(body): ApiOptionalJson<RunActionRequest>,
) -> Result<(StatusCode, Json<TaskRunResponse>), ApiError> {
    Ok(accepted_run(
        &on_run(&state, path, RunOp::Resume(body.reason)).await?,
    ))
}

/// What a handler does to one run.
enum RunOp {
    /// Reads it.
    Get,
    /// Cancels it.
    Cancel,
    /// Queues a new run from it, from scratch in a fresh workspace, for a reason.
    Retry(Option<String>),
    /// Queues a new run that goes on in its workspace, carrying its cost, for a reason.
    Resume(Option<String>),
}

/// Does `op` to the run at `path`: the run as it then is, or the new run.
async fn on_run(state: &HttpState, path: TaskRunPath, op: RunOp) -> Result<TaskRun, ApiError> {
    let (id, run_id) = ids(path.id, path.run_id);
    let (tasks, ns) = (state.engine.tasks(), &state.namespace);
    let run = match op {
        RunOp::Get => tasks.get_run(ns, &id, &run_id).await,
        RunOp::Cancel => tasks.cancel(ns, &id, &run_id).await,
        RunOp::Retry(reason) => tasks.retry(ns, &id, &run_id, reason).await,
        RunOp::Resume(reason) => tasks.resume(ns, &id, &run_id, reason).await,
    }?;
    Ok(run)
}

/// The steps of a run.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/steps",
    operation_id = "list_task_steps",
    tag = "tasks",
    params(TaskRunPath),
    responses(
        (status = 200, description = "Steps", body = TaskStepListResponse),
        (status = 404, description = "No such task or run", body = ErrorEnvelope)
    )
)]
pub async fn steps(
    State(state): State<HttpState>,
    ApiPath(TaskRunPath { id, run_id }): ApiPath<TaskRunPath>,
) -> Result<Json<TaskStepListResponse>, ApiError> {
    let (id, run_id) = ids(id, run_id);
    let steps = state
        .engine
        .tasks()
        .list_steps(&state.namespace, &id, &run_id)
        .await?;
    Ok(Json(TaskStepListResponse {
        object: "task_steps".into(),
        data: steps.iter().map(TaskStepDto::from).collect(),
    }))
}

/// One step.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/steps/{step_id}",
    operation_id = "get_task_step",
    tag = "tasks",
    params(TaskStepPath),
    responses(
        (status = 200, description = "The step", body = TaskStepResponse),
        (status = 404, description = "No such task, run or step", body = ErrorEnvelope)
    )
)]
pub async fn step(
    State(state): State<HttpState>,
    ApiPath(TaskStepPath {
        id,
        run_id,
        step_id,
    }): ApiPath<TaskStepPath>,
) -> Result<Json<TaskStepResponse>, ApiError> {
    let (id, run_id) = ids(id, run_id);
    let step = state
        .engine
        .tasks()
        .get_step(&state.namespace, &id, &run_id, &TaskStepId::from(step_id))
        .await?;
    Ok(Json(TaskStepResponse {
        object: "task_step".into(),
        data: TaskStepDto::from(&step),
    }))
}

fn artifact_list(list: &[TaskArtifact]) -> Json<TaskArtifactListResponse> {
    Json(TaskArtifactListResponse {
        object: "task_artifacts".into(),
        data: list.iter().map(TaskArtifactDto::from).collect(),
    })
}

/// The artifacts of a run (captured output, patches).
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/artifacts",
    operation_id = "list_task_run_artifacts",
    tag = "tasks",
    params(TaskRunPath),
    responses(
        (status = 200, description = "Artifacts", body = TaskArtifactListResponse),
        (status = 404, description = "No such task or run", body = ErrorEnvelope)
    )
)]
pub async fn artifacts(
    State(state): State<HttpState>,
    ApiPath(TaskRunPath { id, run_id }): ApiPath<TaskRunPath>,
) -> Result<Json<TaskArtifactListResponse>, ApiError> {
    let (id, run_id) = ids(id, run_id);
    let list = state
        .engine
        .tasks()
        .list_artifacts(&state.namespace, &id, Some(&run_id))
        .await?;
    Ok(artifact_list(&list))
}

/// One artifact of a run.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/artifacts/{artifact_id}",
    operation_id = "get_task_run_artifact",
    tag = "tasks",
    params(TaskArtifactPath),
    responses(
        (status = 200, description = "The artifact", body = TaskArtifactResponse),
        (status = 404, description = "No such task, run or artifact", body = ErrorEnvelope)
    )
)]
pub async fn artifact(
    State(state): State<HttpState>,
    ApiPath(TaskArtifactPath {
        id,
        run_id,
        artifact_id,
    }): ApiPath<TaskArtifactPath>,
) -> Result<Json<TaskArtifactResponse>, ApiError> {
    let (id, run_id) = ids(id, run_id);
    let a = state
        .engine
        .tasks()
        .get_artifact(
            &state.namespace,
            &id,
            Some(&run_id),
            &TaskArtifactId::from(artifact_id),
        )
        .await?;
    Ok(Json(TaskArtifactResponse {
        object: "task_artifact".into(),
        data: TaskArtifactDto::from(&a),
    }))
}

/// The artifacts of every run of a task.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/artifacts",
    operation_id = "list_task_artifacts",
    tag = "tasks",
    params(TaskPath),
    responses(
        (status = 200, description = "Artifacts", body = TaskArtifactListResponse),
        (status = 404, description = "No such task", body = ErrorEnvelope)
    )
)]
pub async fn task_artifacts(
    State(state): State<HttpState>,
    ApiPath(TaskPath { id }): ApiPath<TaskPath>,
) -> Result<Json<TaskArtifactListResponse>, ApiError> {
    let list = state
        .engine
        .tasks()
        .list_artifacts(&state.namespace, &TaskId::from(id), None)
        .await?;
    Ok(artifact_list(&list))
}
