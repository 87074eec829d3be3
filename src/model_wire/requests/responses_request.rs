//! An OpenAI Responses API request (`POST /v1/responses`) as an OpenAI Chat
//! Completions request, the gateway's pivot format: `instructions` and
//! system/developer messages become system messages, `function_call` items
//! become an assistant message's `tool_calls`, `function_call_output` items
//! become `tool` messages, flat function tools become Chat Completions tools
//! and the sampling fields are renamed. Reasoning items, built-in tools and
//! the fields that only make sense to OpenAI's own store are left out.

use crate::model_wire::answers::answer::text_of;
use crate::model_wire::error::TranslateError;
use serde_json::{Map, Value, json};

/// Translates `body` (a Responses request) into a Chat Completions request for
/// `model`. A stream asks for the closing usage chunk (a Responses stream ends
/// with the usage).
pub fn responses_request_to_openai(body: &Value, model: &str) -> Result<Value, TranslateError> {
    let Some(obj) = body.as_object() else {
        return Err(TranslateError::Invalid(
            "the request body must be a JSON object".into(),
        ));
    };
    if !obj.get("previous_response_id").is_none_or(Value::is_null) {
        return Err(TranslateError::Unsupported(
            "`previous_response_id` is not supported: Hecate does not store responses by id; \
             send the whole conversation in `input` (and `store: false`)"
                .into(),
        ));
    }
    if !obj.get("conversation").is_none_or(Value::is_null) {
        return Err(TranslateError::Unsupported(
            "`conversation` is not supported: send the whole conversation in `input`".into(),
        ));
    }
    let mut messages: Vec<Value> = Vec::new();
    match obj.get("instructions") {
        None | Some(Value::Null) => {}
        Some(Value::String(s)) => {
            if !s.is_empty() {
                messages.push(json!({"role": "system", "content": s}));
            }
        }
        Some(_) => {
            return Err(TranslateError::Invalid(
                "`instructions` must be a string".into(),
            ));
        }
    }
    match obj.get("input") {
        Some(Value::String(s)) => messages.push(json!({"role": "user", "content": s})),
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                push_item(&mut messages, item, i)?;
            }
        }
        None | Some(Value::Null) => {
            return Err(TranslateError::Invalid(
                "`input` is a required field (a string or a list of items)".into(),
            ));
        }
        Some(_) => {
            return Err(TranslateError::Invalid(
                "`input` must be a string or a list of items".into(),
            ));
        }
    }
    let mut out = Map::new();
    out.insert("model".into(), json!(model));
    out.insert("messages".into(), Value::Array(messages));
    let tools = tools_of(obj.get("tools"))?;
    let has_tools = !tools.is_empty();
    if has_tools {
        out.insert("tools".into(), Value::Array(tools));
        if let Some(choice) = tool_choice_of(obj.get("tool_choice"))? {
            out.insert("tool_choice".into(), choice);
        }
        if let Some(p) = obj.get("parallel_tool_calls").filter(|v| v.is_boolean()) {
            out.insert("parallel_tool_calls".into(), p.clone());
        }
    }
    match obj.get("max_output_tokens") {
        None | Some(Value::Null) => {}
        Some(v) if v.as_u64().is_some_and(|n| n > 0) => {
            out.insert("max_completion_tokens".into(), v.clone());
        }
        Some(_) => {
            return Err(TranslateError::Invalid(
                "`max_output_tokens` must be a positive integer".into(),
            ));
        }
    }
    for field in ["temperature", "top_p"] {
        match obj.get(field) {
            None | Some(Value::Null) => {}
            Some(v) if v.is_number() => {
                out.insert(field.into(), v.clone());
            }
            Some(_) => {
                return Err(TranslateError::Invalid(format!(
                    "`{field}` must be a number"
                )));
            }
        }
    }
    if let Some(u) = obj.get("user").filter(|v| v.is_string()) {
        out.insert("user".into(), u.clone());
    }
    if obj.get("stream").and_then(Value::as_bool) == Some(true) {
        out.insert("stream".into(), json!(true));
        out.insert("stream_options".into(), json!({"include_usage": true}));
    }
    Ok(Value::Object(out))
}

