//! Provider failures and their mapping onto the stable error envelope types.

use crate::domain::error::{ErrorType, HecateError};
use crate::domain::redact::redact_urls_in;

/// Why a provider call failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ProviderError {
    /// The provider could not be reached (connection refused, DNS, TLS, timeout).
    #[error("provider unreachable: {0}")]
    Unreachable(String),
    /// The provider answered with an error status.
    #[error("provider answered HTTP {status}: {body}")]
    Status {
        /// HTTP status.
        status: u16,
        /// Response body (capped).
        body: String,
        /// `retry-after`, when sent.
        retry_after: Option<String>,
    },
    /// A stream frame was not what the protocol allows.
    #[error("malformed provider stream: {0}")]
    Malformed(String),
    /// The stream ended before the protocol's terminal event.
    #[error("provider stream ended before completion: {0}")]
    StreamCut(String),
}

impl ProviderError {
    /// The failure's `error.type` for traces and metrics: `unreachable`, the
    /// HTTP status (`429`, `500`, ...), `malformed` or `stream_cut`.
    pub fn error_type(&self) -> String {
        match self {
            ProviderError::Unreachable(_) => "unreachable".into(),
            ProviderError::Status { status, .. } => status.to_string(),
            ProviderError::Malformed(_) => "malformed".into(),
            ProviderError::StreamCut(_) => "stream_cut".into(),
        }
    }

    /// Whether the provider failed rather than the request, so another provider
    /// may answer it: a 429, 5xx, 408, 401/403 (the provider refused Hecate's
    /// key) or an unreachable provider.
    pub fn provider_side(&self) -> bool {
        match self {
            ProviderError::Status { status, .. } => {
                matches!(status, 401 | 403 | 408 | 429) || *status >= 500
            }
            ProviderError::Unreachable(_) => true,
            ProviderError::Malformed(_) | ProviderError::StreamCut(_) => false,
        }
    }

    /// Converts to the domain error, naming the provider and model.
    pub fn into_hecate(self, provider: &str, model: &str) -> HecateError {
        let message = format!("{provider}/{model}: {self}");
        let (error_type, reason, user, action) = match &self {
            ProviderError::Unreachable(_) => (
                ErrorType::GatewayError,
                "provider_unreachable",
                "The model provider could not be reached.",
                "Start the provider or fix its base_url, then run `hecate doctor`.",
            ),
            ProviderError::Status {
                status: 401 | 403, ..
            } => (
                ErrorType::GatewayError,
                "credential_rejected",
                "The model provider rejected the credentials.",
                "Add or rotate the provider's API key (config api_key or PROVIDER_<NAME>_API_KEY).",
            ),
            ProviderError::Status { status: 404, .. } => (
                ErrorType::ModelNotConfigured,
                "model_not_found",
                "The provider does not serve this model.",
                "Choose a model the provider lists (`hecate doctor` shows them).",
            ),
            ProviderError::Status { status: 429, .. } => (
                ErrorType::RateLimitExceeded,
                "provider_rate_limited",
                "The model provider is rate limiting requests.",
                "Wait for cooldown or route elsewhere.",
            ),
            ProviderError::Status { .. } => (
                ErrorType::GatewayError,
                "provider_error",
                "The model provider failed to answer.",
                "Retry; if it persists check the provider's status and `hecate doctor`.",
            ),
            ProviderError::Malformed(_) => (
                ErrorType::GatewayError,
                "malformed_stream",
                "The model provider sent an invalid stream.",
                "Check that base_url points at a compatible API, then retry.",
            ),
            ProviderError::StreamCut(_) => (
                ErrorType::GatewayError,
                "stream_interrupted",
                "The model provider's answer was cut off.",
                "Retry the turn; the partial answer is kept in the transcript.",
            ),
        };
        let mut e = HecateError::new(error_type, message)
            .with_user_message(user)
            .with_operator_action(action)
            .with_detail("reason", reason)
            .with_detail("provider", provider)
            .with_detail("model", model);
        if let ProviderError::Status {
            status,
            retry_after,
            ..
        } = &self
        {
            e = e.with_detail("upstream_status", *status);
            if let Some(r) = retry_after {
                e = e.with_detail("retry_after", r.clone());
            }
        }
        e
    }
}

impl From<reqwest::Error> for ProviderError {
    /// Classifies a transport error; the URL reqwest quotes is redacted (a base URL
    /// may carry `user:password@` or a `key=` query value).
    fn from(e: reqwest::Error) -> Self {
        let text = redact_urls_in(&e.to_string());
        if e.is_connect() || e.is_timeout() {
            ProviderError::Unreachable(text)
        } else if e.is_body() || e.is_decode() {
            ProviderError::StreamCut(text)
        } else {
            ProviderError::Unreachable(text)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_statuses_to_stable_types() {
        let s = |status| ProviderError::Status {
            status,
            body: String::new(),
            retry_after: None,
        };
        assert_eq!(
            s(401).into_hecate("p", "m").error_type,
            ErrorType::GatewayError
        );
        assert_eq!(
            s(429).into_hecate("p", "m").error_type,
            ErrorType::RateLimitExceeded
        );
        assert_eq!(
            s(404).into_hecate("p", "m").error_type,
            ErrorType::ModelNotConfigured
        );
        assert_eq!(
            s(500).into_hecate("p", "m").details["reason"],
            "provider_error"
        );
        let cut = ProviderError::StreamCut("eof".into()).into_hecate("p", "m");
        assert_eq!(cut.details["reason"], "stream_interrupted");
    }
}
