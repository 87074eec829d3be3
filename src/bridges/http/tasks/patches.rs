//! A run's patches: list, read, apply, revert.

use super::super::HttpState;
use super::super::envelope::{ApiError, ErrorEnvelope};
use super::super::extract::{ApiOptionalJson, ApiPath};
use super::super::path_params::{TaskPatchPath, TaskRunPath};
use super::shared::ids;
use crate::bridges::resources::tasks::{
    RunActionRequest, TaskPatchDto, TaskPatchListResponse, TaskPatchResponse,
};
use crate::domain::ids::TaskArtifactId;
use crate::domain::task::TaskArtifact;
use crate::engine::tasks::{PatchRef, patch_content};
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
    params(TaskRunPath),
    responses(
        (status = 200, description = "Patches", body = TaskPatchListResponse),
        (status = 404, description = "No such task or run", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiPath(TaskRunPath { id, run_id }): ApiPath<TaskRunPath>,
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
    params(TaskPatchPath),
    responses(
        (status = 200, description = "The patch", body = TaskPatchResponse),
        (status = 404, description = "No such task, run or patch", body = ErrorEnvelope)
    )
)]
pub async fn get(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<TaskPatchPath>,
) -> Result<Json<TaskPatchResponse>, ApiError> {
    on_patch(&state, path, PatchOp::Get).await
}

/// Writes a proposed or reverted patch's after-content again; 409 when the file no
/// longer holds the before-content.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/patches/{artifact_id}/apply",
    operation_id = "apply_task_patch",
    tag = "tasks",
    params(TaskPatchPath),
    request_body(content = RunActionRequest, description = "Optional"),
    responses(
        (status = 200, description = "The patch, now applied", body = TaskPatchResponse),
        (status = 404, description = "No such task, run or patch", body = ErrorEnvelope),
        (status = 409, description = "Already applied, or the file changed", body = ErrorEnvelope)
    )
)]
pub async fn apply(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<TaskPatchPath>,
    ApiOptionalJson(_body): ApiOptionalJson<RunActionRequest>,
) -> Result<Json<TaskPatchResponse>, ApiError> {
    on_patch(&state, path, PatchOp::Apply).await
}

/// Restores an applied patch's before-content (a created file is removed); 409
/// when the file no longer holds the after-content.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/patches/{artifact_id}/revert",
    operation_id = "revert_task_patch",
    tag = "tasks",
    params(TaskPatchPath),
    request_body(content = RunActionRequest, description = "Optional"),
    responses(
        (status = 200, description = "The patch, now reverted", body = TaskPatchResponse),
        (status = 404, description = "No such task, run or patch", body = ErrorEnvelope),
        (status = 409, description = "Not applied, or the file changed", body = ErrorEnvelope)
    )
)]
pub async fn revert(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<TaskPatchPath>,
    ApiOptionalJson(_body): ApiOptionalJson<RunActionRequest>,
) -> Result<Json<TaskPatchResponse>, ApiError> {
    on_patch(&state, path, PatchOp::Revert).await
}

/// What a handler does to one patch.
enum PatchOp {
    /// Reads it.
    Get,
    /// Writes its after-content.
    Apply,
    /// Restores its before-content.
    Revert,
}

/// Does `op` to the patch at `path` and answers the patch as it then is.
async fn on_patch(
    state: &HttpState,
    path: TaskPatchPath,
    op: PatchOp,
) -> Result<Json<TaskPatchResponse>, ApiError> {
    let (id, run_id) = ids(path.id, path.run_id);
    let artifact_id = TaskArtifactId::from(path.artifact_id);
    let (tasks, ns) = (state.engine.tasks(), &state.namespace);
    let at = PatchRef {
        namespace: ns,
        task_id: &id,
        run_id: &run_id,
        patch_id: &artifact_id,
    };
    let a = match op {
        PatchOp::Get => tasks.get_patch(at).await,
        PatchOp::Apply => tasks.apply_patch(at).await,
        PatchOp::Revert => tasks.revert_patch(at).await,
    }?;
    one(&a)
}
