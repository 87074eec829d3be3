//! The stdio transport of `hecate acp`, with a line-size guard in front of the SDK
//! (also the stdin/stdout halves the `hecate acp --remote` relay reuses, and the
//! per-message rules the WebSocket transport applies).
//!
//! The SDK's own stdio transport reads whole lines without a bound and answers a
//! malformed line by echoing it back, so one oversized line could exhaust memory
//! and be written back to the editor. Here lines are split with the shared
//! bounded reader ([`crate::jsonl`]) and handed to the SDK's `Lines` transport:
//! - a line within the limit passes unchanged (invalid UTF-8 is replaced, so the
//!   SDK answers it with a parse error instead of ending the connection), except
//!   that a long line that is not JSON is replaced by a capped quote of itself
//!   (the SDK's parse error carries the line it could not parse);
//! - an oversized line is never held: when its first bytes name a request id it
//!   becomes an [`OversizedFrame`] request with that id, which the bridge answers
//!   with an `Invalid Request` error; otherwise a short parse-error line;
//! - blank lines are skipped.

use crate::jsonl::{self, Line, LineReader};
use agent_client_protocol::{JsonRpcRequest, Lines};
use futures::{Sink, Stream};
use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::{mpsc, oneshot};

/// Largest frame accepted from the editor: 8 MiB (prompts are capped at 1 MiB of
/// text, so this leaves room for JSON escaping and embedded resources).
pub const MAX_FRAME_BYTES: usize = 8 * 1024 * 1024;

/// The method of [`OversizedFrame`].
pub const OVERSIZED_METHOD: &str = "_hecate/oversized_frame";

/// Stands in for a request whose line exceeded the frame limit; the bridge
/// answers it with an `Invalid Request` error carrying the original id.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[request(method = "_hecate/oversized_frame", response = serde_json::Value)]
pub struct OversizedFrame {
    /// Size of the refused line in bytes.
    pub bytes: usize,
    /// The limit it exceeded.
    pub limit: usize,
}

/// What the SDK receives in place of an oversized line.
fn replacement(bytes: usize, prefix: &[u8], limit: usize) -> String {
    tracing::warn!(bytes, limit, "refused an oversized frame from the client");
    match jsonl::leading_id(prefix) {
        Some(id) => json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": OVERSIZED_METHOD,
            "params": OversizedFrame { bytes, limit },
        })
        .to_string(),
        None => format!("frame of {bytes} bytes exceeds the {limit}-byte limit"),
    }
}

/// What the SDK receives for a line within the limit: the line itself (invalid
/// UTF-8 replaced), or, when it is longer than [`jsonl::QUOTE_BYTES`] and not
/// JSON, a capped quote of it, so the parse error the SDK answers with (which
/// quotes the line) stays small.
fn within_limit(raw: Vec<u8>) -> String {
    if raw.len() > jsonl::QUOTE_BYTES && serde_json::from_slice::<IgnoredAny>(&raw).is_err() {
        return jsonl::quote(&raw, jsonl::QUOTE_BYTES);
    }
    match String::from_utf8(raw) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    }
}

fn incoming<R: AsyncRead + Unpin + Send + 'static>(
    reader: R,
    max: usize,
) -> impl Stream<Item = io::Result<String>> + Send + 'static {
    let reader = LineReader::new(reader, max);
    futures::stream::unfold(reader, move |mut r| async move {
        loop {
            let line = match r.next_line().await {
                Ok(None) => return None,
                Err(e) => return Some((Err(e), r)),
                Ok(Some(Line::TooLong { bytes, prefix })) => replacement(bytes, &prefix, max),
                Ok(Some(Line::Complete(raw))) => within_limit(raw),
            };
            if !line.trim().is_empty() {
                return Some((Ok(line), r));
            }
        }
    })
}

