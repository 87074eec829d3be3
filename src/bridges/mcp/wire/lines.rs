//! The stdio transport of `hecate mcp`: newline-delimited JSON-RPC between the
//! client's pipes and rmcp's serving loop, with a guard in front. Lines are read
//! with the shared bounded reader ([`crate::jsonl`]) and triaged
//! ([`super::triage`]): what rmcp can take is passed on, everything else is
//! answered here (or dropped, for notifications and responses), so every
//! request that can be identified gets exactly one reply. Until the lifecycle
//! has started, stray notifications and responses are dropped (rmcp ends the
//! connection on them there), and requests other than `initialize`, `ping`,
//! `server/discover` and those naming a protocol revision in `_meta`
//! (2026-07-28's stateless requests, validated by rmcp) are refused with an
//! error. The lifecycle starts with `initialize`, or with the first request
//! whose `_meta` carries a supported revision and the client's capabilities. Frames are written by one
//! writer task, so a reply queued while rmcp abandons a pending read is never
//! cut, and error responses without an id carry `"id": null`.

use super::triage::{self, Triage};
use crate::jsonl::{Line, LineReader};
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, GetMeta, JsonRpcMessage, ProtocolVersion,
    RequestId,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use std::io;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Frames waiting for the writer.
const QUEUE_FRAMES: usize = 256;

/// `hecate mcp`'s transport for rmcp over a reader and a writer.
pub(crate) struct GuardedLines<R> {
    lines: LineReader<R>,
    max: usize,
    out: Option<mpsc::Sender<Vec<u8>>>,
    /// An error response decided by the guard, not yet queued for the writer.
    pending: Option<Vec<u8>>,
    /// Whether rmcp's lifecycle has started (`initialize`, or a first
    /// self-contained 2026-07-28 request, passed on).
    initialized: bool,
}

/// Resolves once every queued frame has been written (or writing failed), after
/// the transport is gone.
pub(crate) struct Drained(JoinHandle<()>);

impl Drained {
    /// Waits for the writer, at most `limit` (a client that stopped reading must
    /// not hold up the exit).
    pub(crate) async fn wait(self, limit: Duration) {
        let _ = tokio::time::timeout(limit, self.0).await;
    }
}

/// The transport over `reader` and `writer`, refusing lines over `max` bytes.
pub(crate) fn guarded_lines<R, W>(reader: R, writer: W, max: usize) -> (GuardedLines<R>, Drained)
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (tx, rx) = mpsc::channel(QUEUE_FRAMES);
    let writer = tokio::spawn(write_frames(writer, rx));
    (
        GuardedLines {
            lines: LineReader::new(reader, max),
            max,
            out: Some(tx),
            pending: None,
            initialized: false,
        },
        Drained(writer),
    )
}

async fn write_frames<W: AsyncWrite + Unpin>(mut writer: W, mut rx: mpsc::Receiver<Vec<u8>>) {
    while let Some(frame) = rx.recv().await {
        if let Err(e) = writer.write_all(&frame).await {
            tracing::debug!(error = %e, "stdout closed");
            return;
        }
        // Flush only once the queue is empty: a burst goes out in one go.
        if rx.is_empty()
            && let Err(e) = writer.flush().await
        {
            tracing::debug!(error = %e, "stdout closed");
            return;
        }
    }
}

/// One outgoing message as a line (see [`triage::to_json`]).
fn encode(msg: &TxJsonRpcMessage<RoleServer>) -> io::Result<Vec<u8>> {
    let mut bytes = triage::to_json(msg)?;
    bytes.push(b'\n');
    Ok(bytes)
}

