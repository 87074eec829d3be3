//! Client-hosted chats (`/hecate/v1/chats`): `startChat`, `sendChatMessage`,
//! `processChatResponse`, `saveChatSummary`, and reading a chat back. The caller
//! is identified by `X-Hecate-App-Key`, by `X-Hecate-User-Token` (or a user
//! token as `Authorization: Bearer`), or is anonymous.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::{ApiJson, ApiPath};
use super::path_params::ChatPath;
use crate::bridges::resources::flow_chat::{
    ChatDto, ChatProcessedResponse, ChatResponse, ChatStartedDto, ChatStartedResponse,
    ChatSummaryResponse, ChatSummarySavedDto, ChatTurnDto, ChatTurnResponse,
    ProcessChatResponseRequest, SaveChatSummaryRequest, SendChatMessageRequest, StartChatRequest,
};
use crate::domain::flow::ChatIdentity;
use crate::engine::flows::{ChatCredentials, StartChat};
use axum::Json;
use axum::extract::{FromRequestParts, State};
use axum::http::header;
use axum::http::request::Parts;
use serde_json::Value;

/// The header an app sends its key in.
pub const X_HECATE_APP_KEY: &str = "x-hecate-app-key";
/// The header a user sends its token in (when `Authorization` carries the server's).
pub const X_HECATE_USER_TOKEN: &str = "x-hecate-user-token";

/// The identity of the caller of a chat operation.
pub struct ChatCaller(pub ChatIdentity);

impl FromRequestParts<HttpState> for ChatCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &HttpState) -> Result<Self, ApiError> {
        let header = |name: &str| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        let bearer = header(header::AUTHORIZATION.as_str())
            .and_then(|v| v.strip_prefix("Bearer ").map(str::to_string))
            .filter(|t| state.engine.flows().is_user_token(t));
        let creds = ChatCredentials {
            app_key: header(X_HECATE_APP_KEY),
            user_token: header(X_HECATE_USER_TOKEN).or(bearer),
        };
        Ok(Self(state.engine.flows().identify(&creds)?))
    }
}

/// Opens a chat with an agent and answers the first system message and `respond` schema.
#[utoipa::path(
    post,
    path = "/hecate/v1/chats",
    operation_id = "start_chat",
    tag = "chats",
    request_body = StartChatRequest,
    responses(
        (status = 200, description = "The new chat", body = ChatStartedResponse),
        (status = 400, description = "Bad input", body = ErrorEnvelope),
        (status = 401, description = "Unknown app key or user token (chat.identity_invalid)", body = ErrorEnvelope),
        (status = 404, description = "No such agent (chat.agent_not_found)", body = ErrorEnvelope),
        (status = 422, description = "The agent's flow file did not load (chat.flow_invalid)", body = ErrorEnvelope)
    )
)]
pub async fn start(
    State(state): State<HttpState>,
    ChatCaller(who): ChatCaller,
    ApiJson(req): ApiJson<StartChatRequest>,
) -> Result<Json<ChatStartedResponse>, ApiError> {
    let started = state
        .engine
        .flows()
        .start(
            &state.namespace,
            &who,
            StartChat {
                agent_id: req.agent_id,
                user_id: req.user_id,
                conversation_name: req.conversation_name,
            },
        )
        .await?;
    Ok(Json(ChatStartedResponse::new(ChatStartedDto::from(
        started,
    ))))
}

