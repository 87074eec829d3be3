//! The error envelope `{"error": {type, message, user_message, operator_action,
//! request_id, trace_id, ...details}}` that every `/hecate/v1` failure uses.
//!
//! Handlers return [`ApiError`]; its response carries the error as an extension, and
//! the request-id middleware renders the final body with the request's correlation
//! ids (see [`finalize`]). Responses that did not come from an `ApiError` (axum's
//! 405, a 413 from the body limit) are converted there too.

use crate::domain::{ErrorType, HecateError};
use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value};
use utoipa::ToSchema;

/// The body of an error: a stable `type`, human copy, correlation ids and any
/// detail fields that help repair the failure.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ErrorBody {
    /// The stable machine code, e.g. `agent_chat.agent_session_busy`.
    #[serde(rename = "type")]
    pub error_type: String,
    /// The detailed message; may include upstream wording.
    pub message: String,
    /// A short summary safe to show to a user.
    pub user_message: String,
    /// The recommended next step for an operator.
    pub operator_action: String,
    /// The request's correlation id (mirrors `X-Request-Id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// The request's trace id (mirrors `X-Trace-Id`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// Runtime-specific repair fields (`suggested_models`, `turns_used`, ...).
    #[serde(flatten)]
    pub details: Map<String, Value>,
}

/// `{"error": ErrorBody}`, the shape of every `/hecate/v1` error response.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ErrorEnvelope {
    /// The error.
    pub error: ErrorBody,
}

/// An error answered over HTTP: a status code and an [`ErrorBody`] (boxed, so
/// `Result<_, ApiError>` stays small).
#[derive(Debug, Clone)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The envelope body (correlation ids are filled in by the middleware).
    pub body: Box<ErrorBody>,
}

impl ApiError {
    /// An error with an explicit status and type code outside the domain's types.
    pub fn custom(
        status: StatusCode,
        error_type: &str,
        message: impl Into<String>,
        user_message: &str,
        operator_action: &str,
    ) -> Self {
        Self {
            status,
            body: Box::new(ErrorBody {
                error_type: error_type.to_string(),
                message: message.into(),
                user_message: user_message.to_string(),
                operator_action: operator_action.to_string(),
                request_id: None,
                trace_id: None,
                details: Map::new(),
            }),
        }
    }

    /// A 400 `invalid_request`.
    pub fn invalid(message: impl Into<String>) -> Self {
        HecateError::invalid(message).into()
    }

    /// A 404 `not_found` for a path that has no route.
    pub fn no_route(path: &str) -> Self {
        HecateError::new(ErrorType::NotFound, format!("no route for {path}"))
            .with_operator_action("Check the path against GET /hecate/v1/openapi.json.")
            .into()
    }

    /// Attaches one detail field.
    pub fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.body.details.insert(key.to_string(), value.into());
        self
    }

    /// Overrides the status while keeping the type (e.g. 413 or 405 `invalid_request`).
    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }
}

