//! The HTTP+JSON (REST) binding under each agent's URL: `POST message:send`,
//! `POST message:stream` (SSE), `GET tasks`, `GET tasks/{id}`,
//! `POST tasks/{id}:cancel`, `GET|POST tasks/{id}:subscribe` (SSE), the push
//! notification configs (`POST|GET tasks/{id}/pushNotificationConfigs`,
//! `GET|DELETE tasks/{id}/pushNotificationConfigs/{configId}`), `GET
//! extendedAgentCard` (the authenticated extended card), and the seed's
//! `POST /v1/agents/{agent}/message:send`. Errors are a `google.rpc.Status`
//! body with the A2A reason, as the official SDKs read them.

use super::agents::{ExposedAgent, resolve};
use super::card::origin;
use super::error::A2aError;
use super::extended;
use super::ops;
use super::push::ops as push_ops;
use super::sse;
use super::state::A2aState;
use super::version::check_version;
use crate::a2a_wire::{
    ListTaskPushNotificationConfigsRequest, ListTasksRequest, SendMessageRequest,
    SendMessageResponse, TaskIdRequest, TaskPushNotificationConfig,
    TaskPushNotificationConfigRequest,
};
use crate::domain::api_key::Identity;
use axum::body::Bytes;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::json;

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
        ops::list(&state, &agent, &q).await
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

/// `POST tasks/{id}:cancel` and `POST tasks/{id}:subscribe`. The body (the
/// SDKs send the request's fields, which the path already names) is read to
/// its end and not used: a body left unread would cost the client its
/// keep-alive connection.
pub async fn task_post(
    State(state): State<A2aState>,
    Path((agent, task)): Path<(String, String)>,
    headers: HeaderMap,
    _body: Bytes,
) -> Response {
    task_action(state, agent, task, headers, Method::POST, None).await
}

/// `POST tasks/{id}/pushNotificationConfigs` (create; the path names the task)
/// and `GET tasks/{id}/pushNotificationConfigs` (list).
pub async fn push_configs(
    State(state): State<A2aState>,
    Path((agent, task)): Path<(String, String)>,
    headers: HeaderMap,
    method: Method,
    query: Result<Query<ListTaskPushNotificationConfigsRequest>, QueryRejection>,
    body: Bytes,
) -> Response {
    let run = async {
        let agent = checked(&state, &agent, &headers).await?;
        match method {
            Method::POST => {
                let mut config: TaskPushNotificationConfig = read(&body)?;
                config.task_id = task;
                push_ops::create(&state, &agent, config)
                    .await
                    .map(|c| Json(c).into_response())
            }
            Method::GET => {
                let Query(mut req) = query.map_err(|e| A2aError::InvalidParams(e.body_text()))?;
                req.task_id = task;
                push_ops::list(&state, &agent, &req)
                    .await
                    .map(|l| Json(l).into_response())
            }
            other => Err(A2aError::MethodNotFound(format!(
                "{other} tasks/{task}/pushNotificationConfigs is not an operation; use POST to \
                 create a config or GET to list them"
            ))),
        }
    };
    run.await.unwrap_or_else(fail)
}

/// `GET tasks/{id}/pushNotificationConfigs/{configId}` (get) and `DELETE …`
/// (delete; answers `{}`). A body, which neither takes, is read to its end so
/// the connection stays usable.
pub async fn push_config(
    State(state): State<A2aState>,
    Path((agent, task, id)): Path<(String, String, String)>,
    headers: HeaderMap,
    method: Method,
    _body: Bytes,
) -> Response {
    let run = async {
        let agent = checked(&state, &agent, &headers).await?;
        let req = TaskPushNotificationConfigRequest {
            tenant: None,
            task_id: task,
            id,
        };
        match method {
            Method::GET => push_ops::get(&state, &agent, &req)
                .await
                .map(|c| Json(c).into_response()),
            Method::DELETE => push_ops::delete(&state, &agent, &req)
                .await
                .map(|()| Json(json!({})).into_response()),
            other => Err(A2aError::MethodNotFound(format!(
                "{other} tasks/{}/pushNotificationConfigs/{} is not an operation; use GET or \
                 DELETE",
                req.task_id, req.id
            ))),
        }
    };
    run.await.unwrap_or_else(fail)
}

/// `GET extendedAgentCard`: the agent's authenticated extended card for the
/// identity the access guard admitted.
pub async fn extended_card(
    State(state): State<A2aState>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    Extension(identity): Extension<Identity>,
) -> Response {
    let run = async {
        let agent = checked(&state, &agent, &headers).await?;
        extended::extended_card(&state, &agent, &identity, &origin(&headers)).await
    };
    match run.await {
        Ok(card) => Json(card).into_response(),
        Err(e) => fail(e),
    }
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
        (None, &Method::GET) => ops::get(&state, &agent, &req).await.map(Json),
        (Some("cancel"), &Method::POST) => ops::cancel(&state, &agent, &req).await.map(Json),
        (Some("subscribe"), _) => {
            return match ops::subscribe(&state, &agent, &req).await {
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
