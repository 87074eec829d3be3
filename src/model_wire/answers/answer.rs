//! The assistant message of an answer, for recording: read from a complete
//! answer or assembled from a stream's events as they pass, in either provider
//! format, and given in one shape — an OpenAI Chat Completions assistant message
//! (`content` text, `tool_calls` with their JSON arguments), with an Anthropic
//! answer's thinking kept in order with the rest in its `content_blocks`
//! extension.

use crate::model_wire::extensions;
use crate::model_wire::format::WireFormat;
use serde_json::{Map, Value, json};

/// One tool call being assembled.
#[derive(Debug, Clone, Default)]
struct ToolCall {
    id: String,
    name: String,
    arguments: String,
}

/// Assembles the assistant message of an answer.
#[derive(Debug, Clone, Default)]
pub struct AnswerTap {
    text: String,
    tools: Vec<ToolCall>,
    /// Anthropic stream: content block index → position in `tools`.
    blocks: Vec<(u64, usize)>,
    /// Anthropic: the answer's content blocks in order (a `tool_use` block's
    /// input is read from `tools` when the message is made).
    anthropic: Vec<Value>,
    /// Anthropic stream: content block index → position in `anthropic`.
    anthropic_at: Vec<(u64, usize)>,
}

impl AnswerTap {
    /// The assistant message of a complete answer in `format`.
    pub fn of_response(format: WireFormat, body: &Value) -> Value {
        Self::tap_of(format, body).message()
    }

    /// The tap holding a complete answer in `format`.
    fn tap_of(format: WireFormat, body: &Value) -> Self {
        let mut tap = Self::default();
        match format {
            WireFormat::OpenAi => {
                let m = &body["choices"][0]["message"];
                tap.text = text_of(&m["content"]);
                for c in m["tool_calls"].as_array().into_iter().flatten() {
                    tap.tools.push(ToolCall {
                        id: str_of(&c["id"]),
                        name: str_of(&c["function"]["name"]),
                        arguments: str_of(&c["function"]["arguments"]),
                    });
                }
            }
            WireFormat::Anthropic => {
                tap.anthropic = body["content"].as_array().cloned().unwrap_or_default();
                for b in body["content"].as_array().into_iter().flatten() {
                    match b["type"].as_str() {
                        Some("text") => tap.text.push_str(b["text"].as_str().unwrap_or("")),
                        Some("tool_use") => tap.tools.push(ToolCall {
                            id: str_of(&b["id"]),
                            name: str_of(&b["name"]),
                            arguments: b["input"].to_string(),
                        }),
                        _ => {}
                    }
                }
            }
            // Providers never answer in it; its output items read the same way.
            WireFormat::Responses => {
                for item in body["output"].as_array().into_iter().flatten() {
                    match item["type"].as_str() {
                        Some("message") => tap.text.push_str(&text_of(&item["content"])),
                        Some("function_call") => tap.tools.push(ToolCall {
                            id: str_of(&item["call_id"]),
                            name: str_of(&item["name"]),
                            arguments: str_of(&item["arguments"]),
                        }),
                        _ => {}
                    }
                }
            }
        }
        tap
    }

