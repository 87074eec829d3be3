//! The workspace files an external-agent turn changed (captured as a Git diff on
//! its assistant message): list them, read one file's diff, and revert them.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::{ApiJson, ApiPath};
use super::path_params::{MessageFilePath, MessagePath};
use crate::bridges::resources::agent::{
    ChangedFileDiffDto, ChangedFileDiffResponse, ChangedFileDto, ChangedFilesResponse, RevertDto,
    RevertRequest, RevertResponse,
};
use crate::domain::ids::{MessageId, SessionId};
use axum::Json;
use axum::extract::State;

/// The files the message's turn changed; empty when it captured no diff.
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-chat/sessions/{id}/messages/{message_id}/files",
    operation_id = "list_changed_files",
    tag = "agent-chat",
    params(MessagePath),
    responses(
        (status = 200, description = "The changed files", body = ChangedFilesResponse),
        (status = 404, description = "No such session or message", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiPath(MessagePath { id, message_id }): ApiPath<MessagePath>,
) -> Result<Json<ChangedFilesResponse>, ApiError> {
    let files = state
        .engine
        .message_files(
            &state.namespace,
            &SessionId::from(id),
            &MessageId::from(message_id),
        )
        .await?;
    Ok(Json(ChangedFilesResponse {
        object: "agent_chat_changed_files".to_string(),
        data: files.iter().map(ChangedFileDto::from).collect(),
    }))
}

/// One changed file with its stored unified diff. Send the path URL-encoded as one
/// segment (`src%2Ffoo.rs`).
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-chat/sessions/{id}/messages/{message_id}/files/{path}",
    operation_id = "get_changed_file_diff",
    tag = "agent-chat",
    params(MessageFilePath),
    responses(
        (status = 200, description = "The file's change and diff", body = ChangedFileDiffResponse),
        (status = 404, description = "No such session, message or changed file", body = ErrorEnvelope)
    )
)]
pub async fn diff(
    State(state): State<HttpState>,
    ApiPath(MessageFilePath {
        id,
        message_id,
        path,
    }): ApiPath<MessageFilePath>,
) -> Result<Json<ChangedFileDiffResponse>, ApiError> {
    let (f, diff) = state
        .engine
        .message_file_diff(
            &state.namespace,
            &SessionId::from(id),
            &MessageId::from(message_id),
            &path,
        )
        .await?;
    Ok(Json(ChangedFileDiffResponse {
        object: "agent_chat_changed_file_diff".to_string(),
        data: ChangedFileDiffDto {
            path: f.path,
            old_path: f.old_path,
            status: f.status,
            additions: f.additions,
            deletions: f.deletions,
            diff,
        },
    }))
}

/// Restores files the message's turn changed to their state before it: the listed
/// `paths` (which must be among the captured ones) or, when empty, all of them.
/// Only Git workspaces capture diffs; anything else is 400 `invalid_request`.
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-chat/sessions/{id}/messages/{message_id}/revert",
    operation_id = "revert_message",
    tag = "agent-chat",
    params(MessagePath),
    request_body = RevertRequest,
    responses(
        (status = 200, description = "What was restored and what still differs", body = RevertResponse),
        (status = 400, description = "No captured Git diff, or a path the turn did not change", body = ErrorEnvelope),
        (status = 404, description = "No such session or message", body = ErrorEnvelope)
    )
)]
pub async fn revert(
    State(state): State<HttpState>,
    ApiPath(MessagePath { id, message_id }): ApiPath<MessagePath>,
    ApiJson(req): ApiJson<RevertRequest>,
) -> Result<Json<RevertResponse>, ApiError> {
    let result = state
        .engine
        .revert_message(
            &state.namespace,
            &SessionId::from(id),
            &MessageId::from(message_id),
            &req.paths,
        )
        .await?;
    Ok(Json(RevertResponse {
        object: "agent_chat_revert".to_string(),
        data: RevertDto::from(&result),
    }))
}
