//! Parsing an upstream event stream as its bytes pass through: chunks are pushed
//! in as they arrive and the complete events are read out at once, so the same
//! bytes can be relayed untouched while their events are inspected. The parsing
//! itself is `eventsource-stream`'s.

use bytes::Bytes;
use eventsource_stream::{Event, EventStream};
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::{FutureExt, StreamExt};
use std::convert::Infallible;

/// An incremental SSE parser fed by hand.
pub struct SseTap {
    input: UnboundedSender<Result<Bytes, Infallible>>,
    events: EventStream<UnboundedReceiver<Result<Bytes, Infallible>>>,
}

impl Default for SseTap {
    fn default() -> Self {
        let (input, rx) = unbounded();
        Self {
            input,
            events: EventStream::new(rx),
        }
    }
}

impl SseTap {
    /// Feeds one chunk of the stream; answers the events it completed (a line
    /// that is not SSE stops the events of that chunk).
    pub fn push(&mut self, chunk: Bytes) -> Vec<Event> {
        if self.input.unbounded_send(Ok(chunk)).is_err() {
            return Vec::new();
        }
        let mut out = Vec::new();
        while let Some(Some(Ok(event))) = self.events.next().now_or_never() {
            out.push(event);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_come_out_whole() {
        let mut tap = SseTap::default();
        assert!(tap.push(Bytes::from_static(b"event: a\nda")).is_empty());
        let got = tap.push(Bytes::from_static(b"ta: {\"x\":1}\n\ndata: [DONE]\n\n"));
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].event, "a");
        assert_eq!(got[0].data, "{\"x\":1}");
        assert_eq!(got[1].data, "[DONE]");
    }
}
