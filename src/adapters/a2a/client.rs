//! The A2A operations Hecate calls on a remote agent — send, stream,
//! subscribe, get and cancel — over the binding its card chose: JSON-RPC 2.0
//! (one URL, the method in the body) or HTTP+JSON (`/message:send`,
//! `/message:stream`, `/tasks/{id}:subscribe`, `/tasks/{id}`,
//! `/tasks/{id}:cancel`). Streams are SSE, parsed by `eventsource-stream`.

use super::card::{Binding, Endpoint};
use super::error::A2aClientError;
use crate::a2a_wire::{Message, PROTOCOL_VERSION, StreamResponse, Task, VERSION_HEADER};
use eventsource_stream::{EventStreamError, Eventsource};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use std::time::Duration;

/// A stream of a task's events, ending when the agent closes it.
pub type EventStream = BoxStream<'static, Result<StreamResponse, A2aClientError>>;

/// A client of one remote agent's endpoint.
#[derive(Debug, Clone)]
pub struct A2aClient {
    http: reqwest::Client,
    endpoint: Endpoint,
    token: Option<String>,
    timeout: Duration,
}

impl A2aClient {
    /// A client calling `endpoint` with `token` as its bearer, each request (or
    /// the gap between two streamed events) limited to `timeout`.
    pub fn new(
        http: reqwest::Client,
        endpoint: Endpoint,
        token: Option<String>,
        timeout: Duration,
    ) -> Self {
        Self {
            http,
            endpoint,
            token,
            timeout,
        }
    }

    /// Sends `message` and waits for the task (or the direct answer) it leads to.
    pub async fn send(&self, message: &Message) -> Result<StreamResponse, A2aClientError> {
        let params = json!({"message": message});
        match self.endpoint.binding {
            Binding::JsonRpc => self.rpc("SendMessage", params).await,
            Binding::HttpJson => {
                self.rest(reqwest::Method::POST, "/message:send", Some(params))
                    .await
            }
        }
    }

    /// Sends `message` and streams the events of the task it starts or continues.
    pub async fn stream(&self, message: &Message) -> Result<EventStream, A2aClientError> {
        let params = json!({"message": message});
        let (url, body) = match self.endpoint.binding {
            Binding::JsonRpc => (
                self.endpoint.url.clone(),
                rpc_body("SendStreamingMessage", params),
            ),
            Binding::HttpJson => (format!("{}/message:stream", self.endpoint.url), params),
        };
        self.open_stream(&url, &body).await
    }

    /// Re-attaches to task `id` (`SubscribeToTask`): the task as it is now, then
    /// its events until it ends or waits for input. An agent that does not
    /// offer it (or not for this task) answers a `Remote` error.
    pub async fn subscribe(&self, id: &str) -> Result<EventStream, A2aClientError> {
        let params = json!({"id": id});
        let (url, body) = match self.endpoint.binding {
            Binding::JsonRpc => (
                self.endpoint.url.clone(),
                rpc_body("SubscribeToTask", params),
            ),
            Binding::HttpJson => (
                format!("{}/tasks/{}:subscribe", self.endpoint.url, segment(id)),
                params,
            ),
        };
        self.open_stream(&url, &body).await
    }

    /// Posts `body` to `url` asking for an event stream. A JSON answer instead
    /// (how agents refuse a streamed method) is its error, or its one event. A
    /// stream whose connection breaks ends with an `Unreachable` error.
    async fn open_stream(&self, url: &str, body: &Value) -> Result<EventStream, A2aClientError> {
        let req = self
            .request(reqwest::Method::POST, url)
            .header(reqwest::header::ACCEPT, "text/event-stream")
            .json(body);
        let resp = tokio::time::timeout(self.timeout, req.send())
            .await
            .map_err(|_| self.timed_out())?
            .map_err(|e| self.unreachable(e))?;
        let resp = check_status(resp).await?;
        let json_rpc = self.endpoint.binding == Binding::JsonRpc;
        if is_json(&resp) {
            let v = tokio::time::timeout(self.timeout, resp.json::<Value>())
                .await
                .map_err(|_| self.timed_out())?
                .map_err(|e| A2aClientError::Malformed(format!("the body is not JSON ({e})")))?;
            let v = if json_rpc { rpc_result(v)? } else { v };
            let ev: StreamResponse = decode(v)?;
            return Ok(futures::stream::once(async move { Ok(ev) }).boxed());
        }
        let limit = self.timeout;
        let endpoint = self.endpoint.url.clone();
        let events = resp
            .bytes_stream()
            .eventsource()
            .map_err(move |e| match e {
                EventStreamError::Transport(e) => A2aClientError::Unreachable {
                    url: endpoint.clone(),
                    message: format!("the event stream broke: {e}"),
                },
                other => A2aClientError::Malformed(format!("the event stream broke: {other}")),
            })
            .and_then(move |ev| async move {
                let v: Value = serde_json::from_str(&ev.data).map_err(|e| {
                    A2aClientError::Malformed(format!("an event is not JSON ({e})"))
                })?;
                let v = if json_rpc { rpc_result(v)? } else { v };
                decode(v)
            });
        Ok(with_idle_limit(events.boxed(), limit))
    }

    /// The task `id` as the agent has it now.
    pub async fn get_task(&self, id: &str) -> Result<Task, A2aClientError> {
        match self.endpoint.binding {
            Binding::JsonRpc => self.rpc("GetTask", json!({"id": id})).await,
            Binding::HttpJson => {
                self.rest(
                    reqwest::Method::GET,
                    &format!("/tasks/{}", segment(id)),
                    None,
                )
                .await
            }
        }
    }

