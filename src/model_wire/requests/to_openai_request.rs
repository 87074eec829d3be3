//! An Anthropic Messages request as an OpenAI Chat Completions request: `system`
//! becomes the first message, `tool_use` blocks become tool calls, `tool_result`
//! blocks become `tool` messages, images become `image_url` parts, and a
//! streamed request asks for the usage chunk (`stream_options.include_usage`).

use crate::model_wire::error::TranslateError;
use crate::model_wire::extensions;
use crate::model_wire::reasons::tool_choice_to_openai;
use serde_json::{Map, Value, json};

/// Translates `body` (an Anthropic request) for an OpenAI-compatible provider
/// serving `model`.
pub fn anthropic_request_to_openai(body: &Value, model: &str) -> Result<Value, TranslateError> {
    let mut messages = Vec::new();
    match &body["system"] {
        Value::Null => {}
        Value::String(s) => messages.push(json!({"role": "system", "content": s})),
        Value::Array(blocks) => {
            let text = blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n\n");
            messages.push(json!({"role": "system", "content": text}));
        }
        _ => {
            return Err(TranslateError::Invalid(
                "`system` must be a string or blocks".into(),
            ));
        }
    }
    for (i, m) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        match m["role"].as_str() {
            Some("user") => user_messages(&m["content"], i, &mut messages)?,
            Some("assistant") => messages.push(assistant_message(&m["content"], i)?),
            other => {
                return Err(TranslateError::Invalid(format!(
                    "messages[{i}]: role {other:?} is not user or assistant"
                )));
            }
        }
    }
    let mut out = Map::new();
    out.insert("model".into(), json!(model));
    out.insert("messages".into(), Value::Array(messages));
    if let Some(max) = body["max_tokens"].as_u64() {
        out.insert("max_tokens".into(), json!(max));
    }
    for key in ["temperature", "top_p"] {
        if let Some(v) = body[key].as_f64() {
            out.insert(key.into(), json!(v));
        }
    }
    if let Some(stops) = body["stop_sequences"].as_array().filter(|s| !s.is_empty()) {
        out.insert("stop".into(), Value::Array(stops.clone()));
    }
    if body["stream"].as_bool() == Some(true) {
        out.insert("stream".into(), json!(true));
        out.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if let Some(tools) = body["tools"].as_array().filter(|t| !t.is_empty()) {
        out.insert("tools".into(), Value::Array(tools_of(tools)?));
    }
    let (choice, parallel) = tool_choice_to_openai(body.get("tool_choice"))?;
    if let Some(c) = choice {
        out.insert("tool_choice".into(), c);
    }
    if let Some(p) = parallel {
        out.insert("parallel_tool_calls".into(), json!(p));
    }
    if let Some(user) = body["metadata"]["user_id"].as_str() {
        out.insert("user".into(), json!(user));
    }
    Ok(Value::Object(out))
}

/// A user turn as OpenAI messages: its tool results first (one `tool` message
/// each, in order), then the rest of its content as one user message.
fn user_messages(content: &Value, i: usize, out: &mut Vec<Value>) -> Result<(), TranslateError> {
    let blocks = match content {
        Value::String(s) => {
            out.push(json!({"role": "user", "content": s}));
            return Ok(());
        }
        Value::Array(b) => b,
        _ => {
            return Err(TranslateError::Invalid(format!(
                "messages[{i}].content must be a string or an array of blocks"
            )));
        }
    };
    let mut parts = Vec::new();
    for b in blocks {
        match b["type"].as_str() {
            Some("tool_result") => {
                let mut m = json!({
                    "role": "tool",
                    "tool_call_id": b["tool_use_id"].as_str().unwrap_or_default(),
                    "content": tool_result_text(&b["content"], i)?,
                });
                extensions::mark_tool_error(&mut m, b["is_error"].as_bool() == Some(true));
                out.push(m);
            }
            Some("text") => {
                parts.push(json!({"type": "text", "text": b["text"].as_str().unwrap_or_default()}))
            }
            Some("image") => parts.push(image_part(&b["source"], i)?),
            other => {
                return Err(TranslateError::Unsupported(format!(
                    "messages[{i}]: a {other:?} block cannot be sent to an OpenAI-compatible provider"
                )));
            }
        }
    }
    if parts.is_empty() {
        return Ok(());
    }
    let only_text = parts.iter().all(|p| p["type"] == "text");
    let content = if only_text {
        json!(
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<String>()
        )
    } else {
        Value::Array(parts)
    };
    out.push(json!({"role": "user", "content": content}));
    Ok(())
}

/// A tool result's content as text (OpenAI tool messages carry text only).
fn tool_result_text(content: &Value, i: usize) -> Result<String, TranslateError> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b["type"].as_str() {
                Some("text") => Ok(b["text"].as_str().unwrap_or_default()),
                other => Err(TranslateError::Unsupported(format!(
                    "messages[{i}]: a {other:?} block in a tool result cannot be sent to an \
                     OpenAI-compatible provider"
                ))),
            })
            .collect(),
        _ => Err(TranslateError::Invalid(format!(
            "messages[{i}]: a tool result's content must be a string or blocks"
        ))),
    }
}

/// An Anthropic image source as an `image_url` part.
fn image_part(source: &Value, i: usize) -> Result<Value, TranslateError> {
    let url = match source["type"].as_str() {
        Some("base64") => format!(
            "data:{};base64,{}",
            source["media_type"].as_str().unwrap_or("image/png"),
            source["data"].as_str().unwrap_or_default()
        ),
        Some("url") => source["url"].as_str().unwrap_or_default().to_string(),
        other => {
            return Err(TranslateError::Unsupported(format!(
                "messages[{i}]: an image source of type {other:?} cannot be sent to an \
                 OpenAI-compatible provider"
            )));
        }
    };
    Ok(json!({"type": "image_url", "image_url": {"url": url}}))
}

