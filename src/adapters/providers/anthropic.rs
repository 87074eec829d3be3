//! Anthropic Messages, streaming, with thinking blocks and their signatures.

use super::sse::{events, parse_json};
use super::{
    ChatFailure, ChatOutcome, ChatRequest, ProviderConfig, ProviderError, StreamDelta, join_url,
    model_ids, send_chat,
};
use crate::domain::message::{ContentBlock, Message, MessageStatus, Role, ToolCall};
use crate::domain::prompt_content::resource_text;
use crate::domain::provider_call::Usage;
use futures::StreamExt;
use serde_json::{Value, json};

/// The API version header value Hecate speaks.
const API_VERSION: &str = "2023-06-01";

/// A tool call's arguments as the object Anthropic wants for `input` (text that
/// is not a JSON object is kept under `raw_arguments`).
fn call_input(arguments: &str) -> Value {
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        _ if arguments.trim().is_empty() => json!({}),
        _ => json!({"raw_arguments": arguments}),
    }
}

fn render_blocks(m: &Message) -> Value {
    if m.content_blocks.is_empty() && !m.tool_calls.is_empty() {
        let text = (!m.content.is_empty()).then(|| json!({"type": "text", "text": m.content}));
        return text
            .into_iter()
            .chain(m.tool_calls.iter().map(|c| {
                json!({"type": "tool_use", "id": c.id, "name": c.name,
                       "input": call_input(&c.arguments)})
            }))
            .collect();
    }
    if m.content_blocks.is_empty() {
        return json!(m.content);
    }
    m.content_blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
            ContentBlock::Thinking {
                thinking,
                signature: Some(sig),
            } => Some(json!({"type": "thinking", "thinking": thinking, "signature": sig})),
            // Unsigned reasoning (from another provider) cannot be replayed to Anthropic.
            ContentBlock::Thinking {
                signature: None, ..
            } => None,
            ContentBlock::ToolUse { id, name, input } => {
                Some(json!({"type": "tool_use", "id": id, "name": name, "input": input}))
            }
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Some(json!({"type": "tool_result", "tool_use_id": tool_use_id,
                             "content": content, "is_error": is_error})),
            ContentBlock::Image {
                mime_type,
                data: Some(d),
                ..
            } => Some(json!({
                "type": "image", "source": {"type": "base64", "media_type": mime_type, "data": d}
            })),
            // Audio never reaches a model: the ACP bridge refuses it first.
            ContentBlock::Image { .. } | ContentBlock::Audio { .. } => None,
            ContentBlock::Resource { uri, text, .. } => Some(json!({
                "type": "text", "text": resource_text(uri, text.as_deref())
            })),
        })
        .collect()
}

/// Renders the request body.
pub(crate) fn request_body(req: &ChatRequest) -> Value {
    let mut messages = Vec::new();
    for m in &req.messages {
        match m.role {
            // A summary checkpoint stands in for the turns before it; Messages has
            // no system turns, so it is given as the user's context.
            Role::User => messages.push(json!({"role": "user", "content": render_blocks(m)})),
            Role::System if m.is_summary => {
                messages.push(json!({"role": "user", "content": render_blocks(m)}))
            }
            Role::Assistant if m.status == MessageStatus::Completed => {
                messages.push(json!({"role": "assistant", "content": render_blocks(m)}))
            }
            Role::Tool => {
                let result = json!({
                    "type": "tool_result",
                    "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                    "content": m.content,
                    "is_error": m.tool_error,
                });
                // Results of one turn's calls go back together in one user message.
                let merged = messages.last_mut().and_then(|last: &mut Value| {
                    let is_user = last["role"] == "user";
                    let blocks = last["content"].as_array_mut()?;
                    let all_results = blocks.iter().all(|b| b["type"] == "tool_result");
                    (is_user && all_results).then_some(blocks)
                });
                match merged {
                    Some(blocks) => blocks.push(result),
                    None => messages.push(json!({"role": "user", "content": [result]})),
                }
            }
            _ => {}
        }
    }
    let mut body = json!({
        "model": req.model,
        "max_tokens": req.max_tokens,
        "messages": messages,
        "stream": true,
    });
    if let Some(s) = &req.system {
        body["system"] = json!(s);
    }
    if let Some(budget) = req.reasoning_effort.as_deref().map(thinking_budget) {
        // The answer's cap stays what it was: thinking gets its own tokens on top.
        body["max_tokens"] = json!(req.max_tokens + budget);
        body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
    }
    body
}

/// The extended-thinking budget for a reasoning effort (1,024 tokens is
/// Anthropic's minimum).
fn thinking_budget(effort: &str) -> u32 {
    match effort {
        "high" => 16_384,
        "medium" => 4_096,
        _ => 1_024,
    }
}

fn authed(rb: reqwest::RequestBuilder, cfg: &ProviderConfig) -> reqwest::RequestBuilder {
    let rb = rb.header("anthropic-version", API_VERSION);
    match &cfg.api_key {
        Some(k) if !k.is_empty() => rb.header("x-api-key", k),
        _ => rb,
    }
}

