//! OpenAI-compatible Chat Completions, streaming with usage.

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

fn render_message(m: &Message) -> Value {
    match m.role {
        Role::Assistant => {
            let mut v = json!({"role": "assistant", "content": m.content});
            if !m.tool_calls.is_empty() {
                if m.content.is_empty() {
                    v["content"] = Value::Null;
                }
                v["tool_calls"] = m
                    .tool_calls
                    .iter()
                    .map(|c| {
                        json!({"id": c.id, "type": "function",
                               "function": {"name": c.name, "arguments": c.arguments}})
                    })
                    .collect();
            }
            v
        }
        Role::Tool => json!({
            "role": "tool",
            "tool_call_id": m.tool_call_id.clone().unwrap_or_default(),
            "content": m.content,
        }),
        Role::System => json!({"role": "system", "content": m.content}),
        Role::User => json!({"role": "user", "content": user_content(m)}),
    }
}

/// A user message's content: its text, or, when it carries images, its blocks
/// in order as text and `image_url` parts (resources as their text form).
fn user_content(m: &Message) -> Value {
    if !m
        .content_blocks
        .iter()
        .any(|b| matches!(b, ContentBlock::Image { .. }))
    {
        return json!(m.content);
    }
    m.content_blocks
        .iter()
        .filter_map(|b| match b {
            ContentBlock::Text { text } => Some(json!({"type": "text", "text": text})),
            ContentBlock::Image {
                mime_type,
                data: Some(d),
                ..
            } => Some(json!({"type": "image_url",
                             "image_url": {"url": format!("data:{mime_type};base64,{d}")}})),
            ContentBlock::Image { uri: Some(u), .. } => {
                Some(json!({"type": "image_url", "image_url": {"url": u}}))
            }
            ContentBlock::Resource { uri, text, .. } => {
                Some(json!({"type": "text", "text": resource_text(uri, text.as_deref())}))
            }
            _ => None,
        })
        .collect()
}

/// Renders the request body.
pub(crate) fn request_body(req: &ChatRequest) -> Value {
    let mut messages = Vec::new();
    if let Some(system) = &req.system {
        messages.push(json!({"role": "system", "content": system}));
    }
    messages.extend(
        req.messages
            .iter()
            .filter(|m| m.role != Role::Assistant || m.status == MessageStatus::Completed)
            .map(render_message),
    );
    let mut body = json!({
        "model": req.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": req.max_tokens,
    });
    if let Some(effort) = &req.reasoning_effort {
        body["reasoning_effort"] = json!(effort);
    }
    if !req.tools.is_empty() {
        body["tools"] = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.parameters}})
            })
            .collect();
    }
    body
}

fn authed(rb: reqwest::RequestBuilder, cfg: &ProviderConfig) -> reqwest::RequestBuilder {
    match &cfg.api_key {
        Some(k) if !k.is_empty() => rb.bearer_auth(k),
        _ => rb,
    }
}

/// Tool-call accumulation keyed by the stream's `index`.
#[derive(Default)]
struct PendingCall {
    id: String,
    name: String,
    arguments: String,
}

pub(crate) async fn stream_chat(
    http: &reqwest::Client,
    cfg: &ProviderConfig,
    req: &ChatRequest,
    on_delta: &mut (dyn FnMut(StreamDelta) + Send),
) -> Result<ChatOutcome, ChatFailure> {
    let fail = |error: ProviderError, partial: ChatOutcome| ChatFailure { error, partial };
    let resp = send_chat(
        authed(http.post(join_url(&cfg.base_url, "chat/completions")), cfg)
            .json(&request_body(req)),
    )
    .await
    .map_err(|e| fail(e, ChatOutcome::default()))?;
    let mut decoder = Decoder::default();
    let mut done = false;
    let mut stream = events(resp);
    while let Some(ev) = stream.next().await {
        let ev = match ev {
            Ok(ev) => ev,
            Err(e) => return Err(fail(e, decoder.finish())),
        };
        if ev.data.trim() == "[DONE]" {
            done = true;
            break;
        }
        let chunk = parse_json(&ev.data).and_then(|v| decoder.chunk(&v, on_delta));
        if let Err(e) = chunk {
            return Err(fail(e, decoder.finish()));
        }
    }
    let out = decoder.finish();
    if !done && out.stop_reason.is_none() {
        return Err(fail(
            ProviderError::StreamCut("no finish_reason and no [DONE]".into()),
            out,
        ));
    }
    Ok(out)
}

