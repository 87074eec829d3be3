//! An Anthropic Messages event stream rendered as OpenAI `chat.completion.chunk`
//! events: the role, then content, reasoning and tool-call argument deltas, the
//! finish reason, the usage chunk when the client asked for it, and `[DONE]`.

use crate::model_wire::reasons::stop_to_finish;
use crate::model_wire::sse_out::SseFrame;
use crate::model_wire::usage::TokenUsage;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The state of one translated stream.
#[derive(Debug)]
pub struct AnthropicToOpenAi {
    id: String,
    model: String,
    created: u64,
    include_usage: bool,
    tools: HashMap<u64, usize>,
    usage: TokenUsage,
    stopped: bool,
    ended: bool,
}

impl AnthropicToOpenAi {
    /// A stream answered at `created` (Unix seconds); `include_usage` adds the
    /// closing usage chunk OpenAI clients ask for with `stream_options`.
    pub fn new(created: u64, include_usage: bool) -> Self {
        Self {
            id: "chatcmpl-gateway".into(),
            model: String::new(),
            created,
            include_usage,
            tools: HashMap::new(),
            usage: TokenUsage::default(),
            stopped: false,
            ended: false,
        }
    }

    /// Whether `message_stop` has arrived (a stream cut before that is an error).
    pub fn saw_stop(&self) -> bool {
        self.stopped
    }

    /// Whether `[DONE]` or an error has been written.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// The usage reported so far.
    pub fn usage(&self) -> TokenUsage {
        self.usage
    }

