//! Hecate's two extension fields of the recorded OpenAI Chat Completions
//! message: `content_blocks` on an assistant message keeps the Anthropic blocks
//! its OpenAI form cannot say (thinking with its signature, redacted thinking,
//! in order with its text and tool use), and `tool_error` on a tool message
//! says the result was an error. They are written when a conversation is
//! recorded, read when a client replays it toward an Anthropic provider, and
//! taken off before a body goes to an OpenAI-compatible one, which knows
//! neither.

use crate::model_wire::error::TranslateError;
use serde_json::{Value, json};

/// The assistant message's Anthropic blocks.
pub const CONTENT_BLOCKS: &str = "content_blocks";

/// A tool message whose result was an error.
pub const TOOL_ERROR: &str = "tool_error";

/// Whether `block` is reasoning: a `thinking` or `redacted_thinking` block.
fn is_reasoning(block: &Value) -> bool {
    matches!(
        block["type"].as_str(),
        Some("thinking" | "redacted_thinking")
    )
}

/// The `content_blocks` to keep for an assistant turn of Anthropic `blocks`:
/// all of them, in order, when one is reasoning; none when the OpenAI fields
/// already say everything.
pub fn content_blocks_of(blocks: &[Value]) -> Option<Value> {
    blocks
        .iter()
        .any(is_reasoning)
        .then(|| Value::Array(blocks.to_vec()))
}

/// Marks a recorded tool message as an error result when `is_error`.
pub fn mark_tool_error(message: &mut Value, is_error: bool) {
    if is_error {
        message[TOOL_ERROR] = json!(true);
    }
}

/// Whether a recorded tool message is marked as an error result.
pub fn is_tool_error(message: &Value) -> bool {
    message[TOOL_ERROR].as_bool() == Some(true)
}

/// The Anthropic blocks an assistant message's `content_blocks` gives, or none
/// when it has none. Thinking without a signature (a reasoning text from an
/// OpenAI-compatible provider) is left out, as Anthropic refuses it; a block of
/// another kind than thinking, redacted thinking, text or tool use is
/// `invalid`.
pub fn anthropic_blocks(message: &Value, i: usize) -> Result<Option<Vec<Value>>, TranslateError> {
    let Some(blocks) = message.get(CONTENT_BLOCKS).filter(|b| !b.is_null()) else {
        return Ok(None);
    };
    let Some(blocks) = blocks.as_array() else {
        return Err(TranslateError::Invalid(format!(
            "`messages[{i}].{CONTENT_BLOCKS}` must be an array of blocks"
        )));
    };
    let mut out = Vec::with_capacity(blocks.len());
    for (j, b) in blocks.iter().enumerate() {
        match b["type"].as_str() {
            Some("thinking") if b["signature"].as_str().is_none_or(str::is_empty) => {}
            Some("thinking" | "redacted_thinking" | "text" | "tool_use") => out.push(b.clone()),
            other => {
                return Err(TranslateError::Invalid(format!(
                    "`messages[{i}].{CONTENT_BLOCKS}[{j}]`: a {other:?} block is not thinking, \
                     redacted_thinking, text or tool_use"
                )));
            }
        }
    }
    Ok(Some(out))
}

/// Takes the extension fields off every message of an OpenAI Chat Completions
/// request body.
pub fn strip(body: &mut Value) {
    for m in body["messages"].as_array_mut().into_iter().flatten() {
        if let Some(obj) = m.as_object_mut() {
            obj.remove(CONTENT_BLOCKS);
            obj.remove(TOOL_ERROR);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_kept_only_when_one_is_reasoning() {
        let plain = [json!({"type": "text", "text": "hi"})];
        assert_eq!(content_blocks_of(&plain), None);
        let thought = [
            json!({"type": "thinking", "thinking": "hm", "signature": "s"}),
            json!({"type": "text", "text": "hi"}),
        ];
        assert_eq!(content_blocks_of(&thought), Some(json!(thought)));
    }

    #[test]
    fn replayed_blocks_drop_unsigned_thinking_and_refuse_strangers() {
        let m = json!({"role": "assistant", "content": "hi", "content_blocks": [
            {"type": "thinking", "thinking": "unsigned", "signature": ""},
            {"type": "thinking", "thinking": "signed", "signature": "s"},
            {"type": "redacted_thinking", "data": "x"},
            {"type": "text", "text": "hi"}
        ]});
        let got = anthropic_blocks(&m, 1).expect("valid").expect("present");
        assert_eq!(got.len(), 3);
        assert_eq!(got[0]["thinking"], "signed");
        assert_eq!(anthropic_blocks(&json!({"content": "x"}), 0), Ok(None));
        let bad = json!({"content_blocks": [{"type": "image"}]});
        let e = anthropic_blocks(&bad, 2).expect_err("an image is not an assistant block");
        assert!(
            e.to_string().contains("messages[2].content_blocks[0]"),
            "{e}"
        );
        assert!(anthropic_blocks(&json!({"content_blocks": "x"}), 0).is_err());
    }

    #[test]
    fn strip_takes_both_fields_off_every_message() {
        let mut body = json!({"messages": [
            {"role": "assistant", "content": "a", "content_blocks": []},
            {"role": "tool", "tool_call_id": "t", "content": "no", "tool_error": true}
        ]});
        strip(&mut body);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "assistant", "content": "a"},
                {"role": "tool", "tool_call_id": "t", "content": "no"}
            ])
        );
        let mut tool = json!({"role": "tool"});
        mark_tool_error(&mut tool, false);
        assert!(!is_tool_error(&tool));
        mark_tool_error(&mut tool, true);
        assert!(is_tool_error(&tool));
    }
}
