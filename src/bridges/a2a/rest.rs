//! The HTTP+JSON (REST) binding under each agent's URL: `POST message:send`,
//! `POST message:stream` (SSE), `GET tasks`, `GET tasks/{id}`,
//! `POST tasks/{id}:cancel`, `GET|POST tasks/{id}:subscribe` (SSE), and the
//! seed's `POST /v1/agents/{agent}/message:send`. Errors are a
//! `google.rpc.Status` body with the A2A reason, as the official SDKs read them.

use super::agents::{ExposedAgent, resolve};
use super::error::A2aError;
use super::ops;
use super::sse;
use super::state::A2aState;
use super::types::{ListTasksRequest, SendMessageRequest, SendMessageResponse, TaskIdRequest};
use super::version::check_version;
use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde::de::DeserializeOwned;

/// The query of `GET tasks/{id}`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HistoryQuery {
    /// How many history messages to include.
    #[serde(default, alias = "history_length")]
    history_length: Option<i32>,
}

/// `POST message:send`: runs the message's task to its end (or input) and
/// answers `{"task": …}`.
pub async fn send(
    State(state): State<A2aState>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let run = async {
        let agent = checked(&state, &agent, &headers).await?;
        let req: SendMessageRequest = read(&body)?;
        ops::send(&state, &agent, req).await
    };
    match run.await {
        Ok(task) => Json(SendMessageResponse { task }).into_response(),
        Err(e) => fail(e),
    }
}

/// `POST message:stream`: the message's task as SSE.
pub async fn stream(
    State(state): State<A2aState>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let run = async {
        let agent = checked(&state, &agent, &headers).await?;
        let req: SendMessageRequest = read(&body)?;
        ops::send_streaming(&state, &agent, req).await
    };
    match run.await {
        Ok(s) => sse::rest(s),
        Err(e) => fail(e),
    }
}

/// `GET tasks`: a page of the agent's tasks.
pub async fn list(
    State(state): State<A2aState>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    query: Result<Query<ListTasksRequest>, QueryRejection>,
) -> Response {
    let run = async {
        let agent = checked(&state, &agent, &headers).await?;
        let Query(q) = query.map_err(|e| A2aError::InvalidParams(e.body_text()))?;
        ops::list(&state, &agent, &q)
    };
    match run.await {
        Ok(page) => Json(page).into_response(),
        Err(e) => fail(e),
    }
}

/// `GET tasks/{id}` (the task) and `GET tasks/{id}:subscribe` (its stream).
pub async fn task_get(
    State(state): State<A2aState>,
    Path((agent, task)): Path<(String, String)>,
    headers: HeaderMap,
    query: Result<Query<HistoryQuery>, QueryRejection>,
) -> Response {
    let history_length = query.map(|Query(q)| q.history_length).unwrap_or(None);
    task_action(state, agent, task, headers, Method::GET, history_length).await
}

/// `POST tasks/{id}:cancel` and `POST tasks/{id}:subscribe`.
pub async fn task_post(
    State(state): State<A2aState>,
    Path((agent, task)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    task_action(state, agent, task, headers, Method::POST, None).await
}

/// `tasks/{id}/pushNotificationConfigs`: not offered.
pub async fn push_configs() -> Response {
    fail(A2aError::PushNotificationNotSupported)
}

/// `GET extendedAgentCard`: not offered.
pub async fn extended_card() -> Response {
    fail(A2aError::ExtendedCardNotConfigured)
}

/// One operation on a task, named by the `:verb` after its id.
async fn task_action(
    state: A2aState,
    agent: String,
    segment: String,
    headers: HeaderMap,
    method: Method,
    history_length: Option<i32>,
) -> Response {
    let agent = match checked(&state, &agent, &headers).await {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    let (id, verb) = match segment.rsplit_once(':') {
        Some((id, verb)) => (id.to_string(), Some(verb)),
        None => (segment.clone(), None),
    };
    let req = TaskIdRequest {
        id,
        history_length,
        ..TaskIdRequest::default()
    };
    let answer = match (verb, &method) {
        (None, &Method::GET) => ops::get(&state, &agent, &req).map(Json),
        (Some("cancel"), &Method::POST) => ops::cancel(&state, &agent, &req).await.map(Json),
        (Some("subscribe"), _) => {
            return match ops::subscribe(&state, &agent, &req) {
                Ok(s) => sse::rest(s),
                Err(e) => fail(e),
            };
        }
        _ => Err(A2aError::MethodNotFound(format!(
            "{method} tasks/{segment} is not an operation; use GET tasks/ID, \
             POST tasks/ID:cancel or tasks/ID:subscribe"
        ))),
    };
    match answer {
        Ok(task) => task.into_response(),
        Err(e) => fail(e),
    }
}

/// The agent of the path, after the version check.
async fn checked(
    state: &A2aState,
    agent: &str,
    headers: &HeaderMap,
) -> Result<ExposedAgent, A2aError> {
    check_version(headers)?;
    resolve(&state.engine, agent).await
}

/// Reads a JSON body.
fn read<T: DeserializeOwned>(body: &[u8]) -> Result<T, A2aError> {
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| A2aError::Parse(format!("the body is not JSON: {e}")))?;
    serde_json::from_value(value).map_err(|e| A2aError::InvalidParams(format!("invalid body: {e}")))
}

/// The error as the REST binding answers it.
fn fail(e: A2aError) -> Response {
    (e.http_status(), Json(e.rest_body())).into_response()
}
