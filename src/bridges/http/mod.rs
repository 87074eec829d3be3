//! The HTTP surface (axum): liveness today; the `/hecate/v1` API grows here.

mod envelope;

use crate::engine::Engine;
use axum::Router;
use axum::routing::get;
use serde_json::json;
use std::time::Instant;

pub use envelope::ApiError;

/// Shared state of the HTTP handlers.
#[derive(Clone)]
pub struct HttpState {
    /// The engine.
    pub engine: Engine,
    /// When the server started.
    pub started: Instant,
}

/// Builds the router: `/healthz` outside the envelope, every unknown path a 404 in it.
pub fn router(state: HttpState) -> Router {
    Router::new()
        .route("/healthz", get(healthz))
        .fallback(not_found)
        .with_state(state)
}

async fn healthz() -> axum::Json<serde_json::Value> {
    axum::Json(json!({
        "status": "ok",
        "time": crate::domain::time::now_rfc3339(),
        "version": env!("CARGO_PKG_VERSION"),
    }))
}

async fn not_found(uri: axum::http::Uri) -> ApiError {
    ApiError(crate::domain::HecateError::new(
        crate::domain::ErrorType::NotFound,
        format!("no route for {}", uri.path()),
    ))
}
