//! Request bodies shared by the translation tests of both directions.

use serde_json::{Value, json};

/// The OpenAI `messages` of a conversation with a system prompt, an image,
/// one tool call (id `call_id`) and its result, shared by the translation
/// tests of both directions.
pub(crate) fn openai_round_trip_messages(call_id: &str) -> Value {
    json!([
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [
            {"type": "text", "text": "what is in"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
        ]},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": call_id, "type": "function",
             "function": {"name": "look", "arguments": "{\"at\":\"x\"}"}},
        ]},
        {"role": "tool", "tool_call_id": call_id, "content": "a cat"},
        {"role": "user", "content": "thanks"},
    ])
}
