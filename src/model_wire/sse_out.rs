//! Writing the server-sent event frames of a translated stream (parsing
//! upstream streams is `eventsource-stream`'s job).

use bytes::Bytes;
use serde_json::Value;

/// One outgoing event.
#[derive(Debug, Clone, PartialEq)]
pub enum SseFrame {
    /// An event with an optional name (Anthropic names every event; OpenAI none)
    /// and JSON data.
    Event {
        /// The `event:` line.
        event: Option<&'static str>,
        /// The `data:` payload.
        data: Value,
    },
    /// OpenAI's closing `data: [DONE]`.
    Done,
}

impl SseFrame {
    /// An Anthropic event, named after its `type`.
    pub fn named(event: &'static str, data: Value) -> Self {
        Self::Event {
            event: Some(event),
            data,
        }
    }

    /// An unnamed event (an OpenAI chunk).
    pub fn data(data: Value) -> Self {
        Self::Event { event: None, data }
    }

    /// The frame's bytes on the wire.
    pub fn to_bytes(&self) -> Bytes {
        let Self::Event { event, data } = self else {
            return Bytes::from_static(b"data: [DONE]\n\n");
        };
        let mut out = String::new();
        if let Some(e) = event {
            out.push_str("event: ");
            out.push_str(e);
            out.push('\n');
        }
        out.push_str("data: ");
        out.push_str(&data.to_string());
        out.push_str("\n\n");
        Bytes::from(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn frames_render_as_sse() {
        let f = SseFrame::named("ping", json!({"type": "ping"}));
        assert_eq!(
            &f.to_bytes()[..],
            b"event: ping\ndata: {\"type\":\"ping\"}\n\n"
        );
        assert_eq!(&SseFrame::data(json!(1)).to_bytes()[..], b"data: 1\n\n");
        assert_eq!(&SseFrame::Done.to_bytes()[..], b"data: [DONE]\n\n");
    }
}
