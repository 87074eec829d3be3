//! Agent Chat sessions: list, create, read (the full transcript), delete, cancel the
//! running turn, and close.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::{ApiJson, ApiPath, ApiQuery};
use super::path_params::SessionPath;
use super::project::transcript_dto;
use crate::bridges::resources::capability::CapabilitiesDto;
use crate::bridges::resources::{
    CancelDto, CancelResponse, CreateSessionRequest, DeletedDto, DeletedResponse,
    ListSessionsQuery, SessionDto, SessionListResponse, SessionResponse, SessionSummaryDto,
    TranscriptDto, TranscriptQuery, page_size, parse_runtime_kind,
};
use crate::domain::ErrorType;
use crate::domain::HecateError;
use crate::domain::ids::SessionId;
use crate::domain::recall::{SessionMemory, valid_recall, valid_user};
use crate::domain::session::Guardrails;
use crate::engine::{CreateSession, TranscriptWindow, TurnResult, turn_transcript};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use std::collections::HashMap;
use std::time::Duration;

/// Default page of `GET /hecate/v1/agent-chat/sessions`.
const DEFAULT_LIMIT: u32 = 50;

/// How long `close` waits for a cancelled turn to settle.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// Reads a window of a session as the wire transcript: stored messages with their
/// turns' activities, plus the live assistant message of a running turn when the
/// window reaches the end.
pub async fn load_transcript(
    state: &HttpState,
    session_id: &SessionId,
    window: TranscriptWindow,
) -> Result<TranscriptDto, ApiError> {
    let engine = &state.engine;
    let t = engine
        .transcript_window(&state.namespace, session_id, window)
        .await?;
    let running = t.runs.last().filter(|r| !r.status.is_terminal());
    let live = running.and_then(|r| {
        state
            .hub
            .live_events(session_id, &r.id)
            .map(|evs| (r.id.clone(), evs))
    });
    // Terminal runs' logs come from the hub's cache when it has them; a running
    // turn's stored log is read whole only when the tap has no exact copy.
    let (mut events, mut wanted) = state.hub.cached_logs(&t.runs);
    let full = running.filter(|_| live.is_none()).map(|r| r.id.clone());
    wanted.extend(full.clone());
    if !wanted.is_empty() {
        let found = engine
            .render_run_events(&state.namespace, session_id, Some(wanted), full)
            .await?;
        state.hub.remember_logs(&t.runs, &found);
        events.extend(found);
    }
    let mut dto = transcript_dto(
        &t,
        &events,
        live.as_ref().map(|(id, evs)| (id, evs.as_slice())),
    );
    with_capabilities(state, std::slice::from_mut(&mut dto.session)).await;
    Ok(dto)
}

/// The answer of a finished turn: built from what the turn stored when it kept
/// it (a model turn), otherwise read back as the window of its run.
pub async fn turn_answer(
    state: &HttpState,
    session_id: &SessionId,
    result: &TurnResult,
) -> Result<TranscriptDto, ApiError> {
    let Some((t, events)) = turn_transcript(result) else {
        return load_transcript(
            state,
            session_id,
            TranscriptWindow::Run(result.run.id.clone()),
        )
        .await;
    };
    let logs = HashMap::from([(result.run.id.clone(), events)]);
    let mut dto = transcript_dto(&t, &logs, None);
    with_capabilities(state, std::slice::from_mut(&mut dto.session)).await;
    Ok(dto)
}

/// Fills each model or agent session header with its model's effective
/// capabilities (one read of the stored records for all of them).
async fn with_capabilities(state: &HttpState, sessions: &mut [SessionDto]) {
    let pairs: Vec<(usize, (String, String))> = sessions
        .iter()
        .enumerate()
        .filter(|(_, s)| s.runtime_kind != "external_agent")
        .filter_map(|(i, s)| Some((i, (s.provider.clone()?, s.model.clone()?))))
        .collect();
    if pairs.is_empty() {
        return;
    }
    let caps = state
        .engine
        .gateway()
        .capabilities_of(&pairs.iter().map(|(_, p)| p.clone()).collect::<Vec<_>>())
        .await;
    for ((i, _), c) in pairs.iter().zip(caps) {
        sessions[*i].capabilities = Some(CapabilitiesDto::from(&c));
    }
}

