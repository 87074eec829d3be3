//! The error envelope `{"error": {type, message, user_message, operator_action, ...}}`.

use crate::domain::HecateError;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// A domain error rendered as the HTTP error envelope with its status code.
#[derive(Debug)]
pub struct ApiError(pub HecateError);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.0.error_type.http_status())
            .unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(json!({ "error": self.0 }))).into_response()
    }
}