fn outgoing<W: AsyncWrite + Unpin + Send + 'static>(
    writer: W,
) -> impl Sink<String, Error = io::Error> + Send + 'static {
    futures::sink::unfold(writer, async |mut w, line: String| {
        let mut bytes = line.into_bytes();
        bytes.push(b'\n');
        w.write_all(&bytes).await?;
        w.flush().await?;
        Ok::<_, io::Error>(w)
    })
}

/// The SDK transport over any reader/writer pair, with lines over `max` bytes refused.
pub fn guarded_lines<R, W>(
    reader: R,
    writer: W,
    max: usize,
) -> Lines<
    impl Sink<String, Error = io::Error> + Send + 'static,
    impl Stream<Item = io::Result<String>> + Send + 'static,
>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    Lines::new(outgoing(writer), incoming(reader, max))
}

/// Stdin read on a plain thread and handed over in chunks: a read pending on a
/// runtime thread could never be cancelled and would hold up the exit after a signal.
struct StdinReader {
    rx: mpsc::Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    pos: usize,
}

impl StdinReader {
    fn spawn() -> Self {
        let (tx, rx) = mpsc::channel(8);
        let reader = move || {
            let mut stdin = std::io::stdin().lock();
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let item = match stdin.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => Ok(buf[..n].to_vec()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => Err(e),
                };
                let failed = item.is_err();
                if tx.blocking_send(item).is_err() || failed {
                    break;
                }
            }
        };
        if let Err(e) = std::thread::Builder::new()
            .name("acp-stdin".into())
            .spawn(reader)
        {
            tracing::error!(error = %e, "cannot start the stdin reader");
        }
        Self {
            rx,
            chunk: Vec::new(),
            pos: 0,
        }
    }
}

impl AsyncRead for StdinReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.pos >= this.chunk.len() {
            match this.rx.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(Some(Ok(chunk))) => {
                    this.chunk = chunk;
                    this.pos = 0;
                }
            }
        }
        let n = out.remaining().min(this.chunk.len() - this.pos);
        out.put_slice(&this.chunk[this.pos..this.pos + n]);
        this.pos += n;
        Poll::Ready(Ok(()))
    }
}

/// Resolves once every line handed to the stdout sink has been written (or the
/// write failed), after the sink is dropped.
#[derive(Debug)]
pub struct StdoutDrained(oneshot::Receiver<()>);

impl StdoutDrained {
    /// Waits for the drain, at most `limit` (a client that stopped reading must
    /// not hold up the exit).
    pub async fn wait(self, limit: Duration) {
        let _ = tokio::time::timeout(limit, self.0).await;
    }
}

/// Stdout written on a plain thread, one flushed line at a time, for the same
/// reason; a write error (the client went away) ends the sink.
fn stdout_sink() -> (
    impl Sink<String, Error = io::Error> + Send + 'static,
    StdoutDrained,
) {
    let (tx, mut rx) = mpsc::channel::<String>(64);
    let (done_tx, done_rx) = oneshot::channel();
    let writer = move || {
        let mut stdout = std::io::stdout().lock();
        while let Some(line) = rx.blocking_recv() {
            let mut bytes = line.into_bytes();
            bytes.push(b'\n');
            if stdout
                .write_all(&bytes)
                .and_then(|()| stdout.flush())
                .is_err()
            {
                break;
            }
        }
        let _ = done_tx.send(());
    };
    if let Err(e) = std::thread::Builder::new()
        .name("acp-stdout".into())
        .spawn(writer)
    {
        tracing::error!(error = %e, "cannot start the stdout writer");
    }
    let sink = futures::sink::unfold(tx, async |tx, line: String| {
        tx.send(line)
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed"))?;
        Ok::<_, io::Error>(tx)
    });
    (sink, StdoutDrained(done_rx))
}

/// This process's stdin as guarded lines: blank lines skipped, lines over `max`
/// bytes replaced as described in the module documentation.
pub fn stdin_lines(max: usize) -> impl Stream<Item = io::Result<String>> + Send + 'static {
    incoming(StdinReader::spawn(), max)
}

