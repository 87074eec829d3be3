//! Complete (non-streamed) answers translated between the formats: content,
//! tool calls, stop reason and usage.

use crate::model_wire::reasons::{finish_to_stop, stop_to_finish};
use crate::model_wire::requests::to_openai_request::tool_use_as_openai_call;
use crate::model_wire::usage::TokenUsage;
use serde_json::{Value, json};

/// An OpenAI `chat.completion` as an Anthropic `message`.
pub fn openai_response_to_anthropic(body: &Value) -> Value {
    let choice = &body["choices"][0];
    let message = &choice["message"];
    let mut content = Vec::new();
    if let Some(r) = message["reasoning_content"]
        .as_str()
        .filter(|r| !r.is_empty())
    {
        content.push(json!({"type": "thinking", "thinking": r, "signature": ""}));
    }
    let text = match &message["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        _ => String::new(),
    };
    if !text.is_empty() {
        content.push(json!({"type": "text", "text": text}));
    }
    for call in message["tool_calls"].as_array().into_iter().flatten() {
        let args = call["function"]["arguments"].as_str().unwrap_or("{}");
        let input = serde_json::from_str::<Value>(args)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| json!({}));
        content.push(json!({
            "type": "tool_use",
            "id": call["id"].as_str().unwrap_or_default(),
            "name": call["function"]["name"].as_str().unwrap_or_default(),
            "input": input,
        }));
    }
    let usage = TokenUsage::from_openai(&body["usage"]).unwrap_or_default();
    json!({
        "id": body["id"].as_str().unwrap_or("msg_gateway"),
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": finish_to_stop(choice["finish_reason"].as_str().unwrap_or("stop")),
        "stop_sequence": null,
        "usage": usage.to_anthropic(),
    })
}

/// An Anthropic `message` as an OpenAI `chat.completion`.
pub fn anthropic_response_to_openai(body: &Value, created: u64) -> Value {
    let mut text = String::new();
    let mut thinking = String::new();
    let mut calls = Vec::new();
    for b in body["content"].as_array().into_iter().flatten() {
        match b["type"].as_str() {
            Some("text") => text.push_str(b["text"].as_str().unwrap_or_default()),
            Some("thinking") => thinking.push_str(b["thinking"].as_str().unwrap_or_default()),
            Some("tool_use") => calls.push(tool_use_as_openai_call(b)),
            _ => {}
        }
    }
    let mut message = json!({
        "role": "assistant",
        "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) },
        "refusal": null,
    });
    if !thinking.is_empty() {
        message["reasoning_content"] = json!(thinking);
    }
    if !calls.is_empty() {
        message["tool_calls"] = Value::Array(calls);
    }
    let usage = TokenUsage::from_anthropic(&body["usage"]).unwrap_or_default();
    json!({
        "id": body["id"].as_str().unwrap_or("chatcmpl-gateway"),
        "object": "chat.completion",
        "created": created,
        "model": body["model"],
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": stop_to_finish(body["stop_reason"].as_str().unwrap_or("end_turn")),
        }],
        "usage": usage.to_openai(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn openai_answers_become_anthropic_messages() {
        let out = openai_response_to_anthropic(&json!({
            "id": "chatcmpl-1", "model": "gpt",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": "let me look",
                "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "look", "arguments": "{\"at\":1}"}}]}}],
            "usage": {"prompt_tokens": 5, "completion_tokens": 7, "total_tokens": 12},
        }));
        assert_eq!(
            out,
            json!({
                "id": "chatcmpl-1", "type": "message", "role": "assistant", "model": "gpt",
                "content": [
                    {"type": "text", "text": "let me look"},
                    {"type": "tool_use", "id": "call_1", "name": "look", "input": {"at": 1}},
                ],
                "stop_reason": "tool_use", "stop_sequence": null,
                "usage": {"input_tokens": 5, "output_tokens": 7},
            })
        );
    }

    #[test]
    fn anthropic_messages_become_openai_answers() {
        let out = anthropic_response_to_openai(
            &json!({
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
                "content": [
                    {"type": "thinking", "thinking": "hm", "signature": "s"},
                    {"type": "text", "text": "hi"},
                ],
                "stop_reason": "max_tokens",
                "usage": {"input_tokens": 2, "output_tokens": 3},
            }),
            42,
        );
        assert_eq!(
            out,
            json!({
                "id": "msg_1", "object": "chat.completion", "created": 42, "model": "claude",
                "choices": [{"index": 0, "logprobs": null, "finish_reason": "length",
                    "message": {"role": "assistant", "content": "hi", "refusal": null,
                                "reasoning_content": "hm"}}],
                "usage": {"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5},
            })
        );
        let tools = anthropic_response_to_openai(
            &json!({"content": [{"type": "tool_use", "id": "t", "name": "f", "input": {}}],
                    "stop_reason": "tool_use"}),
            0,
        );
        assert_eq!(tools["choices"][0]["message"]["content"], Value::Null);
        assert_eq!(
            tools["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"],
            "{}"
        );
        assert_eq!(tools["choices"][0]["finish_reason"], "tool_calls");
    }
}
