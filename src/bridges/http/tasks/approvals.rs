//! A task's approval gates: list, read, resolve.

use super::super::HttpState;
use super::super::auth::Actor;
use super::super::envelope::{ApiError, ErrorEnvelope};
use super::super::extract::{ApiJson, ApiPath};
use super::super::path_params::{TaskApprovalPath, TaskPath};
use crate::bridges::resources::tasks::{
    ResolveTaskApprovalRequest, TaskApprovalDto, TaskApprovalListResponse, TaskApprovalResponse,
};
use crate::domain::HecateError;
use crate::domain::ids::{TaskApprovalId, TaskId};
use axum::Json;
use axum::extract::State;

/// The approvals of a task, oldest first.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/approvals",
    operation_id = "list_task_approvals",
    tag = "tasks",
    params(TaskPath),
    responses(
        (status = 200, description = "Approvals", body = TaskApprovalListResponse),
        (status = 404, description = "No such task", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiPath(TaskPath { id }): ApiPath<TaskPath>,
) -> Result<Json<TaskApprovalListResponse>, ApiError> {
    let list = state
        .engine
        .tasks()
        .list_approvals(&state.namespace, &TaskId::from(id))
        .await?;
    Ok(Json(TaskApprovalListResponse {
        object: "task_approvals".into(),
        data: list.iter().map(TaskApprovalDto::from).collect(),
    }))
}

/// One approval.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/approvals/{approval_id}",
    operation_id = "get_task_approval",
    tag = "tasks",
    params(TaskApprovalPath),
    responses(
        (status = 200, description = "The approval", body = TaskApprovalResponse),
        (status = 404, description = "No such task or approval", body = ErrorEnvelope)
    )
)]
pub async fn get(
    State(state): State<HttpState>,
    ApiPath(TaskApprovalPath { id, approval_id }): ApiPath<TaskApprovalPath>,
) -> Result<Json<TaskApprovalResponse>, ApiError> {
    let a = state
        .engine
        .tasks()
        .get_approval(
            &state.namespace,
            &TaskId::from(id),
            &TaskApprovalId::from(approval_id),
        )
        .await?;
    Ok(Json(TaskApprovalResponse {
        object: "task_approval".into(),
        data: TaskApprovalDto::from(&a),
    }))
}

/// Approves (the run is queued) or rejects (the run fails) a pending gate.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/approvals/{approval_id}/resolve",
    operation_id = "resolve_task_approval",
    tag = "tasks",
    params(TaskApprovalPath),
    request_body = ResolveTaskApprovalRequest,
    responses(
        (status = 200, description = "The resolved approval", body = TaskApprovalResponse),
        (status = 400, description = "decision is not approve or reject", body = ErrorEnvelope),
        (status = 404, description = "No such task or approval", body = ErrorEnvelope),
        (status = 409, description = "Already resolved, or the run no longer waits (cancelled)", body = ErrorEnvelope)
    )
)]
pub async fn resolve(
    State(state): State<HttpState>,
    Actor(by): Actor,
    ApiPath(TaskApprovalPath { id, approval_id }): ApiPath<TaskApprovalPath>,
    ApiJson(body): ApiJson<ResolveTaskApprovalRequest>,
) -> Result<Json<TaskApprovalResponse>, ApiError> {
    let approve = match body.decision.as_str() {
        "approve" => true,
        "reject" => false,
        other => {
            return Err(HecateError::invalid(format!(
                "decision must be approve or reject, got {other:?}"
            ))
            .with_detail("field", "decision")
            .into());
        }
    };
    let a = state
        .engine
        .tasks()
        .resolve_approval_as(
            &state.namespace,
            &TaskId::from(id),
            &TaskApprovalId::from(approval_id),
            approve,
            body.note,
            Some(by),
        )
        .await?;
    Ok(Json(TaskApprovalResponse {
        object: "task_approval".into(),
        data: TaskApprovalDto::from(&a),
    }))
}
