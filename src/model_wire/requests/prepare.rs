//! The body a provider is sent: the client's own with the model rewritten when
//! both speak one format, its translation when they do not.

use crate::model_wire::error::TranslateError;
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
        (WireFormat::Anthropic, WireFormat::OpenAi) => anthropic_request_to_openai(body, model),
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
}
