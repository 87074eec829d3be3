//! The local rate limit on `/v1`: every request asks the engine's limiter; a
//! refusal is a 429 `rate_limit_exceeded` in the client's shape with
//! `Retry-After`, and every answer carries `X-RateLimit-Limit`,
//! `X-RateLimit-Remaining` and `X-RateLimit-Reset` (zero when no limit is set).

use super::super::request_id::RequestIds;
use super::errors::GatewayError;
use super::format::format_of;
use crate::domain::{ErrorType, HecateError};
use crate::engine::Engine;
use crate::engine::gateway::routing::limit::RateDecision;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;

/// Admits the request or refuses it, and sets the rate-limit headers.
pub async fn limit(State(engine): State<Engine>, req: Request, next: Next) -> Response {
    let decision = engine.gateway().admit();
    let mut response = if decision.allowed {
        next.run(req).await
    } else {
        let ids = req.extensions().get::<RequestIds>().cloned();
        let e = HecateError::new(
            ErrorType::RateLimitExceeded,
            format!(
                "the gateway admits {} requests per minute; retry in {} s",
                decision.limit, decision.retry_after
            ),
        )
        .with_user_message("Hecate's local gateway rate limit was reached.")
        .with_operator_action("Wait for Retry-After seconds, or raise [gateway] rate_limit_rpm.")
        .with_detail("retry_after", decision.retry_after.to_string());
        GatewayError::from(e).render(format_of(&req), ids.as_ref())
    };
    set_headers(response.headers_mut(), decision);
    response
}

fn set_headers(h: &mut HeaderMap, d: RateDecision) {
    for (name, value) in [
        ("x-ratelimit-limit", u64::from(d.limit)),
        ("x-ratelimit-remaining", u64::from(d.remaining)),
        ("x-ratelimit-reset", d.reset),
    ] {
        h.insert(name, HeaderValue::from(value));
    }
}