/// The HTTP status an error type maps to on the HTTP surface. `auth_required`
/// (an upstream MCP server wants a sign-in) is 424 Failed Dependency: the request
/// depended on an upstream that refused Hecate, never 401, which is kept for
/// Hecate's own token.
pub fn http_status(t: ErrorType) -> StatusCode {
    match t {
        ErrorType::InvalidRequest
        | ErrorType::WorkspaceRequired
        | ErrorType::ModelRequired
        | ErrorType::RuntimeKindInvalid
        | ErrorType::HistoryStrategyInvalid
        | ErrorType::RuntimeMismatch
        | ErrorType::AdapterNotFound
        | ErrorType::ChatRespondInvalid
        | ErrorType::MemoryRequestInvalid => StatusCode::BAD_REQUEST,
        ErrorType::NotFound | ErrorType::ChatAgentNotFound | ErrorType::ChatNotFound => {
            StatusCode::NOT_FOUND
        }
        ErrorType::ChatIdentityInvalid => StatusCode::UNAUTHORIZED,
        ErrorType::Conflict
        | ErrorType::AgentSessionBusy
        | ErrorType::SessionBusyElsewhere
        | ErrorType::SessionStopping
        | ErrorType::SessionNotRunning
        | ErrorType::ChatEnded => StatusCode::CONFLICT,
        ErrorType::RateLimitExceeded => StatusCode::TOO_MANY_REQUESTS,
        ErrorType::ModelNotConfigured
        | ErrorType::RouteImpossible
        | ErrorType::SessionLimitExceeded
        | ErrorType::SessionDurationLimitExceeded
        | ErrorType::SessionIdleTimeout
        | ErrorType::ModelCapabilityRequired
        | ErrorType::ChatFlowInvalid => StatusCode::UNPROCESSABLE_ENTITY,
        ErrorType::AuthRequired => StatusCode::FAILED_DEPENDENCY,
        ErrorType::GatewayError | ErrorType::StoreError => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<HecateError> for ApiError {
    fn from(e: HecateError) -> Self {
        let status = http_status(e.error_type);
        Self {
            status,
            body: Box::new(ErrorBody {
                error_type: e.error_type.code().to_string(),
                message: e.message,
                user_message: e.user_message,
                operator_action: e.operator_action,
                request_id: None,
                trace_id: None,
                details: *e.details,
            }),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = render(self.status, &self.body);
        response.extensions_mut().insert(*self.body);
        response
    }
}

fn envelope_bytes(body: &ErrorBody) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({ "error": body })).unwrap_or_default()
}

fn render(status: StatusCode, body: &ErrorBody) -> Response {
    let mut response = Response::new(Body::from(envelope_bytes(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// Renders the final error body of `response` with the request's ids: an
/// `ApiError` response gets its ids filled in; any other 4xx/5xx response on an
/// API path (axum's 405, a 413) is replaced by an envelope. Headers are kept.
pub fn finalize(response: Response, api_path: bool, request_id: &str, trace_id: &str) -> Response {
    let status = response.status();
    let existing = response.extensions().get::<ErrorBody>().cloned();
    let body = match existing {
        Some(body) => body,
        None if api_path && (status.is_client_error() || status.is_server_error()) => {
            *generic_for(status).body
        }
        None => return response,
    };
    let body = ErrorBody {
        request_id: Some(request_id.to_string()),
        trace_id: Some(trace_id.to_string()),
        ..body
    };
    let (mut parts, _) = response.into_parts();
    parts.extensions.remove::<ErrorBody>();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, Body::from(envelope_bytes(&body)))
}

/// The envelope for a status that reached the middleware without an `ApiError`.
fn generic_for(status: StatusCode) -> ApiError {
    match status {
        StatusCode::METHOD_NOT_ALLOWED => {
            ApiError::invalid("this method is not allowed on this path; see the Allow header")
                .with_status(status)
        }
        StatusCode::PAYLOAD_TOO_LARGE => {
            ApiError::invalid("the request body is over the limit").with_status(status)
        }
        StatusCode::NOT_FOUND => ApiError::no_route("this path"),
        s if s.is_server_error() => {
            ApiError::from(HecateError::gateway(format!("the server answered {s}"))).with_status(s)
        }
        s => ApiError::invalid(format!("the request was refused ({s})")).with_status(s),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_types_map_to_their_http_statuses() {
        for (t, status) in [
            (ErrorType::InvalidRequest, 400),
            (ErrorType::AdapterNotFound, 400),
            (ErrorType::NotFound, 404),
            (ErrorType::AgentSessionBusy, 409),
            (ErrorType::SessionBusyElsewhere, 409),
            (ErrorType::RateLimitExceeded, 429),
            (ErrorType::ModelNotConfigured, 422),
            (ErrorType::SessionIdleTimeout, 422),
            (ErrorType::ModelCapabilityRequired, 422),
            (ErrorType::GatewayError, 500),
            (ErrorType::StoreError, 500),
            // The runtime seed's table: every error type with a status there keeps it.
            (ErrorType::Conflict, 409),
            (ErrorType::WorkspaceRequired, 400),
            (ErrorType::SessionLimitExceeded, 422),
            (ErrorType::SessionDurationLimitExceeded, 422),
        ] {
            assert_eq!(http_status(t).as_u16(), status, "{t:?}");
        }
    }

    #[test]
    fn an_upstream_sign_in_is_a_failed_dependency_not_hecates_own_401() {
        let e = HecateError::new(
            ErrorType::AuthRequired,
            "upstream MCP server \"gh\" needs a sign-in",
        )
        .with_detail("server", "gh")
        .with_operator_action("Run `hecate mcp login gh` and finish the sign-in in a browser.");
        let api = ApiError::from(e);
        assert_eq!(api.status, StatusCode::FAILED_DEPENDENCY);
        assert_ne!(api.status, http_status(ErrorType::ChatIdentityInvalid));
        let v = serde_json::to_value(&api.body).expect("serializes");
        assert_eq!(v["type"], "auth_required");
        assert_eq!(v["server"], "gh");
        assert!(
            v["operator_action"]
                .as_str()
                .is_some_and(|a| a.contains("hecate mcp login gh")),
            "{v}"
        );
    }

    #[test]
    fn domain_errors_keep_their_type_status_and_details() {
        let e = HecateError::new(ErrorType::ModelNotConfigured, "stale")
            .with_detail("suggested_models", vec!["a".to_string()]);
        let api = ApiError::from(e);
        assert_eq!(api.status, StatusCode::UNPROCESSABLE_ENTITY);
        let v = serde_json::to_value(&api.body).expect("serializes");
        assert_eq!(v["type"], "model_not_configured");
        assert_eq!(v["suggested_models"][0], "a");
        assert!(v.get("request_id").is_none());
    }

    #[test]
    fn finalize_fills_ids_and_wraps_bare_statuses() {
        let r = finalize(
            ApiError::from(crate::bridges::access::Denial::MissingToken).into_response(),
            true,
            "req_1",
            "t1",
        );
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
        let body = r.extensions().get::<ErrorBody>().is_none();
        assert!(body, "the final response is rendered, not re-tagged");
        let bare = Response::builder()
            .status(StatusCode::METHOD_NOT_ALLOWED)
            .header(header::ALLOW, "GET")
            .body(Body::empty())
            .expect("response");
        let r = finalize(bare, true, "req_2", "t2");
        assert_eq!(r.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(
            r.headers().get(header::ALLOW).map(|v| v.as_bytes()),
            Some(&b"GET"[..])
        );
        let ok = Response::new(Body::empty());
        assert_eq!(finalize(ok, true, "r", "t").status(), StatusCode::OK);
    }
}
