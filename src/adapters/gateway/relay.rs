//! Relaying a provider's answer to the client: a complete answer is read and,
//! across formats, translated; a stream is passed through chunk by chunk as it
//! arrives (same format) or re-rendered event by event (across formats). Either
//! way the usage and the assistant message are read on the way and reported
//! once, with how the exchange ended, when it ends; the answer (its stream) is
//! finished only after that report's work is done. A client that goes away
//! mid-stream drops the stream and with it the upstream response (closing its
//! connection); its report (a cancel) then runs on a task of its own.

use crate::adapters::providers::ProviderError;
use crate::model_wire::answers::answer::AnswerTap;
use crate::model_wire::answers::responses::{
    anthropic_response_to_openai, openai_response_to_anthropic,
};
use crate::model_wire::answers::responses_answer::{ChatToResponses, chat_completion_to_response};
use crate::model_wire::answers::stream_to_anthropic::OpenAiToAnthropic;
use crate::model_wire::answers::stream_to_openai::AnthropicToOpenAi;
use crate::model_wire::exchange::{ByteStream, ExchangeBody, ExchangeEnd, ExchangeOutcome, OnEnd};
use crate::model_wire::format::WireFormat;
use crate::model_wire::sse_in::SseTap;
use crate::model_wire::sse_out::SseFrame;
use crate::model_wire::usage::{TokenUsage, UsageTap};
use bytes::Bytes;
use futures::future::BoxFuture;
use futures::{Stream, StreamExt};
use serde_json::Value;
use std::pin::Pin;

/// What the relay needs to know about the request.
#[derive(Debug, Clone, Copy)]
pub struct RelayMode {
    /// The client's format.
    pub ingress: WireFormat,
    /// The provider's format.
    pub target: WireFormat,
    /// Whether the answer is streamed.
    pub stream: bool,
    /// OpenAI clients: whether a translated stream ends with a usage chunk.
    pub include_usage: bool,
    /// Unix seconds, for the `created` field of translated OpenAI answers.
    pub created: u64,
}

/// Reports the end exactly once; dropped before that, it reports a cancel.
struct EndGuard {
    on_end: Option<OnEnd>,
    usage: Option<TokenUsage>,
    answer: AnswerTap,
    complete_answer: Option<Value>,
}

impl EndGuard {
    fn new(on_end: OnEnd) -> Self {
        Self {
            on_end: Some(on_end),
            usage: None,
            answer: AnswerTap::default(),
            complete_answer: None,
        }
    }

    /// The report's work, the first time; nothing after.
    fn end(&mut self, outcome: ExchangeOutcome) -> Option<BoxFuture<'static, ()>> {
        let f = self.on_end.take()?;
        let answer = self
            .complete_answer
            .take()
            .unwrap_or_else(|| self.answer.message());
        Some(f(ExchangeEnd {
            outcome,
            usage: self.usage,
            answer,
        }))
    }

    /// Reports the end and waits for the report's work.
    async fn finish(&mut self, outcome: ExchangeOutcome) {
        if let Some(work) = self.end(outcome) {
            work.await;
        }
    }
}

impl Drop for EndGuard {
    fn drop(&mut self) {
        if let Some(work) = self.end(ExchangeOutcome::Cancelled) {
            match tokio::runtime::Handle::try_current() {
                Ok(rt) => {
                    rt.spawn(work);
                }
                Err(_) => tracing::warn!("an exchange ended outside the runtime; not recorded"),
            }
        }
    }
}

/// A provider's successful answer, not yet read.
#[derive(Debug)]
pub struct UpstreamAnswer(pub(super) reqwest::Response);

