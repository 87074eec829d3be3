//! An agent's `elicitation/create` (a form to fill in, or a sign-in link to
//! open) put to the editor that drives the turn, through the turn's
//! `WorkspaceDelegate`, and the editor's answer relayed back. Accepted form
//! content is checked against the requested schema first, so the agent never
//! gets content it did not ask for. Without a running turn, or without an
//! editor that answers the mode, the agent gets `decline` at once, with
//! Hecate's reason under `_meta.hecate`, instead of waiting for nobody.

use crate::adapters::acp::services::editor::rpc_error;
use crate::adapters::acp::services::routes::ConnectionState;
use crate::domain::event::RuntimeEvent;
use crate::domain::workspace::{ElicitationKind, ElicitationRequest};
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, CreateElicitationResponse, ElicitationAction,
    ElicitationContentValue, ElicitationMode, ElicitationPropertySchema, ElicitationSchema,
    ElicitationScope, MultiSelectItems, StringFormat, StringPropertySchema,
};
use agent_client_protocol::{Error as RpcError, ErrorCode, RequestCancellation};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Why Hecate declined: the agent asked outside a running turn (or outside a session).
pub const OUTSIDE_TURN: &str = "elicitation_outside_turn";

/// Why Hecate declined: no editor that answers this mode drives the turn.
pub const NO_EDITOR: &str = "elicitation_no_editor";

/// Why Hecate declined: a mode Hecate does not know how to relay.
pub const MODE_UNKNOWN: &str = "elicitation_mode_unknown";

/// The stable reason of an editor's answer that does not match the form.
pub const CONTENT_INVALID: &str = "elicitation_content_invalid";

/// How accepted content differs from the requested schema.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ContentMismatch {
    /// A required field has no value.
    #[error("the required field {0:?} is missing")]
    Missing(String),
    /// A field the form does not have.
    #[error("the field {0:?} is not in the requested form")]
    Unknown(String),
    /// A value of the wrong JSON type.
    #[error("the field {field:?} must be {expected}")]
    WrongType {
        /// The field.
        field: String,
        /// What the schema asks for.
        expected: &'static str,
    },
    /// A value the field does not offer, or outside its limits.
    #[error("the field {field:?} {why}")]
    Refused {
        /// The field.
        field: String,
        /// What is wrong with the value.
        why: String,
    },
}

impl ContentMismatch {
    /// The field the mismatch is about.
    pub fn field(&self) -> &str {
        match self {
            Self::Missing(f) | Self::Unknown(f) => f,
            Self::WrongType { field, .. } | Self::Refused { field, .. } => field,
        }
    }
}

/// Answers one `elicitation/create` of the agent (run in its own task).
pub(crate) async fn answer(
    shared: Arc<ConnectionState>,
    req: CreateElicitationRequest,
    responder: Responder<CreateElicitationResponse>,
) {
    let result = relay(&shared, req, responder.cancellation()).await;
    if let Err(e) = responder.respond_with_result(result) {
        tracing::debug!(error = %e.message, "could not answer an elicitation");
    }
}

/// `decline`, with Hecate's `reason` and `message` under `_meta.hecate`.
fn declined(reason: &str, message: String) -> CreateElicitationResponse {
    tracing::info!(reason, "{message}");
    let meta = json!({"hecate": {"reason": reason, "message": message}});
    let meta = meta.as_object().cloned();
    CreateElicitationResponse::new(ElicitationAction::Decline).meta(meta)
}

fn cancelled() -> CreateElicitationResponse {
    CreateElicitationResponse::new(ElicitationAction::Cancel)
}