/// Folds streamed chunks into an outcome: text and reasoning as they come, tool
/// calls assembled by their `index` across chunks.
#[derive(Default)]
struct Decoder {
    out: ChatOutcome,
    calls: Vec<PendingCall>,
}

impl Decoder {
    /// Takes one parsed chunk; an in-stream `error` object is a failure.
    fn chunk(
        &mut self,
        v: &Value,
        on_delta: &mut (dyn FnMut(StreamDelta) + Send),
    ) -> Result<(), ProviderError> {
        let (out, calls) = (&mut self.out, &mut self.calls);
        if let Some(err) = v.get("error") {
            return Err(ProviderError::Status {
                status: err["code"].as_u64().unwrap_or(500) as u16,
                body: err.to_string(),
                retry_after: None,
            });
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            let prompt = u["prompt_tokens"].as_u64().unwrap_or(0);
            let completion = u["completion_tokens"].as_u64().unwrap_or(0);
            out.usage = Some(Usage {
                prompt_tokens: prompt,
                completion_tokens: completion,
                total_tokens: u["total_tokens"].as_u64().unwrap_or(prompt + completion),
            });
        }
        for choice in v["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            for key in ["reasoning_content", "reasoning"] {
                if let Some(t) = delta[key].as_str().filter(|t| !t.is_empty()) {
                    out.push_thinking(t);
                    on_delta(StreamDelta::Thinking(t.to_string()));
                }
            }
            if let Some(t) = delta["content"].as_str().filter(|t| !t.is_empty()) {
                out.push_text(t);
                on_delta(StreamDelta::Text(t.to_string()));
            }
            for tc in delta["tool_calls"].as_array().into_iter().flatten() {
                let idx = tc["index"].as_u64().unwrap_or(calls.len() as u64) as usize;
                while calls.len() <= idx {
                    calls.push(PendingCall::default());
                }
                let slot = &mut calls[idx];
                if let Some(id) = tc["id"].as_str() {
                    slot.id = id.to_string();
                }
                if let Some(name) = tc["function"]["name"].as_str() {
                    slot.name.push_str(name);
                    on_delta(StreamDelta::ToolCallStarted {
                        id: slot.id.clone(),
                        name: slot.name.clone(),
                    });
                }
                if let Some(args) = tc["function"]["arguments"].as_str() {
                    slot.arguments.push_str(args);
                }
            }
            if let Some(r) = choice["finish_reason"].as_str() {
                out.stop_reason = Some(r.to_string());
            }
        }
        Ok(())
    }

    /// The outcome so far, with the assembled tool calls.
    fn finish(&mut self) -> ChatOutcome {
        finish(
            std::mem::take(&mut self.out),
            std::mem::take(&mut self.calls),
        )
    }
}

fn finish(mut out: ChatOutcome, calls: Vec<PendingCall>) -> ChatOutcome {
    for c in calls {
        let input = if c.arguments.trim().is_empty() {
            Value::Object(Default::default())
        } else {
            serde_json::from_str(&c.arguments).unwrap_or(Value::String(c.arguments.clone()))
        };
        out.blocks.push(ContentBlock::ToolUse {
            id: c.id.clone(),
            name: c.name.clone(),
            input,
        });
        out.tool_calls.push(ToolCall {
            id: c.id,
            name: c.name,
            arguments: c.arguments,
        });
    }
    out
}

