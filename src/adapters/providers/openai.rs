//! OpenAI-compatible Chat Completions, streaming with usage.

use super::sse::{events, parse_json};
use super::{
    ChatFailure, ChatOutcome, ChatRequest, ProviderConfig, ProviderError, StreamDelta, join_url,
    model_ids, status_error,
};
use crate::domain::message::{ContentBlock, Message, MessageStatus, Role, ToolCall};
use crate::domain::provider_call::Usage;
use futures::StreamExt;
use serde_json::{Value, json};

fn render_message(m: &Message) -> Value {
    match m.role {
        Role::Assistant => {
            let mut v = json!({"role": "assistant", "content": m.content});
            if !m.tool_calls.is_empty() {
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
        Role::User => json!({"role": "user", "content": m.content}),
    }
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
    json!({
        "model": req.model,
        "messages": messages,
        "stream": true,
        "stream_options": {"include_usage": true},
        "max_tokens": req.max_tokens,
    })
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
    let mut out = ChatOutcome::default();
    let fail = |error: ProviderError, partial: ChatOutcome| ChatFailure { error, partial };
    let resp = authed(http.post(join_url(&cfg.base_url, "chat/completions")), cfg)
        .json(&request_body(req))
        .send()
        .await
        .map_err(|e| fail(e.into(), ChatOutcome::default()))?;
    if !resp.status().is_success() {
        return Err(fail(status_error(resp).await, out));
    }
    let mut calls: Vec<PendingCall> = Vec::new();
    let mut done = false;
    let mut stream = events(resp);
    while let Some(ev) = stream.next().await {
        let ev = match ev {
            Ok(ev) => ev,
            Err(e) => return Err(fail(e, finish(out, calls))),
        };
        if ev.data.trim() == "[DONE]" {
            done = true;
            break;
        }
        let v = match parse_json(&ev.data) {
            Ok(v) => v,
            Err(e) => return Err(fail(e, finish(out, calls))),
        };
        if let Some(err) = v.get("error") {
            let e = ProviderError::Status {
                status: err["code"].as_u64().unwrap_or(500) as u16,
                body: err.to_string(),
                retry_after: None,
            };
            return Err(fail(e, finish(out, calls)));
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
    }
    let out = finish(out, calls);
    if !done && out.stop_reason.is_none() {
        return Err(fail(
            ProviderError::StreamCut("no finish_reason and no [DONE]".into()),
            out,
        ));
    }
    Ok(out)
}

fn finish(mut out: ChatOutcome, calls: Vec<PendingCall>) -> ChatOutcome {
    for c in calls {
        let input =
            serde_json::from_str(&c.arguments).unwrap_or(Value::String(c.arguments.clone()));
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
