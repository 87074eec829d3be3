//! ACP over a WebSocket, the `/acp` endpoint of `hecate serve`. Each connection
//! is one ACP connection with its own bridge state (client capabilities, threads,
//! prompts) over the server's one engine, so its sessions are the stored sessions
//! every other surface sees. One JSON-RPC message travels per text message and
//! the SDK's `Lines` transport parses it, with stdio's per-line rules:
//! - a message over [`MAX_FRAME_BYTES`] is never parsed: a request is answered
//!   `Invalid Request` with its own id (as an oversized stdin line is), and the
//!   connection goes on;
//! - a message over [`SOCKET_LIMIT`] is refused by the WebSocket layer before it
//!   is held, and the connection is closed with 1009 and [`too_big_reason`];
//! - a binary message closes the connection with 1003 and [`BINARY_REASON`];
//! - a blank message is skipped, a long message that is not JSON is answered with
//!   a parse error quoting a capped part of it.
//!
//! When the client goes away, the turns it started and never saw end are
//! cancelled (as closing stdin does for `hecate acp`); the server goes on. When
//! the server stops, the connection is closed with 1001 and [`SHUTDOWN_REASON`].

use super::handlers;
use super::in_flight::InFlight;
use super::state::{BridgeConfig, Shared};
use super::transport::{MAX_FRAME_BYTES, message_line};
use crate::engine::Engine;
use agent_client_protocol::Lines;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade, close_code};
use futures::{Sink, SinkExt, Stream, StreamExt};
use std::io;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_tungstenite::tungstenite::error::{CapacityError, Error as WsError};
use tokio_util::sync::CancellationToken;

/// Close reason sent (with code 1003) after a binary message.
pub const BINARY_REASON: &str =
    "binary messages are not accepted: send each JSON-RPC message as one text message";

/// Close reason sent (with code 1001) when the server shuts down.
pub const SHUTDOWN_REASON: &str = "the Hecate server is shutting down";

/// Largest message the socket holds at all: twice the frame limit, so a message
/// a little over [`MAX_FRAME_BYTES`] is still answered with its request id.
pub const SOCKET_LIMIT: usize = 2 * MAX_FRAME_BYTES;

/// Close reason sent (with code 1009) after a message of `size` bytes, over
/// [`SOCKET_LIMIT`].
pub fn too_big_reason(size: usize) -> String {
    format!("message of {size} bytes exceeds the {SOCKET_LIMIT}-byte limit")
}

/// Applies [`SOCKET_LIMIT`] to an upgrade, so a larger message is refused
/// before it is held.
pub fn limit_frames(upgrade: WebSocketUpgrade) -> WebSocketUpgrade {
    upgrade
        .max_message_size(SOCKET_LIMIT)
        .max_frame_size(SOCKET_LIMIT)
}

/// Serves one ACP connection over an upgraded `socket` until the client closes
/// it or `shutdown` fires; then cancels the turns the client left running.
pub async fn serve_websocket(
    engine: Engine,
    config: BridgeConfig,
    socket: WebSocket,
    shutdown: CancellationToken,
) {
    let namespace = config.namespace.clone();
    let (ws_out, ws_in) = socket.split();
    let (tx, rx) = mpsc::channel::<Message>(64);
    let writer = tokio::spawn(write(ws_out, rx));
    let in_flight = InFlight::default();
    let transport = Lines::new(
        outgoing(tx.clone(), in_flight.clone()),
        incoming(ws_in, tx.clone(), in_flight.clone()),
    );
    let shared = Arc::new(Shared::new(engine.clone(), config));
    tokio::select! {
        r = handlers::connect(shared.clone(), transport) => {
            if let Err(e) = r {
                tracing::debug!(error = %e, "ACP WebSocket connection ended with an error");
            }
        }
        () = shutdown.cancelled() => {
            let _ = tx.send(close(close_code::AWAY, SHUTDOWN_REASON)).await;
        }
    }
    for sid in in_flight.sessions() {
        tracing::info!(session = %sid, "the ACP client went away; cancelling its turn");
        shared.cancel_prompt(&sid);
        if let Err(e) = engine.cancel(&namespace, &sid).await {
            tracing::debug!(session = %sid, error = %e, "no running turn to cancel");
        }
    }
    drop(tx);
    let _ = writer.await;
}

fn close(code: u16, reason: &str) -> Message {
    Message::Close(Some(CloseFrame {
        code,
        reason: reason.into(),
    }))
}

/// Writes queued messages to the socket until a close is written, the queue
/// ends or the socket fails; then closes the socket.
async fn write(
    mut ws: impl Sink<Message, Error = axum::Error> + Unpin,
    mut rx: mpsc::Receiver<Message>,
) {
    while let Some(m) = rx.recv().await {
        let closing = matches!(m, Message::Close(_));
        if let Err(e) = ws.send(m).await {
            tracing::debug!(error = %e, "writing to the ACP WebSocket failed");
            return;
        }
        if closing {
            break;
        }
    }
    let _ = ws.close().await;
}

/// The SDK's outgoing side: each line is one text message.
fn outgoing(
    tx: mpsc::Sender<Message>,
    in_flight: InFlight,
) -> impl Sink<String, Error = io::Error> + Send + 'static {
    futures::sink::unfold((tx, in_flight), async |(tx, f), line: String| {
        f.sent(&line);
        tx.send(Message::text(line))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the WebSocket is closed"))?;
        Ok::<_, io::Error>((tx, f))
    })
}

/// The SDK's incoming side: text messages as lines; a binary or oversized
/// message queues its close and ends the stream, as does the client's close.
fn incoming(
    ws: impl Stream<Item = Result<Message, axum::Error>> + Unpin + Send + 'static,
    tx: mpsc::Sender<Message>,
    in_flight: InFlight,
) -> impl Stream<Item = io::Result<String>> + Send + 'static {
    futures::stream::unfold((ws, tx, in_flight), async |(mut ws, tx, f)| {
        let refusal = loop {
            match ws.next().await? {
                Ok(Message::Text(text)) => {
                    if let Some(line) = message_line(text.as_str().to_owned(), MAX_FRAME_BYTES) {
                        f.received(&line);
                        return Some((Ok(line), (ws, tx, f)));
                    }
                }
                Ok(Message::Binary(bytes)) => {
                    tracing::warn!(bytes = bytes.len(), "refused a binary ACP message");
                    break close(close_code::UNSUPPORTED, BINARY_REASON);
                }
                Ok(Message::Close(_)) => return None,
                Ok(Message::Ping(_) | Message::Pong(_)) => {}
                Err(e) => match too_long(&e) {
                    Some(size) => {
                        tracing::warn!(size, "refused an oversized ACP message");
                        break close(close_code::SIZE, &too_big_reason(size));
                    }
                    None => {
                        tracing::debug!(error = %e, "reading the ACP WebSocket failed");
                        return None;
                    }
                },
            }
        };
        let _ = tx.send(refusal).await;
        None
    })
}

/// The size of a message the WebSocket layer refused as over the limit.
fn too_long(e: &axum::Error) -> Option<usize> {
    use std::error::Error as _;
    match e.source()?.downcast_ref::<WsError>()? {
        WsError::Capacity(CapacityError::MessageTooLong { size, .. }) => Some(*size),
        _ => None,
    }
}
