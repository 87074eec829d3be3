//! `hecate acp --remote URL`: a relay between this process's stdio and the `/acp`
//! WebSocket of a running `hecate serve`, for editors that can only launch a
//! command. Each stdin line becomes one text message and each text message one
//! stdout line; nothing beyond the framing is read. Stdin lines get stdio's frame
//! rules (an oversized request becomes the stand-in the hub answers with
//! `Invalid Request`, blank lines are skipped). The relay ends cleanly when stdin
//! closes; when the hub goes away first, it says so on stderr and fails.

use crate::bridges::acp::transport::{self, MAX_FRAME_BYTES};
use crate::bridges::http::ACP_PATH;
use futures::{Sink, SinkExt, Stream, StreamExt};
use std::time::Duration;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderValue, header};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};

/// How long the relay waits for the hub's last messages after stdin closed.
const CLOSE_WAIT: Duration = Duration::from_secs(5);

/// How long queued stdout lines may take to be written at exit.
const STDOUT_DRAIN: Duration = Duration::from_secs(2);

/// Why the relay could not start or did not end cleanly.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The URL is not a WebSocket or HTTP URL.
    #[error("--remote {0:?} is not a ws://, wss://, http:// or https:// URL")]
    InvalidUrl(String),
    /// The token cannot be sent in a header.
    #[error("the token contains characters that cannot be sent in a header")]
    InvalidToken,
    /// The hub answered the upgrade with an error.
    #[error("the hub at {url} refused the connection (HTTP {status}): {message}")]
    Refused {
        /// The endpoint.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The hub's message and next step.
        message: String,
    },
    /// The hub could not be reached.
    #[error("cannot reach the hub at {url}: {reason}")]
    Unreachable {
        /// The endpoint.
        url: String,
        /// What failed.
        reason: String,
    },
    /// The hub closed the connection, or it was lost, while the editor was still there.
    #[error("the hub at {url} went away: {reason}")]
    HubGone {
        /// The endpoint.
        url: String,
        /// The close code and reason, or the error.
        reason: String,
    },
}

/// The WebSocket endpoint for `url`: `http(s)` becomes `ws(s)`, and a URL with
/// no path gets [`ACP_PATH`].
pub fn endpoint(url: &str) -> Result<String, RemoteError> {
    let invalid = || RemoteError::InvalidUrl(url.to_string());
    let (scheme, rest) = url.trim().split_once("://").ok_or_else(invalid)?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "ws" | "http" => "ws",
        "wss" | "https" => "wss",
        _ => return Err(invalid()),
    };
    let (authority, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    if authority.is_empty() {
        return Err(invalid());
    }
    let path = if path.is_empty() || path == "/" {
        ACP_PATH
    } else {
        path
    };
    Ok(format!("{scheme}://{authority}{path}"))
}

/// Relays stdio to the hub at `url` (sending `token` as a bearer token) until
/// stdin closes (a clean end) or the hub goes away (an error).
pub async fn relay(url: &str, token: Option<&str>) -> Result<(), RemoteError> {
    let endpoint = endpoint(url)?;
    let mut request = endpoint
        .as_str()
        .into_client_request()
        .map_err(|_| RemoteError::InvalidUrl(url.to_string()))?;
    if let Some(t) = token {
        let value =
            HeaderValue::from_str(&format!("Bearer {t}")).map_err(|_| RemoteError::InvalidToken)?;
        request.headers_mut().insert(header::AUTHORIZATION, value);
    }
    let (socket, _) = tokio_tungstenite::connect_async(request)
        .await
        .map_err(|e| refused(&endpoint, e))?;
    tracing::info!(url = %endpoint, "relaying ACP to the hub");
    let (ws_tx, ws_rx) = socket.split();
    let (stdout, drained) = transport::stdout_lines();
    let ended = pump(
        &endpoint,
        Box::pin(ws_tx),
        Box::pin(ws_rx),
        Box::pin(transport::stdin_lines(MAX_FRAME_BYTES)),
        Box::pin(stdout),
    )
    .await;
    drained.wait(STDOUT_DRAIN).await;
    ended
}

/// What ended the first phase of the relay.
enum Phase {
    /// Stdin closed: say goodbye to the hub.
    StdinClosed,
    /// The editor stopped reading stdout.
    StdoutClosed,
}