/// The block currently being streamed.
enum Open {
    Text,
    Thinking,
    Tool {
        id: String,
        name: String,
        json: String,
    },
    Other,
}

pub(crate) async fn stream_chat(
    http: &reqwest::Client,
    cfg: &ProviderConfig,
    req: &ChatRequest,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
) -> Result<ChatOutcome, ChatFailure> {
    let fail = |error: ProviderError, partial: ChatOutcome| ChatFailure { error, partial };
    let resp = send_chat(
        authed(http.post(join_url(&cfg.base_url, "v1/messages")), cfg).json(&request_body(req)),
    )
    .await
    .map_err(|e| fail(e, ChatOutcome::default()))?;
    let mut decoder = Decoder::default();
    let mut stream = events(resp);
    while let Some(ev) = stream.next().await {
        let step = ev.and_then(|ev| {
            let v = parse_json(&ev.data)?;
            decoder.event(&v, &ev.event, on_delta)
        });
        match step {
            Ok(true) => break,
            Ok(false) => {}
            Err(e) => return Err(fail(e, decoder.out)),
        }
    }
    let stopped = decoder.stopped;
    let out = decoder.finish();
    if !stopped {
        return Err(fail(
            ProviderError::StreamCut("no message_stop".into()),
            out,
        ));
    }
    Ok(out)
}

/// Folds stream events into an outcome: content blocks in order, tool inputs
/// assembled from their `input_json_delta` pieces, usage from start and delta.
struct Decoder {
    out: ChatOutcome,
    open: Open,
    usage: Usage,
    stopped: bool,
}

impl Default for Decoder {
    fn default() -> Self {
        Self {
            out: ChatOutcome::default(),
            open: Open::Other,
            usage: Usage::default(),
            stopped: false,
        }
    }
}

