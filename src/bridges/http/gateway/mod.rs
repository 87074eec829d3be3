//! The model gateway's HTTP face (`/v1`): OpenAI- and Anthropic-compatible
//! ingress that the official SDKs can point at. `GET /v1/models`,
//! `POST /v1/chat/completions`, `POST /v1/messages`, `POST /v1/responses`. Access control is the
//! shared guard of [`crate::bridges::access`] (the bearer token, or the same
//! token as `x-api-key`), then the local rate limit (`limit.rs`); a request may
//! name the chat session it is recorded in (`X-Hecate-Session-Id` or a
//! `session_id` body field); and every failure is answered in the client's wire
//! shape with Hecate's envelope fields inside the error object (`errors.rs`).

mod errors;
mod format;
mod generation;
pub(super) mod handlers;
mod limit;
mod models;
pub(super) mod schema;

use super::request_id::RequestIds;
use super::{ApiRoute, HttpState};
use crate::bridges::access::Guard;
use crate::bridges::roles::Surface;
use crate::engine::Engine;
use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::Uri;
use axum::middleware::Next;
use axum::response::Response;
use errors::GatewayError;
use format::format_of;
use std::sync::Arc;

/// Largest request body the gateway accepts, in bytes (images travel inline).
pub const MAX_GATEWAY_BODY_BYTES: usize = 32 * 1024 * 1024;

/// The gateway's operations, with their full paths as the OpenAPI document
/// names them.
pub fn routes() -> Vec<ApiRoute> {
    vec![
        ApiRoute::get("/v1/models", handlers::models),
        ApiRoute::post("/v1/chat/completions", handlers::chat_completions),
        ApiRoute::post("/v1/messages", handlers::messages),
        ApiRoute::post("/v1/responses", handlers::responses),
    ]
}

/// The gateway router, to be nested at `/v1`, guarded by `guard` and limited by
/// `engine`'s rate limiter.
pub fn router(guard: Arc<Guard>, engine: Engine) -> Router<HttpState> {
    let mut app = Router::new();
    for route in routes() {
        app = app.route(
            route.path.strip_prefix("/v1").unwrap_or(route.path),
            route.handler,
        );
    }
    app.fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_GATEWAY_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(engine, limit::limit))
        .layer(axum::middleware::from_fn_with_state(guard, access))
}

/// Applies the shared access rules, refusals rendered in the client's shape.
async fn access(State(guard): State<Arc<Guard>>, mut req: Request, next: Next) -> Response {
    match guard
        .admit(Surface::Gateway, req.method(), req.uri(), req.headers())
        .await
    {
        Ok(identity) => {
            req.extensions_mut().insert(identity);
            next.run(req).await
        }
        Err(d) => {
            let ids = req.extensions().get::<RequestIds>().cloned();
            GatewayError::from(d).render(format_of(&req), ids.as_ref())
        }
    }
}

/// Any other `/v1` path: a 404 in the client's shape.
async fn not_found(uri: Uri, req: Request) -> Response {
    let ids = req.extensions().get::<RequestIds>().cloned();
    let mut e = GatewayError::invalid(format!("no gateway route for {}", uri.path()));
    e.status = axum::http::StatusCode::NOT_FOUND;
    e.code = "not_found".into();
    e.anthropic_type = "not_found_error";
    e.hecate_type = "not_found".into();
    e.render(format_of(&req), ids.as_ref())
}
