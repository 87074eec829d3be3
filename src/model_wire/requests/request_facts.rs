//! The few facts about a client request the gateway needs before routing it:
//! the model asked for, whether the answer is streamed and whether tools are
//! offered; the body is checked
//! for the fields its format requires.

use crate::model_wire::error::TranslateError;
use crate::model_wire::format::WireFormat;
use serde_json::Value;

/// What routing and relaying need to know about a request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFacts {
    /// The `model` field, when present and not empty.
    pub model: Option<String>,
    /// Whether the client asked for a streamed answer.
    pub stream: bool,
    /// OpenAI clients: whether a streamed answer should end with a usage chunk.
    pub include_usage: bool,
    /// Whether the request offers the model tools (a non-empty `tools` array).
    pub has_tools: bool,
}

impl RequestFacts {
    /// Checks `body` against `format`'s required fields and reads the facts.
    pub fn read(format: WireFormat, body: &Value) -> Result<Self, TranslateError> {
        let Some(obj) = body.as_object() else {
            return Err(TranslateError::Invalid(
                "the request body must be a JSON object".into(),
            ));
        };
        let model = match obj.get("model") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.trim().to_string()).filter(|s| !s.is_empty()),
            Some(_) => return Err(TranslateError::Invalid("`model` must be a string".into())),
        };
        if format == WireFormat::Responses {
            // The translation checks every item; its result is made again per
            // candidate with the provider's model.
            super::responses_request::responses_request_to_openai(body, "")?;
        } else {
            Self::check_messages(format, obj)?;
        }
        if format == WireFormat::Anthropic && !obj.get("max_tokens").is_some_and(Value::is_u64) {
            return Err(TranslateError::Invalid(
                "`max_tokens` is a required positive integer".into(),
            ));
        }
        let stream = match obj.get("stream") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(TranslateError::Invalid("`stream` must be a boolean".into())),
        };
        // A Responses stream always ends with the usage, so it is always asked for.
        let include_usage = format == WireFormat::Responses
            || body["stream_options"]["include_usage"].as_bool() == Some(true);
        let has_tools = match format {
            WireFormat::Responses => body["tools"]
                .as_array()
                .is_some_and(|t| t.iter().any(|t| t["type"] == "function")),
            _ => body["tools"].as_array().is_some_and(|t| !t.is_empty()),
        };
        Ok(Self {
            model,
            stream,
            include_usage,
            has_tools,
        })
    }

    /// Checks the `messages` of a Chat Completions or Messages request.
    fn check_messages(
        format: WireFormat,
        obj: &serde_json::Map<String, Value>,
    ) -> Result<(), TranslateError> {
        match obj.get("messages") {
            Some(Value::Array(m)) if !m.is_empty() || format == WireFormat::OpenAi => {}
            Some(Value::Array(_)) => {
                return Err(TranslateError::Invalid(
                    "`messages` must not be empty".into(),
                ));
            }
            Some(_) => {
                return Err(TranslateError::Invalid(
                    "`messages` must be an array".into(),
                ));
            }
            None => {
                return Err(TranslateError::Invalid(
                    "`messages` is a required field".into(),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_model_and_stream_and_refuses_missing_fields() {
        let f = RequestFacts::read(
            WireFormat::OpenAi,
            &json!({"model": " m ", "messages": [], "stream": true,
                    "stream_options": {"include_usage": true}}),
        )
        .expect("valid");
        assert_eq!(f.model.as_deref(), Some("m"));
        assert!(f.stream && f.include_usage);
        assert!(!f.has_tools);
        let tools = json!({"messages": [], "tools": [{"type": "function"}]});
        assert!(
            RequestFacts::read(WireFormat::OpenAi, &tools)
                .expect("ok")
                .has_tools
        );
        let none = RequestFacts::read(WireFormat::OpenAi, &json!({"messages": []})).expect("ok");
        assert_eq!(none.model, None);
        for bad in [
            json!([]),
            json!({"model": 1, "messages": []}),
            json!({"model": "m"}),
            json!({"model": "m", "messages": {}}),
            json!({"model": "m", "messages": [], "stream": "yes"}),
        ] {
            assert!(
                RequestFacts::read(WireFormat::OpenAi, &bad).is_err(),
                "{bad}"
            );
        }
        let no_max = json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]});
        assert!(RequestFacts::read(WireFormat::Anthropic, &no_max).is_err());
        let r = RequestFacts::read(
            WireFormat::Responses,
            &json!({"model": "m", "input": "hi", "stream": true,
                    "tools": [{"type": "web_search"}]}),
        )
        .expect("responses");
        assert!(r.stream && r.include_usage && !r.has_tools);
        assert!(RequestFacts::read(WireFormat::Responses, &json!({"model": "m"})).is_err());
    }
}
