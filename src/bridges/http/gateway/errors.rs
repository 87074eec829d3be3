//! Gateway failures in the client's wire shape — OpenAI
//! `{"error": {message, type, code, param}}` or Anthropic
//! `{"type": "error", "error": {type, message}}` — each error object also
//! carrying Hecate's envelope fields (`hecate_type`, `user_message`,
//! `operator_action`, `request_id`, `trace_id` and the repair details).

use super::super::request_id::RequestIds;
use crate::bridges::access::Denial;
use crate::domain::error::{ErrorType, HecateError};
use crate::model_wire::{TranslateError, WireFormat};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

/// A failure rendered for one client.
#[derive(Debug, Clone)]
pub struct GatewayError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The OpenAI `error.type`.
    pub openai_type: &'static str,
    /// The Anthropic `error.type`.
    pub anthropic_type: &'static str,
    /// The specific code (OpenAI `error.code`), e.g. `model_not_found`.
    pub code: String,
    /// The request field at fault (OpenAI `error.param`).
    pub param: Option<String>,
    /// Hecate's stable type code, e.g. `model_not_configured`.
    pub hecate_type: String,
    /// The detailed message.
    pub message: String,
    /// A short summary safe to show to a user.
    pub user_message: String,
    /// The recommended next step.
    pub operator_action: String,
    /// Repair details (`candidates`, `provider`, `upstream_status`, ...).
    pub details: Map<String, Value>,
    /// `Retry-After` to send, from an upstream 429.
    pub retry_after: Option<String>,
}

impl GatewayError {
    /// A 400 for a body that is not what the format requires.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::from(HecateError::invalid(message))
    }

    /// A 400 for a body the gateway cannot read or forward, naming the field
    /// at fault as `param` when the reason names one.
    pub fn untranslatable(e: &TranslateError) -> Self {
        let mut out = Self::invalid(e.to_string());
        out.param = e.param();
        out
    }

    /// Renders the error for a client speaking `format`.
    pub fn render(self, format: WireFormat, ids: Option<&RequestIds>) -> Response {
        let mut obj = Map::new();
        for (k, v) in self.details {
            if !matches!(k.as_str(), "type" | "message" | "code" | "param") {
                obj.insert(k, v);
            }
        }
        obj.insert("message".into(), json!(self.message));
        obj.insert("hecate_type".into(), json!(self.hecate_type));
        obj.insert("user_message".into(), json!(self.user_message));
        obj.insert("operator_action".into(), json!(self.operator_action));
        if let Some(ids) = ids {
            obj.insert("request_id".into(), json!(ids.request_id));
            obj.insert("trace_id".into(), json!(ids.trace_id));
        }
        let body = match format {
            WireFormat::OpenAi | WireFormat::Responses => {
                obj.insert("type".into(), json!(self.openai_type));
                obj.insert("code".into(), json!(self.code));
                obj.insert("param".into(), json!(self.param));
                json!({"error": obj})
            }
            WireFormat::Anthropic => {
                obj.insert("type".into(), json!(self.anthropic_type));
                obj.insert("code".into(), json!(self.code));
                json!({"type": "error", "error": obj})
            }
        };
        let mut response = (self.status, axum::Json(body)).into_response();
        if let Some(r) = self
            .retry_after
            .and_then(|r| HeaderValue::from_str(&r).ok())
        {
            response.headers_mut().insert(header::RETRY_AFTER, r);
        }
        response
    }
}