/// Appends one input item to the Chat Completions messages.
fn push_item(messages: &mut Vec<Value>, item: &Value, i: usize) -> Result<(), TranslateError> {
    if !item.is_object() {
        return Err(TranslateError::Invalid(format!(
            "`input[{i}]` must be an object"
        )));
    }
    let kind = match item.get("type") {
        None | Some(Value::Null) if item.get("role").is_some() => "message",
        Some(Value::String(t)) => t.as_str(),
        _ => {
            return Err(TranslateError::Invalid(format!(
                "`input[{i}].type` is required"
            )));
        }
    };
    match kind {
        "message" => {
            let role = match item["role"].as_str() {
                Some("user") => "user",
                Some("assistant") => "assistant",
                Some("system" | "developer") => "system",
                other => {
                    return Err(TranslateError::Invalid(format!(
                        "`input[{i}].role` must be user, assistant, system or developer, not {other:?}"
                    )));
                }
            };
            let content = content_of(&item["content"], role, i)?;
            messages.push(json!({"role": role, "content": content}));
        }
        "function_call" => {
            let (Some(call_id), Some(name)) = (item["call_id"].as_str(), item["name"].as_str())
            else {
                return Err(TranslateError::Invalid(format!(
                    "`input[{i}]`: a function_call needs `call_id` and `name`"
                )));
            };
            let arguments = match &item["arguments"] {
                Value::String(s) => s.clone(),
                Value::Null => "{}".to_string(),
                other => other.to_string(),
            };
            let call = json!({"id": call_id, "type": "function",
                              "function": {"name": name, "arguments": arguments}});
            match messages.last_mut() {
                Some(m) if m["role"] == "assistant" => {
                    match m.get_mut("tool_calls").and_then(Value::as_array_mut) {
                        Some(calls) => calls.push(call),
                        None => {
                            m["tool_calls"] = json!([call]);
                        }
                    }
                }
                _ => messages.push(json!({"role": "assistant", "content": null,
                                          "tool_calls": [call]})),
            }
        }
        "function_call_output" => {
            let Some(call_id) = item["call_id"].as_str() else {
                return Err(TranslateError::Invalid(format!(
                    "`input[{i}]`: a function_call_output needs `call_id`"
                )));
            };
            let output = match &item["output"] {
                v @ (Value::String(_) | Value::Array(_) | Value::Null) => text_of(v),
                other => other.to_string(),
            };
            messages.push(json!({"role": "tool", "tool_call_id": call_id, "content": output}));
        }
        "reasoning" => {
            tracing::debug!("responses: input[{i}] is a reasoning item; left out");
        }
        other => {
            return Err(TranslateError::Unsupported(format!(
                "`input[{i}].type` {other:?} is not supported (message, function_call, \
                 function_call_output and reasoning items are)"
            )));
        }
    }
    Ok(())
}

/// A message's content as Chat Completions content: the text of an assistant
/// or system message, the text and image parts of a user message.
fn content_of(content: &Value, role: &str, i: usize) -> Result<Value, TranslateError> {
    let parts = match content {
        Value::String(s) => return Ok(json!(s)),
        Value::Array(parts) => parts,
        Value::Null => return Ok(json!("")),
        _ => {
            return Err(TranslateError::Invalid(format!(
                "`input[{i}].content` must be a string or a list of parts"
            )));
        }
    };
    let mut out = Vec::with_capacity(parts.len());
    for (j, p) in parts.iter().enumerate() {
        match p["type"].as_str() {
            Some("input_text" | "output_text" | "text" | "summary_text") => {
                out.push(json!({"type": "text", "text": p["text"].as_str().unwrap_or_default()}));
            }
            Some("refusal") => {
                out.push(json!({"type": "text", "text": p["refusal"].as_str().unwrap_or_default()}))
            }
            Some("input_image") if role == "user" => {
                let Some(url) = p["image_url"].as_str() else {
                    return Err(TranslateError::Unsupported(format!(
                        "`input[{i}].content[{j}]`: only images given by `image_url` are \
                         supported (not `file_id`)"
                    )));
                };
                let mut image = json!({"url": url});
                if let Some(d) = p["detail"].as_str() {
                    image["detail"] = json!(d);
                }
                out.push(json!({"type": "image_url", "image_url": image}));
            }
            other => {
                return Err(TranslateError::Unsupported(format!(
                    "`input[{i}].content[{j}].type` {other:?} is not supported in a {role} \
                     message (input_text, output_text and, from a user, input_image are)"
                )));
            }
        }
    }
    // Text alone goes as a plain string: several OpenAI-compatible providers
    // (DeepSeek, Groq) refuse a list of parts for it.
    if role != "user" || out.iter().all(|p| p["type"] == "text") {
        return Ok(json!(text_of(&Value::Array(out))));
    }
    Ok(Value::Array(out))
}

/// The function tools, as Chat Completions tools; other tool types (built-in
/// tools such as `web_search`, custom tools) are left out.
fn tools_of(tools: Option<&Value>) -> Result<Vec<Value>, TranslateError> {
    let list = match tools {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(list)) => list,
        Some(_) => return Err(TranslateError::Invalid("`tools` must be a list".into())),
    };
    let mut out = Vec::new();
    for (i, t) in list.iter().enumerate() {
        match t["type"].as_str() {
            Some("function") => {
                let Some(name) = t["name"].as_str() else {
                    return Err(TranslateError::Invalid(format!(
                        "`tools[{i}].name` is required"
                    )));
                };
                let mut function = json!({"name": name});
                if let Some(d) = t["description"].as_str() {
                    function["description"] = json!(d);
                }
                function["parameters"] = match &t["parameters"] {
                    Value::Null => json!({"type": "object", "properties": {}}),
                    p => p.clone(),
                };
                out.push(json!({"type": "function", "function": function}));
            }
            other => {
                tracing::debug!(
                    "responses: tools[{i}] of type {other:?} is not a function tool; left out"
                );
            }
        }
    }
    Ok(out)
}

