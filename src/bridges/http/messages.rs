//! `POST /hecate/v1/agent-chat/sessions/{id}/messages`: runs one turn and answers
//! with the session once it ends. A turn that fails or is cancelled is still a 200
//! (its assistant message carries `status` and `error`); only a turn that could not
//! start answers with the error envelope. A client that disconnects does not stop
//! the turn: it runs in the engine, not in this request.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::{ApiJson, ApiPath};
use super::path_params::SessionPath;
use super::request_id::RequestIds;
use super::sessions::{load_transcript, session_response};
use crate::bridges::resources::{SendMessageRequest, SessionResponse, parse_runtime_kind};
use crate::domain::ids::SessionId;
use crate::engine::SendMessage;
use axum::Json;
use axum::extract::{Extension, State};

/// Sends a prompt and waits for the turn to end.
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-chat/sessions/{id}/messages",
    operation_id = "send_message",
    tag = "agent-chat",
    params(SessionPath),
    request_body = SendMessageRequest,
    responses(
        (status = 200, description = "The session after the turn (which may have failed or been cancelled)", body = SessionResponse),
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
    Ok(session_response(load_transcript(&state, &sid).await?))
}