/// Relays `answer` (a successful upstream answer) to the client per `mode`.
pub async fn relay(
    answer: UpstreamAnswer,
    mode: RelayMode,
    on_end: OnEnd,
) -> Result<ExchangeBody, ProviderError> {
    let mut guard = EndGuard::new(on_end);
    if !mode.stream {
        let bytes = match answer.0.bytes().await {
            Ok(b) => b,
            Err(e) => {
                let e = ProviderError::from(e);
                guard.finish(ExchangeOutcome::Failed(e.to_string())).await;
                return Err(e);
            }
        };
        return match complete(&bytes, mode) {
            Ok((body, usage, answer)) => {
                guard.usage = usage;
                guard.complete_answer = answer;
                guard.finish(ExchangeOutcome::Completed).await;
                Ok(ExchangeBody::Complete(body))
            }
            Err(e) => {
                guard.finish(ExchangeOutcome::Failed(e.to_string())).await;
                Err(e)
            }
        };
    }
    let upstream = answer.0.bytes_stream();
    Ok(ExchangeBody::Stream(if mode.ingress == mode.target {
        passthrough(upstream, mode.target, guard)
    } else {
        translated(upstream, mode, guard)
    }))
}

/// A complete answer in the client's format, its usage and assistant message.
fn complete(
    bytes: &Bytes,
    mode: RelayMode,
) -> Result<(Bytes, Option<TokenUsage>, Option<Value>), ProviderError> {
    let parsed: Result<Value, _> = serde_json::from_slice(bytes);
    if mode.ingress == mode.target {
        let parsed = parsed.ok();
        let usage = parsed
            .as_ref()
            .and_then(|v| TokenUsage::of_response(mode.target, v));
        let answer = parsed.map(|v| AnswerTap::of_response(mode.target, &v));
        return Ok((bytes.clone(), usage, answer));
    }
    let v = parsed.map_err(|e| ProviderError::Malformed(format!("answer is not JSON: {e}")))?;
    let usage = TokenUsage::of_response(mode.target, &v);
    let answer = Some(AnswerTap::of_response(mode.target, &v));
    let out = match (mode.ingress, mode.target) {
        (WireFormat::Anthropic, _) => openai_response_to_anthropic(&v),
        (WireFormat::OpenAi, _) => anthropic_response_to_openai(&v, mode.created),
        (WireFormat::Responses, WireFormat::Anthropic) => chat_completion_to_response(
            &anthropic_response_to_openai(&v, mode.created),
            mode.created,
        ),
        (WireFormat::Responses, _) => chat_completion_to_response(&v, mode.created),
    };
    Ok((Bytes::from(out.to_string()), usage, answer))
}

type Upstream = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// The upstream bytes as they arrive, their usage and last event noted on the way.
fn passthrough(
    upstream: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
    format: WireFormat,
    mut guard: EndGuard,
) -> ByteStream {
    let mut upstream: Upstream = Box::pin(upstream);
    Box::pin(async_stream::stream! {
        let mut tap = SseTap::default();
        let mut usage = UsageTap::default();
        let mut terminal = false;
        while let Some(chunk) = upstream.next().await {
            match chunk {
                Ok(chunk) => {
                    for ev in tap.push(chunk.clone()) {
                        usage.observe(format, &ev.data);
                        guard.answer.observe(format, &ev.data);
                        terminal |= match format {
                            WireFormat::OpenAi => ev.data.trim() == "[DONE]",
                            WireFormat::Anthropic => ev.event == "message_stop",
                            WireFormat::Responses => ev.event == "response.completed",
                        };
                    }
                    guard.usage = usage.usage();
                    if terminal {
                        // The end is reported before the last event leaves, so a
                        // client that saw it can read what it was recorded as.
                        guard.finish(ExchangeOutcome::Completed).await;
                    }
                    yield Ok(chunk);
                }
                Err(e) => {
                    let e = ProviderError::from(e);
                    guard.finish(ExchangeOutcome::Failed(e.to_string())).await;
                    yield Err(std::io::Error::other(e.to_string()));
                    return;
                }
            }
        }
        guard.finish(if terminal {
            ExchangeOutcome::Completed
        } else {
            ExchangeOutcome::Failed("the provider's stream ended before its last event".into())
        })
        .await;
    })
}