async fn relay(
    shared: &ConnectionState,
    req: CreateElicitationRequest,
    agent_cancel: RequestCancellation,
) -> Result<CreateElicitationResponse, RpcError> {
    let kind = match &req.mode {
        ElicitationMode::Form(_) => ElicitationKind::Form,
        ElicitationMode::Url(_) => ElicitationKind::Url,
        ElicitationMode::Other(o) => {
            return Ok(declined(
                MODE_UNKNOWN,
                format!("Hecate does not relay elicitations of mode {:?}", o.mode),
            ));
        }
        _ => {
            return Ok(declined(
                MODE_UNKNOWN,
                "Hecate does not relay elicitations of this mode".into(),
            ));
        }
    };
    let outside = || {
        declined(
            OUTSIDE_TURN,
            "the agent asked outside a running turn; Hecate relays elicitations to the \
             editor only while one of its prompts runs"
                .into(),
        )
    };
    let ElicitationScope::Session(scope) = req.scope() else {
        return Ok(outside());
    };
    let native = scope.session_id.0.to_string();
    let Some(route) = shared.route(&native) else {
        return Ok(outside());
    };
    let Some(turn) = route.turn.clone() else {
        return Ok(outside());
    };
    let Some(delegate) = turn
        .delegate
        .clone()
        .filter(|d| d.capabilities().elicitation.takes(kind))
    else {
        return Ok(declined(
            NO_EDITOR,
            format!(
                "no editor that answers {} elicitations drives this session (its turn \
                 came from HTTP, MCP or the CLI, or from an editor without the \
                 elicitation capability), so nobody can answer",
                kind.as_str()
            ),
        ));
    };
    let _serving = route.activity.serving();
    shared.emit(
        &native,
        RuntimeEvent::Raw {
            data: json!({"source": "editor", "method": "elicitation/create", "mode": kind.as_str()}),
        },
    );
    let url_id = match &req.mode {
        ElicitationMode::Url(u) => Some(u.elicitation_id.0.to_string()),
        _ => None,
    };
    if let Some(id) = &url_id {
        shared.set_url_elicitation(id, delegate.clone());
    }
    let params = serde_json::to_value(&req).map_err(|_| RpcError::internal_error())?;
    let answered = tokio::select! {
        a = delegate.elicit(ElicitationRequest { kind, params }) => Some(a),
        _ = turn.cancel.cancelled() => None,
        _ = agent_cancel.cancelled() => None,
    };
    let response = match answered {
        None => Ok(cancelled()),
        Some(Err(e)) => Err(rpc_error(e)),
        Some(Ok(value)) => {
            serde_json::from_value::<CreateElicitationResponse>(value).map_err(|e| {
                RpcError::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("the editor's answer to the elicitation could not be read: {e}"),
                )
            })
        }
    };
    let accepted = matches!(
        response.as_ref().map(|r| &r.action),
        Ok(ElicitationAction::Accept(_))
    );
    if let (Some(id), false) = (&url_id, accepted) {
        shared.take_url_elicitation(id);
    }
    let response = response?;
    if let (ElicitationMode::Form(form), ElicitationAction::Accept(a)) =
        (&req.mode, &response.action)
        && let Err(e) = check_content(&form.requested_schema, a.content.as_ref())
    {
        return Err(RpcError::new(
            ErrorCode::INVALID_PARAMS,
            format!("the editor's answer does not match the requested form: {e}"),
        )
        .data(json!({"reason": CONTENT_INVALID, "field": e.field()})));
    }
    Ok(response)
}

/// Checks accepted `content` against the form's `schema`: every required field
/// present, no field the form lacks, each value of its property's type, among
/// the offered values and within the limits. Patterns and unknown property
/// types are not checked.
pub fn check_content(
    schema: &ElicitationSchema,
    content: Option<&BTreeMap<String, ElicitationContentValue>>,
) -> Result<(), ContentMismatch> {
    let empty = BTreeMap::new();
    let content = content.unwrap_or(&empty);
    for field in schema.required.iter().flatten() {
        if !content.contains_key(field) {
            return Err(ContentMismatch::Missing(field.clone()));
        }
    }
    for (field, value) in content {
        let Some(property) = schema.properties.get(field) else {
            return Err(ContentMismatch::Unknown(field.clone()));
        };
        check_value(field, property, value)?;
    }
    Ok(())
}

fn wrong(field: &str, expected: &'static str) -> ContentMismatch {
    ContentMismatch::WrongType {
        field: field.to_string(),
        expected,
    }
}

fn refused(field: &str, why: String) -> ContentMismatch {
    ContentMismatch::Refused {
        field: field.to_string(),
        why,
    }
}

fn check_value(
    field: &str,
    property: &ElicitationPropertySchema,
    value: &ElicitationContentValue,
) -> Result<(), ContentMismatch> {
    use ElicitationContentValue as V;
    match (property, value) {
        (ElicitationPropertySchema::String(s), V::String(text)) => check_string(field, s, text),
        (ElicitationPropertySchema::String(_), _) => Err(wrong(field, "a string")),
        (ElicitationPropertySchema::Number(n), V::Number(_) | V::Integer(_)) => {
            let x = match value {
                V::Number(x) => *x,
                V::Integer(i) => *i as f64,
                _ => 0.0,
            };
            within(field, x, n.minimum, n.maximum)
        }
        (ElicitationPropertySchema::Number(_), _) => Err(wrong(field, "a number")),
        (ElicitationPropertySchema::Integer(n), V::Integer(i)) => within(
            field,
            *i as f64,
            n.minimum.map(|m| m as f64),
            n.maximum.map(|m| m as f64),
        ),
        (ElicitationPropertySchema::Integer(_), _) => Err(wrong(field, "an integer")),
        (ElicitationPropertySchema::Boolean(_), V::Boolean(_)) => Ok(()),
        (ElicitationPropertySchema::Boolean(_), _) => Err(wrong(field, "a boolean")),
        (ElicitationPropertySchema::Array(m), V::StringArray(items)) => {
            let offered: Option<Vec<&str>> = match &m.items {
                MultiSelectItems::String(s) => Some(s.values.iter().map(String::as_str).collect()),
                MultiSelectItems::Titled(t) => {
                    Some(t.options.iter().map(|o| o.value.as_str()).collect())
                }
                _ => None,
            };
            if let Some(bad) = items
                .iter()
                .find(|i| offered.as_ref().is_some_and(|o| !o.contains(&i.as_str())))
            {
                return Err(refused(
                    field,
                    format!("holds {bad:?}, which is not offered"),
                ));
            }
            let n = items.len() as u64;
            if m.min_items.is_some_and(|min| n < min) || m.max_items.is_some_and(|max| n > max) {
                return Err(refused(
                    field,
                    format!(
                        "holds {n} item(s), outside {}..{}",
                        m.min_items.unwrap_or(0),
                        m.max_items.map(|x| x.to_string()).unwrap_or_default()
                    ),
                ));
            }
            Ok(())
        }
        (ElicitationPropertySchema::Array(_), _) => Err(wrong(field, "a list of strings")),
        _ => Ok(()),
    }
}

