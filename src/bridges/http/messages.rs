//! `/hecate/v1/agent-chat/sessions/{id}/messages`: `POST` runs one turn and answers
//! with the session header and that turn's messages once it ends; `GET` reads a
//! page of the session's messages. A turn that fails or is cancelled is still a 200
//! (its assistant message carries `status` and `error`); only a turn that could not
//! start answers with the error envelope. A client that disconnects does not stop
//! the turn: it runs in the engine, not in this request.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::path_params::SessionPath;
use super::request_id::RequestIds;
use super::sessions::{load_transcript, session_response, turn_answer};
use crate::bridges::resources::{
    MessageListResponse, SendMessageRequest, SessionResponse, TranscriptQuery, parse_runtime_kind,
};
use crate::domain::ids::SessionId;
use crate::engine::SendMessage;
use axum::Json;
use axum::extract::{Extension, State};

/// Sends a prompt and waits for the turn to end; answers the session header with
/// the messages of this turn only (its prompt, tool exchanges and answer), so the
/// answer's size does not grow with the session.
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-chat/sessions/{id}/messages",
    operation_id = "send_message",
    tag = "agent-chat",
    params(SessionPath),
    request_body = SendMessageRequest,
    responses(
        (status = 200, description = "The session header and this turn's messages (the turn may have failed or been cancelled)", body = SessionResponse),
        (status = 400, description = "Invalid body, runtime kind or workspace; runtime mismatch", body = ErrorEnvelope),
        (status = 404, description = "No such session", body = ErrorEnvelope),
        (status = 409, description = "A turn is already running", body = ErrorEnvelope),
        (status = 422, description = "Model not configured, no route, or a guardrail was reached", body = ErrorEnvelope)
    )
)]
pub async fn send(
    State(state): State<HttpState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ids: Option<Extension<RequestIds>>,
    ApiJson(req): ApiJson<SendMessageRequest>,
) -> Result<Json<SessionResponse>, ApiError> {
    let sid = SessionId::from(id);
    let runtime_kind = parse_runtime_kind(req.runtime_kind.as_deref())?;
    let mut turn = state
        .engine
        .send_message(
            &state.namespace,
            &sid,
            SendMessage {
                content: req.content,
                runtime_kind,
                provider: req.provider.filter(|p| !p.is_empty()),
                model: req.model.filter(|m| !m.is_empty()),
                system_prompt: req.system_prompt,
                workspace: req.workspace,
                adapter_id: req.adapter_id.filter(|a| !a.is_empty()),
                request_id: ids.map(|Extension(ids)| ids.request_id),
                ..SendMessage::default()
            },
        )
        .await?;
    let result = turn.wait().await;
    tracing::debug!(run_id = %result.run.id, status = result.run.status.as_str(), "turn ended");
    Ok(session_response(turn_answer(&state, &sid, &result).await?))
}

/// One page of the session's messages, oldest first: the newest 200 unless the
/// query says otherwise.
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-chat/sessions/{id}/messages",
    operation_id = "list_messages",
    tag = "agent-chat",
    params(SessionPath, TranscriptQuery),
    responses(
        (status = 200, description = "A page of messages and where it sits", body = MessageListResponse),
        (status = 400, description = "Bad limit, or both cursors", body = ErrorEnvelope),
        (status = 404, description = "No such session", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiQuery(q): ApiQuery<TranscriptQuery>,
) -> Result<Json<MessageListResponse>, ApiError> {
    let window = q.window()?;
    let t = load_transcript(&state, &SessionId::from(id), window).await?;
    Ok(Json(MessageListResponse {
        object: "agent_chat_messages".to_string(),
        data: t.messages,
        page: t.page,
    }))
}
