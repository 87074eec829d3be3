//! The JSON-RPC 2.0 binding: `POST /a2a/{agent}` with the A2A 1.0 methods
//! (`SendMessage`, `SendStreamingMessage`, `GetTask`, `ListTasks`,
//! `CancelTask`, `SubscribeToTask`, the push notification configs'
//! `CreateTaskPushNotificationConfig`, `GetTaskPushNotificationConfig`,
//! `ListTaskPushNotificationConfigs`, `DeleteTaskPushNotificationConfig`, and
//! `GetExtendedAgentCard`). The
//! envelope is read and written with serde; streamed methods answer SSE, each
//! event a JSON-RPC response.

use super::agents::resolve;
use super::card::origin;
use super::error::A2aError;
use super::extended;
use super::ops;
use super::push::ops as push_ops;
use super::sse;
use super::state::A2aState;
use super::version::check_version;
use crate::a2a_wire::SendMessageResponse;
use crate::domain::api_key::Identity;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

/// A JSON-RPC request as read.
#[derive(Debug, Deserialize)]
struct RpcRequest {
    jsonrpc: String,
    #[serde(default)]
    id: Option<Value>,
    method: String,
    #[serde(default)]
    params: Value,
}

/// Answers one JSON-RPC request to `agent`, made as the identity the access
/// guard admitted.
pub async fn handle(
    State(state): State<A2aState>,
    Path(agent): Path<String>,
    headers: HeaderMap,
    identity: Option<Extension<Identity>>,
    body: Bytes,
) -> Response {
    let req = match envelope(&body) {
        Ok(r) => r,
        Err((id, e)) => return error(id, e, StatusCode::OK),
    };
    let id = req.id.clone().unwrap_or(Value::Null);
    if let Err(e) = check_version(&headers) {
        return error(id, e, StatusCode::OK);
    }
    let agent = match resolve(&state.engine, &agent).await {
        Ok(a) => a,
        Err(e) => {
            let status = e.http_status();
            return error(id, e, status);
        }
    };
    let answer = match req.method.as_str() {
        "SendMessage" => match params(req.params) {
            Ok(p) => ops::send(&state, &agent, p)
                .await
                .and_then(|task| to_value(SendMessageResponse { task })),
            Err(e) => Err(e),
        },
        "SendStreamingMessage" => {
            let stream = match params(req.params) {
                Ok(p) => ops::send_streaming(&state, &agent, p).await,
                Err(e) => Err(e),
            };
            return match stream {
                Ok(s) => sse::jsonrpc(id, s),
                Err(e) => error(id, e, StatusCode::OK),
            };
        }
        "SubscribeToTask" => {
            let stream = match params(req.params) {
                Ok(p) => ops::subscribe(&state, &agent, &p).await,
                Err(e) => Err(e),
            };
            return match stream {
                Ok(s) => sse::jsonrpc(id, s),
                Err(e) => error(id, e, StatusCode::OK),
            };
        }
        "GetTask" => match params(req.params) {
            Ok(p) => ops::get(&state, &agent, &p).await.and_then(to_value),
            Err(e) => Err(e),
        },
        "ListTasks" => match params(req.params) {
            Ok(p) => ops::list(&state, &agent, &p).await.and_then(to_value),
            Err(e) => Err(e),
        },
        "CancelTask" => match params(req.params) {
            Ok(p) => ops::cancel(&state, &agent, &p).await.and_then(to_value),
            Err(e) => Err(e),
        },
        "GetExtendedAgentCard" => match identity {
            Some(Extension(identity)) => {
                extended::extended_card(&state, &agent, &identity, &origin(&headers))
                    .await
                    .and_then(to_value)
            }
            None => Err(A2aError::Internal(
                "the request reached the extended card without an identity".into(),
            )),
        },
        "CreateTaskPushNotificationConfig" => match params(req.params) {
            Ok(p) => push_ops::create(&state, &agent, p).await.and_then(to_value),
            Err(e) => Err(e),
        },
        "GetTaskPushNotificationConfig" => match params(req.params) {
            Ok(p) => push_ops::get(&state, &agent, &p).await.and_then(to_value),
            Err(e) => Err(e),
        },
        "ListTaskPushNotificationConfigs" => match params(req.params) {
            Ok(p) => push_ops::list(&state, &agent, &p).await.and_then(to_value),
            Err(e) => Err(e),
        },
        "DeleteTaskPushNotificationConfig" => match params(req.params) {
            Ok(p) => push_ops::delete(&state, &agent, &p)
                .await
                .map(|()| Value::Null),
            Err(e) => Err(e),
        },
        other => Err(A2aError::MethodNotFound(format!(
            "method {other:?} does not exist; this server speaks A2A 1.0 (SendMessage, \
             SendStreamingMessage, GetTask, ListTasks, CancelTask, SubscribeToTask, \
             CreateTaskPushNotificationConfig, GetTaskPushNotificationConfig, \
             ListTaskPushNotificationConfigs, DeleteTaskPushNotificationConfig, \
             GetExtendedAgentCard)"
        ))),
    };
    match answer {
        Ok(result) => Json(json!({"jsonrpc": "2.0", "id": id, "result": result})).into_response(),
        Err(e) => error(id, e, StatusCode::OK),
    }
}

