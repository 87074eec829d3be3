//! Bounded reading of newline-delimited frames (JSON lines), shared by every
//! stdio transport: the ACP bridge and adapter, and the MCP bridge. A line is
//! never held beyond a byte limit; an oversized one is reported with its size
//! and its first bytes (enough to find a request id). Also the helpers that
//! quote a refused line in an error without echoing it whole. A leaf module: it
//! imports nothing else from the crate.

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use std::io;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// How many bytes of an oversized line are kept by default (to find its id).
pub const PREFIX_BYTES: usize = 4096;

/// How much of a refused line an error message quotes, in bytes.
pub const QUOTE_BYTES: usize = 256;

/// One line read by [`LineReader`], without its newline.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line within the limit (possibly empty, possibly not UTF-8).
    Complete(Vec<u8>),
    /// A line over the limit: its size in bytes and its first bytes.
    TooLong {
        /// Size of the whole line in bytes.
        bytes: usize,
        /// Its first bytes (at most the reader's prefix size).
        prefix: Vec<u8>,
    },
}

/// Splits a byte stream into lines without holding more than `max` bytes of one.
/// [`LineReader::next_line`] is cancellation safe: a read dropped half-way
/// resumes the same line on the next call.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    prefix_cap: usize,
    buf: Vec<u8>,
    prefix: Vec<u8>,
    dropped: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader refusing lines over `max` bytes, keeping [`PREFIX_BYTES`] of them.
    pub fn new(reader: R, max: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(64 * 1024, reader),
            max,
            prefix_cap: PREFIX_BYTES,
            buf: Vec::new(),
            prefix: Vec::new(),
            dropped: 0,
        }
    }

    /// Keeps `bytes` of each oversized line instead of [`PREFIX_BYTES`].
    pub fn keep_prefix(mut self, bytes: usize) -> Self {
        self.prefix_cap = bytes;
        self
    }

    /// The next line; `None` at the end of the stream. A last line without a
    /// newline is returned as a line.
    pub async fn next_line(&mut self) -> io::Result<Option<Line>> {
        loop {
            // The only await: nothing is consumed until it completes.
            let avail = self.inner.fill_buf().await?;
            if avail.is_empty() {
                return Ok((!self.buf.is_empty() || self.dropped > 0).then(|| self.take()));
            }
            let (chunk, found) = match avail.iter().position(|b| *b == b'\n') {
                Some(i) => (&avail[..i], Some(i + 1)),
                None => (avail, None),
            };
            if self.dropped == 0 && self.buf.len() + chunk.len() <= self.max {
                self.buf.extend_from_slice(chunk);
            } else {
                if self.dropped == 0 {
                    self.prefix = std::mem::take(&mut self.buf);
                    self.dropped = self.prefix.len();
                    self.prefix.truncate(self.prefix_cap);
                }
                let room = self.prefix_cap.saturating_sub(self.prefix.len());
                self.prefix
                    .extend_from_slice(&chunk[..room.min(chunk.len())]);
                self.dropped += chunk.len();
            }
            let used = found.unwrap_or(avail.len());
            self.inner.consume(used);
            if found.is_some() {
                return Ok(Some(self.take()));
            }
        }
    }

    /// The line gathered so far; the state is reset for the next one.
    fn take(&mut self) -> Line {
        if self.dropped > 0 {
            let bytes = std::mem::take(&mut self.dropped);
            Line::TooLong {
                bytes,
                prefix: std::mem::take(&mut self.prefix),
            }
        } else {
            Line::Complete(std::mem::take(&mut self.buf))
        }
    }
}

