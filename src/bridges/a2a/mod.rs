//! A2A (Agent2Agent) 1.0: Hecate's agents served to A2A clients such as the
//! official `a2a-sdk` (Python) and `@a2a-js/sdk` (JavaScript), mounted by the
//! HTTP server. Cards at `/.well-known/agent-card.json` (the default agent) and
//! `/a2a/{agent}/.well-known/agent-card.json`; each agent's JSON-RPC binding at
//! `POST /a2a/{agent}` and its HTTP+JSON binding under `/a2a/{agent}/`; the
//! seed's `POST /v1/agents/{agent}/message:send`; with a credential required,
//! an authenticated extended card per caller. A `contextId` is one Agent
//! Chat session per agent, a task one turn of it, `input-required` its pending
//! approval; a task's webhooks get its updates as push notifications. The wire
//! types are the shared `crate::a2a_wire`. See docs/a2a.md.

mod access;
mod agents;
mod card;
mod discovery;
mod driver;
mod error;
mod extended;
mod files;
mod input;
mod jsonrpc;
mod ops;
mod push;
mod rest;
mod sse;
mod state;
mod stored;
mod tasks;
mod version;

pub use error::A2aError;
pub use state::A2aConfig;

use crate::bridges::access::{Denial, Guard};
use crate::engine::Engine;
use axum::Router;
use axum::http::{HeaderMap, Uri};
use axum::routing::{any, get, post};
use state::A2aState;
use std::sync::Arc;

/// The A2A routes for the HTTP server: `engine`'s agents in `namespace`,
/// guarded by `guard` (whose token, when it has one, the cards announce).
pub fn mount<S: Clone + Send + Sync + 'static>(
    engine: &Engine,
    namespace: &Arc<str>,
    guard: &Arc<Guard>,
) -> Router<S> {
    // A request without credentials is refused only when a credential is
    // required (a token or an identity provider).
    let bearer = matches!(
        guard.check(&Uri::from_static(card::AGENTS_PATH), &HeaderMap::new()),
        Err(Denial::MissingToken)
    );
    router(A2aConfig {
        engine: engine.clone(),
        namespace: namespace.clone(),
        guard: guard.clone(),
        bearer,
    })
}

/// The A2A routes over `config`'s engine, guarded by its access rules.
pub fn router<S: Clone + Send + Sync + 'static>(config: A2aConfig) -> Router<S> {
    let state = A2aState::new(config);
    Router::new()
        .route("/.well-known/agent-card.json", get(discovery::default_card))
        .route("/a2a", get(discovery::agents))
        .route("/a2a/{agent}", post(jsonrpc::handle))
        .route(
            "/a2a/{agent}/.well-known/agent-card.json",
            get(discovery::agent_card),
        )
        .route("/a2a/{agent}/message:send", post(rest::send))
        .route("/a2a/{agent}/message:stream", post(rest::stream))
        .route("/a2a/{agent}/tasks", get(rest::list))
        .route(
            "/a2a/{agent}/tasks/{task}",
            get(rest::task_get).post(rest::task_post),
        )
        .route(
            "/a2a/{agent}/tasks/{task}/pushNotificationConfigs",
            any(rest::push_configs),
        )
        .route(
            "/a2a/{agent}/tasks/{task}/pushNotificationConfigs/{config}",
            any(rest::push_config),
        )
        .route("/a2a/{agent}/extendedAgentCard", get(rest::extended_card))
        .route("/v1/agents/{agent}/message:send", post(rest::send))
        .route("/v1/agents/{agent}/message:stream", post(rest::stream))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            access::guard,
        ))
        .with_state(state)
}
