//! Anthropic Messages, streaming, with thinking blocks and their signatures.

use super::sse::{events, parse_json};
use super::{
    ChatFailure, ChatOutcome, ChatRequest, ProviderConfig, ProviderError, StreamDelta, join_url,
    model_ids, status_error,
};
use crate::domain::message::{ContentBlock, Message, MessageStatus, Role, ToolCall};
use crate::domain::provider_call::Usage;
use futures::StreamExt;
use serde_json::{Value, json};

/// The API version header value Hecate speaks.
const API_VERSION: &str = "2023-06-01";

fn render_blocks(m: &Message) -> Value {
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
            ContentBlock::Image { .. } => None,
            ContentBlock::Resource { uri, text, .. } => Some(json!({
                "type": "text", "text": text.clone().unwrap_or_else(|| uri.clone())
            })),
        })
        .collect()
}

/// Renders the request body.
pub(crate) fn request_body(req: &ChatRequest) -> Value {
    let mut messages = Vec::new();
    for m in &req.messages {
        match m.role {
            Role::User => messages.push(json!({"role": "user", "content": render_blocks(m)})),
            Role::Assistant if m.status == MessageStatus::Completed => {
                messages.push(json!({"role": "assistant", "content": render_blocks(m)}))
            }
            Role::Tool => messages.push(json!({"role": "user", "content": [{
                "type": "tool_result",
                "tool_use_id": m.tool_call_id.clone().unwrap_or_default(),
                "content": m.content,
                "is_error": m.tool_error,
            }]})),
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
    body
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
    let mut out = ChatOutcome::default();
    let fail = |error: ProviderError, partial: ChatOutcome| ChatFailure { error, partial };
    let resp = authed(http.post(join_url(&cfg.base_url, "v1/messages")), cfg)
        .json(&request_body(req))
        .send()
        .await
        .map_err(|e| fail(e.into(), ChatOutcome::default()))?;
    if !resp.status().is_success() {
        return Err(fail(status_error(resp).await, out));
    }
    let mut open = Open::Other;
    let mut usage = Usage::default();
    let mut stopped = false;
    let mut stream = events(resp);
    while let Some(ev) = stream.next().await {
        let ev = match ev {
            Ok(ev) => ev,
            Err(e) => return Err(fail(e, out)),
        };
        let v = match parse_json(&ev.data) {
            Ok(v) => v,
            Err(e) => return Err(fail(e, out)),
        };
        let kind = v["type"].as_str().unwrap_or(ev.event.as_str()).to_string();
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
                open = match b["type"].as_str() {
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
                match (d["type"].as_str(), &mut open) {
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
                if let Open::Tool { id, name, json } = std::mem::replace(&mut open, Open::Other) {
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
                stopped = true;
                break;
            }
            "error" => {
                let e = ProviderError::Status {
                    status: match v["error"]["type"].as_str() {
                        Some("rate_limit_error") => 429,
                        Some("overloaded_error") => 529,
                        Some("authentication_error") => 401,
                        _ => 500,
                    },
                    body: v["error"].to_string(),
                    retry_after: None,
                };
                return Err(fail(e, out));
            }
            _ => {}
        }
    }
    usage.total_tokens = usage.prompt_tokens + usage.completion_tokens;
    out.usage = Some(usage);
    out.blocks.retain(|b| match b {
        ContentBlock::Text { text } => !text.is_empty(),
        _ => true,
    });
    if !stopped {
        return Err(fail(
            ProviderError::StreamCut("no message_stop".into()),
            out,
        ));
    }
    Ok(out)
}

pub(crate) async fn list_models(
    http: &reqwest::Client,
    cfg: &ProviderConfig,
) -> Result<Vec<String>, ProviderError> {
    model_ids(authed(http.get(join_url(&cfg.base_url, "v1/models")), cfg)).await
}
