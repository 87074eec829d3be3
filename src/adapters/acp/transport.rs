//! The ACP transport over the child's pipes. Lines are framed by the SDK's `Lines`
//! transport; this module only supplies the line stream and sink. Lines on stdout
//! that are not JSON (banners, log lines some agents print) are diverted to
//! diagnostics instead of reaching the SDK, which would answer each with a
//! parse-error frame the agent never asked for. Oversized lines are dropped too
//! (lines are split by the shared bounded reader, [`crate::jsonl`]).

use crate::jsonl::{Line, LineReader};
use agent_client_protocol::Lines;
use futures::{Sink, SinkExt, Stream, StreamExt};
use serde_json::{Value, json};
use std::io;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use tokio::process::{ChildStdin, ChildStdout};
use tokio_util::sync::CancellationToken;

/// Largest frame accepted from an agent (bigger lines are dropped with a diagnostic).
pub const MAX_FRAME_BYTES: usize = 64 * 1024 * 1024;
const DIAGNOSTIC_LINE_CHARS: usize = 2000;

/// Receives diagnostics (non-JSON lines, oversized frames) as JSON values.
pub type DiagnosticSink = Arc<dyn Fn(Value) + Send + Sync>;

fn preview(line: &str) -> String {
    line.chars().take(DIAGNOSTIC_LINE_CHARS).collect()
}

/// Classifies one stdout line: `Some(frame)` for a JSON object or array (the
/// SDK judges those), `None` after reporting anything else (text, bare JSON
/// scalars such as a printed number) to `diag`.
fn filter_line(raw: Vec<u8>, diag: &DiagnosticSink) -> Option<String> {
    let line = match String::from_utf8(raw) {
        Ok(s) => s,
        Err(e) => {
            let text = String::from_utf8_lossy(e.as_bytes()).into_owned();
            diag(json!({ "diagnostic": "non_utf8_stdout", "line": preview(&text) }));
            return None;
        }
    };
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return None;
    }
    let structured = trimmed.starts_with('{') || trimmed.starts_with('[');
    if structured && serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok() {
        return Some(trimmed.to_string());
    }
    diag(json!({ "diagnostic": "non_json_stdout", "line": preview(trimmed) }));
    None
}

fn incoming(
    stdout: ChildStdout,
    diag: DiagnosticSink,
    max: usize,
) -> impl Stream<Item = io::Result<String>> + Send + 'static {
    // Oversized lines are only counted: no prefix is kept.
    let reader = LineReader::new(stdout, max).keep_prefix(0);
    futures::stream::unfold(reader, |mut r| async move {
        match r.next_line().await {
            Ok(Some(line)) => Some((Ok(Some(line)), r)),
            Ok(None) => None,
            Err(e) => Some((Err(e), r)),
        }
    })
    .filter_map(move |item| {
        let out = match item {
            Ok(Some(Line::Complete(raw))) => filter_line(raw, &diag).map(Ok),
            Ok(Some(Line::TooLong { bytes, .. })) => {
                diag(json!({ "diagnostic": "oversized_stdout_line", "bytes": bytes }));
                None
            }
            Ok(None) => None,
            Err(e) => Some(Err(e)),
        };
        futures::future::ready(out)
    })
}

fn outgoing(
    stdin: ChildStdin,
    close: CancellationToken,
) -> impl Sink<String, Error = io::Error> + Send + 'static {
    let (tx, mut rx) = futures::channel::mpsc::unbounded::<String>();
    tokio::spawn(async move {
        let mut stdin = stdin;
        loop {
            let line = tokio::select! {
                _ = close.cancelled() => break,
                line = rx.next() => line,
            };
            let Some(mut line) = line else { break };
            line.push('\n');
            if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                break;
            }
        }
        // Dropping stdin closes the pipe: the agent sees EOF.
    });
    tx.sink_map_err(|e| io::Error::new(io::ErrorKind::BrokenPipe, e))
}

/// Builds the SDK transport over the child's pipes. Cancelling `close_stdin`
/// closes the agent's stdin.
pub fn child_transport(
    stdin: ChildStdin,
    stdout: ChildStdout,
    close_stdin: CancellationToken,
    diag: DiagnosticSink,
) -> Lines<
    impl Sink<String, Error = io::Error> + Send + 'static,
    impl Stream<Item = io::Result<String>> + Send + 'static,
> {
    Lines::new(
        outgoing(stdin, close_stdin),
        incoming(stdout, diag, MAX_FRAME_BYTES),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[tokio::test]
    async fn non_json_and_oversized_lines_are_diverted() {
        let seen = Arc::new(Mutex::new(Vec::<Value>::new()));
        let sink = seen.clone();
        let diag: DiagnosticSink = Arc::new(move |v| {
            if let Ok(mut s) = sink.lock() {
                s.push(v);
            }
        });
        let script = format!(
            "printf '%s\\n' '{{\"jsonrpc\":\"2.0\",\"method\":\"x\"}}' 'Starting agent...' '' '{}' '42' '{{\"a\":1}}'; printf 'tail-no-newline'",
            "y".repeat(300)
        );
        let mut child = tokio::process::Command::new("/bin/sh")
            .args(["-c", &script])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("spawn");
        let stdout = child.stdout.take().expect("stdout");
        let lines: Vec<String> = incoming(stdout, diag, 100)
            .filter_map(|r| futures::future::ready(r.ok()))
            .collect()
            .await;
        let _ = child.wait().await;
        assert_eq!(
            lines,
            vec![r#"{"jsonrpc":"2.0","method":"x"}"#, r#"{"a":1}"#]
        );
        let seen = seen.lock().expect("lock").clone();
        assert_eq!(seen.len(), 4, "{seen:?}");
        assert_eq!(seen[0]["diagnostic"], "non_json_stdout");
        assert_eq!(seen[0]["line"], "Starting agent...");
        assert_eq!(seen[1]["diagnostic"], "oversized_stdout_line");
        assert_eq!(seen[2]["line"], "42");
        assert_eq!(seen[3]["line"], "tail-no-newline");
    }
}