/// Wraps a transcript as `{"object": "agent_chat_session", "data": …}`.
pub fn session_response(data: TranscriptDto) -> Json<SessionResponse> {
    Json(SessionResponse {
        object: "agent_chat_session".to_string(),
        data,
    })
}

/// Lists sessions of this server's namespace, newest first, with counts.
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-chat/sessions",
    operation_id = "list_sessions",
    tag = "agent-chat",
    params(ListSessionsQuery),
    responses(
        (status = 200, description = "Session summaries, newest first", body = SessionListResponse),
        (status = 400, description = "Bad query", body = ErrorEnvelope)
    )
)]
pub async fn list(
    State(state): State<HttpState>,
    ApiQuery(q): ApiQuery<ListSessionsQuery>,
) -> Result<Json<SessionListResponse>, ApiError> {
    let limit = page_size(q.limit, DEFAULT_LIMIT)?;
    let list = state.engine.list_sessions(&state.namespace, limit).await?;
    let mut data: Vec<SessionSummaryDto> = list.iter().map(SessionSummaryDto::from).collect();
    let mut headers: Vec<SessionDto> = data.iter().map(|d| d.session.clone()).collect();
    with_capabilities(&state, &mut headers).await;
    for (d, h) in data.iter_mut().zip(headers) {
        d.session = h;
    }
    Ok(Json(SessionListResponse {
        object: "agent_chat_sessions".to_string(),
        data,
    }))
}

/// Creates a session after validating its runtime, target and workspace.
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-chat/sessions",
    operation_id = "create_session",
    tag = "agent-chat",
    request_body = CreateSessionRequest,
    responses(
        (status = 200, description = "The new session", body = SessionResponse, links(
            ("GetSession" = (operation_id = "get_session", parameters(("id" = "$response.body#/data/id")))),
            ("SendMessage" = (operation_id = "send_message", parameters(("id" = "$response.body#/data/id")))),
            ("CancelTurn" = (operation_id = "cancel_turn", parameters(("id" = "$response.body#/data/id")))),
            ("CloseSession" = (operation_id = "close_session", parameters(("id" = "$response.body#/data/id")))),
            ("DeleteSession" = (operation_id = "delete_session", parameters(("id" = "$response.body#/data/id"))))
        )),
        (status = 400, description = "Invalid body, runtime kind, workspace or model", body = ErrorEnvelope),
        (status = 422, description = "Model not configured or no route", body = ErrorEnvelope)
    )
)]
pub async fn create(
    State(state): State<HttpState>,
    ApiJson(req): ApiJson<CreateSessionRequest>,
) -> Result<Json<SessionResponse>, ApiError> {
    let runtime_kind = parse_runtime_kind(req.runtime_kind.as_deref())?;
    let history = req.history.as_ref().map(|h| h.to_strategy()).transpose()?;
    let memory = SessionMemory {
        user: valid_user("user", req.user.as_deref())?,
        recall: valid_recall("recall", req.recall)?,
    };
    let defaults = state.engine.config().default_guardrails;
    let guardrails = (req.max_turns_per_session.is_some()
        || req.max_session_duration_ms.is_some()
        || req.idle_timeout_ms.is_some())
    .then(|| Guardrails {
        max_turns: req.max_turns_per_session.or(defaults.max_turns),
        max_duration_ms: req.max_session_duration_ms.or(defaults.max_duration_ms),
        idle_timeout_ms: req.idle_timeout_ms.or(defaults.idle_timeout_ms),
    });
    let session = state
        .engine
        .create_session(
            &state.namespace,
            CreateSession {
                title: req.title,
                runtime_kind,
                provider: req.provider.filter(|p| !p.is_empty()),
                model: req.model,
                adapter_id: req.adapter_id,
                workspace: req.workspace,
                system_prompt: req.system_prompt,
                guardrails,
                history,
                memory,
            },
        )
        .await?;
    Ok(session_response(
        load_transcript(&state, &session.id, TranscriptQuery::newest_page()).await?,
    ))
}

