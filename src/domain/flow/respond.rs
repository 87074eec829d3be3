//! The `respond` tool: its JSON schema, built from the current stage's fields and
//! the stages the model may ask for, and the check of a payload against it.

use super::model::{Conversation, Field, FieldType, Stage};
use serde_json::{Map, Value, json};

/// The name of the tool the caller's model answers through.
pub const RESPOND_TOOL: &str = "respond";

/// A `respond` payload that does not match the schema, naming the field at fault.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct RespondError {
    /// The field path, e.g. `data.age` or `next_stage`.
    pub field: String,
    /// What is wrong with it.
    pub message: String,
}

fn bad(field: impl Into<String>, message: impl Into<String>) -> RespondError {
    RespondError {
        field: field.into(),
        message: message.into(),
    }
}

/// A checked `respond` payload.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RespondPayload {
    /// The reply text for the user.
    pub message: String,
    /// Extracted fields, each checked against its declared type.
    pub data: Map<String, Value>,
    /// The stage the model asks to move to.
    pub next_stage: Option<String>,
    /// False when the model says the conversation drifted.
    pub on_track: bool,
    /// The model's explanation when off track.
    pub off_track_reason: Option<String>,
}

/// The stages the model may name as `next_stage` in `stage`: itself and the
/// targets of its stage edges.
pub fn next_stage_choices(conversation: &Conversation, stage: &Stage) -> Vec<String> {
    let mut out = vec![stage.name.clone()];
    for e in conversation.edges_from(&stage.name) {
        if let Some(to) = &e.to
            && !out.contains(to)
        {
            out.push(to.clone());
        }
    }
    out
}

fn field_schema(f: &Field) -> Value {
    let mut s = match f.field_type() {
        FieldType::String => json!({"type": "string"}),
        FieldType::Integer => json!({"type": "integer"}),
        FieldType::Number => json!({"type": "number"}),
        FieldType::Boolean => json!({"type": "boolean"}),
        FieldType::Enum => json!({"type": "string", "enum": f.values}),
        FieldType::List => json!({"type": "array", "items": {"type": "string"}}),
    };
    if !f.description.is_empty() {
        s["description"] = json!(f.description);
    }
    s
}

/// The `tools` list handed to the caller: one function tool, `respond`, whose
/// parameters are the schema for `stage` of `conversation`.
pub fn respond_tools(conversation: &Conversation, stage: &Stage) -> Value {
    let fields: Map<String, Value> = stage
        .fields
        .iter()
        .map(|f| (f.name.clone(), field_schema(f)))
        .collect();
    let parameters = json!({
        "type": "object",
        "properties": {
            "message": {"type": "string", "description": "The reply to show the user."},
            "data": {
                "type": "object",
                "description": "Values of this stage's fields the user has given; leave out what is unknown.",
                "properties": fields,
                "additionalProperties": false
            },
            "next_stage": {
                "type": "string",
                "description": "The stage the conversation should move to, when the user is ready.",
                "enum": next_stage_choices(conversation, stage)
            },
            "onTrack": {"type": "boolean", "description": "False when the conversation drifted from this stage's purpose."},
            "offTrackReason": {"type": "string", "description": "Why the conversation drifted, when onTrack is false."}
        },
        "required": ["message"],
        "additionalProperties": false
    });
    json!([{
        "type": "function",
        "function": {
            "name": RESPOND_TOOL,
            "description": "Answer the user. Always reply through this tool.",
            "parameters": parameters
        }
    }])
}

/// Checks `value` against the type of field `f`.
fn check_field(f: &Field, value: &Value) -> Result<(), RespondError> {
    let at = format!("data.{}", f.name);
    let ok = match f.field_type() {
        FieldType::String => value.is_string(),
        FieldType::Integer => value.is_i64() || value.is_u64(),
        FieldType::Number => value.is_number(),
        FieldType::Boolean => value.is_boolean(),
        FieldType::Enum => {
            let Some(s) = value.as_str() else {
                return Err(bad(
                    at,
                    format!("expected one of {:?}, got {value}", f.values),
                ));
            };
            if !f.values.iter().any(|v| v == s) {
                return Err(bad(at, format!("`{s}` is not one of {:?}", f.values)));
            }
            true
        }
        FieldType::List => value
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string)),
    };
    if ok {
        Ok(())
    } else {
        Err(bad(
            at,
            format!("expected {}, got {value}", describe(f.field_type())),
        ))
    }
}

fn describe(t: FieldType) -> &'static str {
    match t {
        FieldType::String | FieldType::Enum => "a string",
        FieldType::Integer => "an integer",
        FieldType::Number => "a number",
        FieldType::Boolean => "a boolean",
        FieldType::List => "a list of strings",
    }
}

/// Checks a `respond` payload (the tool call's arguments) against the schema of
/// `stage` in `conversation`.
pub fn check_respond(
    conversation: &Conversation,
    stage: &Stage,
    payload: &Value,
) -> Result<RespondPayload, RespondError> {
    let Some(obj) = payload.as_object() else {
        return Err(bad(
            "(payload)",
            format!("expected an object, got {payload}"),
        ));
    };
    let mut out = RespondPayload {
        on_track: true,
        ..RespondPayload::default()
    };
    for (key, value) in obj {
        match key.as_str() {
            "message" => {
                out.message = value
                    .as_str()
                    .ok_or_else(|| bad("message", format!("expected a string, got {value}")))?
                    .to_string();
            }
            "data" => match value {
                Value::Null => {}
                Value::Object(data) => {
                    for (name, v) in data {
                        let Some(f) = stage.fields.iter().find(|f| &f.name == name) else {
                            let known: Vec<&str> =
                                stage.fields.iter().map(|f| f.name.as_str()).collect();
                            return Err(bad(
                                format!("data.{name}"),
                                format!(
                                    "stage `{}` extracts no field `{name}` (its fields: {known:?})",
                                    stage.name
                                ),
                            ));
                        };
                        if v.is_null() {
                            continue;
                        }
                        check_field(f, v)?;
                        out.data.insert(name.clone(), v.clone());
                    }
                }
                other => return Err(bad("data", format!("expected an object, got {other}"))),
            },
            "next_stage" => match value {
                Value::Null => {}
                Value::String(s) => {
                    let choices = next_stage_choices(conversation, stage);
                    if !choices.contains(s) {
                        return Err(bad(
                            "next_stage",
                            format!(
                                "`{s}` is not reachable from stage `{}` (choices: {choices:?})",
                                stage.name
                            ),
                        ));
                    }
                    out.next_stage = Some(s.clone());
                }
                other => return Err(bad("next_stage", format!("expected a string, got {other}"))),
            },
            "onTrack" => {
                out.on_track = value
                    .as_bool()
                    .ok_or_else(|| bad("onTrack", format!("expected a boolean, got {value}")))?;
            }
            "offTrackReason" => match value {
                Value::Null => {}
                Value::String(s) => out.off_track_reason = Some(s.clone()),
                other => {
                    return Err(bad(
                        "offTrackReason",
                        format!("expected a string, got {other}"),
                    ));
                }
            },
            other => {
                return Err(bad(
                    other,
                    "unknown field; `respond` takes message, data, next_stage, onTrack and offTrackReason",
                ));
            }
        }
    }
    if !obj.contains_key("message") {
        return Err(bad("message", "is required"));
    }
    Ok(out)
}