/// `tool_choice` in the Chat Completions shape; a choice of a built-in tool is
/// left out.
fn tool_choice_of(choice: Option<&Value>) -> Result<Option<Value>, TranslateError> {
    match choice {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) if matches!(s.as_str(), "auto" | "none" | "required") => {
            Ok(Some(json!(s)))
        }
        Some(Value::Object(o)) if o.get("type").and_then(Value::as_str) == Some("function") => {
            match o.get("name").and_then(Value::as_str) {
                Some(name) => Ok(Some(
                    json!({"type": "function", "function": {"name": name}}),
                )),
                None => Err(TranslateError::Invalid(
                    "`tool_choice.name` is required for a function".into(),
                )),
            }
        }
        Some(Value::Object(_)) => Ok(None),
        Some(_) => Err(TranslateError::Invalid(
            "`tool_choice` must be auto, none, required or a function".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_become_chat_messages_with_tool_calls_and_results() {
        let body = json!({
            "model": "x", "instructions": "be brief", "stream": true, "store": false,
            "max_output_tokens": 50, "temperature": 0.2, "metadata": {"k": "v"},
            "tools": [{"type": "function", "name": "weather", "description": "w",
                       "parameters": {"type": "object"}},
                      {"type": "web_search"}],
            "tool_choice": {"type": "function", "name": "weather"},
            "parallel_tool_calls": false,
            "input": [
                {"type": "message", "role": "developer", "content": "dev note"},
                {"role": "user", "content": [{"type": "input_text", "text": "weather?"},
                    {"type": "input_image", "image_url": "data:image/png;base64,AA"}]},
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {"type": "message", "role": "assistant",
                 "content": [{"type": "output_text", "text": "checking"}]},
                {"type": "function_call", "call_id": "c1", "name": "weather",
                 "arguments": "{\"city\":\"Paris\"}"},
                {"type": "function_call", "call_id": "c2", "name": "weather", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
                {"type": "function_call_output", "call_id": "c2", "output": "rain"}
            ]
        });
        let out = responses_request_to_openai(&body, "m").expect("translates");
        assert_eq!(out["model"], "m");
        let m = out["messages"].as_array().expect("messages");
        let roles: Vec<_> = m.iter().map(|m| m["role"].as_str().unwrap_or("")).collect();
        assert_eq!(
            roles,
            ["system", "system", "user", "assistant", "tool", "tool"]
        );
        assert_eq!(m[0]["content"], "be brief");
        assert_eq!(
            m[2]["content"][1]["image_url"]["url"],
            "data:image/png;base64,AA"
        );
        assert_eq!(m[3]["content"], "checking");
        assert_eq!(m[3]["tool_calls"][1]["id"], "c2");
        assert_eq!(
            m[3]["tool_calls"][0]["function"]["arguments"],
            "{\"city\":\"Paris\"}"
        );
        assert_eq!(m[5]["tool_call_id"], "c2");
        assert_eq!(out["tools"].as_array().map(Vec::len), Some(1));
        assert_eq!(out["tools"][0]["function"]["name"], "weather");
        assert_eq!(out["tool_choice"]["function"]["name"], "weather");
        assert_eq!(out["parallel_tool_calls"], false);
        assert_eq!(out["max_completion_tokens"], 50);
        assert_eq!(out["stream_options"]["include_usage"], true);
        assert!(out.get("metadata").is_none() && out.get("store").is_none());
    }

    #[test]
    fn a_string_input_is_one_user_message_and_bad_input_names_the_field() {
        let out = responses_request_to_openai(&json!({"input": "hi"}), "m").expect("ok");
        assert_eq!(out["messages"], json!([{"role": "user", "content": "hi"}]));
        assert!(out.get("stream").is_none());
        for (bad, field) in [
            (json!({"model": "m"}), "`input`"),
            (json!({"input": 3}), "`input`"),
            (
                json!({"input": [{"type": "computer_call"}]}),
                "`input[0].type`",
            ),
            (
                json!({"input": [{"role": "tool", "content": "x"}]}),
                "`input[0].role`",
            ),
            (
                json!({"input": [{"role": "user", "content": [{"type": "input_file"}]}]}),
                "`input[0].content[0].type`",
            ),
            (
                json!({"input": "x", "previous_response_id": "resp_1"}),
                "`previous_response_id`",
            ),
            (
                json!({"input": "x", "max_output_tokens": 0}),
                "`max_output_tokens`",
            ),
        ] {
            let e = responses_request_to_openai(&bad, "m").expect_err("refused");
            assert!(e.to_string().contains(field), "{bad}: {e}");
        }
    }
}
