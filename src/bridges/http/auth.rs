//! The shared access rules ([`crate::bridges::access`]) applied to the API paths
//! (`/hecate/v1/*`), refusals rendered as the error envelope; `/healthz` is open.

use super::envelope::ApiError;
use super::request_id::is_api_path;
use crate::bridges::access::{Denial, Guard};
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::Arc;

impl From<Denial> for ApiError {
    fn from(d: Denial) -> Self {
        let e = ApiError::custom(
            d.status(),
            d.code(),
            d.to_string(),
            d.user_message(),
            d.operator_action(),
        );
        match d.detail() {
            Some((key, value)) => e.with_detail(key, value),
            None => e,
        }
    }
}

/// Applies the guard to API paths; other paths (`/healthz`) pass untouched.
pub async fn middleware(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    if is_api_path(req.uri().path())
        && let Err(d) = guard.check(req.uri(), req.headers())
    {
        let mut response = ApiError::from(d).into_response();
        if response.status() == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        return response;
    }
    next.run(req).await
}
