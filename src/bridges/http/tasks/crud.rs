//! Create, list, read, delete and start tasks.

use super::super::HttpState;
use super::super::auth::Actor;
use super::super::envelope::{ApiError, ErrorEnvelope};
use super::super::extract::{ApiJson, ApiPath, ApiQuery};
use super::super::path_params::TaskPath;
use super::shared::accepted_run;
use crate::bridges::resources::tasks::{
    CreateTaskRequest, TaskDeletedDto, TaskDeletedResponse, TaskDto, TaskListQuery,
    TaskListResponse, TaskResponse, TaskRunResponse,
};
use crate::domain::ids::TaskId;
use crate::engine::tasks::StartOptions;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

/// Creates a task (it does not run until started).
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks",
    operation_id = "create_task",
    tag = "tasks",
    request_body = CreateTaskRequest,
    responses(
        (status = 201, description = "The task", body = TaskResponse),
        (status = 400, description = "Invalid fields (the envelope names the field)", body = ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<HttpState>,
    ApiJson(body): ApiJson<CreateTaskRequest>,
) -> Result<(StatusCode, Json<TaskResponse>), ApiError> {
    let spec = body.into_spec()?;
    let task = state
        .engine
        .tasks()
        .create_task(&state.namespace, spec)
        .await?;
    Ok((
        StatusCode::CREATED,
        Json(TaskResponse {
            object: "task".into(),
            data: TaskDto::from(&task),
        }),
    ))
}

/// The server namespace's tasks, newest first.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks",
    operation_id = "list_tasks",
    tag = "tasks",
    params(TaskListQuery),
    responses(
        (status = 200, description = "Tasks, newest first", body = TaskListResponse),
        (status = 400, description = "An unknown status or execution kind", body = ErrorEnvelope),
        (status = 404, description = "The `before` cursor names no task", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiQuery(q): ApiQuery<TaskListQuery>,
) -> Result<Json<TaskListResponse>, ApiError> {
    let tasks = state
        .engine
        .tasks()
        .list_tasks(q.filter(&state.namespace)?)
        .await?;
    Ok(Json(TaskListResponse {
        object: "tasks".into(),
        data: tasks.iter().map(TaskDto::from).collect(),
    }))
}

/// One task.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}",
    operation_id = "get_task",
    tag = "tasks",
    params(TaskPath),
    responses(
        (status = 200, description = "The task", body = TaskResponse),
        (status = 404, description = "No such task", body = ErrorEnvelope)
    )
)]
pub async fn get(
    State(state): State<HttpState>,
    ApiPath(TaskPath { id }): ApiPath<TaskPath>,
) -> Result<Json<TaskResponse>, ApiError> {
    let task = state
        .engine
        .tasks()
        .get_task(&state.namespace, &TaskId::from(id))
        .await?;
    Ok(Json(TaskResponse {
        object: "task".into(),
        data: TaskDto::from(&task),
    }))
}

/// Deletes a task with everything it owns; refused while a run is active.
#[utoipa::path(
    delete,
    path = "/hecate/v1/tasks/{id}",
    operation_id = "delete_task",
    tag = "tasks",
    params(TaskPath),
    responses(
        (status = 200, description = "Deleted", body = TaskDeletedResponse),
        (status = 404, description = "No such task", body = ErrorEnvelope),
        (status = 409, description = "A run is active", body = ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<HttpState>,
    ApiPath(TaskPath { id }): ApiPath<TaskPath>,
) -> Result<Json<TaskDeletedResponse>, ApiError> {
    let id = TaskId::from(id);
    state
        .engine
        .tasks()
        .delete_task(&state.namespace, &id)
        .await?;
    Ok(Json(TaskDeletedResponse {
        object: "task_deleted".into(),
        data: TaskDeletedDto {
            id: id.to_string(),
            deleted: true,
        },
    }))
}

/// Starts a new run: queued, or `awaiting_approval` when the approval policy
/// gates the task's kind.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/start",
    operation_id = "start_task",
    tag = "tasks",
    params(TaskPath),
    responses(
        (status = 202, description = "The new run", body = TaskRunResponse),
        (status = 404, description = "No such task", body = ErrorEnvelope),
        (status = 409, description = "A run of the task is already active", body = ErrorEnvelope),
        (status = 422, description = "An agent_loop task whose model does not resolve (model_not_configured); no run is created", body = ErrorEnvelope)
    )
)]
pub async fn start(
    State(state): State<HttpState>,
    Actor(by): Actor,
    ApiPath(TaskPath { id }): ApiPath<TaskPath>,
) -> Result<(StatusCode, Json<TaskRunResponse>), ApiError> {
    let opts = StartOptions {
        started_by: Some(by),
        ..StartOptions::default()
    };
    let run = state
        .engine
        .tasks()
        .start(&state.namespace, &TaskId::from(id), opts)
        .await?;
    Ok(accepted_run(&run))
}
