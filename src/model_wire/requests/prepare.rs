//! The body a provider is sent: the client's own with the model rewritten when
//! both speak one format, its translation when they do not. An
//! OpenAI-compatible provider never sees Hecate's extension fields of a
//! replayed message (`content_blocks`, `tool_error`).

use crate::model_wire::error::TranslateError;
use crate::model_wire::extensions;
use crate::model_wire::format::WireFormat;
use crate::model_wire::requests::responses_request::responses_request_to_openai;
use crate::model_wire::requests::to_anthropic_request::openai_request_to_anthropic;
use crate::model_wire::requests::to_openai_request::anthropic_request_to_openai;
use serde_json::{Value, json};

/// The body to send a provider speaking `target` for a client that sent `body`
/// in `ingress`, asking for the provider's `model`. A Responses request is
/// translated to Chat Completions first (and on to Messages for Anthropic).
pub fn prepare_body(
    ingress: WireFormat,
    target: WireFormat,
    body: &Value,
    model: &str,
) -> Result<Value, TranslateError> {
    match (ingress, target) {
        (WireFormat::Responses, WireFormat::Anthropic) => {
            openai_request_to_anthropic(&responses_request_to_openai(body, model)?, model)
        }
        (WireFormat::Responses, _) => responses_request_to_openai(body, model),
        (WireFormat::OpenAi, WireFormat::Anthropic) => openai_request_to_anthropic(body, model),
        (WireFormat::Anthropic, WireFormat::OpenAi) => {
            let mut out = anthropic_request_to_openai(body, model)?;
            extensions::strip(&mut out);
            Ok(out)
        }
        (WireFormat::OpenAi, WireFormat::OpenAi) => {
            let mut out = body.clone();
            out["model"] = json!(model);
            extensions::strip(&mut out);
            Ok(out)
        }
        _ => {
            let mut out = body.clone();
            out["model"] = json!(model);
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_format_bodies_pass_with_the_model_rewritten() {
        let body = json!({"model": "fix/m", "messages": [], "custom_field": 1});
        let out = prepare_body(WireFormat::OpenAi, WireFormat::OpenAi, &body, "m").expect("ok");
        assert_eq!(
            out,
            json!({"model": "m", "messages": [], "custom_field": 1})
        );
        let cross = prepare_body(
            WireFormat::Anthropic,
            WireFormat::OpenAi,
            &json!({"model": "x", "max_tokens": 1, "messages": []}),
            "m",
        )
        .expect("ok");
        assert_eq!(cross["model"], "m");
        assert!(cross.get("custom_field").is_none());
    }

    /// A recorded Anthropic conversation keeps its thinking and error marks on
    /// the way to the recorded shape, gives them back to an Anthropic provider,
    /// and never shows them to an OpenAI-compatible one.
    #[test]
    fn thinking_and_tool_errors_survive_a_replay_but_not_to_openai() {
        let anthropic = json!({"model": "x", "max_tokens": 9, "messages": [
            {"role": "user", "content": "weather?"},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "hm", "signature": "sig"},
                {"type": "tool_use", "id": "t1", "name": "w", "input": {"c": "P"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "no", "is_error": true}
            ]}
        ]});
        let recorded = crate::model_wire::requests::transcript::request_messages(
            WireFormat::Anthropic,
            &anthropic,
        )
        .expect("records");
        assert_eq!(
            recorded[1]["content_blocks"],
            anthropic["messages"][1]["content"]
        );
        assert_eq!(recorded[2]["tool_error"], true);

        let replay = json!({"model": "x", "messages": recorded});
        let to_anthropic =
            prepare_body(WireFormat::OpenAi, WireFormat::Anthropic, &replay, "m").expect("ok");
        assert_eq!(
            to_anthropic["messages"][1]["content"],
            anthropic["messages"][1]["content"]
        );
        assert_eq!(to_anthropic["messages"][2]["content"][0]["is_error"], true);

        for (ingress, body) in [
            (WireFormat::OpenAi, &replay),
            (WireFormat::Anthropic, &anthropic),
        ] {
            let out = prepare_body(ingress, WireFormat::OpenAi, body, "m").expect("ok");
            let text = out.to_string();
            assert!(
                !text.contains("content_blocks") && !text.contains("tool_error"),
                "{text}"
            );
            assert_eq!(out["messages"][1]["tool_calls"][0]["id"], "t1");
        }
    }
}