/// One translated stream, named by the client format it renders. A Responses client's stream
/// is rendered from Chat Completions chunks: an Anthropic provider's events are
/// rendered as those first.
enum Translation {
    Anthropic(OpenAiToAnthropic),
    OpenAi(AnthropicToOpenAi),
    Responses {
        via: Option<Box<AnthropicToOpenAi>>,
        out: ChatToResponses,
    },
}

impl Translation {
    fn new(mode: RelayMode) -> Self {
        match (mode.ingress, mode.target) {
            (WireFormat::Anthropic, _) => Self::Anthropic(OpenAiToAnthropic::new()),
            (WireFormat::OpenAi, _) => {
                Self::OpenAi(AnthropicToOpenAi::new(mode.created, mode.include_usage))
            }
            (WireFormat::Responses, target) => Self::Responses {
                via: (target == WireFormat::Anthropic)
                    .then(|| Box::new(AnthropicToOpenAi::new(mode.created, true))),
                out: ChatToResponses::new(mode.created, ""),
            },
        }
    }

    fn on_data(&mut self, data: &str) -> Vec<SseFrame> {
        if data.trim() == "[DONE]" {
            match self {
                Self::Anthropic(t) => return t.finish(),
                Self::Responses { via: None, out } => return out.finish(),
                _ => {}
            }
        }
        let v = match serde_json::from_str::<Value>(data) {
            Ok(v) => v,
            Err(e) => {
                return self.fail(&format!("the provider sent an event that is not JSON: {e}"));
            }
        };
        match self {
            Self::Anthropic(t) => t.on_chunk(&v),
            Self::OpenAi(t) => t.on_event(&v),
            Self::Responses { via: None, out } => out.on_chunk(&v),
            Self::Responses {
                via: Some(via),
                out,
            } => {
                let mut frames = Vec::new();
                for f in via.on_event(&v) {
                    frames.extend(match f {
                        SseFrame::Done => out.finish(),
                        SseFrame::Event { data, .. } => match data["error"]["message"].as_str() {
                            Some(m) => out.fail(m),
                            None => out.on_chunk(&data),
                        },
                    });
                }
                frames
            }
        }
    }

    /// The frames that end a stream whose upstream stopped here.
    fn on_upstream_end(&mut self) -> Vec<SseFrame> {
        match self {
            Self::Anthropic(t) if t.saw_finish() => t.finish(),
            Self::OpenAi(t) if t.saw_stop() => t.finish(),
            Self::Responses { via: None, out } if out.saw_finish() => out.finish(),
            _ => self.fail("the provider's stream ended before its last event"),
        }
    }

    fn fail(&mut self, message: &str) -> Vec<SseFrame> {
        if self.ended() {
            return Vec::new();
        }
        match self {
            Self::Anthropic(t) => {
                t.finish();
                vec![OpenAiToAnthropic::error_frame(message)]
            }
            Self::OpenAi(t) => {
                t.finish();
                vec![AnthropicToOpenAi::error_frame(message), SseFrame::Done]
            }
            Self::Responses { out, .. } => out.fail(message),
        }
    }

    fn ended(&self) -> bool {
        match self {
            Self::Anthropic(t) => t.ended(),
            Self::OpenAi(t) => t.ended(),
            Self::Responses { out, .. } => out.ended(),
        }
    }

    fn usage(&self) -> TokenUsage {
        match self {
            Self::Anthropic(t) => t.usage(),
            Self::OpenAi(t) => t.usage(),
            Self::Responses { via: Some(via), .. } => via.usage(),
            Self::Responses { out, .. } => out.usage(),
        }
    }
}

/// The message of the error event among `frames`, when one is there.
fn is_error(frames: &[SseFrame]) -> Option<String> {
    frames.iter().find_map(|f| match f {
        SseFrame::Event {
            event: Some("response.failed"),
            data,
        } => Some(
            data["response"]["error"]["message"]
                .as_str()
                .unwrap_or("the provider failed")
                .to_string(),
        ),
        SseFrame::Event { data, .. } if data.get("error").is_some() => Some(
            data["error"]["message"]
                .as_str()
                .unwrap_or("the provider failed")
                .to_string(),
        ),
        _ => None,
    })
}

