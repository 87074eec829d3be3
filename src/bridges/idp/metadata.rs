//! RFC 9728 protected-resource metadata: `GET /.well-known/oauth-protected-resource`
//! and its path-suffixed forms for `/mcp` and `/hecate/v1`, public (no token;
//! the Host and Origin rules still apply) and mounted only when an identity
//! provider is configured, so without one they are the API's 404 envelope.

use super::verifier::WELL_KNOWN;
use crate::bridges::access::Guard;
use crate::bridges::http::ApiError;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::Arc;

/// The path suffixes of the protected surfaces (the hub's root first).
pub const SURFACES: [&str; 3] = ["", "/mcp", "/hecate/v1"];

/// The metadata routes of a server guarded by `guard`: empty when the guard
/// trusts no identity provider.
pub fn router<S: Clone + Send + Sync + 'static>(guard: &Arc<Guard>) -> Router<S> {
    if guard.idp().is_none() {
        return Router::new();
    }
    let mut app = Router::new();
    for suffix in SURFACES {
        app = app.route(&format!("{WELL_KNOWN}{suffix}"), get(document));
    }
    app.with_state(guard.clone())
}

async fn document(State(guard): State<Arc<Guard>>, uri: Uri, headers: HeaderMap) -> Response {
    if let Err(d) = guard.check_host(&uri, &headers) {
        return ApiError::from(d).into_response();
    }
    let Some(idp) = guard.idp() else {
        return ApiError::no_route(uri.path()).into_response();
    };
    let mut response = axum::Json(idp.metadata()).into_response();
    response.headers_mut().insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=300"),
    );
    response
}