/// A sink writing each string as one flushed line of this process's stdout, and
/// the signal that everything handed to it was written once it is dropped.
pub fn stdout_lines() -> (
    impl Sink<String, Error = io::Error> + Send + 'static,
    StdoutDrained,
) {
    stdout_sink()
}

/// What the SDK receives for one whole message of another framing (a WebSocket
/// text message, already held): nothing for a blank message, else what a line
/// of the same bytes becomes on stdin with the limit `max`.
pub fn message_line(text: String, max: usize) -> Option<String> {
    if text.trim().is_empty() {
        return None;
    }
    if text.len() > max {
        let prefix = &text.as_bytes()[..text.len().min(jsonl::PREFIX_BYTES)];
        return Some(replacement(text.len(), prefix, max));
    }
    Some(within_limit(text.into_bytes()))
}

/// The transport over this process's stdin and stdout, and the signal that
/// stdout has been drained once the transport is gone.
pub fn stdio(
    max: usize,
) -> (
    Lines<
        impl Sink<String, Error = io::Error> + Send + 'static,
        impl Stream<Item = io::Result<String>> + Send + 'static,
    >,
    StdoutDrained,
) {
    let (sink, drained) = stdout_lines();
    (Lines::new(sink, stdin_lines(max)), drained)
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::StreamExt;
    use serde_json::Value;

    async fn lines(input: Vec<u8>, max: usize) -> Vec<String> {
        incoming(std::io::Cursor::new(input), max)
            .filter_map(|r| futures::future::ready(r.ok()))
            .collect()
            .await
    }

    #[tokio::test]
    async fn lines_pass_blank_lines_go_and_bad_utf8_is_replaced() {
        let mut input = b"{\"a\":1}\n\n  \nnot json\n".to_vec();
        input.extend_from_slice(&[0xff, b'x', b'\n']);
        input.extend_from_slice(b"{\"tail\":true}");
        let got = lines(input, 100).await;
        assert_eq!(
            got,
            vec!["{\"a\":1}", "not json", "\u{fffd}x", "{\"tail\":true}"]
        );
    }

    #[test]
    fn a_held_message_gets_the_rules_of_a_line() {
        assert_eq!(message_line(" \t".into(), 100), None);
        assert_eq!(
            message_line("{\"a\":1}".into(), 100).as_deref(),
            Some("{\"a\":1}")
        );
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"x\",\"params\":\"{}\"}}",
            "y".repeat(200)
        );
        let v: Value =
            serde_json::from_str(&message_line(big.clone(), 100).expect("a line")).expect("json");
        assert_eq!(
            (v["id"].clone(), v["method"].clone()),
            (serde_json::json!(9), serde_json::json!(OVERSIZED_METHOD))
        );
        assert_eq!(v["params"]["bytes"], big.len());
    }

    #[tokio::test]
    async fn an_oversized_request_keeps_its_id_and_others_become_parse_errors() {
        let big = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"session/prompt\",\"params\":{{\"x\":\"{}\"}}}}\n",
            "y".repeat(10_000)
        );
        let nameless = format!("{{\"params\":\"{}\",\"id\":8}}\n", "z".repeat(10_000));
        let input = format!("{big}{nameless}{{\"ok\":1}}\n").into_bytes();
        let got = lines(input, 1000).await;
        assert_eq!(got.len(), 3, "{got:?}");
        let v: Value = serde_json::from_str(&got[0]).expect("json");
        assert_eq!(v["id"], 7);
        assert_eq!(v["method"], "_hecate/oversized_frame");
        assert_eq!(v["params"]["limit"], 1000);
        assert_eq!(v["params"]["bytes"], big.len() - 1);
        assert!(got[1].starts_with("frame of 10"), "{}", got[1]);
        assert!(serde_json::from_str::<Value>(&got[1]).is_err());
        assert_eq!(got[2], "{\"ok\":1}");
    }
}