impl Decoder {
    /// Takes one parsed event (`sse_event` names it when the data has no
    /// `type`); answers true at `message_stop`.
    fn event(
        &mut self,
        v: &Value,
        sse_event: &str,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<bool, ProviderError> {
        let Self {
            out, open, usage, ..
        } = self;
        let kind = v["type"].as_str().unwrap_or(sse_event).to_string();
        match kind.as_str() {
            "message_start" => {
                let u = &v["message"]["usage"];
                usage.prompt_tokens = u["input_tokens"].as_u64().unwrap_or(0)
                    + u["cache_read_input_tokens"].as_u64().unwrap_or(0)
                    + u["cache_creation_input_tokens"].as_u64().unwrap_or(0);
                usage.completion_tokens = u["output_tokens"].as_u64().unwrap_or(0);
            }
            "content_block_start" => {
                let b = &v["content_block"];
                *open = match b["type"].as_str() {
                    Some("text") => {
                        out.blocks.push(ContentBlock::Text {
                            text: String::new(),
                        });
                        Open::Text
                    }
                    Some("thinking") => {
                        out.blocks.push(ContentBlock::Thinking {
                            thinking: String::new(),
                            signature: None,
                        });
                        Open::Thinking
                    }
                    Some("tool_use") => {
                        let id = b["id"].as_str().unwrap_or_default().to_string();
                        let name = b["name"].as_str().unwrap_or_default().to_string();
                        on_delta(StreamDelta::ToolCallStarted {
                            id: id.clone(),
                            name: name.clone(),
                        });
                        Open::Tool {
                            id,
                            name,
                            json: String::new(),
                        }
                    }
                    _ => Open::Other,
                };
            }
            "content_block_delta" => {
                let d = &v["delta"];
                match (d["type"].as_str(), &mut *open) {
                    (Some("text_delta"), _) => {
                        let t = d["text"].as_str().unwrap_or_default();
                        out.push_text(t);
                        on_delta(StreamDelta::Text(t.to_string()));
                    }
                    (Some("thinking_delta"), _) => {
                        let t = d["thinking"].as_str().unwrap_or_default();
                        out.push_thinking(t);
                        on_delta(StreamDelta::Thinking(t.to_string()));
                    }
                    (Some("signature_delta"), _) => {
                        if let Some(ContentBlock::Thinking { signature, .. }) =
                            out.blocks.last_mut()
                        {
                            signature
                                .get_or_insert_with(String::new)
                                .push_str(d["signature"].as_str().unwrap_or_default());
                        }
                    }
                    (Some("input_json_delta"), Open::Tool { json, .. }) => {
                        json.push_str(d["partial_json"].as_str().unwrap_or_default());
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Open::Tool { id, name, json } = std::mem::replace(open, Open::Other) {
                    let args = if json.is_empty() {
                        "{}".to_string()
                    } else {
                        json
                    };
                    let input = serde_json::from_str(&args).unwrap_or(Value::String(args.clone()));
                    out.blocks.push(ContentBlock::ToolUse {
                        id: id.clone(),
                        name: name.clone(),
                        input,
                    });
                    out.tool_calls.push(ToolCall {
                        id,
                        name,
                        arguments: args,
                    });
                }
            }
            "message_delta" => {
                if let Some(r) = v["delta"]["stop_reason"].as_str() {
                    out.stop_reason = Some(r.to_string());
                }
                if let Some(o) = v["usage"]["output_tokens"].as_u64() {
                    usage.completion_tokens = o;
                }
            }
            "message_stop" => {
                self.stopped = true;
                return Ok(true);
            }
            "error" => {
                return Err(ProviderError::Status {
                    status: match v["error"]["type"].as_str() {
                        Some("rate_limit_error") => 429,
                        Some("overloaded_error") => 529,
                        Some("authentication_error") => 401,
                        _ => 500,
                    },
                    body: v["error"].to_string(),
                    retry_after: None,
                });
            }
            _ => {}
        }
        Ok(false)
    }

    /// The outcome with its usage, empty text blocks dropped.
    fn finish(mut self) -> ChatOutcome {
        let mut usage = self.usage;
        usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
        self.out.usage = Some(usage);
        self.out.blocks.retain(|b| match b {
            ContentBlock::Text { text } => !text.is_empty(),
            _ => true,
        });
        self.out
    }
}

pub(crate) async fn list_models(
    http: &reqwest::Client,
    cfg: &ProviderConfig,
) -> Result<Vec<String>, ProviderError> {
    model_ids(authed(http.get(join_url(&cfg.base_url, "v1/models")), cfg)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tools_calls_and_results_render_in_messages_shape() {
        let mut call = Message::unstored(Role::Assistant, "Reading both.");
        for (id, path) in [("toolu_1", "a.txt"), ("toolu_2", "b.txt")] {
            call.tool_calls.push(ToolCall {
                id: id.into(),
                name: "read_file".into(),
                arguments: format!(r#"{{"path":"{path}"}}"#),
            });
        }
        let mut first = Message::unstored(Role::Tool, "A");
        first.tool_call_id = Some("toolu_1".into());
        let mut second = Message::unstored(Role::Tool, "no such file");
        second.tool_call_id = Some("toolu_2".into());
        second.tool_error = true;
        let req = ChatRequest::read_file_example(vec![
            Message::unstored(Role::User, "go"),
            call,
            first,
            second,
        ]);
        let body = request_body(&req);
        assert_eq!(
            body["tools"][0],
            json!({"name": "read_file", "description": "Reads", "input_schema": {"type": "object"}})
        );
        let m = body["messages"].as_array().expect("messages");
        assert_eq!(m.len(), 3, "{body}");
        assert_eq!(
            m[1]["content"][0],
            json!({"type": "text", "text": "Reading both."})
        );
        assert_eq!(
            m[1]["content"][1],
            json!({"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a.txt"}})
        );
        assert_eq!(m[2]["role"], "user");
        assert_eq!(m[2]["content"][0]["tool_use_id"], "toolu_1");
        assert_eq!(m[2]["content"][1]["tool_use_id"], "toolu_2");
        assert_eq!(m[2]["content"][1]["is_error"], true);
    }

    #[test]
    fn a_reasoning_effort_asks_for_extended_thinking_on_top_of_the_answers_cap() {
        let mut req = ChatRequest::read_file_example(vec![Message::unstored(Role::User, "go")]);
        assert!(request_body(&req).get("thinking").is_none());
        req.reasoning_effort = Some("medium".into());
        let body = request_body(&req);
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 4096})
        );
        assert_eq!(body["max_tokens"], 4106);
    }

    #[test]
    fn streamed_tool_use_input_is_assembled_from_json_deltas() {
        let events = [
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 12, "output_tokens": 1}}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Editing."}}),
            json!({"type": "content_block_stop", "index": 0}),
            json!({"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use",
                   "id": "toolu_9", "name": "file_edit", "input": {}}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"path\": \"a"}}),
            json!({"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ".txt\"}"}}),
            json!({"type": "content_block_stop", "index": 1}),
            json!({"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 20}}),
            json!({"type": "message_stop"}),
        ];
        let mut decoder = Decoder::default();
        let mut started = Vec::new();
        let mut on_delta = |d: StreamDelta| {
            if let StreamDelta::ToolCallStarted { id, .. } = d {
                started.push(id);
            }
        };
        let mut stops = Vec::new();
        for e in &events {
            stops.push(decoder.event(e, "", &mut on_delta).expect("event"));
        }
        assert_eq!(stops.iter().filter(|s| **s).count(), 1);
        let out = decoder.finish();
        assert_eq!(started, vec!["toolu_9".to_string()]);
        assert_eq!(out.tool_calls.len(), 1);
        assert_eq!(out.tool_calls[0].name, "file_edit");
        assert_eq!(out.tool_calls[0].arguments, r#"{"path": "a.txt"}"#);
        assert_eq!(out.stop_reason.as_deref(), Some("tool_use"));
        let usage = out.usage.expect("usage");
        assert_eq!((usage.prompt_tokens, usage.completion_tokens), (12, 20));
    }
}
