//! The card routes: `GET /.well-known/agent-card.json` (the default agent,
//! `hecate`), `GET /a2a/{agent}/.well-known/agent-card.json` (any agent) and
//! `GET /a2a` (every agent with its card URL). Cards are public, as A2A clients
//! read them before they authenticate.

use super::agents::{list, resolve};
use super::card::{CARD_PATH, agent_url, card, origin};
use super::state::A2aState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// The name of the agent the server's own well-known card describes.
const DEFAULT_AGENT: &str = "hecate";

/// The default agent's card.
pub async fn default_card(State(state): State<A2aState>, headers: HeaderMap) -> Response {
    agent_card(State(state), Path(DEFAULT_AGENT.to_string()), headers).await
}

/// One agent's card.
pub async fn agent_card(
    State(state): State<A2aState>,
    Path(agent): Path<String>,
    headers: HeaderMap,
) -> Response {
    match resolve(&state.engine, &agent).await {
        Ok(a) => Json(card(&a, &origin(&headers), state.bearer)).into_response(),
        Err(e) => (e.http_status(), Json(e.rest_body())).into_response(),
    }
}

/// Every agent served, with its URL and card URL.
pub async fn agents(State(state): State<A2aState>, headers: HeaderMap) -> Response {
    let origin = origin(&headers);
    let agents: Vec<_> = list(&state.engine)
        .await
        .iter()
        .map(|a| {
            let url = agent_url(&origin, a);
            json!({
                "name": a.name,
                "title": a.title,
                "description": a.description,
                "url": url,
                "cardUrl": format!("{url}{CARD_PATH}"),
            })
        })
        .collect();
    Json(json!({"agents": agents})).into_response()
}