impl From<HecateError> for GatewayError {
    fn from(e: HecateError) -> Self {
        let reason = e
            .details
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let upstream = e.details.get("upstream_status").and_then(Value::as_u64);
        let cooling = e.details.contains_key("retry_after");
        let (status, openai_type, anthropic_type, param) = match (e.error_type, upstream) {
            (ErrorType::RouteImpossible, _) if cooling => (
                StatusCode::SERVICE_UNAVAILABLE,
                "api_error",
                "overloaded_error",
                None,
            ),
            (ErrorType::RouteImpossible, _) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_request_error",
                "invalid_request_error",
                Some("model"),
            ),
            (ErrorType::ModelCapabilityRequired, _) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_request_error",
                "invalid_request_error",
                Some("tools"),
            ),
            (ErrorType::ModelNotConfigured, _) => (
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "not_found_error",
                Some("model"),
            ),
            (ErrorType::ModelRequired, _) => (
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "invalid_request_error",
                Some("model"),
            ),
            (ErrorType::InvalidRequest, _) => (
                StatusCode::BAD_REQUEST,
                "invalid_request_error",
                "invalid_request_error",
                (reason == "model_ambiguous").then_some("model"),
            ),
            (ErrorType::Conflict, _) => (
                StatusCode::CONFLICT,
                "invalid_request_error",
                "invalid_request_error",
                None,
            ),
            (ErrorType::NotFound, _) => (
                StatusCode::NOT_FOUND,
                "invalid_request_error",
                "not_found_error",
                None,
            ),
            (ErrorType::RateLimitExceeded, _) => (
                StatusCode::TOO_MANY_REQUESTS,
                "rate_limit_error",
                "rate_limit_error",
                None,
            ),
            (ErrorType::GatewayError, Some(s @ (400 | 404 | 409 | 413 | 422))) => (
                StatusCode::from_u16(s as u16).unwrap_or(StatusCode::BAD_REQUEST),
                "invalid_request_error",
                "invalid_request_error",
                None,
            ),
            (ErrorType::GatewayError, _) => {
                (StatusCode::BAD_GATEWAY, "api_error", "api_error", None)
            }
            // An upstream sign-in the operator must renew: the same 424 as
            // `/hecate/v1`, not a server fault.
            (ErrorType::AuthRequired, _) => (
                StatusCode::FAILED_DEPENDENCY,
                "api_error",
                "api_error",
                None,
            ),
            _ => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "api_error",
                "api_error",
                None,
            ),
        };
        let code = if reason.is_empty() {
            e.error_type.code().to_string()
        } else {
            reason
        };
        let retry_after = e
            .details
            .get("retry_after")
            .and_then(Value::as_str)
            .map(str::to_string);
        Self {
            status,
            openai_type,
            anthropic_type,
            code,
            param: param.map(str::to_string),
            hecate_type: e.error_type.code().to_string(),
            message: e.message,
            user_message: e.user_message,
            operator_action: e.operator_action,
            details: *e.details,
            retry_after,
        }
    }
}

