//! An OpenAI Chat Completions request as an Anthropic Messages request: system
//! and developer messages become `system`, tool calls become `tool_use` blocks,
//! tool messages become `tool_result` blocks in the next user turn, consecutive
//! turns of one role are merged, and the sampling fields are renamed.

use crate::model_wire::error::TranslateError;
use crate::model_wire::extensions;
use crate::model_wire::reasons::tool_choice_to_anthropic;
use serde_json::{Map, Value, json};

/// The output cap sent when an OpenAI client gives none (Anthropic requires one).
pub const DEFAULT_MAX_TOKENS: u64 = 4096;

/// Translates `body` (an OpenAI request) for an Anthropic provider serving `model`.
pub fn openai_request_to_anthropic(body: &Value, model: &str) -> Result<Value, TranslateError> {
    if body["n"].as_u64().is_some_and(|n| n > 1) {
        return Err(TranslateError::Unsupported(
            "`n` above 1 cannot be sent to an Anthropic provider".into(),
        ));
    }
    let mut system: Vec<String> = Vec::new();
    let mut turns: Vec<(String, Vec<Value>)> = Vec::new();
    for (i, m) in body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let role = m["role"].as_str().unwrap_or_default();
        let blocks = match role {
            "system" | "developer" => {
                system.push(text_of(&m["content"], i)?);
                continue;
            }
            "user" => user_blocks(&m["content"], i)?,
            "assistant" => assistant_blocks(m, i)?,
            "tool" => {
                let mut result = json!({
                    "type": "tool_result",
                    "tool_use_id": m["tool_call_id"].as_str().unwrap_or_default(),
                    "content": text_of(&m["content"], i)?,
                });
                if extensions::is_tool_error(m) {
                    result["is_error"] = json!(true);
                }
                vec![result]
            }
            other => {
                return Err(TranslateError::Unsupported(format!(
                    "messages[{i}]: role {other:?} cannot be sent to an Anthropic provider"
                )));
            }
        };
        let role = if role == "assistant" {
            "assistant"
        } else {
            "user"
        };
        match turns.last_mut() {
            Some((r, b)) if r == role => b.extend(blocks),
            _ => turns.push((role.to_string(), blocks)),
        }
    }
    let messages: Vec<Value> = turns
        .into_iter()
        .map(|(role, content)| json!({"role": role, "content": content}))
        .collect();
    let mut out = Map::new();
    out.insert("model".into(), json!(model));
    out.insert("messages".into(), Value::Array(messages));
    let max = body["max_completion_tokens"]
        .as_u64()
        .or_else(|| body["max_tokens"].as_u64())
        .unwrap_or(DEFAULT_MAX_TOKENS);
    out.insert("max_tokens".into(), json!(max));
    if !system.is_empty() {
        out.insert("system".into(), json!(system.join("\n\n")));
    }
    if let Some(t) = body["temperature"].as_f64() {
        out.insert("temperature".into(), json!(t.min(1.0)));
    }
    if let Some(p) = body["top_p"].as_f64() {
        out.insert("top_p".into(), json!(p));
    }
    match &body["stop"] {
        Value::String(s) => {
            out.insert("stop_sequences".into(), json!([s]));
        }
        Value::Array(a) if !a.is_empty() => {
            out.insert("stop_sequences".into(), Value::Array(a.clone()));
        }
        _ => {}
    }
    if body["stream"].as_bool() == Some(true) {
        out.insert("stream".into(), json!(true));
    }
    if let Some(tools) = body["tools"].as_array().filter(|t| !t.is_empty()) {
        out.insert("tools".into(), Value::Array(tools_of(tools)?));
    }
    if let Some(choice) = tool_choice_to_anthropic(
        body.get("tool_choice"),
        body["parallel_tool_calls"].as_bool(),
    )? {
        out.insert("tool_choice".into(), choice);
    }
    if let Some(user) = body["user"].as_str() {
        out.insert("metadata".into(), json!({"user_id": user}));
    }
    Ok(Value::Object(out))
}

/// The text of a message content: a string, or the text parts joined.
fn text_of(content: &Value, i: usize) -> Result<String, TranslateError> {
    match content {
        Value::Null => Ok(String::new()),
        Value::String(s) => Ok(s.clone()),
        Value::Array(parts) => {
            let mut out = String::new();
            for p in parts {
                match p["type"].as_str() {
                    Some("text") => out.push_str(p["text"].as_str().unwrap_or_default()),
                    other => {
                        return Err(TranslateError::Unsupported(format!(
                            "messages[{i}]: a {other:?} part cannot appear here"
                        )));
                    }
                }
            }
            Ok(out)
        }
        _ => Err(TranslateError::Invalid(format!(
            "messages[{i}].content must be a string or an array of parts"
        ))),
    }
}

/// A user message's content as Anthropic blocks (text and images).
fn user_blocks(content: &Value, i: usize) -> Result<Vec<Value>, TranslateError> {
    let Value::Array(parts) = content else {
        return Ok(vec![json!({"type": "text", "text": text_of(content, i)?})]);
    };
    parts
        .iter()
        .map(|p| match p["type"].as_str() {
            Some("text") => {
                Ok(json!({"type": "text", "text": p["text"].as_str().unwrap_or_default()}))
            }
            Some("image_url") => image_block(p["image_url"]["url"].as_str().unwrap_or_default(), i),
            other => Err(TranslateError::Unsupported(format!(
                "messages[{i}]: a {other:?} part cannot be sent to an Anthropic provider"
            ))),
        })
        .collect()
}

