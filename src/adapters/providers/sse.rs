//! Server-sent event streams from provider responses, parsed by `eventsource-stream`.

use super::ProviderError;
use eventsource_stream::{Event, Eventsource};
use futures::{Stream, StreamExt};

/// Turns a streaming HTTP response into parsed SSE events; transport failures
/// mid-body become `StreamCut`.
pub(crate) fn events(
    resp: reqwest::Response,
) -> impl Stream<Item = Result<Event, ProviderError>> + Send + Unpin {
    resp.bytes_stream().eventsource().map(|r| {
        r.map_err(|e| match e {
            eventsource_stream::EventStreamError::Transport(t) => {
                ProviderError::StreamCut(t.to_string())
            }
            other => ProviderError::Malformed(other.to_string()),
        })
    })
}

/// Parses an SSE data payload as JSON, classifying garbage as `Malformed`.
pub(crate) fn parse_json(data: &str) -> Result<serde_json::Value, ProviderError> {
    serde_json::from_str(data).map_err(|e| {
        let mut end = data.len().min(200);
        while !data.is_char_boundary(end) {
            end -= 1;
        }
        ProviderError::Malformed(format!("{e}: {:?}", &data[..end]))
    })
}