    /// Reads one streamed event's data (`[DONE]` and non-JSON data are skipped).
    pub fn observe(&mut self, format: WireFormat, data: &str) {
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            return;
        };
        match format {
            WireFormat::OpenAi => self.openai_chunk(&v),
            WireFormat::Anthropic => self.anthropic_event(&v),
            // Providers never stream it: its complete answer is in the last event.
            WireFormat::Responses => {
                if v["type"] == "response.completed" {
                    *self = Self::tap_of(WireFormat::Responses, &v["response"]);
                }
            }
        }
    }

    fn openai_chunk(&mut self, v: &Value) {
        let delta = &v["choices"][0]["delta"];
        if let Some(t) = delta["content"].as_str() {
            self.text.push_str(t);
        }
        for c in delta["tool_calls"].as_array().into_iter().flatten() {
            let index = c["index"].as_u64().unwrap_or(self.tools.len() as u64) as usize;
            while self.tools.len() <= index {
                self.tools.push(ToolCall::default());
            }
            let t = &mut self.tools[index];
            if let Some(id) = c["id"].as_str() {
                t.id = id.to_string();
            }
            if let Some(n) = c["function"]["name"].as_str() {
                t.name.push_str(n);
            }
            if let Some(a) = c["function"]["arguments"].as_str() {
                t.arguments.push_str(a);
            }
        }
    }

    fn anthropic_event(&mut self, v: &Value) {
        let index = v["index"].as_u64().unwrap_or(0);
        match v["type"].as_str() {
            Some("content_block_start") => {
                let b = &v["content_block"];
                self.anthropic_at.push((index, self.anthropic.len()));
                self.anthropic.push(b.clone());
                if b["type"] == "tool_use" {
                    self.blocks.push((index, self.tools.len()));
                    self.tools.push(ToolCall {
                        id: str_of(&b["id"]),
                        name: str_of(&b["name"]),
                        arguments: String::new(),
                    });
                }
            }
            Some("content_block_delta") => {
                let d = &v["delta"];
                let block = self
                    .anthropic_at
                    .iter()
                    .find(|(i, _)| *i == index)
                    .map(|&(_, at)| at);
                let mut grow = |field: &str, piece: &Value| {
                    if let Some(b) = block.and_then(|at| self.anthropic.get_mut(at)) {
                        let whole = format!("{}{}", str_of(&b[field]), str_of(piece));
                        b[field] = Value::String(whole);
                    }
                };
                match d["type"].as_str() {
                    Some("thinking_delta") => grow("thinking", &d["thinking"]),
                    Some("signature_delta") => grow("signature", &d["signature"]),
                    Some("text_delta") => {
                        grow("text", &d["text"]);
                        self.text.push_str(d["text"].as_str().unwrap_or(""));
                    }
                    Some("input_json_delta") => {
                        let at = self.blocks.iter().find(|(i, _)| *i == index);
                        if let Some(&(_, at)) = at {
                            let json = d["partial_json"].as_str().unwrap_or("");
                            self.tools[at].arguments.push_str(json);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// The message assembled so far.
    pub fn message(&self) -> Value {
        let mut m = Map::new();
        m.insert("role".into(), json!("assistant"));
        m.insert("content".into(), json!(self.text));
        if !self.tools.is_empty() {
            let calls: Vec<Value> = self
                .tools
                .iter()
                .map(|t| {
                    let arguments = if t.arguments.is_empty() {
                        "{}".to_string()
                    } else {
                        t.arguments.clone()
                    };
                    json!({
                        "id": t.id,
                        "type": "function",
                        "function": {"name": t.name, "arguments": arguments},
                    })
                })
                .collect();
            m.insert("tool_calls".into(), Value::Array(calls));
        }
        if let Some(blocks) = extensions::content_blocks_of(&self.anthropic_blocks()) {
            m.insert(extensions::CONTENT_BLOCKS.into(), blocks);
        }
        Value::Object(m)
    }

    /// The Anthropic content blocks so far, each `tool_use` with the input its
    /// streamed arguments give.
    fn anthropic_blocks(&self) -> Vec<Value> {
        let mut tools = self.tools.iter();
        self.anthropic
            .iter()
            .map(|b| {
                let mut b = b.clone();
                if b["type"] == "tool_use"
                    && let Some(t) = tools.next()
                    && let Ok(input) = serde_json::from_str::<Value>(&t.arguments)
                {
                    b["input"] = input;
                }
                b
            })
            .collect()
    }
}

fn str_of(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_string()
}

/// The text of an OpenAI `content` (a string, or the text of its parts).
pub fn text_of(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_stream_chunks_assemble_text_and_tool_calls() {
        let mut tap = AnswerTap::default();
        for data in [
            r#"{"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}"#,
            r#"{"choices":[{"delta":{"content":"lo"}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"c1","function":{"name":"f","arguments":"{\"a\""}}]}}]}"#,
            r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}}]}"#,
            "[DONE]",
        ] {
            tap.observe(WireFormat::OpenAi, data);
        }
        let m = tap.message();
        assert_eq!(m["content"], "Hello");
        assert_eq!(m["tool_calls"][0]["id"], "c1");
        assert_eq!(m["tool_calls"][0]["function"]["arguments"], "{\"a\":1}");
    }

    #[test]
    fn anthropic_events_and_answers_give_the_same_message() {
        let mut tap = AnswerTap::default();
        for data in [
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"}}"#,
        ] {
            tap.observe(WireFormat::Anthropic, data);
        }
        let whole = AnswerTap::of_response(
            WireFormat::Anthropic,
            &json!({"content": [
                {"type": "text", "text": "Hi"},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}
            ]}),
        );
        assert_eq!(tap.message(), whole);
    }

    #[test]
    fn anthropic_thinking_is_kept_with_its_signature_streamed_or_whole() {
        let mut tap = AnswerTap::default();
        for data in [
            r#"{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"let me "}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"see"}}"#,
            r#"{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig-1"}}"#,
            r#"{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}"#,
            r#"{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"Hi"}}"#,
            r#"{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"t1","name":"f","input":{}}}"#,
            r#"{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"a\":1}"}}"#,
        ] {
            tap.observe(WireFormat::Anthropic, data);
        }
        let blocks = json!([
            {"type": "thinking", "thinking": "let me see", "signature": "sig-1"},
            {"type": "text", "text": "Hi"},
            {"type": "tool_use", "id": "t1", "name": "f", "input": {"a": 1}}
        ]);
        let streamed = tap.message();
        assert_eq!(streamed["content"], "Hi");
        assert_eq!(streamed["content_blocks"], blocks);
        let whole = AnswerTap::of_response(WireFormat::Anthropic, &json!({"content": blocks}));
        assert_eq!(streamed, whole);
        let plain = AnswerTap::of_response(
            WireFormat::Anthropic,
            &json!({"content": [{"type": "text", "text": "Hi"}]}),
        );
        assert!(plain.get("content_blocks").is_none(), "{plain}");
    }
}
