//! An OpenAI `chat.completion.chunk` stream rendered as Anthropic Messages
//! events: `message_start`, then per content block `content_block_start`,
//! deltas and `content_block_stop`, then `message_delta` (stop reason and
//! usage) and `message_stop`.

use crate::model_wire::reasons::finish_to_stop;
use crate::model_wire::sse_out::SseFrame;
use crate::model_wire::usage::TokenUsage;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The content block being streamed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Open {
    Text(usize),
    Thinking(usize),
    Tool(usize),
}

impl Open {
    fn index(self) -> usize {
        match self {
            Self::Text(i) | Self::Thinking(i) | Self::Tool(i) => i,
        }
    }
}

/// The state of one translated stream.
#[derive(Debug, Default)]
pub struct OpenAiToAnthropic {
    started: bool,
    ended: bool,
    next_index: usize,
    open: Option<Open>,
    tools: HashMap<u64, usize>,
    stop: Option<&'static str>,
    usage: TokenUsage,
}

impl OpenAiToAnthropic {
    /// A stream that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether the upstream said why it stopped (a stream cut before that is an error).
    pub fn saw_finish(&self) -> bool {
        self.stop.is_some()
    }

    /// Whether `message_stop` or an error event has been written.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The usage reported so far.
    pub fn usage(&self) -> TokenUsage {
        self.usage
    }

    /// Translates one chunk.
    pub fn on_chunk(&mut self, chunk: &Value) -> Vec<SseFrame> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        if let Some(err) = chunk.get("error") {
            let message = err["message"].as_str().unwrap_or("the provider failed");
            out.push(Self::error_frame(message));
            self.ended = true;
            return out;
        }
        if !self.started {
            out.push(self.message_start(chunk));
        }
        if let Some(u) = TokenUsage::from_openai(&chunk["usage"]) {
            self.usage = u;
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            for key in ["reasoning_content", "reasoning"] {
                if let Some(t) = delta[key].as_str().filter(|t| !t.is_empty()) {
                    let i = self.ensure(&mut out, Open::Thinking(0));
                    out.push(block_delta(
                        i,
                        json!({"type": "thinking_delta", "thinking": t}),
                    ));
                }
            }
            if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                let i = self.ensure(&mut out, Open::Text(0));
                out.push(block_delta(i, json!({"type": "text_delta", "text": t})));
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                self.on_tool_call(call, &mut out);
            }
            if let Some(f) = choice["finish_reason"].as_str() {
                self.stop = Some(finish_to_stop(f));
                self.close(&mut out);
            }
        }
        out
    }

    /// Ends the message (on `[DONE]`, or when the upstream ends after a finish reason).
    pub fn finish(&mut self) -> Vec<SseFrame> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        if !self.started {
            out.push(self.message_start(&Value::Null));
        }
        self.close(&mut out);
        out.push(SseFrame::named(
            "message_delta",
            json!({
                "type": "message_delta",
                "delta": {"stop_reason": self.stop.unwrap_or("end_turn"), "stop_sequence": null},
                "usage": {"input_tokens": self.usage.input_tokens,
                          "output_tokens": self.usage.output_tokens},
            }),
        ));
        out.push(SseFrame::named(
            "message_stop",
            json!({"type": "message_stop"}),
        ));
        self.ended = true;
        out
    }

    /// The error event that ends a failed stream.
    pub fn error_frame(message: &str) -> SseFrame {
        SseFrame::named(
            "error",
            json!({"type": "error", "error": {"type": "api_error", "message": message}}),
        )
    }

    fn message_start(&mut self, chunk: &Value) -> SseFrame {
        self.started = true;
        SseFrame::named(
            "message_start",
            json!({"type": "message_start", "message": {
                "id": chunk["id"].as_str().unwrap_or("msg_gateway"),
                "type": "message",
                "role": "assistant",
                "model": chunk["model"].as_str().unwrap_or_default(),
                "content": [],
                "stop_reason": null,
                "stop_sequence": null,
                "usage": {"input_tokens": 0, "output_tokens": 0},
            }}),
        )
    }

    fn on_tool_call(&mut self, call: &Value, out: &mut Vec<SseFrame>) {
        let key = call["index"].as_u64().unwrap_or(self.tools.len() as u64);
        let index = match self.tools.get(&key) {
            Some(i) => *i,
            None => {
                self.close(out);
                let i = self.next_index;
                self.next_index += 1;
                self.tools.insert(key, i);
                self.open = Some(Open::Tool(i));
                out.push(SseFrame::named(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": i, "content_block": {
                        "type": "tool_use",
                        "id": call["id"].as_str().unwrap_or_default(),
                        "name": call["function"]["name"].as_str().unwrap_or_default(),
                        "input": {},
                    }}),
                ));
                i
            }
        };
        if let Some(args) = call["function"]["arguments"]
            .as_str()
            .filter(|a| !a.is_empty())
        {
            out.push(block_delta(
                index,
                json!({"type": "input_json_delta", "partial_json": args}),
            ));
        }
    }

    /// Opens a text or thinking block unless one of that kind is open; its index.
    fn ensure(&mut self, out: &mut Vec<SseFrame>, kind: Open) -> usize {
        match (self.open, kind) {
            (Some(Open::Text(i)), Open::Text(_)) | (Some(Open::Thinking(i)), Open::Thinking(_)) => {
                return i;
            }
            _ => {}
        }
        self.close(out);
        let i = self.next_index;
        self.next_index += 1;
        let block = match kind {
            Open::Thinking(_) => {
                self.open = Some(Open::Thinking(i));
                json!({"type": "thinking", "thinking": "", "signature": ""})
            }
            _ => {
                self.open = Some(Open::Text(i));
                json!({"type": "text", "text": ""})
            }
        };
        out.push(SseFrame::named(
            "content_block_start",
            json!({"type": "content_block_start", "index": i, "content_block": block}),
        ));
        i
    }

    fn close(&mut self, out: &mut Vec<SseFrame>) {
        if let Some(open) = self.open.take() {
            out.push(SseFrame::named(
                "content_block_stop",
                json!({"type": "content_block_stop", "index": open.index()}),
            ));
        }
    }
}