/// The upstream stream re-rendered, event by event, in the client's format.
fn translated(
    upstream: impl Stream<Item = reqwest::Result<Bytes>> + Send + 'static,
    mode: RelayMode,
    mut guard: EndGuard,
) -> ByteStream {
    let mut upstream: Upstream = Box::pin(upstream);
    let mut t = Translation::new(mode);
    Box::pin(async_stream::stream! {
        let mut tap = SseTap::default();
        let mut failure: Option<String> = None;
        while !t.ended() {
            let frames = match upstream.next().await {
                Some(Ok(chunk)) => {
                    let mut frames = Vec::new();
                    for ev in tap.push(chunk) {
                        guard.answer.observe(mode.target, &ev.data);
                        frames.extend(t.on_data(&ev.data));
                    }
                    frames
                }
                Some(Err(e)) => t.fail(&ProviderError::from(e).to_string()),
                None => t.on_upstream_end(),
            };
            if failure.is_none() {
                failure = is_error(&frames);
            }
            guard.usage = Some(t.usage());
            if t.ended() {
                guard
                    .finish(match failure.take() {
                        Some(m) => ExchangeOutcome::Failed(m),
                        None => ExchangeOutcome::Completed,
                    })
                    .await;
            }
            if !frames.is_empty() {
                let mut out = Vec::new();
                for f in &frames {
                    out.extend_from_slice(&f.to_bytes());
                }
                yield Ok(Bytes::from(out));
            }
        }
        guard
            .finish(match failure {
                Some(m) => ExchangeOutcome::Failed(m),
                None => ExchangeOutcome::Completed,
            })
            .await;
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn responses_from_anthropic() -> Translation {
        Translation::new(RelayMode {
            ingress: WireFormat::Responses,
            target: WireFormat::Anthropic,
            stream: true,
            include_usage: true,
            created: 1,
        })
    }

    fn types(frames: &[SseFrame]) -> Vec<String> {
        frames
            .iter()
            .filter_map(|f| match f {
                SseFrame::Event { data, .. } => data["type"].as_str().map(str::to_string),
                SseFrame::Done => None,
            })
            .collect()
    }

    #[test]
    fn anthropic_events_reach_a_responses_client_as_response_events() {
        let mut t = responses_from_anthropic();
        let mut frames = Vec::new();
        for e in [
            json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude",
                "usage": {"input_tokens": 4, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": "Hi"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                   "usage": {"output_tokens": 2}}),
            json!({"type": "message_stop"}),
        ] {
            frames.extend(t.on_data(&e.to_string()));
        }
        assert!(t.ended());
        let got = types(&frames);
        assert_eq!(got.first().map(String::as_str), Some("response.created"));
        assert!(got.contains(&"response.output_text.delta".to_string()));
        assert_eq!(got.last().map(String::as_str), Some("response.completed"));
        assert_eq!(
            t.usage(),
            TokenUsage {
                input_tokens: 4,
                output_tokens: 2
            }
        );
        let SseFrame::Event { data, .. } = frames.last().expect("frames") else {
            panic!("an event");
        };
        assert_eq!(data["response"]["usage"]["total_tokens"], 6);
        assert_eq!(data["response"]["model"], "claude");
    }

    #[test]
    fn an_anthropic_error_or_a_cut_ends_a_responses_stream_with_response_failed() {
        let mut t = responses_from_anthropic();
        let frames = t.on_data(
            &json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
                .to_string(),
        );
        assert_eq!(is_error(&frames).as_deref(), Some("busy"));
        assert!(t.ended());
        let mut t = responses_from_anthropic();
        t.on_data(&json!({"type": "message_start", "message": {"model": "c"}}).to_string());
        let frames = t.on_upstream_end();
        assert_eq!(types(&frames), ["response.failed"]);
        assert!(is_error(&frames).is_some());
    }
}
