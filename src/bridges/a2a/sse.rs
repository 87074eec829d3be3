//! Streams of A2A events as Server-Sent Events (axum's `Sse`): each event's data
//! is the JSON-RPC response carrying it, or the bare event for the HTTP+JSON
//! binding.

use crate::a2a_wire::StreamResponse;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::{Stream, StreamExt};
use serde_json::{Value, json};
use std::convert::Infallible;

/// The stream as SSE, each event wrapped as a JSON-RPC result of request `id`.
pub fn jsonrpc(id: Value, events: impl Stream<Item = StreamResponse> + Send + 'static) -> Response {
    respond(events.map(move |ev| json!({"jsonrpc": "2.0", "id": id, "result": ev})))
}

/// The stream as SSE, each event bare.
pub fn rest(events: impl Stream<Item = StreamResponse> + Send + 'static) -> Response {
    respond(events.map(|ev| serde_json::to_value(ev).unwrap_or(Value::Null)))
}

fn respond(values: impl Stream<Item = Value> + Send + 'static) -> Response {
    let events = values.map(|v| Ok::<_, Infallible>(Event::default().data(v.to_string())));
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}