/// Reads the envelope; a failure carries the request id when one was readable.
fn envelope(body: &[u8]) -> Result<RpcRequest, (Value, A2aError)> {
    let value: Value = serde_json::from_slice(body).map_err(|e| {
        (
            Value::Null,
            A2aError::Parse(format!("the body is not JSON: {e}")),
        )
    })?;
    let id = value.get("id").cloned().unwrap_or(Value::Null);
    let req: RpcRequest = serde_json::from_value(value).map_err(|e| {
        (
            id.clone(),
            A2aError::InvalidRequest(format!("not a JSON-RPC 2.0 request: {e}")),
        )
    })?;
    if req.jsonrpc != "2.0" {
        return Err((
            id,
            A2aError::InvalidRequest(format!("jsonrpc is {:?}, not \"2.0\"", req.jsonrpc)),
        ));
    }
    Ok(req)
}

/// Reads a method's parameters.
fn params<T: DeserializeOwned>(params: Value) -> Result<T, A2aError> {
    serde_json::from_value(params)
        .map_err(|e| A2aError::InvalidParams(format!("invalid params: {e}")))
}

/// A result as JSON.
fn to_value(v: impl serde::Serialize) -> Result<Value, A2aError> {
    serde_json::to_value(v).map_err(|e| A2aError::Internal(format!("encoding the answer: {e}")))
}

/// A JSON-RPC error response with HTTP `status`.
fn error(id: Value, e: A2aError, status: StatusCode) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": e.jsonrpc_error()});
    (status, Json(body)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_envelopes_get_the_json_rpc_codes() {
        let (_, e) = envelope(b"{not json").expect_err("parse");
        assert_eq!(e.code(), -32700);
        let (id, e) = envelope(br#"{"jsonrpc":"1.0","id":7,"method":"GetTask"}"#).expect_err("v");
        assert_eq!((id, e.code()), (json!(7), -32600));
        let (_, e) = envelope(br#"{"jsonrpc":"2.0","id":1}"#).expect_err("no method");
        assert_eq!(e.code(), -32600);
        let ok = envelope(br#"{"jsonrpc":"2.0","id":"a","method":"GetTask","params":{"id":"t"}}"#)
            .expect("valid");
        assert_eq!(ok.method, "GetTask");
        let p: Result<crate::a2a_wire::SendMessageRequest, _> =
            params(json!({"message": {"role": "ROLE_USER"}}));
        assert_eq!(p.expect_err("no parts").code(), -32602);
    }
}
