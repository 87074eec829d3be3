//! Runs that carry an `agent_loop` run's conversation on: continue with a
//! follow-up prompt, and retry from one of its model turns.

use super::super::HttpState;
use super::super::envelope::{ApiError, ErrorEnvelope};
use super::super::extract::{ApiJson, ApiPath};
use super::super::path_params::TaskRunPath;
use super::shared::{accepted_run, ids};
use crate::bridges::resources::tasks::{ContinueRunRequest, RetryFromTurnRequest, TaskRunResponse};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

/// A new run that goes on from an ended `agent_loop` run's conversation with a
/// follow-up prompt, in its workspace, carrying its cost.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/continue",
    operation_id = "continue_task_run",
    tag = "tasks",
    params(TaskRunPath),
    request_body = ContinueRunRequest,
    responses(
        (status = 202, description = "The new run", body = TaskRunResponse),
        (status = 400, description = "Not an agent_loop task, an empty prompt, or no readable conversation", body = ErrorEnvelope),
        (status = 404, description = "No such task or run", body = ErrorEnvelope),
        (status = 409, description = "The run has not ended, or another run is active", body = ErrorEnvelope)
    )
)]
pub async fn continue_run(
    State(state): State<HttpState>,
    ApiPath(TaskRunPath { id, run_id }): ApiPath<TaskRunPath>,
    ApiJson(body): ApiJson<ContinueRunRequest>,
) -> Result<(StatusCode, Json<TaskRunResponse>), ApiError> {
    let (id, run_id) = ids(id, run_id);
    let run = state
        .engine
        .tasks()
        .continue_run(&state.namespace, &id, &run_id, body.prompt, body.reason)
        .await?;
    Ok(accepted_run(&run))
}

/// A new run whose conversation is the ended run's cut right before its
/// `turn`-th model turn, which the model takes again.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/retry-from-turn",
    operation_id = "retry_task_run_from_turn",
    tag = "tasks",
    params(TaskRunPath),
    request_body = RetryFromTurnRequest,
    responses(
        (status = 202, description = "The new run", body = TaskRunResponse),
        (status = 400, description = "Not an agent_loop run with a conversation, or the turn is out of range", body = ErrorEnvelope),
        (status = 404, description = "No such task or run", body = ErrorEnvelope),
        (status = 409, description = "The run has not ended, or another run is active", body = ErrorEnvelope)
    )
)]
pub async fn retry_from_turn(
    State(state): State<HttpState>,
    ApiPath(TaskRunPath { id, run_id }): ApiPath<TaskRunPath>,
    ApiJson(body): ApiJson<RetryFromTurnRequest>,
) -> Result<(StatusCode, Json<TaskRunResponse>), ApiError> {
    let (id, run_id) = ids(id, run_id);
    let run = state
        .engine
        .tasks()
        .retry_from_turn(&state.namespace, &id, &run_id, body.turn, body.reason)
        .await?;
    Ok(accepted_run(&run))
}
