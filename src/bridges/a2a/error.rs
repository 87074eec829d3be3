//! The A2A errors this server answers, with their JSON-RPC codes, HTTP statuses
//! and `google.rpc.ErrorInfo` reasons as the A2A 1.0 specification and the
//! official SDKs map them, and how an engine error becomes one of them.

use crate::domain::error::{ErrorType, HecateError};
use axum::http::StatusCode;
use serde_json::{Value, json};

/// The `domain` of every `ErrorInfo` detail, as the official SDKs write it.
const A2A_DOMAIN: &str = "a2a-protocol.org";
/// The type URL of the `ErrorInfo` detail.
const ERROR_INFO_TYPE: &str = "type.googleapis.com/google.rpc.ErrorInfo";

/// An error answered to an A2A client; the text is the message it reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum A2aError {
    /// No task with this id belongs to this agent (-32001).
    #[error("{0}")]
    TaskNotFound(String),
    /// The task already ended (-32002).
    #[error("{0}")]
    TaskNotCancelable(String),
    /// The operation cannot be done on this task now (-32004).
    #[error("{0}")]
    UnsupportedOperation(String),
    /// A part's content type is not accepted (-32005).
    #[error("{0}")]
    ContentTypeNotSupported(String),
    /// The client asked for a protocol version other than 1.x (-32009).
    #[error("A2A version {0} is not supported; this server speaks 1.0")]
    VersionNotSupported(String),
    /// The parameters are malformed or refer to something invalid (-32602).
    #[error("{0}")]
    InvalidParams(String),
    /// The request is not a valid JSON-RPC request, or its agent does not exist
    /// (-32600).
    #[error("{0}")]
    InvalidRequest(String),
    /// No agent of this name is served (-32600, HTTP 404).
    #[error("{0}")]
    AgentNotFound(String),
    /// The JSON-RPC method does not exist (-32601).
    #[error("{0}")]
    MethodNotFound(String),
    /// The body is not JSON (-32700).
    #[error("{0}")]
    Parse(String),
    /// Hecate failed (-32603).
    #[error("{0}")]
    Internal(String),
}

impl A2aError {
    /// The JSON-RPC error code.
    pub fn code(&self) -> i64 {
        match self {
            Self::TaskNotFound(_) => -32001,
            Self::TaskNotCancelable(_) => -32002,
            Self::UnsupportedOperation(_) => -32004,
            Self::ContentTypeNotSupported(_) => -32005,
            Self::VersionNotSupported(_) => -32009,
            Self::InvalidParams(_) => -32602,
            Self::InvalidRequest(_) | Self::AgentNotFound(_) => -32600,
            Self::MethodNotFound(_) => -32601,
            Self::Parse(_) => -32700,
            Self::Internal(_) => -32603,
        }
    }

