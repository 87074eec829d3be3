//! Token usage as either format reports it, in complete answers and in streams.

use crate::model_wire::format::WireFormat;
use serde_json::{Value, json};

/// Tokens one exchange used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenUsage {
    /// Input (prompt) tokens, cached ones included.
    pub input_tokens: u64,
    /// Output (completion) tokens.
    pub output_tokens: u64,
}

impl TokenUsage {
    /// Reads an OpenAI `usage` object (`prompt_tokens`, `completion_tokens`).
    pub fn from_openai(u: &Value) -> Option<Self> {
        u.is_object().then(|| Self {
            input_tokens: u["prompt_tokens"].as_u64().unwrap_or(0),
            output_tokens: u["completion_tokens"].as_u64().unwrap_or(0),
        })
    }

    /// Reads an Anthropic `usage` object; cache reads and writes count as input.
    pub fn from_anthropic(u: &Value) -> Option<Self> {
        u.is_object().then(|| Self {
            input_tokens: u["input_tokens"].as_u64().unwrap_or(0)
                + u["cache_read_input_tokens"].as_u64().unwrap_or(0)
                + u["cache_creation_input_tokens"].as_u64().unwrap_or(0),
            output_tokens: u["output_tokens"].as_u64().unwrap_or(0),
        })
    }

    /// The usage of a complete (non-streamed) answer in `format`.
    pub fn of_response(format: WireFormat, body: &Value) -> Option<Self> {
        match format {
            WireFormat::OpenAi => Self::from_openai(&body["usage"]),
            WireFormat::Anthropic | WireFormat::Responses => Self::from_anthropic(&body["usage"]),
        }
    }

    /// This usage as an OpenAI `usage` object.
    pub fn to_openai(self) -> Value {
        json!({
            "prompt_tokens": self.input_tokens,
            "completion_tokens": self.output_tokens,
            "total_tokens": self.input_tokens + self.output_tokens,
        })
    }

    /// This usage as an Anthropic `usage` object.
    pub fn to_anthropic(self) -> Value {
        json!({"input_tokens": self.input_tokens, "output_tokens": self.output_tokens})
    }
}

/// Follows a streamed answer's events and keeps the usage they report.
#[derive(Debug, Clone, Default)]
pub struct UsageTap {
    usage: Option<TokenUsage>,
}

impl UsageTap {
    /// Reads one event's JSON data (`[DONE]` and other non-JSON data are skipped).
    pub fn observe(&mut self, format: WireFormat, data: &str) {
        let Ok(v) = serde_json::from_str::<Value>(data) else {
            return;
        };
        match format {
            WireFormat::OpenAi => {
                if let Some(u) = TokenUsage::from_openai(&v["usage"]) {
                    self.usage = Some(u);
                }
            }
            WireFormat::Anthropic => match v["type"].as_str() {
                Some("message_start") => {
                    self.usage = TokenUsage::from_anthropic(&v["message"]["usage"]);
                }
                Some("message_delta") => {
                    let u = self.usage.get_or_insert_default();
                    if let Some(o) = v["usage"]["output_tokens"].as_u64() {
                        u.output_tokens = o;
                    }
                    if let Some(i) = v["usage"]["input_tokens"].as_u64().filter(|i| *i > 0) {
                        u.input_tokens = i;
                    }
                }
                _ => {}
            },
            WireFormat::Responses => {
                if let Some(u) = TokenUsage::from_anthropic(&v["response"]["usage"]) {
                    self.usage = Some(u);
                }
            }
        }
    }

    /// The usage seen so far.
    pub fn usage(&self) -> Option<TokenUsage> {
        self.usage
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_usage_from_bodies_and_streams() {
        let o = TokenUsage::of_response(
            WireFormat::OpenAi,
            &json!({"usage": {"prompt_tokens": 3, "completion_tokens": 4}}),
        );
        assert_eq!(
            o,
            Some(TokenUsage {
                input_tokens: 3,
                output_tokens: 4
            })
        );
        assert_eq!(o.expect("usage").to_openai()["total_tokens"], 7);
        let a = TokenUsage::of_response(
            WireFormat::Anthropic,
            &json!({"usage": {"input_tokens": 2, "cache_read_input_tokens": 1, "output_tokens": 5}}),
        );
        assert_eq!(
            a,
            Some(TokenUsage {
                input_tokens: 3,
                output_tokens: 5
            })
        );
        let mut tap = UsageTap::default();
        tap.observe(
            WireFormat::Anthropic,
            r#"{"type":"message_start","message":{"usage":{"input_tokens":9,"output_tokens":1}}}"#,
        );
        tap.observe(
            WireFormat::Anthropic,
            r#"{"type":"message_delta","usage":{"output_tokens":6}}"#,
        );
        assert_eq!(
            tap.usage(),
            Some(TokenUsage {
                input_tokens: 9,
                output_tokens: 6
            })
        );
        let mut tap = UsageTap::default();
        tap.observe(WireFormat::OpenAi, r#"{"choices":[],"usage":null}"#);
        assert_eq!(tap.usage(), None);
        tap.observe(
            WireFormat::OpenAi,
            r#"{"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":2}}"#,
        );
        tap.observe(WireFormat::OpenAi, "[DONE]");
        assert_eq!(
            tap.usage(),
            Some(TokenUsage {
                input_tokens: 1,
                output_tokens: 2
            })
        );
    }
}