    /// Asks the agent to cancel task `id`; answers the task as it then is.
    pub async fn cancel_task(&self, id: &str) -> Result<Task, A2aClientError> {
        match self.endpoint.binding {
            Binding::JsonRpc => self.rpc("CancelTask", json!({"id": id})).await,
            Binding::HttpJson => {
                let path = format!("/tasks/{}:cancel", segment(id));
                self.rest(reqwest::Method::POST, &path, Some(json!({"id": id})))
                    .await
            }
        }
    }

    fn request(&self, method: reqwest::Method, url: &str) -> reqwest::RequestBuilder {
        let req = self
            .http
            .request(method, url)
            .header(VERSION_HEADER, PROTOCOL_VERSION);
        match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    async fn rpc<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
    ) -> Result<T, A2aClientError> {
        let req = self
            .request(reqwest::Method::POST, &self.endpoint.url)
            .json(&rpc_body(method, params));
        let v = self.call(req).await?;
        decode(rpc_result(v)?)
    }

    async fn rest<T: DeserializeOwned>(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<Value>,
    ) -> Result<T, A2aClientError> {
        let mut req = self.request(method, &format!("{}{path}", self.endpoint.url));
        if let Some(b) = body {
            req = req.json(&b);
        }
        decode(self.call(req).await?)
    }

    /// Sends `req` within the time limit and reads its JSON body.
    async fn call(&self, req: reqwest::RequestBuilder) -> Result<Value, A2aClientError> {
        let exchange = async {
            let resp = req.send().await.map_err(|e| self.unreachable(e))?;
            let resp = check_status(resp).await?;
            resp.json::<Value>()
                .await
                .map_err(|e| A2aClientError::Malformed(format!("the body is not JSON ({e})")))
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| self.timed_out())?
    }

    fn unreachable(&self, e: reqwest::Error) -> A2aClientError {
        A2aClientError::Unreachable {
            url: self.endpoint.url.clone(),
            message: e.to_string(),
        }
    }

    fn timed_out(&self) -> A2aClientError {
        A2aClientError::Timeout {
            secs: self.timeout.as_secs().max(1),
        }
    }
}

/// A JSON-RPC 2.0 request for `method`.
fn rpc_body(method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": uuid::Uuid::new_v4().to_string(), "method": method, "params": params})
}

/// The `result` of a JSON-RPC response, or its `error` as a typed error.
fn rpc_result(mut v: Value) -> Result<Value, A2aClientError> {
    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
        return Err(A2aClientError::Remote {
            code: e.get("code").and_then(Value::as_i64).unwrap_or(0),
            message: e
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("no message")
                .to_string(),
        });
    }
    match v.get_mut("result").map(Value::take) {
        Some(r) => Ok(r),
        None => Err(A2aClientError::Malformed(
            "a JSON-RPC response without result or error".into(),
        )),
    }
}

fn decode<T: DeserializeOwned>(v: Value) -> Result<T, A2aClientError> {
    serde_json::from_value(v).map_err(|e| A2aClientError::Malformed(e.to_string()))
}

/// Answers `resp` when it succeeded, else its status as a typed error (with the
/// agent's message when its body says one).
async fn check_status(resp: reqwest::Response) -> Result<reqwest::Response, A2aClientError> {
    let status = resp.status();
    if status.is_success() {
        return Ok(resp);
    }
    if status == reqwest::StatusCode::UNAUTHORIZED || status == reqwest::StatusCode::FORBIDDEN {
        return Err(A2aClientError::Unauthorized {
            status: status.as_u16(),
        });
    }
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    let message = body
        .pointer("/error/message")
        .or_else(|| body.get("message"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("HTTP {}", status.as_u16()));
    Err(A2aClientError::Remote {
        code: i64::from(status.as_u16()),
        message,
    })
}

/// Whether `resp` answered JSON rather than an event stream (a missing
/// content type is read as a stream).
fn is_json(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.to_ascii_lowercase().contains("json"))
}

/// `id` as one URL path segment.
fn segment(id: &str) -> String {
    id.chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '-' | '_' | '.' | '~' => c.to_string(),
            other => {
                let mut buf = [0u8; 4];
                other
                    .encode_utf8(&mut buf)
                    .bytes()
                    .map(|b| format!("%{b:02X}"))
                    .collect()
            }
        })
        .collect()
}

/// `events`, failing with `timeout` when no event comes within `limit`.
fn with_idle_limit(events: EventStream, limit: Duration) -> EventStream {
    futures::stream::unfold(Some(events), move |state| async move {
        let mut events = state?;
        match tokio::time::timeout(limit, events.next()).await {
            Ok(Some(item)) => Some((item, Some(events))),
            Ok(None) => None,
            Err(_) => Some((
                Err(A2aClientError::Timeout {
                    secs: limit.as_secs().max(1),
                }),
                None,
            )),
        }
    })
    .boxed()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_json_rpc_error_is_a_remote_error() {
        let e = rpc_result(json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "Task not found"}}))
            .expect_err("error");
        assert_eq!(e.reason(), "remote_error");
        assert!(e.to_string().contains("Task not found"), "{e}");
        assert_eq!(
            rpc_result(json!({"result": {"a": 1}})).expect("result"),
            json!({"a": 1})
        );
    }

    #[test]
    fn task_ids_are_escaped_as_one_segment() {
        assert_eq!(segment("a/b c"), "a%2Fb%20c");
        assert_eq!(segment("2c68ae6d-0002"), "2c68ae6d-0002");
    }
}