fn within(field: &str, x: f64, min: Option<f64>, max: Option<f64>) -> Result<(), ContentMismatch> {
    if min.is_some_and(|m| x < m) || max.is_some_and(|m| x > m) {
        let bound = |b: Option<f64>| b.map(|v| v.to_string()).unwrap_or_default();
        return Err(refused(
            field,
            format!("is {x}, outside {}..{}", bound(min), bound(max)),
        ));
    }
    Ok(())
}

fn check_string(field: &str, s: &StringPropertySchema, text: &str) -> Result<(), ContentMismatch> {
    let offered: Vec<&str> = s
        .enum_values
        .iter()
        .flatten()
        .map(String::as_str)
        .chain(s.one_of.iter().flatten().map(|o| o.value.as_str()))
        .collect();
    if (s.enum_values.is_some() || s.one_of.is_some()) && !offered.contains(&text) {
        return Err(refused(
            field,
            format!("is {text:?}, not one of {offered:?}"),
        ));
    }
    let chars = text.chars().count();
    if s.min_length.is_some_and(|m| chars < m as usize)
        || s.max_length.is_some_and(|m| chars > m as usize)
    {
        return Err(refused(
            field,
            format!(
                "has {chars} character(s), outside {}..{}",
                s.min_length.unwrap_or(0),
                s.max_length.map(|m| m.to_string()).unwrap_or_default()
            ),
        ));
    }
    let shaped = match s.format {
        Some(StringFormat::Email) => text
            .split_once('@')
            .is_some_and(|(user, host)| !user.is_empty() && host.contains('.')),
        Some(StringFormat::Uri) => text
            .split_once(':')
            .is_some_and(|(scheme, rest)| !scheme.is_empty() && !rest.is_empty()),
        Some(StringFormat::Date) => is_date(text),
        Some(StringFormat::DateTime) => text
            .split_once('T')
            .is_some_and(|(date, time)| is_date(date) && time.len() >= 5),
        _ => true,
    };
    if !shaped {
        let format = s
            .format
            .as_ref()
            .and_then(|f| serde_json::to_value(f).ok())
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default();
        return Err(refused(field, format!("is {text:?}, not a valid {format}")));
    }
    Ok(())
}

/// Whether `text` reads as `YYYY-MM-DD`.
fn is_date(text: &str) -> bool {
    let parts: Vec<&str> = text.split('-').collect();
    matches!(parts.as_slice(), [y, m, d]
        if y.len() == 4 && m.len() == 2 && d.len() == 2
            && [y, m, d].iter().all(|p| p.chars().all(|c| c.is_ascii_digit())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_client_protocol::v1::schema::StringPropertySchema;

    fn schema() -> ElicitationSchema {
        ElicitationSchema::new()
            .string("name", true)
            .email("email", false)
            .integer("count", 1, 5, false)
            .boolean("ok", false)
            .property(
                "color",
                StringPropertySchema::new().enum_values(vec!["red".into(), "blue".into()]),
                false,
            )
    }

    fn content(
        pairs: &[(&str, ElicitationContentValue)],
    ) -> BTreeMap<String, ElicitationContentValue> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    }

    #[test]
    fn content_that_fits_the_form_passes() {
        let c = content(&[
            ("name", "Ada".into()),
            ("email", "ada@example.org".into()),
            ("count", 3_i64.into()),
            ("ok", true.into()),
            ("color", "red".into()),
        ]);
        assert_eq!(check_content(&schema(), Some(&c)), Ok(()));
    }

    #[test]
    fn each_kind_of_mismatch_names_its_field() {
        let cases = [
            (content(&[]), "name"),
            (
                content(&[("name", "A".into()), ("age", 3_i64.into())]),
                "age",
            ),
            (content(&[("name", 3_i64.into())]), "name"),
            (
                content(&[("name", "A".into()), ("count", 9_i64.into())]),
                "count",
            ),
            (
                content(&[("name", "A".into()), ("color", "green".into())]),
                "color",
            ),
            (
                content(&[("name", "A".into()), ("email", "nobody".into())]),
                "email",
            ),
            (content(&[("name", "A".into()), ("ok", "yes".into())]), "ok"),
        ];
        for (c, field) in cases {
            let e = check_content(&schema(), Some(&c)).expect_err("mismatch");
            assert_eq!(e.field(), field, "{e}");
        }
        let missing = check_content(&schema(), None).expect_err("required");
        assert_eq!(missing, ContentMismatch::Missing("name".into()));
    }
}