    /// The `ErrorInfo` reason the official SDKs map back to their error class.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::TaskNotFound(_) => "TASK_NOT_FOUND",
            Self::TaskNotCancelable(_) => "TASK_NOT_CANCELABLE",
            Self::UnsupportedOperation(_) => "UNSUPPORTED_OPERATION",
            Self::ContentTypeNotSupported(_) => "CONTENT_TYPE_NOT_SUPPORTED",
            Self::VersionNotSupported(_) => "VERSION_NOT_SUPPORTED",
            Self::InvalidParams(_) => "INVALID_PARAMS",
            Self::InvalidRequest(_) | Self::Parse(_) => "INVALID_REQUEST",
            Self::AgentNotFound(_) => "AGENT_NOT_FOUND",
            Self::MethodNotFound(_) => "METHOD_NOT_FOUND",
            Self::Internal(_) => "INTERNAL_ERROR",
        }
    }

    /// The HTTP status of the REST binding (and of a JSON-RPC call to an unknown
    /// agent; other JSON-RPC errors are a 200).
    pub fn http_status(&self) -> StatusCode {
        match self {
            Self::TaskNotFound(_) | Self::AgentNotFound(_) | Self::MethodNotFound(_) => {
                StatusCode::NOT_FOUND
            }
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        }
    }

    /// The gRPC status name the REST error body carries.
    fn grpc_status(&self) -> &'static str {
        match self.http_status() {
            StatusCode::NOT_FOUND => "NOT_FOUND",
            StatusCode::INTERNAL_SERVER_ERROR => "INTERNAL",
            _ => match self {
                Self::InvalidParams(_)
                | Self::InvalidRequest(_)
                | Self::Parse(_)
                | Self::ContentTypeNotSupported(_) => "INVALID_ARGUMENT",
                _ => "FAILED_PRECONDITION",
            },
        }
    }

    /// The typed details both bindings attach: one `ErrorInfo`.
    fn details(&self) -> Value {
        json!([{
            "@type": ERROR_INFO_TYPE,
            "reason": self.reason(),
            "domain": A2A_DOMAIN,
            "metadata": {},
        }])
    }

    /// The JSON-RPC `error` object.
    pub fn jsonrpc_error(&self) -> Value {
        json!({"code": self.code(), "message": self.to_string(), "data": self.details()})
    }

    /// The REST error body (`google.rpc.Status` under `error`).
    pub fn rest_body(&self) -> Value {
        json!({"error": {
            "code": self.http_status().as_u16(),
            "status": self.grpc_status(),
            "message": self.to_string(),
            "details": self.details(),
        }})
    }
}

impl From<HecateError> for A2aError {
    fn from(e: HecateError) -> Self {
        let text = format!("{} ({})", e.message, e.error_type.code());
        match e.error_type {
            ErrorType::InvalidRequest
            | ErrorType::NotFound
            | ErrorType::WorkspaceRequired
            | ErrorType::ModelRequired
            | ErrorType::RuntimeMismatch
            | ErrorType::AdapterNotFound => Self::InvalidParams(text),
            ErrorType::AgentSessionBusy
            | ErrorType::SessionBusyElsewhere
            | ErrorType::SessionStopping
            | ErrorType::Conflict
            | ErrorType::SessionLimitExceeded
            | ErrorType::SessionDurationLimitExceeded
            | ErrorType::SessionIdleTimeout => Self::UnsupportedOperation(text),
            _ => Self::Internal(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_follow_the_specification() {
        assert_eq!(A2aError::TaskNotFound("x".into()).code(), -32001);
        assert_eq!(A2aError::TaskNotCancelable("x".into()).code(), -32002);
        assert_eq!(A2aError::UnsupportedOperation("x".into()).code(), -32004);
        assert_eq!(A2aError::ContentTypeNotSupported("x".into()).code(), -32005);
        assert_eq!(A2aError::VersionNotSupported("0.3".into()).code(), -32009);
        assert_eq!(A2aError::InvalidParams("x".into()).code(), -32602);
        assert_eq!(A2aError::MethodNotFound("x".into()).code(), -32601);
        assert_eq!(A2aError::Parse("x".into()).code(), -32700);
    }

    #[test]
    fn rest_bodies_carry_the_reason_the_sdks_map() {
        let e = A2aError::TaskNotCancelable("task t is completed".into());
        assert_eq!(e.http_status(), StatusCode::BAD_REQUEST);
        let b = e.rest_body();
        assert_eq!(b["error"]["status"], "FAILED_PRECONDITION");
        assert_eq!(b["error"]["details"][0]["reason"], "TASK_NOT_CANCELABLE");
        assert_eq!(b["error"]["message"], "task t is completed");
        let j = A2aError::TaskNotFound("no".into()).jsonrpc_error();
        assert_eq!(j["code"], -32001);
        assert_eq!(j["data"][0]["domain"], "a2a-protocol.org");
    }

    #[test]
    fn engine_errors_map_to_the_nearest_a2a_error() {
        let busy = HecateError::new(ErrorType::AgentSessionBusy, "busy");
        assert_eq!(A2aError::from(busy).code(), -32004);
        assert_eq!(A2aError::from(HecateError::invalid("bad")).code(), -32602);
        let other = HecateError::gateway("upstream down");
        assert_eq!(A2aError::from(other).code(), -32603);
    }
}
