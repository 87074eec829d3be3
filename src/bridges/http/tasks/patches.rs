//! A run's patches: list, read, apply, revert.

use super::super::HttpState;
use super::super::envelope::{ApiError, ErrorEnvelope};
use super::super::extract::{ApiOptionalJson, ApiPath};
use super::shared::ids;
use crate::bridges::resources::tasks::{
    RunActionRequest, TaskPatchDto, TaskPatchListResponse, TaskPatchResponse,
};
use crate::domain::ids::TaskArtifactId;
use crate::domain::task::TaskArtifact;
use crate::engine::tasks::patch_content;
use axum::Json;
use axum::extract::State;

fn dto(a: &TaskArtifact) -> Result<TaskPatchDto, ApiError> {
    Ok(TaskPatchDto::new(a, patch_content(a)?))
}

fn one(a: &TaskArtifact) -> Result<Json<TaskPatchResponse>, ApiError> {
    Ok(Json(TaskPatchResponse {
        object: "task_patch".into(),
        data: dto(a)?,
    }))
}

/// The patches of a run (every file a `file` step wrote).
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/patches",
    operation_id = "list_task_patches",
    tag = "tasks",
    params(("id" = String, Path, description = "Task id"), ("run_id" = String, Path, description = "Run id")),
    responses(
        (status = 200, description = "Patches", body = TaskPatchListResponse),
        (status = 404, description = "No such task or run", body = ErrorEnvelope),
        (status = "default", description = "Error envelope", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiPath((id, run_id)): ApiPath<(String, String)>,
) -> Result<Json<TaskPatchListResponse>, ApiError> {
    let (id, run_id) = ids(id, run_id);
    let list = state
        .engine
        .tasks()
        .list_patches(&state.namespace, &id, Some(&run_id))
        .await?;
    Ok(Json(TaskPatchListResponse {
        object: "task_patches".into(),
        data: list.iter().map(dto).collect::<Result<_, _>>()?,
    }))
}

/// One patch with its before and after content.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/patches/{artifact_id}",
    operation_id = "get_task_patch",
    tag = "tasks",
    params(("id" = String, Path, description = "Task id"), ("run_id" = String, Path, description = "Run id"), ("artifact_id" = String, Path, description = "Patch artifact id")),
    responses(
        (status = 200, description = "The patch", body = TaskPatchResponse),
        (status = 404, description = "No such task, run or patch", body = ErrorEnvelope),
        (status = "default", description = "Error envelope", body = ErrorEnvelope)
    )
)]
pub async fn get(
    State(state): State<HttpState>,
    ApiPath((id, run_id, artifact_id)): ApiPath<(String, String, String)>,
) -> Result<Json<TaskPatchResponse>, ApiError> {
    let (id, run_id) = ids(id, run_id);
    let a = state
        .engine
        .tasks()
        .get_patch(
            &state.namespace,
            &id,
            &run_id,
            &TaskArtifactId::from(artifact_id),
        )
        .await?;
    one(&a)
}

/// Writes a proposed or reverted patch's after-content again; 409 when the file no
/// longer holds the before-content.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/patches/{artifact_id}/apply",
    operation_id = "apply_task_patch",
    tag = "tasks",
    params(("id" = String, Path, description = "Task id"), ("run_id" = String, Path, description = "Run id"), ("artifact_id" = String, Path, description = "Patch artifact id")),
    request_body(content = RunActionRequest, description = "Optional"),
    responses(
        (status = 200, description = "The patch, now applied", body = TaskPatchResponse),
        (status = 404, description = "No such task, run or patch", body = ErrorEnvelope),
        (status = 409, description = "Already applied, or the file changed", body = ErrorEnvelope),
        (status = "default", description = "Error envelope", body = ErrorEnvelope)
    )
)]
pub async fn apply(
    State(state): State<HttpState>,
    ApiPath((id, run_id, artifact_id)): ApiPath<(String, String, String)>,
    ApiOptionalJson(_body): ApiOptionalJson<RunActionRequest>,
) -> Result<Json<TaskPatchResponse>, ApiError> {
    let (id, run_id) = ids(id, run_id);
    let a = state
        .engine
        .tasks()
        .apply_patch(
            &state.namespace,
            &id,
            &run_id,
            &TaskArtifactId::from(artifact_id),
        )
        .await?;
    one(&a)
}

/// Restores an applied patch's before-content (a created file is removed); 409
/// when the file no longer holds the after-content.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/patches/{artifact_id}/revert",
    operation_id = "revert_task_patch",
    tag = "tasks",
    params(("id" = String, Path, description = "Task id"), ("run_id" = String, Path, description = "Run id"), ("artifact_id" = String, Path, description = "Patch artifact id")),
    request_body(content = RunActionRequest, description = "Optional"),
    responses(
        (status = 200, description = "The patch, now reverted", body = TaskPatchResponse),
        (status = 404, description = "No such task, run or patch", body = ErrorEnvelope),
        (status = 409, description = "Not applied, or the file changed", body = ErrorEnvelope),
        (status = "default", description = "Error envelope", body = ErrorEnvelope)
    )
)]
pub async fn revert(
    State(state): State<HttpState>,
    ApiPath((id, run_id, artifact_id)): ApiPath<(String, String, String)>,
    ApiOptionalJson(_body): ApiOptionalJson<RunActionRequest>,
) -> Result<Json<TaskPatchResponse>, ApiError> {
    let (id, run_id) = ids(id, run_id);
    let a = state
        .engine
        .tasks()
        .revert_patch(
            &state.namespace,
            &id,
            &run_id,
            &TaskArtifactId::from(artifact_id),
        )
        .await?;
    one(&a)
}