impl From<Denial> for GatewayError {
    fn from(d: Denial) -> Self {
        let (openai_type, anthropic_type, code) = match d.status() {
            StatusCode::UNAUTHORIZED => (
                "invalid_request_error",
                "authentication_error",
                "invalid_api_key",
            ),
            StatusCode::FORBIDDEN => ("invalid_request_error", "permission_error", "forbidden"),
            _ => (
                "invalid_request_error",
                "invalid_request_error",
                "invalid_request",
            ),
        };
        let mut details = Map::new();
        if let Some((k, v)) = d.detail() {
            details.insert(k.into(), json!(v));
        }
        let operator_action = match d.status() {
            StatusCode::UNAUTHORIZED => {
                "Send the token from `[server] token` or HECATE_TOKEN as the SDK's API key \
                 (`Authorization: Bearer <token>` or `x-api-key: <token>`)."
            }
            _ => d.operator_action(),
        };
        Self {
            status: d.status(),
            openai_type,
            anthropic_type,
            code: code.into(),
            param: None,
            hecate_type: d.code().into(),
            message: d.to_string(),
            user_message: d.user_message().into(),
            operator_action: operator_action.into(),
            details,
            retry_after: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A provider failure as the engine hands it to the bridge: its type, the
    /// `reason`, the provider and model, and the upstream status and
    /// `Retry-After` when the provider answered.
    fn upstream_failure(
        error_type: ErrorType,
        reason: &str,
        upstream_status: Option<u16>,
        retry_after: Option<&str>,
    ) -> HecateError {
        let mut e = HecateError::new(error_type, format!("fix/m: {reason}"))
            .with_detail("reason", reason)
            .with_detail("provider", "fix")
            .with_detail("model", "m");
        if let Some(s) = upstream_status {
            e = e.with_detail("upstream_status", s);
        }
        if let Some(r) = retry_after {
            e = e.with_detail("retry_after", r);
        }
        e
    }

    async fn body(r: Response) -> Value {
        let bytes = axum::body::to_bytes(r.into_body(), 1 << 20)
            .await
            .expect("body");
        serde_json::from_slice(&bytes).expect("json")
    }

    #[tokio::test]
    async fn upstream_failures_map_to_statuses_and_both_shapes() {
        let ids = RequestIds {
            request_id: "req_1".into(),
            trace_id: "t1".into(),
        };
        let limited = upstream_failure(
            ErrorType::RateLimitExceeded,
            "provider_rate_limited",
            Some(429),
            Some("3"),
        );
        let r = GatewayError::from(limited).render(WireFormat::OpenAi, Some(&ids));
        assert_eq!(r.status(), 429);
        assert_eq!(r.headers()["retry-after"], "3");
        let v = body(r).await;
        assert_eq!(v["error"]["type"], "rate_limit_error");
        assert_eq!(v["error"]["code"], "provider_rate_limited");
        assert_eq!(v["error"]["hecate_type"], "rate_limit_exceeded");
        assert_eq!(v["error"]["request_id"], "req_1");
        assert_eq!(v["error"]["provider"], "fix");
        for (e, status) in [
            (
                upstream_failure(ErrorType::GatewayError, "provider_unreachable", None, None),
                502,
            ),
            (
                upstream_failure(ErrorType::GatewayError, "provider_error", Some(503), None),
                502,
            ),
            (
                upstream_failure(
                    ErrorType::GatewayError,
                    "credential_rejected",
                    Some(401),
                    None,
                ),
                502,
            ),
            (
                upstream_failure(ErrorType::GatewayError, "provider_error", Some(400), None),
                400,
            ),
        ] {
            let g = GatewayError::from(e);
            assert_eq!(g.status.as_u16(), status, "{}", g.message);
        }
        let a = GatewayError::from(
            HecateError::new(ErrorType::ModelNotConfigured, "no")
                .with_detail("reason", "model_not_found"),
        )
        .render(WireFormat::Anthropic, None);
        assert_eq!(a.status(), 404);
        let v = body(a).await;
        assert_eq!(v["type"], "error");
        assert_eq!(v["error"]["type"], "not_found_error");
        assert_eq!(v["error"]["code"], "model_not_found");
        let cooling = GatewayError::from(
            HecateError::new(ErrorType::RouteImpossible, "all cooling down")
                .with_detail("reason", "circuit_open")
                .with_detail("retry_after", "4"),
        )
        .render(WireFormat::Anthropic, None);
        assert_eq!(cooling.status(), 503);
        assert_eq!(cooling.headers()["retry-after"], "4");
        assert_eq!(body(cooling).await["error"]["type"], "overloaded_error");
        let denied = GatewayError::from(
            HecateError::new(ErrorType::RouteImpossible, "denied")
                .with_detail("reason", "policy_denied"),
        );
        assert_eq!(denied.status, 422);
        assert_eq!(denied.code, "policy_denied");
        let d = GatewayError::from(Denial::MissingToken).render(WireFormat::Anthropic, None);
        assert_eq!(d.status(), 401);
        assert_eq!(body(d).await["error"]["type"], "authentication_error");
    }

    #[test]
    fn an_expired_upstream_sign_in_is_a_failed_dependency_not_a_server_fault() {
        let e = HecateError::new(ErrorType::AuthRequired, "sign in to github again")
            .with_operator_action("Run `hecate mcp login github`.");
        let g = GatewayError::from(e);
        assert_eq!(g.status, StatusCode::FAILED_DEPENDENCY);
        assert_eq!(g.code, "auth_required");
        assert_eq!(g.operator_action, "Run `hecate mcp login github`.");
        let other = GatewayError::from(HecateError::new(ErrorType::StoreError, "disk full"));
        assert_eq!(other.status, StatusCode::INTERNAL_SERVER_ERROR);
    }
}
