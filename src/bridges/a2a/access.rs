//! The access rules on the A2A routes: every route checks the Host/Origin
//! policy of [`crate::bridges::access`]; every route but the cards and the agent
//! list also needs a credential when the server has a token: the token (admin)
//! or a named API key whose role covers the request (reads need `read`, sending,
//! cancelling, answering and anything about push notification configs, whose
//! tokens and credentials a read would show, need `operator`; see
//! `bridges::roles`). A refusal is an A2A REST error body (`UNAUTHENTICATED` /
//! `PERMISSION_DENIED`).

use super::card::{AGENTS_PATH, CARD_PATH};
use super::state::A2aState;
use crate::bridges::access::Denial;
use crate::bridges::roles::Surface;
use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// Whether `path` is public (a card or the agent list).
pub fn is_public(path: &str) -> bool {
    path.ends_with(CARD_PATH) || path == AGENTS_PATH
}

/// Applies the guard: the host policy everywhere, the token off the public paths.
pub async fn guard(State(state): State<A2aState>, mut req: Request, next: Next) -> Response {
    if is_public(req.uri().path()) {
        return match state.guard.check_host(req.uri(), req.headers()) {
            Ok(()) => next.run(req).await,
            Err(d) => refusal(&d),
        };
    }
    match state
        .guard
        .admit(Surface::Api, req.method(), req.uri(), req.headers())
        .await
    {
        Ok(identity) => {
            req.extensions_mut().insert(identity);
            next.run(req).await
        }
        Err(d) => refusal(&d),
    }
}

/// A denial as an A2A REST error.
fn refusal(d: &Denial) -> Response {
    let status = d.status();
    let grpc = match status {
        StatusCode::UNAUTHORIZED => "UNAUTHENTICATED",
        StatusCode::FORBIDDEN => "PERMISSION_DENIED",
        _ => "INVALID_ARGUMENT",
    };
    let body = json!({"error": {
        "code": status.as_u16(),
        "status": grpc,
        "message": d.to_string(),
        "details": [{
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": d.code(),
            "domain": "hecate",
            "metadata": {},
        }],
    }});
    let mut response = (status, Json(body)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_cards_and_the_list_are_public() {
        assert!(is_public("/.well-known/agent-card.json"));
        assert!(is_public("/a2a/hecate/.well-known/agent-card.json"));
        assert!(is_public("/a2a"));
        assert!(!is_public("/a2a/hecate"));
        assert!(!is_public("/a2a/hecate/message:send"));
        assert!(!is_public("/v1/agents/hecate/message:send"));
    }
}