/// The session with one page of its transcript (the newest 200 messages unless the
/// query says otherwise): messages with runtime snapshots and turn metadata, their
/// provider calls and runs, derived segments, and where the page sits.
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-chat/sessions/{id}",
    operation_id = "get_session",
    tag = "agent-chat",
    params(SessionPath, TranscriptQuery),
    responses(
        (status = 200, description = "The session with a page of its transcript", body = SessionResponse),
        (status = 400, description = "Bad limit, or both cursors", body = ErrorEnvelope),
        (status = 404, description = "No such session", body = ErrorEnvelope)
    )
)]
pub async fn get(
    State(state): State<HttpState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiQuery(q): ApiQuery<TranscriptQuery>,
) -> Result<Json<SessionResponse>, ApiError> {
    let window = q.window()?;
    Ok(session_response(
        load_transcript(&state, &SessionId::from(id), window).await?,
    ))
}

/// Deletes a session and everything stored about it; a running turn is cancelled.
#[utoipa::path(
    delete,
    path = "/hecate/v1/agent-chat/sessions/{id}",
    operation_id = "delete_session",
    tag = "agent-chat",
    params(SessionPath),
    responses(
        (status = 200, description = "Deleted", body = DeletedResponse),
        (status = 404, description = "No such session", body = ErrorEnvelope)
    )
)]
pub async fn delete(
    State(state): State<HttpState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> Result<Json<DeletedResponse>, ApiError> {
    let sid = SessionId::from(id);
    state.engine.delete_session(&state.namespace, &sid).await?;
    Ok(Json(DeletedResponse {
        object: "agent_chat_session_deleted".to_string(),
        data: DeletedDto {
            id: sid.to_string(),
            deleted: true,
        },
    }))
}

/// Signals the running turn to stop: 202 when one was signalled, 409
/// `agent_chat.session_not_running` when none runs.
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-chat/sessions/{id}/cancel",
    operation_id = "cancel_turn",
    tag = "agent-chat",
    params(SessionPath),
    responses(
        (status = 202, description = "The running turn was signalled", body = CancelResponse),
        (status = 404, description = "No such session", body = ErrorEnvelope),
        (status = 409, description = "No turn is running", body = ErrorEnvelope)
    )
)]
pub async fn cancel(
    State(state): State<HttpState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> Result<(StatusCode, Json<CancelResponse>), ApiError> {
    let sid = SessionId::from(id);
    state.engine.cancel(&state.namespace, &sid).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(CancelResponse {
            object: "agent_chat_cancel".to_string(),
            data: CancelDto {
                id: sid.to_string(),
                status: "cancelling".to_string(),
            },
        }),
    ))
}

/// Closes the session's live resources while keeping its history: a running turn
/// is cancelled and awaited briefly (409 `agent_chat.session_stopping` if it does
/// not settle) and an external agent's native session and process are closed.
/// Model sessions hold nothing else, so they are returned as they are.
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-chat/sessions/{id}/close",
    operation_id = "close_session",
    tag = "agent-chat",
    params(SessionPath),
    responses(
        (status = 200, description = "The session after closing", body = SessionResponse),
        (status = 404, description = "No such session", body = ErrorEnvelope),
        (status = 409, description = "The turn is still stopping", body = ErrorEnvelope)
    )
)]
pub async fn close(
    State(state): State<HttpState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> Result<Json<SessionResponse>, ApiError> {
    let sid = SessionId::from(id);
    state.engine.close_session(&state.namespace, &sid).await?;
    if !state.engine.wait_turn_settled(&sid, CLOSE_WAIT).await {
        return Err(HecateError::new(
            ErrorType::SessionStopping,
            format!("session {sid} is still stopping its turn"),
        )
        .into());
    }
    Ok(session_response(
        load_transcript(&state, &sid, TranscriptQuery::newest_page()).await?,
    ))
}