/// Stores the user's message and answers the recompiled system message, schema and history.
#[utoipa::path(
    post,
    path = "/hecate/v1/chats/{chatId}/messages",
    operation_id = "send_chat_message",
    tag = "chats",
    params(ChatPath),
    request_body = SendChatMessageRequest,
    responses(
        (status = 200, description = "What to send the model next", body = ChatTurnResponse),
        (status = 400, description = "Bad input", body = ErrorEnvelope),
        (status = 404, description = "No such chat for this caller (chat.chat_not_found)", body = ErrorEnvelope),
        (status = 409, description = "The chat has ended (chat.chat_ended)", body = ErrorEnvelope)
    )
)]
pub async fn send(
    State(state): State<HttpState>,
    ChatCaller(who): ChatCaller,
    ApiPath(ChatPath { chat_id }): ApiPath<ChatPath>,
    ApiJson(req): ApiJson<SendChatMessageRequest>,
) -> Result<Json<ChatTurnResponse>, ApiError> {
    let turn = state
        .engine
        .flows()
        .send_message(&state.namespace, &who, &chat_id, &req.user_message)
        .await?;
    Ok(Json(ChatTurnResponse::new(ChatTurnDto::from(turn))))
}

/// Checks and stores the model's `respond` call, extracts data and routes the chat.
#[utoipa::path(
    post,
    path = "/hecate/v1/chats/{chatId}/responses",
    operation_id = "process_chat_response",
    tag = "chats",
    params(ChatPath),
    request_body = ProcessChatResponseRequest,
    responses(
        (status = 200, description = "What to render and where the chat went", body = ChatProcessedResponse),
        (status = 400, description = "The payload does not match the respond schema (chat.respond_invalid, `field` names it)", body = ErrorEnvelope),
        (status = 404, description = "No such chat for this caller (chat.chat_not_found)", body = ErrorEnvelope),
        (status = 409, description = "The chat has ended (chat.chat_ended)", body = ErrorEnvelope)
    )
)]
pub async fn process(
    State(state): State<HttpState>,
    ChatCaller(who): ChatCaller,
    ApiPath(ChatPath { chat_id }): ApiPath<ChatPath>,
    ApiJson(payload): ApiJson<Value>,
) -> Result<Json<ChatProcessedResponse>, ApiError> {
    let processed = state
        .engine
        .flows()
        .process_response(&state.namespace, &who, &chat_id, &payload)
        .await?;
    Ok(Json(ChatProcessedResponse::new(processed)))
}

/// Stores the summary the caller's model wrote when `summarizationNeeded` was set.
#[utoipa::path(
    post,
    path = "/hecate/v1/chats/{chatId}/summary",
    operation_id = "save_chat_summary",
    tag = "chats",
    params(ChatPath),
    request_body = SaveChatSummaryRequest,
    responses(
        (status = 200, description = "Saved", body = ChatSummaryResponse),
        (status = 400, description = "Bad input", body = ErrorEnvelope),
        (status = 404, description = "No such chat for this caller (chat.chat_not_found)", body = ErrorEnvelope)
    )
)]
pub async fn summary(
    State(state): State<HttpState>,
    ChatCaller(who): ChatCaller,
    ApiPath(ChatPath { chat_id }): ApiPath<ChatPath>,
    ApiJson(req): ApiJson<SaveChatSummaryRequest>,
) -> Result<Json<ChatSummaryResponse>, ApiError> {
    state
        .engine
        .flows()
        .save_summary(&state.namespace, &who, &chat_id, &req.summary)
        .await?;
    let saved = ChatSummarySavedDto { saved: true };
    Ok(Json(ChatSummaryResponse::new(saved)))
}

/// A chat with its messages, position and the user's data.
#[utoipa::path(
    get,
    path = "/hecate/v1/chats/{chatId}",
    operation_id = "get_chat",
    tag = "chats",
    params(ChatPath),
    responses(
        (status = 200, description = "The chat", body = ChatResponse),
        (status = 404, description = "No such chat for this caller (chat.chat_not_found)", body = ErrorEnvelope)
    )
)]
pub async fn get(
    State(state): State<HttpState>,
    ChatCaller(who): ChatCaller,
    ApiPath(ChatPath { chat_id }): ApiPath<ChatPath>,
) -> Result<Json<ChatResponse>, ApiError> {
    let view = state
        .engine
        .flows()
        .view(&state.namespace, &who, &chat_id)
        .await?;
    Ok(Json(ChatResponse::new(ChatDto::from(view))))
}