/// An assistant turn as one OpenAI message: its text, and its `tool_use` blocks
/// as tool calls. Thinking blocks have no OpenAI form: a turn with one keeps
/// all its blocks in the `content_blocks` extension (taken off again before an
/// OpenAI-compatible provider is sent the body).
fn assistant_message(content: &Value, i: usize) -> Result<Value, TranslateError> {
    let blocks = match content {
        Value::String(s) => return Ok(json!({"role": "assistant", "content": s})),
        Value::Array(b) => b,
        _ => {
            return Err(TranslateError::Invalid(format!(
                "messages[{i}].content must be a string or an array of blocks"
            )));
        }
    };
    let mut text = String::new();
    let mut calls = Vec::new();
    for b in blocks {
        match b["type"].as_str() {
            Some("text") => text.push_str(b["text"].as_str().unwrap_or_default()),
            Some("tool_use") => calls.push(tool_use_as_openai_call(b)),
            Some("thinking" | "redacted_thinking") => {}
            other => {
                return Err(TranslateError::Unsupported(format!(
                    "messages[{i}]: a {other:?} block cannot be sent to an OpenAI-compatible provider"
                )));
            }
        }
    }
    let mut m = json!({
        "role": "assistant",
        "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) },
    });
    if !calls.is_empty() {
        m["tool_calls"] = Value::Array(calls);
    }
    if let Some(kept) = extensions::content_blocks_of(blocks) {
        m[extensions::CONTENT_BLOCKS] = kept;
    }
    Ok(m)
}

/// Anthropic custom tools as OpenAI function tools.
/// An Anthropic `tool_use` block as an OpenAI `tool_calls` entry.
pub fn tool_use_as_openai_call(block: &Value) -> Value {
    json!({
        "id": block["id"].as_str().unwrap_or_default(),
        "type": "function",
        "function": {
            "name": block["name"].as_str().unwrap_or_default(),
            "arguments": block["input"].to_string(),
        },
    })
}

fn tools_of(tools: &[Value]) -> Result<Vec<Value>, TranslateError> {
    tools
        .iter()
        .map(|t| {
            if !matches!(t["type"].as_str(), None | Some("custom")) {
                return Err(TranslateError::Unsupported(format!(
                    "server tool {} cannot be sent to an OpenAI-compatible provider",
                    t["type"]
                )));
            }
            let mut function = json!({
                "name": t["name"].as_str().unwrap_or_default(),
                "parameters": t["input_schema"].clone(),
            });
            if let Some(d) = t["description"].as_str() {
                function["description"] = json!(d);
            }
            Ok(json!({"type": "function", "function": function}))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model_wire::requests::fixtures::openai_round_trip_messages;

    #[test]
    fn translates_a_full_tool_round_trip() {
        let body = json!({
            "model": "claude",
            "system": [{"type": "text", "text": "be brief"}],
            "max_tokens": 64,
            "temperature": 0.2,
            "stop_sequences": ["END"],
            "stream": true,
            "tools": [{"name": "look", "description": "looks",
                       "input_schema": {"type": "object"}}],
            "tool_choice": {"type": "tool", "name": "look", "disable_parallel_tool_use": true},
            "metadata": {"user_id": "u1"},
            "messages": [
                {"role": "user", "content": [
                    {"type": "text", "text": "what is in"},
                    {"type": "image", "source": {"type": "base64",
                        "media_type": "image/png", "data": "AAAA"}},
                ]},
                {"role": "assistant", "content": [
                    {"type": "thinking", "thinking": "hm", "signature": "s"},
                    {"type": "tool_use", "id": "toolu_1", "name": "look", "input": {"at": "x"}},
                ]},
                {"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1",
                     "content": [{"type": "text", "text": "a cat"}]},
                    {"type": "text", "text": "thanks"},
                ]},
            ],
        });
        let mut out = anthropic_request_to_openai(&body, "gpt").expect("translates");
        assert_eq!(
            out["messages"][2]["content_blocks"], body["messages"][1]["content"],
            "the thinking turn keeps its blocks for the record"
        );
        extensions::strip(&mut out);
        assert_eq!(
            out,
            json!({
                "model": "gpt",
                "max_tokens": 64,
                "temperature": 0.2,
                "stop": ["END"],
                "stream": true,
                "stream_options": {"include_usage": true},
                "tools": [{"type": "function", "function": {
                    "name": "look", "description": "looks", "parameters": {"type": "object"}}}],
                "tool_choice": {"type": "function", "function": {"name": "look"}},
                "parallel_tool_calls": false,
                "user": "u1",
                "messages": openai_round_trip_messages("toolu_1"),
            })
        );
    }

    #[test]
    fn plain_strings_pass_and_unknown_blocks_are_refused() {
        let out = anthropic_request_to_openai(
            &json!({"system": "s", "max_tokens": 5,
                    "messages": [{"role": "user", "content": "hi"}]}),
            "m",
        )
        .expect("translates");
        assert_eq!(
            out["messages"],
            json!([{"role": "system", "content": "s"}, {"role": "user", "content": "hi"}])
        );
        assert!(out.get("stream_options").is_none());
        for bad in [
            json!({"messages": [{"role": "user", "content": [{"type": "document"}]}]}),
            json!({"messages": [{"role": "system", "content": "x"}]}),
            json!({"messages": [], "tools": [{"type": "web_search_20250305", "name": "w"}]}),
        ] {
            assert!(anthropic_request_to_openai(&bad, "m").is_err(), "{bad}");
        }
    }
}
