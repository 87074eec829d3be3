//! Gateway chat sessions (`/hecate/v1/chat/sessions`): list, create ahead of
//! the first request, show with both streams, change the title or system
//! prompt, replay, delete. The gateway appends to them (see `gateway/`), and
//! creates one a request names that does not exist yet.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::path_params::ChatSessionPath;
use crate::bridges::resources::chat::{
    ChatDeletedResponse, ChatReplayDto, ChatReplayResponse, ChatSessionDto,
    ChatSessionListResponse, ChatSessionResponse, ChatSessionSummaryDto, CreateChatSessionRequest,
    ListChatSessionsQuery, UpdateChatSessionRequest,
};
use crate::bridges::resources::{DeletedDto, page_size};
use crate::domain::gateway_conversation::GatewayConversationPatch;
use crate::engine::gateway::conversations::{GatewayConversationView, NewGatewayConversation};
use axum::Json;
use axum::extract::State;

/// Default page.
const DEFAULT_LIMIT: u32 = 50;

/// Wraps a session as `{"object": "chat_session", "data": …}`.
fn session_response(data: ChatSessionDto) -> Json<ChatSessionResponse> {
    Json(ChatSessionResponse {
        object: "chat_session".to_string(),
        data,
    })
}

/// A session with both streams, as the answer.
fn view_response(v: &GatewayConversationView) -> Json<ChatSessionResponse> {
    session_response(ChatSessionDto::new(
        &v.session,
        &v.messages,
        &v.provider_calls,
    ))
}

/// Lists chat sessions, most recently updated first, with counts and the newest call.
#[utoipa::path(
    get,
    path = "/hecate/v1/chat/sessions",
    operation_id = "list_chat_sessions",
    tag = "chat",
    params(ListChatSessionsQuery),
    responses(
        (status = 200, description = "Chat session summaries", body = ChatSessionListResponse),
        (status = 400, description = "Bad query", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiQuery(q): ApiQuery<ListChatSessionsQuery>,
) -> Result<Json<ChatSessionListResponse>, ApiError> {
    let limit = page_size(q.limit, DEFAULT_LIMIT)?;
    let offset = q.offset.unwrap_or(0) as usize;
    let list = state
        .engine
        .gateway()
        .list_conversations(&state.namespace, limit, offset)
        .await?;
    Ok(Json(ChatSessionListResponse {
        object: "chat_sessions".to_string(),
        data: list.iter().map(ChatSessionSummaryDto::from).collect(),
    }))
}

/// Creates an empty chat session with a title and a system prompt; requests
/// then name it by `X-Hecate-Session-Id` or `session_id`.
#[utoipa::path(
    post,
    path = "/hecate/v1/chat/sessions",
    operation_id = "create_chat_session",
    tag = "chat",
    request_body = CreateChatSessionRequest,
    responses(
        (status = 200, description = "The new session", body = ChatSessionResponse, links(
            ("GetChatSession" = (operation_id = "get_chat_session", parameters(("id" = "$response.body#/data/id")))),
            ("UpdateChatSession" = (operation_id = "update_chat_session", parameters(("id" = "$response.body#/data/id")))),
            ("DeleteChatSession" = (operation_id = "delete_chat_session", parameters(("id" = "$response.body#/data/id"))))
        )),
        (status = 400, description = "Invalid body or id", body = ErrorEnvelope),
        (status = 409, description = "A session has the id", body = ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<HttpState>,
    ApiJson(req): ApiJson<CreateChatSessionRequest>,
) -> Result<Json<ChatSessionResponse>, ApiError> {
    let session = state
        .engine
        .gateway()
        .create_conversation(
            &state.namespace,
            NewGatewayConversation {
                id: req.id,
                title: req.title,
                system_prompt: req.system_prompt,
                user: req.user,
            },
        )
        .await?;
    Ok(session_response(ChatSessionDto::new(&session, &[], &[])))
}

/// Changes a chat session's title and/or system prompt; a new prompt applies
/// from the session's next request.
#[utoipa::path(
    patch,
    path = "/hecate/v1/chat/sessions/{id}",
    operation_id = "update_chat_session",
    tag = "chat",
    params(ChatSessionPath),
    request_body = UpdateChatSessionRequest,
    responses(
        (status = 200, description = "The session with both streams", body = ChatSessionResponse),
        (status = 400, description = "Invalid body", body = ErrorEnvelope),
        (status = 404, description = "No such session", body = ErrorEnvelope)
    )
)]
pub async fn update(
    State(state): State<HttpState>,
    ApiPath(ChatSessionPath { id }): ApiPath<ChatSessionPath>,
    ApiJson(req): ApiJson<UpdateChatSessionRequest>,
) -> Result<Json<ChatSessionResponse>, ApiError> {
    let v = state
        .engine
        .gateway()
        .update_conversation(
            &state.namespace,
            &id,
            GatewayConversationPatch {
                title: req.title,
                system_prompt: req.system_prompt,
            },
        )
        .await?;
    Ok(view_response(&v))
}

/// A chat session with its messages and provider calls.
#[utoipa::path(
    get,
    path = "/hecate/v1/chat/sessions/{id}",
    operation_id = "get_chat_session",
    tag = "chat",
    params(ChatSessionPath),
    responses(
        (status = 200, description = "The session with both streams", body = ChatSessionResponse),
        (status = 404, description = "No such session", body = ErrorEnvelope)
    )
)]
pub async fn get(
    State(state): State<HttpState>,
    ApiPath(ChatSessionPath { id }): ApiPath<ChatSessionPath>,
) -> Result<Json<ChatSessionResponse>, ApiError> {
    let v = state
        .engine
        .gateway()
        .conversation(&state.namespace, &id)
        .await?;
    Ok(view_response(&v))
}

/// The session's conversation as OpenAI Chat Completions messages, in sequence
/// order, ready to send with the next request.
#[utoipa::path(
    get,
    path = "/hecate/v1/chat/sessions/{id}/replay",
    operation_id = "replay_chat_session",
    tag = "chat",
    params(ChatSessionPath),
    responses(
        (status = 200, description = "The conversation", body = ChatReplayResponse),
        (status = 404, description = "No such session", body = ErrorEnvelope)
    )
)]
pub async fn replay(
    State(state): State<HttpState>,
    ApiPath(ChatSessionPath { id }): ApiPath<ChatSessionPath>,
) -> Result<Json<ChatReplayResponse>, ApiError> {
    let messages = state
        .engine
        .gateway()
        .replay_conversation(&state.namespace, &id)
        .await?;
    Ok(Json(ChatReplayResponse {
        object: "chat_session_replay".to_string(),
        data: ChatReplayDto {
            session_id: id,
            messages,
        },
    }))
}

/// Deletes a chat session with both streams (its traces stay).
#[utoipa::path(
    delete,
    path = "/hecate/v1/chat/sessions/{id}",
    operation_id = "delete_chat_session",
    tag = "chat",
    params(ChatSessionPath),
    responses(
        (status = 200, description = "Deleted", body = ChatDeletedResponse),
        (status = 404, description = "No such session", body = ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<HttpState>,
    ApiPath(ChatSessionPath { id }): ApiPath<ChatSessionPath>,
) -> Result<Json<ChatDeletedResponse>, ApiError> {
    state
        .engine
        .gateway()
        .delete_conversation(&state.namespace, &id)
        .await?;
    Ok(Json(ChatDeletedResponse {
        object: "chat_session_deleted".to_string(),
        data: DeletedDto { id, deleted: true },
    }))
}
