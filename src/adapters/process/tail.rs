//! The last lines a child wrote to stderr, kept in a bounded ring (by lines, by
//! bytes and per line) so a chatty child cannot grow Hecate's memory, and drained
//! by a task that also logs each line at debug level.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufRead, AsyncBufReadExt, BufReader};
use tokio::process::ChildStderr;
use tokio::sync::watch;

/// How much of a child's stderr is kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailLimits {
    /// At most this many lines.
    pub lines: usize,
    /// At most this many bytes over all kept lines.
    pub bytes: usize,
    /// Longer lines are cut to this many bytes (on a character boundary).
    pub line_bytes: usize,
}

impl TailLimits {
    /// An external agent's tail: enough to explain a failed start or a crash.
    pub const AGENT: TailLimits = TailLimits {
        lines: 200,
        bytes: 64 * 1024,
        line_bytes: 8 * 1024,
    };
    /// An upstream MCP server's tail, attached to its start-up errors.
    pub const UPSTREAM: TailLimits = TailLimits {
        lines: 50,
        bytes: 50 * 2048,
        line_bytes: 2048,
    };
}

#[derive(Debug)]
struct Ring {
    limits: TailLimits,
    lines: VecDeque<String>,
    bytes: usize,
}

/// A shared handle on a child's stderr tail; clones see the same lines.
#[derive(Debug, Clone)]
pub struct StderrTail(Arc<Mutex<Ring>>);

impl Default for StderrTail {
    fn default() -> Self {
        Self::new(TailLimits::AGENT)
    }
}

impl StderrTail {
    /// An empty tail keeping at most `limits`.
    pub fn new(limits: TailLimits) -> Self {
        Self(Arc::new(Mutex::new(Ring {
            limits,
            lines: VecDeque::new(),
            bytes: 0,
        })))
    }

    /// Appends one line (without its newline), dropping the oldest lines that no
    /// longer fit.
    pub fn push(&self, mut line: String) {
        let mut ring = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let max_line = ring.limits.line_bytes;
        if line.len() > max_line {
            let mut cut = max_line;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        ring.bytes += line.len();
        ring.lines.push_back(line);
        while ring.lines.len() > ring.limits.lines || ring.bytes > ring.limits.bytes {
            match ring.lines.pop_front() {
                Some(old) => ring.bytes -= old.len(),
                None => break,
            }
        }
    }

    /// The kept lines joined by newlines.
    pub fn text(&self) -> String {
        let ring = self.0.lock().unwrap_or_else(|p| p.into_inner());
        ring.lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    #[cfg(test)]
    fn sizes(&self) -> (usize, usize, usize) {
        let ring = self.0.lock().unwrap_or_else(|p| p.into_inner());
        let longest = ring.lines.iter().map(String::len).max().unwrap_or(0);
        (ring.lines.len(), ring.bytes, longest)
    }
}

/// The most of one stderr line that is kept (and logged); the rest of the line
/// is read and dropped, so a child that never writes a newline cannot grow memory.
pub(super) const MAX_LINE_BYTES: usize = 64 * 1024;

/// Reads `stderr` line by line into `tail` until EOF, logging each line under
/// `label`, then reports `true` on `done`.
pub(super) async fn drain(
    stderr: ChildStderr,
    tail: StderrTail,
    label: String,
    done: watch::Sender<bool>,
) {
    drain_lines(BufReader::new(stderr), &tail, &label).await;
    let _ = done.send(true);
}

/// Splits `reader` into lines of at most `MAX_LINE_BYTES` into `tail`.
async fn drain_lines<R: AsyncBufRead + Unpin>(mut reader: R, tail: &StderrTail, label: &str) {
    let emit = |buf: &[u8]| {
        let line = String::from_utf8_lossy(buf)
            .trim_end_matches(['\n', '\r'])
            .to_string();
        tracing::debug!(target: "hecate::child_stderr", program = %label, "{line}");
        tail.push(line);
    };
    let mut buf = Vec::new();
    loop {
        let chunk = match reader.fill_buf().await {
            Ok(c) if !c.is_empty() => c,
            _ => break,
        };
        let (take, ends) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = MAX_LINE_BYTES.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..take.min(room)]);
        reader.consume(take);
        if ends {
            emit(&buf);
            buf.clear();
        }
    }
    if !buf.is_empty() {
        emit(&buf);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_line_without_end_is_cut_while_it_is_read() {
        let tail = StderrTail::new(TailLimits::AGENT);
        let mut input = vec![b'x'; 3 * MAX_LINE_BYTES];
        input.extend_from_slice(b"\nnext\nlast");
        drain_lines(&input[..], &tail, "t").await;
        let text = tail.text();
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.len() >= 3, "{}", lines.len());
        assert!(lines.iter().all(|l| l.len() <= MAX_LINE_BYTES));
        assert!(text.ends_with("next\nlast"), "{}", &text[text.len() - 20..]);
    }

    #[test]
    fn the_tail_stays_within_its_line_byte_and_line_length_bounds() {
        let tail = StderrTail::new(TailLimits::AGENT);
        for i in 0..500 {
            tail.push(format!("line {i}"));
        }
        assert_eq!(tail.sizes().0, TailLimits::AGENT.lines);
        assert!(tail.text().ends_with("line 499"));
        assert!(tail.text().starts_with("line 300"));

        let big = StderrTail::new(TailLimits::AGENT);
        for _ in 0..20 {
            big.push("x".repeat(TailLimits::AGENT.line_bytes * 2));
        }
        let (_, bytes, longest) = big.sizes();
        assert!(bytes <= TailLimits::AGENT.bytes);
        assert!(longest <= TailLimits::AGENT.line_bytes);

        let small = StderrTail::new(TailLimits::UPSTREAM);
        small.push("é".repeat(TailLimits::UPSTREAM.line_bytes));
        let (_, _, longest) = small.sizes();
        assert!(longest <= TailLimits::UPSTREAM.line_bytes);
        assert!(
            small.text().chars().all(|c| c == 'é'),
            "cut on a char boundary"
        );
    }
}
