//! The small vocabularies the two formats name differently: why generation
//! stopped, and how the model may choose tools.

use crate::model_wire::error::TranslateError;
use serde_json::{Value, json};

/// An OpenAI `finish_reason` as an Anthropic `stop_reason`.
pub fn finish_to_stop(finish: &str) -> &'static str {
    match finish {
        "length" => "max_tokens",
        "tool_calls" | "function_call" => "tool_use",
        "content_filter" => "refusal",
        _ => "end_turn",
    }
}

/// An Anthropic `stop_reason` as an OpenAI `finish_reason`.
pub fn stop_to_finish(stop: &str) -> &'static str {
    match stop {
        "max_tokens" | "model_context_window_exceeded" => "length",
        "tool_use" => "tool_calls",
        "refusal" => "content_filter",
        _ => "stop",
    }
}

/// An OpenAI `tool_choice` (with `parallel_tool_calls`) as an Anthropic one.
pub fn tool_choice_to_anthropic(
    choice: Option<&Value>,
    parallel: Option<bool>,
) -> Result<Option<Value>, TranslateError> {
    let mut out = match choice {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => match s.as_str() {
            "auto" => Some(json!({"type": "auto"})),
            "none" => Some(json!({"type": "none"})),
            "required" => Some(json!({"type": "any"})),
            other => {
                return Err(TranslateError::Invalid(format!(
                    "`tool_choice` {other:?} is not auto, none or required"
                )));
            }
        },
        Some(v) => match v["function"]["name"].as_str() {
            Some(name) => Some(json!({"type": "tool", "name": name})),
            None => {
                return Err(TranslateError::Unsupported(format!(
                    "`tool_choice` {v} names no function"
                )));
            }
        },
    };
    if parallel == Some(false) {
        let c = out.get_or_insert_with(|| json!({"type": "auto"}));
        if c["type"] != "none" {
            c["disable_parallel_tool_use"] = json!(true);
        }
    }
    Ok(out)
}

/// An Anthropic `tool_choice` as OpenAI's `tool_choice` and `parallel_tool_calls`.
pub fn tool_choice_to_openai(
    choice: Option<&Value>,
) -> Result<(Option<Value>, Option<bool>), TranslateError> {
    let Some(c) = choice.filter(|c| !c.is_null()) else {
        return Ok((None, None));
    };
    let mapped = match c["type"].as_str() {
        Some("auto") => json!("auto"),
        Some("none") => json!("none"),
        Some("any") => json!("required"),
        Some("tool") => match c["name"].as_str() {
            Some(name) => json!({"type": "function", "function": {"name": name}}),
            None => {
                return Err(TranslateError::Invalid(
                    "`tool_choice` tool has no name".into(),
                ));
            }
        },
        _ => {
            return Err(TranslateError::Invalid(format!(
                "`tool_choice` {c} is not auto, any, tool or none"
            )));
        }
    };
    let parallel = c["disable_parallel_tool_use"]
        .as_bool()
        .filter(|d| *d)
        .map(|_| false);
    Ok((Some(mapped), parallel))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_map_both_ways() {
        for (finish, stop) in [
            ("stop", "end_turn"),
            ("length", "max_tokens"),
            ("tool_calls", "tool_use"),
            ("content_filter", "refusal"),
        ] {
            assert_eq!(finish_to_stop(finish), stop);
            assert_eq!(stop_to_finish(stop), finish);
        }
        assert_eq!(stop_to_finish("stop_sequence"), "stop");
    }

    #[test]
    fn tool_choices_map_both_ways() {
        let to_a = |c: Value, p| tool_choice_to_anthropic(Some(&c), p).expect("maps");
        assert_eq!(to_a(json!("required"), None), Some(json!({"type": "any"})));
        assert_eq!(
            to_a(
                json!({"type": "function", "function": {"name": "f"}}),
                Some(false)
            ),
            Some(json!({"type": "tool", "name": "f", "disable_parallel_tool_use": true}))
        );
        assert_eq!(
            tool_choice_to_anthropic(None, Some(false)).expect("maps"),
            Some(json!({"type": "auto", "disable_parallel_tool_use": true}))
        );
        assert!(tool_choice_to_anthropic(Some(&json!("sometimes")), None).is_err());
        let to_o = |c: Value| tool_choice_to_openai(Some(&c)).expect("maps");
        assert_eq!(
            to_o(json!({"type": "any"})),
            (Some(json!("required")), None)
        );
        assert_eq!(
            to_o(json!({"type": "tool", "name": "f", "disable_parallel_tool_use": true})),
            (
                Some(json!({"type": "function", "function": {"name": "f"}})),
                Some(false)
            )
        );
        assert!(tool_choice_to_openai(Some(&json!({"type": "x"}))).is_err());
    }
}
