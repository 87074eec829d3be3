//! The shared access rules ([`crate::bridges::access`]) applied to the API paths
//! (`/hecate/v1/*`), refusals rendered as the error envelope; `/healthz` is open.
//! The identity admitted is put in the request's extensions for the handlers.

use super::envelope::ApiError;
use super::request_id::is_api_path;
use crate::bridges::access::{Denial, Guard};
use crate::bridges::roles::Surface;
use crate::domain::api_key::Identity;
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
pub async fn middleware(State(guard): State<Arc<Guard>>, mut req: Request, next: Next) -> Response {
    if is_api_path(req.uri().path()) {
        match guard
            .admit(Surface::Api, req.method(), req.uri(), req.headers())
            .await
        {
            Ok(identity) => {
                req.extensions_mut().insert(identity);
            }
            Err(d) => {
                return guard.with_challenge(refusal(d.clone()), &d, Surface::Api, req.headers());
            }
        }
    }
    next.run(req).await
}

/// A refusal as the error envelope, with `WWW-Authenticate` on a 401.
pub fn refusal(d: Denial) -> Response {
    let mut response = ApiError::from(d).into_response();
    if response.status() == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// Who a request acts as, as recorded on what it decides or starts: `admin`
/// (the static token, or a server without one) or `key:NAME`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Actor(pub String);

impl<S: Send + Sync> axum::extract::FromRequestParts<S> for Actor {
    type Rejection = std::convert::Infallible;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        _state: &S,
    ) -> Result<Self, Self::Rejection> {
        let identity = parts.extensions.get::<Identity>();
        Ok(Self(
            identity.map_or_else(|| Identity::Admin.label(), Identity::label),
        ))
    }
}