async fn pump(
    url: &str,
    mut ws_tx: impl Sink<Message, Error = WsError> + Unpin,
    mut ws_rx: impl Stream<Item = Result<Message, WsError>> + Unpin,
    mut stdin: impl Stream<Item = std::io::Result<String>> + Unpin,
    mut stdout: impl Sink<String, Error = std::io::Error> + Unpin,
) -> Result<(), RemoteError> {
    let gone = |reason: String| RemoteError::HubGone {
        url: url.to_string(),
        reason,
    };
    let phase = loop {
        tokio::select! {
            line = stdin.next() => match line {
                Some(Ok(line)) => {
                    if let Err(e) = ws_tx.send(Message::text(line)).await {
                        return Err(gone(format!("the connection was lost: {e}")));
                    }
                }
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "reading stdin failed; ending the relay");
                    break Phase::StdinClosed;
                }
                None => break Phase::StdinClosed,
            },
            message = ws_rx.next() => match message {
                Some(Ok(Message::Text(text))) => {
                    if stdout.send(one_line(text.as_str())).await.is_err() {
                        break Phase::StdoutClosed;
                    }
                }
                Some(Ok(Message::Close(frame))) => return Err(gone(closed(frame.as_ref()))),
                Some(Ok(Message::Binary(b))) => {
                    tracing::warn!(bytes = b.len(), "ignored a binary message from the hub");
                }
                Some(Ok(_)) => {}
                Some(Err(e)) => return Err(gone(format!("the connection was lost: {e}"))),
                None => return Err(gone("the connection was lost".to_string())),
            },
        }
    };
    let reason = match phase {
        Phase::StdinClosed => "the editor closed stdin",
        Phase::StdoutClosed => "the editor closed stdout",
    };
    let bye = Message::Close(Some(CloseFrame {
        code: CloseCode::Normal,
        reason: reason.into(),
    }));
    if ws_tx.send(bye).await.is_err() {
        return Ok(());
    }
    // The hub's answers still on their way reach the editor until the hub closes.
    let rest = async {
        while let Some(Ok(message)) = ws_rx.next().await {
            let text = match message {
                Message::Text(text) => text,
                Message::Close(_) => return,
                _ => continue,
            };
            if stdout.send(one_line(text.as_str())).await.is_err() {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(CLOSE_WAIT, rest).await;
    Ok(())
}

/// A message as one stdout line: JSON needs no raw line breaks, so any there
/// (whitespace between tokens) become spaces.
fn one_line(text: &str) -> String {
    if text.contains(['\n', '\r']) {
        text.replace(['\n', '\r'], " ")
    } else {
        text.to_string()
    }
}

/// How the hub closed the connection, for the error message.
fn closed(frame: Option<&CloseFrame>) -> String {
    match frame {
        Some(f) if !f.reason.is_empty() => {
            format!(
                "it closed the connection ({}: {})",
                u16::from(f.code),
                f.reason
            )
        }
        Some(f) => format!("it closed the connection ({})", u16::from(f.code)),
        None => "it closed the connection".to_string(),
    }
}

/// The error for a failed connection: the hub's own refusal when it answered.
fn refused(url: &str, e: WsError) -> RemoteError {
    match e {
        WsError::Http(response) => {
            let status = response.status();
            let body: serde_json::Value = response
                .body()
                .as_deref()
                .and_then(|b| serde_json::from_slice(b).ok())
                .unwrap_or_default();
            let error = &body["error"];
            let message = match (error["message"].as_str(), error["operator_action"].as_str()) {
                (Some(m), Some(next)) => format!("{m}. {next}"),
                (Some(m), None) => m.to_string(),
                _ => status.canonical_reason().unwrap_or("refused").to_string(),
            };
            RemoteError::Refused {
                url: url.to_string(),
                status: status.as_u16(),
                message,
            }
        }
        other => RemoteError::Unreachable {
            url: url.to_string(),
            reason: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_take_the_acp_path_and_a_websocket_scheme() {
        let ok = |u: &str| endpoint(u).expect("valid");
        assert_eq!(ok("http://127.0.0.1:8765"), "ws://127.0.0.1:8765/acp");
        assert_eq!(ok("https://hub.example/"), "wss://hub.example/acp");
        assert_eq!(ok("ws://[::1]:9/acp"), "ws://[::1]:9/acp");
        assert_eq!(
            ok("WSS://hub.example/proxy/acp"),
            "wss://hub.example/proxy/acp"
        );
        for bad in ["127.0.0.1:8765", "ftp://x/acp", "ws:///acp", ""] {
            assert!(endpoint(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_message_becomes_exactly_one_line() {
        assert_eq!(one_line("{\"a\":1}"), "{\"a\":1}");
        assert_eq!(one_line("{\n  \"a\": 1\r\n}"), "{   \"a\": 1  }");
    }
}