/// The `id` of a JSON-RPC message from the first bytes of its line (cut, too
/// deep or otherwise unparsable), when a string or integer id appears before
/// the point where parsing fails.
pub fn leading_id(prefix: &[u8]) -> Option<Value> {
    struct FindId<'a>(&'a mut Option<Value>);
    impl<'de> Visitor<'de> for FindId<'_> {
        type Value = ();
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a JSON-RPC object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                if key == "id" {
                    *self.0 = Some(map.next_value()?);
                    return Ok(());
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(prefix);
    // The line is cut or broken, so the parse usually ends in an error; the id,
    // once seen, stays.
    let _ = serde::Deserializer::deserialize_map(&mut de, FindId(&mut found));
    found.filter(|v| v.is_i64() || v.is_string())
}

/// A refused line as an error may quote it: the whole line when it is at most
/// `cap` bytes, else its first `cap` bytes (cut at a character boundary, invalid
/// UTF-8 replaced) followed by `… (N bytes)`. Never valid JSON when the line is not.
pub fn quote(line: &[u8], cap: usize) -> String {
    if line.len() <= cap {
        return String::from_utf8_lossy(line).into_owned();
    }
    let head = String::from_utf8_lossy(&line[..cap]);
    let head = head.trim_end_matches('\u{fffd}');
    format!("{head}… ({} bytes)", line.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8], max: usize, prefix: usize) -> Vec<Line> {
        let mut r = LineReader::new(input, max).keep_prefix(prefix);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().await.expect("read") {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn lines_within_the_limit_pass_and_a_last_line_needs_no_newline() {
        let got = lines(b"{\"a\":1}\n\nabc\ntail", 10, 4).await;
        assert_eq!(
            got,
            vec![
                Line::Complete(b"{\"a\":1}".to_vec()),
                Line::Complete(Vec::new()),
                Line::Complete(b"abc".to_vec()),
                Line::Complete(b"tail".to_vec()),
            ]
        );
    }

    #[tokio::test]
    async fn oversized_lines_report_size_and_prefix_and_the_next_line_is_intact() {
        let input = format!("{}\nok\n{}", "x".repeat(30), "y".repeat(12));
        let got = lines(input.as_bytes(), 10, 4).await;
        assert_eq!(
            got,
            vec![
                Line::TooLong {
                    bytes: 30,
                    prefix: b"xxxx".to_vec()
                },
                Line::Complete(b"ok".to_vec()),
                Line::TooLong {
                    bytes: 12,
                    prefix: b"yyyy".to_vec()
                },
            ]
        );
    }

    #[tokio::test]
    async fn a_read_dropped_half_way_resumes_the_same_line() {
        let (mut tx, rx) = tokio::io::duplex(64);
        let mut r = LineReader::new(rx, 100);
        use tokio::io::AsyncWriteExt;
        tx.write_all(b"{\"par").await.expect("write");
        let first = tokio::time::timeout(std::time::Duration::from_millis(50), r.next_line()).await;
        assert!(first.is_err(), "no line yet");
        tx.write_all(b"tial\":1}\n").await.expect("write");
        let line = r.next_line().await.expect("read");
        assert_eq!(line, Some(Line::Complete(b"{\"partial\":1}".to_vec())));
    }

    #[test]
    fn ids_are_found_only_before_the_cut() {
        assert_eq!(
            leading_id(br#"{"jsonrpc":"2.0","id":"a-1","method":"x","params":{"p":"tru"#),
            Some(Value::from("a-1"))
        );
        assert_eq!(
            leading_id(br#"{"jsonrpc":"2.0","method":"x","params":{"#),
            None
        );
        assert_eq!(leading_id(br#"{"id":null,"method":"x""#), None);
        assert_eq!(leading_id(br#"{"id":1.5,"method":"x""#), None);
        assert_eq!(leading_id(b"garbage"), None);
    }

    #[test]
    fn quotes_are_capped_and_name_the_size() {
        assert_eq!(quote(b"short", 10), "short");
        let q = quote("é".repeat(10).as_bytes(), 5);
        assert_eq!(q, "éé… (20 bytes)");
        assert!(serde_json::from_str::<Value>(&quote(b"\"abcdefghijkl", 4)).is_err());
    }
}