fn block_delta(index: usize, delta: Value) -> SseFrame {
    SseFrame::named(
        "content_block_delta",
        json!({"type": "content_block_delta", "index": index, "delta": delta}),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(frames: &[SseFrame]) -> Vec<&'static str> {
        frames
            .iter()
            .filter_map(|f| match f {
                SseFrame::Event { event, .. } => *event,
                SseFrame::Done => None,
            })
            .collect()
    }

    fn chunk(delta: Value, finish: Value) -> Value {
        json!({"id": "c1", "model": "gpt", "choices": [
            {"index": 0, "delta": delta, "finish_reason": finish}]})
    }

    #[test]
    fn text_and_tool_calls_become_blocks_then_usage() {
        let mut t = OpenAiToAnthropic::new();
        let mut all = Vec::new();
        all.extend(t.on_chunk(&chunk(
            json!({"role": "assistant", "content": ""}),
            Value::Null,
        )));
        all.extend(t.on_chunk(&chunk(json!({"content": "Hel"}), Value::Null)));
        all.extend(t.on_chunk(&chunk(json!({"content": "lo"}), Value::Null)));
        all.extend(t.on_chunk(&chunk(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                    "function": {"name": "look", "arguments": ""}}]}),
            Value::Null,
        )));
        all.extend(t.on_chunk(&chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"a\":1}"}}]}),
            Value::Null,
        )));
        all.extend(t.on_chunk(&chunk(json!({}), json!("tool_calls"))));
        assert!(t.saw_finish());
        all.extend(t.on_chunk(&json!({"id": "c1", "choices": [],
            "usage": {"prompt_tokens": 4, "completion_tokens": 6}})));
        all.extend(t.finish());
        assert!(t.finish().is_empty(), "ends once");
        assert_eq!(
            names(&all),
            [
                "message_start",
                "content_block_start",
                "content_block_delta",
                "content_block_delta",
                "content_block_stop",
                "content_block_start",
                "content_block_delta",
                "content_block_stop",
                "message_delta",
                "message_stop",
            ]
        );
        let data = |i: usize| match &all[i] {
            SseFrame::Event { data, .. } => data.clone(),
            SseFrame::Done => Value::Null,
        };
        assert_eq!(data(0)["message"]["id"], "c1");
        assert_eq!(
            data(2)["delta"],
            json!({"type": "text_delta", "text": "Hel"})
        );
        assert_eq!(data(5)["index"], 1);
        assert_eq!(data(5)["content_block"]["name"], "look");
        assert_eq!(data(6)["delta"]["partial_json"], "{\"a\":1}");
        assert_eq!(data(8)["delta"]["stop_reason"], "tool_use");
        assert_eq!(
            data(8)["usage"],
            json!({"input_tokens": 4, "output_tokens": 6})
        );
    }

    #[test]
    fn upstream_errors_end_the_stream_with_an_error_event() {
        let mut t = OpenAiToAnthropic::new();
        let frames = t.on_chunk(&json!({"error": {"message": "boom"}}));
        assert_eq!(names(&frames), ["error"]);
        assert!(t.ended() && t.finish().is_empty());
    }
}