/// An image URL (a `data:` URL or a remote one) as an Anthropic image block.
fn image_block(url: &str, i: usize) -> Result<Value, TranslateError> {
    if let Some(rest) = url.strip_prefix("data:") {
        let Some((media, data)) = rest.split_once(";base64,") else {
            return Err(TranslateError::Invalid(format!(
                "messages[{i}]: an image data URL must be base64"
            )));
        };
        return Ok(json!({"type": "image", "source": {
            "type": "base64", "media_type": media, "data": data,
        }}));
    }
    if url.is_empty() {
        return Err(TranslateError::Invalid(format!(
            "messages[{i}]: an image_url part has no url"
        )));
    }
    Ok(json!({"type": "image", "source": {"type": "url", "url": url}}))
}

/// An assistant message as blocks: its text, then one `tool_use` per tool call;
/// or, when it carries the `content_blocks` extension, those blocks.
fn assistant_blocks(m: &Value, i: usize) -> Result<Vec<Value>, TranslateError> {
    if let Some(blocks) = extensions::anthropic_blocks(m, i)? {
        return Ok(blocks);
    }
    let mut blocks = Vec::new();
    let text = match &m["content"] {
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str().or_else(|| p["refusal"].as_str()))
            .collect::<String>(),
        other => text_of(other, i)?,
    };
    if !text.is_empty() {
        blocks.push(json!({"type": "text", "text": text}));
    }
    for call in m["tool_calls"].as_array().into_iter().flatten() {
        let args = call["function"]["arguments"].as_str().unwrap_or("{}");
        let input: Value = if args.trim().is_empty() {
            json!({})
        } else {
            serde_json::from_str(args).map_err(|e| {
                TranslateError::Invalid(format!(
                    "messages[{i}]: tool call arguments are not JSON: {e}"
                ))
            })?
        };
        if !input.is_object() {
            return Err(TranslateError::Invalid(format!(
                "messages[{i}]: tool call arguments must be a JSON object"
            )));
        }
        blocks.push(json!({
            "type": "tool_use",
            "id": call["id"].as_str().unwrap_or_default(),
            "name": call["function"]["name"].as_str().unwrap_or_default(),
            "input": input,
        }));
    }
    Ok(blocks)
}

/// OpenAI function tools as Anthropic tools.
fn tools_of(tools: &[Value]) -> Result<Vec<Value>, TranslateError> {
    tools
        .iter()
        .map(|t| {
            if t["type"] != "function" {
                return Err(TranslateError::Unsupported(format!(
                    "tool type {} cannot be sent to an Anthropic provider",
                    t["type"]
                )));
            }
            let f = &t["function"];
            let mut tool = json!({
                "name": f["name"].as_str().unwrap_or_default(),
                "input_schema": if f["parameters"].is_object() {
                    f["parameters"].clone()
                } else {
                    json!({"type": "object", "properties": {}})
                },
            });
            if let Some(d) = f["description"].as_str() {
                tool["description"] = json!(d);
            }
            Ok(tool)
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
            "model": "fix/gpt",
            "messages": openai_round_trip_messages("call_1"),
            "max_completion_tokens": 50,
            "temperature": 1.5,
            "top_p": 0.9,
            "stop": "END",
            "stream": true,
            "stream_options": {"include_usage": true},
            "tools": [{"type": "function", "function": {
                "name": "look", "description": "looks", "parameters": {"type": "object"}}}],
            "tool_choice": "required",
            "user": "u1",
        });
        let out = openai_request_to_anthropic(&body, "claude").expect("translates");
        assert_eq!(
            out,
            json!({
                "model": "claude",
                "system": "be brief",
                "max_tokens": 50,
                "temperature": 1.0,
                "top_p": 0.9,
                "stop_sequences": ["END"],
                "stream": true,
                "tools": [{"name": "look", "description": "looks",
                           "input_schema": {"type": "object"}}],
                "tool_choice": {"type": "any"},
                "metadata": {"user_id": "u1"},
                "messages": [
                    {"role": "user", "content": [
                        {"type": "text", "text": "what is in"},
                        {"type": "image", "source": {"type": "base64",
                            "media_type": "image/png", "data": "AAAA"}},
                    ]},
                    {"role": "assistant", "content": [
                        {"type": "tool_use", "id": "call_1", "name": "look",
                         "input": {"at": "x"}},
                    ]},
                    {"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": "call_1", "content": "a cat"},
                        {"type": "text", "text": "thanks"},
                    ]},
                ],
            })
        );
    }

    #[test]
    fn defaults_and_refusals() {
        let out = openai_request_to_anthropic(
            &json!({"messages": [{"role": "user", "content": "hi"}], "stop": ["a", "b"]}),
            "m",
        )
        .expect("translates");
        assert_eq!(out["max_tokens"], DEFAULT_MAX_TOKENS);
        assert_eq!(out["stop_sequences"], json!(["a", "b"]));
        assert_eq!(out["messages"][0]["content"][0]["text"], "hi");
        assert!(out.get("system").is_none());
        for bad in [
            json!({"messages": [], "n": 2}),
            json!({"messages": [{"role": "function", "content": "x"}]}),
            json!({"messages": [{"role": "user", "content": [{"type": "input_audio"}]}]}),
            json!({"messages": [{"role": "assistant", "tool_calls": [
                {"id": "c", "function": {"name": "f", "arguments": "not json"}}]}]}),
        ] {
            assert!(openai_request_to_anthropic(&bad, "m").is_err(), "{bad}");
        }
        let url = openai_request_to_anthropic(
            &json!({"messages": [{"role": "user", "content": [
                {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}]}),
            "m",
        )
        .expect("translates");
        assert_eq!(
            url["messages"][0]["content"][0]["source"],
            json!({"type": "url", "url": "https://x/y.png"})
        );
    }
}