/// What the guard does with a message rmcp could take.
enum Gate {
    Pass(Box<ClientJsonRpcMessage>),
    Answer(ErrorData, RequestId),
    Drop(&'static str),
}

/// The `_meta` key naming a request's protocol revision (2026-07-28).
const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";

/// Whether `request` names a protocol revision in its `_meta` (well-formed or
/// not: rmcp answers a malformed or unsupported one).
fn names_revision(request: &ClientRequest) -> bool {
    request.get_meta().contains_key(META_PROTOCOL_VERSION)
}

/// Whether rmcp starts its lifecycle with `request`, a self-contained request
/// of a supported revision (anything else it answers and keeps waiting).
fn opens_lifecycle(request: &ClientRequest) -> bool {
    let meta = request.get_meta();
    !matches!(request, ClientRequest::DiscoverRequest(_))
        && meta
            .missing_required_keys(&ProtocolVersion::V_2026_07_28)
            .is_empty()
        && meta
            .protocol_version()
            .is_some_and(|v| ProtocolVersion::KNOWN_VERSIONS.contains(&v))
}

impl<R> GuardedLines<R> {
    /// Before the lifecycle: `initialize`, `ping`, `server/discover` and
    /// requests naming a revision in `_meta` reach rmcp; other requests are
    /// refused, notifications and responses dropped.
    fn gate(&mut self, msg: Box<ClientJsonRpcMessage>) -> Gate {
        if self.initialized {
            return Gate::Pass(msg);
        }
        match &*msg {
            JsonRpcMessage::Request(req) => match &req.request {
                ClientRequest::InitializeRequest(_) => {
                    self.initialized = true;
                    Gate::Pass(msg)
                }
                ClientRequest::PingRequest(_) | ClientRequest::DiscoverRequest(_) => {
                    Gate::Pass(msg)
                }
                other if names_revision(other) => {
                    self.initialized = opens_lifecycle(other);
                    Gate::Pass(msg)
                }
                ClientRequest::CustomRequest(c) => {
                    Gate::Answer(triage::method_not_found(&c.method), req.id.clone())
                }
                other => Gate::Answer(
                    ErrorData::invalid_request(
                        format!(
                            "{} before initialize: send initialize first, or (protocol \
                             2026-07-28) carry {META_PROTOCOL_VERSION} and \
                             io.modelcontextprotocol/clientCapabilities in the request's _meta",
                            other.method()
                        ),
                        None,
                    ),
                    req.id.clone(),
                ),
            },
            JsonRpcMessage::Notification(_) => Gate::Drop("notification before initialize"),
            JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {
                Gate::Drop("response before initialize")
            }
        }
    }

    fn answer(&mut self, msg: &TxJsonRpcMessage<RoleServer>) {
        match encode(msg) {
            Ok(bytes) => self.pending = Some(bytes),
            Err(e) => tracing::error!(error = %e, "cannot encode an error response"),
        }
    }
}

impl<R: AsyncRead + Unpin + Send + 'static> Transport<RoleServer> for GuardedLines<R> {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        let frame = encode(&item);
        async move {
            let out = out.ok_or_else(|| io::Error::from(io::ErrorKind::NotConnected))?;
            out.send(frame?)
                .await
                .map_err(|_| io::Error::from(io::ErrorKind::BrokenPipe))
        }
    }

    // Cancellation safe (rmcp polls it in a `select!`): the line reader resumes
    // a cut read, and an answer is kept in `pending` until the writer's queue
    // has room for it.
    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.pending.is_some() {
                let permit = self.out.as_ref()?.reserve().await.ok()?;
                if let Some(frame) = self.pending.take() {
                    permit.send(frame);
                }
            }
            let triaged = match self.lines.next_line().await {
                Ok(None) => return None,
                Err(e) => {
                    tracing::error!(error = %e, "reading stdin failed");
                    return None;
                }
                Ok(Some(Line::TooLong { bytes, prefix })) => {
                    tracing::warn!(bytes, limit = self.max, "refused an oversized frame");
                    triage::oversized(bytes, &prefix, self.max)
                }
                Ok(Some(Line::Complete(raw))) => triage::frame(&raw),
            };
            match triaged {
                Triage::Message(msg) => match self.gate(msg) {
                    Gate::Pass(msg) => return Some(*msg),
                    Gate::Answer(error, id) => {
                        tracing::debug!(%id, "refused a request before initialize");
                        self.answer(&TxJsonRpcMessage::<RoleServer>::error(error, Some(id)));
                    }
                    Gate::Drop(why) => tracing::debug!(why, "dropped a frame"),
                },
                Triage::Answer(msg) => {
                    tracing::debug!("answered a malformed frame");
                    self.answer(&msg);
                }
                Triage::Drop(why) => tracing::debug!(why, "dropped a frame"),
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.out = None;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{ErrorCode, ServerJsonRpcMessage};
    use serde_json::Value;

    #[test]
    fn errors_without_an_id_are_written_with_a_null_id() {
        let msg =
            ServerJsonRpcMessage::error(ErrorData::new(ErrorCode::PARSE_ERROR, "x", None), None);
        let line = encode(&msg).expect("encode");
        assert!(line.ends_with(b"\n"));
        let v: Value = serde_json::from_slice(&line).expect("json");
        assert_eq!(v["id"], Value::Null);
        assert!(v.as_object().expect("object").contains_key("id"));
        assert_eq!(v["error"]["code"], -32700);
    }
}