pub(crate) async fn list_models(
    http: &reqwest::Client,
    cfg: &ProviderConfig,
) -> Result<Vec<String>, ProviderError> {
    model_ids(authed(http.get(join_url(&cfg.base_url, "models")), cfg)).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(role: Role, content: &str) -> Message {
        Message::unstored(role, content)
    }

    #[test]
    fn tools_calls_and_results_render_in_chat_completions_shape() {
        let mut call = message(Role::Assistant, "");
        call.tool_calls.push(ToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments: r#"{"path":"a.txt"}"#.into(),
        });
        let mut result = message(Role::Tool, "hello");
        result.tool_call_id = Some("call_1".into());
        let req = ChatRequest::read_file_example(vec![message(Role::User, "go"), call, result]);
        let body = request_body(&req);
        assert_eq!(
            body["tools"][0],
            json!({"type": "function", "function": {"name": "read_file",
                   "description": "Reads", "parameters": {"type": "object"}}})
        );
        let m = &body["messages"];
        assert_eq!(m[0]["role"], "system");
        assert_eq!(m[2]["content"], Value::Null);
        assert_eq!(m[2]["tool_calls"][0]["function"]["name"], "read_file");
        assert_eq!(
            m[2]["tool_calls"][0]["function"]["arguments"],
            r#"{"path":"a.txt"}"#
        );
        assert_eq!(
            m[3],
            json!({"role": "tool", "tool_call_id": "call_1", "content": "hello"})
        );
        assert!(request_body(&req).get("reasoning_effort").is_none());
        let plain = ChatRequest {
            tools: Vec::new(),
            reasoning_effort: Some("high".into()),
            ..req
        };
        assert!(request_body(&plain).get("tools").is_none());
        assert_eq!(request_body(&plain)["reasoning_effort"], "high");
    }

    #[test]
    fn a_user_message_with_images_is_sent_as_parts_in_order() {
        let mut with_image = message(Role::User, "look\n[image: image/png]");
        with_image.content_blocks = vec![
            ContentBlock::Text {
                text: "look".into(),
            },
            ContentBlock::Image {
                mime_type: "image/png".into(),
                data: Some("iVBORw0=".into()),
                uri: None,
            },
            ContentBlock::Resource {
                uri: "file:///w/a.rs".into(),
                text: Some("fn a() {}".into()),
                blob: None,
                mime_type: None,
            },
        ];
        let mut with_resource = message(Role::User, "text form");
        with_resource.content_blocks = vec![ContentBlock::Resource {
            uri: "file:///w/b.rs".into(),
            text: None,
            blob: None,
            mime_type: None,
        }];
        let body = request_body(&ChatRequest::read_file_example(vec![
            with_image,
            with_resource,
        ]));
        let m = &body["messages"];
        assert_eq!(
            m[1]["content"],
            json!([
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0="}},
                {"type": "text", "text": "<resource uri=\"file:///w/a.rs\">\nfn a() {}\n</resource>"}
            ])
        );
        assert_eq!(m[2]["content"], "text form", "no image: the text as before");
    }

    #[test]
    fn streamed_tool_calls_are_assembled_across_chunks() {
        let chunks = [
            json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": "Let me look."}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "call_a",
                "type": "function", "function": {"name": "read_file", "arguments": ""}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                "function": {"arguments": "{\"pa"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
                "function": {"arguments": "th\":\"a.txt\"}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 1, "id": "call_b",
                "function": {"name": "list_dir", "arguments": "{}"}}]}}]}),
            json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}}),
        ];
        let mut decoder = Decoder::default();
        let mut started = Vec::new();
        let mut on_delta = |d: StreamDelta| {
            if let StreamDelta::ToolCallStarted { id, name } = d {
                started.push((id, name));
            }
        };
        for c in &chunks {
            decoder.chunk(c, &mut on_delta).expect("chunk");
        }
        let out = decoder.finish();
        assert_eq!(
            started,
            vec![
                ("call_a".to_string(), "read_file".to_string()),
                ("call_b".to_string(), "list_dir".to_string())
            ]
        );
        assert_eq!(out.tool_calls.len(), 2);
        assert_eq!(out.tool_calls[0].id, "call_a");
        assert_eq!(out.tool_calls[0].arguments, r#"{"path":"a.txt"}"#);
        assert_eq!(out.tool_calls[1].name, "list_dir");
        assert_eq!(out.stop_reason.as_deref(), Some("tool_calls"));
        assert_eq!(out.usage.map(|u| u.total_tokens), Some(10));
        assert!(matches!(&out.blocks[0], ContentBlock::Text { text } if text == "Let me look."));
    }
}