    /// Translates one event's JSON data.
    pub fn on_event(&mut self, v: &Value) -> Vec<SseFrame> {
        let mut out = Vec::new();
        if self.ended {
            return out;
        }
        match v["type"].as_str().unwrap_or_default() {
            "message_start" => {
                let m = &v["message"];
                if let Some(id) = m["id"].as_str() {
                    self.id = id.to_string();
                }
                self.model = m["model"].as_str().unwrap_or_default().to_string();
                if let Some(u) = TokenUsage::from_anthropic(&m["usage"]) {
                    self.usage = u;
                }
                out.push(self.chunk(json!({"role": "assistant", "content": ""}), None));
            }
            "content_block_start" => {
                let b = &v["content_block"];
                if b["type"] == "tool_use" {
                    let index = self.tools.len();
                    self.tools.insert(v["index"].as_u64().unwrap_or(0), index);
                    out.push(self.chunk(
                        json!({"tool_calls": [{
                            "index": index,
                            "id": b["id"].as_str().unwrap_or_default(),
                            "type": "function",
                            "function": {"name": b["name"].as_str().unwrap_or_default(),
                                         "arguments": ""},
                        }]}),
                        None,
                    ));
                } else if let Some(t) = b["text"].as_str().filter(|t| !t.is_empty()) {
                    out.push(self.chunk(json!({"content": t}), None));
                }
            }
            "content_block_delta" => {
                let d = &v["delta"];
                match d["type"].as_str() {
                    Some("text_delta") => {
                        out.push(self.chunk(json!({"content": d["text"]}), None));
                    }
                    Some("thinking_delta") => {
                        out.push(self.chunk(json!({"reasoning_content": d["thinking"]}), None));
                    }
                    Some("input_json_delta") => {
                        let block = v["index"].as_u64().unwrap_or(0);
                        if let Some(index) = self.tools.get(&block).copied() {
                            out.push(self.chunk(
                                json!({"tool_calls": [{"index": index,
                                    "function": {"arguments": d["partial_json"]}}]}),
                                None,
                            ));
                        }
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if let Some(o) = v["usage"]["output_tokens"].as_u64() {
                    self.usage.output_tokens = o;
                }
                if let Some(i) = v["usage"]["input_tokens"].as_u64().filter(|i| *i > 0) {
                    self.usage.input_tokens = i;
                }
                let finish =
                    stop_to_finish(v["delta"]["stop_reason"].as_str().unwrap_or("end_turn"));
                out.push(self.chunk(json!({}), Some(finish)));
            }
            "message_stop" => {
                self.stopped = true;
                out.extend(self.finish());
            }
            "error" => {
                let message = v["error"]["message"]
                    .as_str()
                    .unwrap_or("the provider failed");
                out.push(Self::error_frame(message));
                self.ended = true;
            }
            _ => {}
        }
        out
    }

    /// Ends the stream: the usage chunk when asked for, then `[DONE]`.
    pub fn finish(&mut self) -> Vec<SseFrame> {
        if self.ended {
            return Vec::new();
        }
        self.ended = true;
        let mut out = Vec::new();
        if self.include_usage {
            out.push(SseFrame::data(json!({
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": [],
                "usage": self.usage.to_openai(),
            })));
        }
        out.push(SseFrame::Done);
        out
    }

    /// The error event that ends a failed stream (OpenAI's in-stream error shape).
    pub fn error_frame(message: &str) -> SseFrame {
        SseFrame::data(json!({"error": {"message": message, "type": "server_error",
                                        "param": null, "code": "provider_error"}}))
    }

    fn chunk(&self, delta: Value, finish: Option<&str>) -> SseFrame {
        let mut c = json!({
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}],
        });
        if self.include_usage {
            c["usage"] = Value::Null;
        }
        SseFrame::data(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(f: &SseFrame) -> Value {
        match f {
            SseFrame::Event { data, .. } => data.clone(),
            SseFrame::Done => json!("[DONE]"),
        }
    }

    #[test]
    fn events_become_chunks_with_usage_and_done() {
        let mut t = AnthropicToOpenAi::new(7, true);
        let events = [
            json!({"type": "message_start", "message": {"id": "msg_1", "model": "claude",
                "usage": {"input_tokens": 3, "output_tokens": 1}}}),
            json!({"type": "ping"}),
            json!({"type": "content_block_start", "index": 0,
                   "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0,
                   "delta": {"type": "text_delta", "text": "Hi"}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block":
                   {"type": "tool_use", "id": "toolu_1", "name": "look", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": "{\"a\":"}}),
            json!({"type": "content_block_delta", "index": 1,
                   "delta": {"type": "input_json_delta", "partial_json": "1}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"},
                   "usage": {"output_tokens": 9}}),
            json!({"type": "message_stop"}),
        ];
        let out: Vec<Value> = events
            .iter()
            .flat_map(|e| t.on_event(e))
            .map(|f| data(&f))
            .collect();
        assert!(t.saw_stop() && t.ended());
        assert_eq!(out.len(), 8, "{out:#?}");
        assert_eq!(out[0]["choices"][0]["delta"]["role"], "assistant");
        assert_eq!(out[0]["id"], "msg_1");
        assert_eq!(out[0]["usage"], Value::Null);
        assert_eq!(out[1]["choices"][0]["delta"]["content"], "Hi");
        assert_eq!(
            out[2]["choices"][0]["delta"]["tool_calls"][0],
            json!({"index": 0, "id": "toolu_1", "type": "function",
                   "function": {"name": "look", "arguments": ""}})
        );
        assert_eq!(
            out[4]["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"],
            "1}"
        );
        assert_eq!(out[5]["choices"][0]["finish_reason"], "tool_calls");
        assert_eq!(out[6]["choices"], json!([]));
        assert_eq!(
            out[6]["usage"],
            json!({"prompt_tokens": 3, "completion_tokens": 9, "total_tokens": 12})
        );
        assert_eq!(out[7], "[DONE]");
    }

    #[test]
    fn errors_end_the_stream() {
        let mut t = AnthropicToOpenAi::new(0, false);
        let out = t.on_event(&json!({"type": "error",
            "error": {"type": "overloaded_error", "message": "busy"}}));
        assert_eq!(data(&out[0])["error"]["message"], "busy");
        assert!(t.ended() && t.finish().is_empty());
    }
}
