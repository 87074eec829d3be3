//! The HTTP surface (axum): `/healthz`, the model gateway (`/v1`, OpenAI- and
//! Anthropic-compatible, in `gateway/`), ACP over a WebSocket (`/acp`), and the
//! `/hecate/v1` API — system stats, Agent Chat sessions, messages and SSE streams,
//! approvals and grants, changed files, external-agent adapters, the task runtime
//! (tasks, runs, approvals, events and their streams), client-hosted chats, and the
//! OpenAPI document. One module per resource; every route is listed once in
//! [`routes`], from which both the router and the OpenAPI drift test are built
//! (`/acp`, like `/mcp`, is a protocol endpoint mounted beside them).
//!
//! Layers, outermost first: correlation ids and error envelopes (`request_id`),
//! CORS for loopback origins, access control (`auth`: the shared rules of
//! [`crate::bridges::access`]), the body limit, then the handlers. Handlers only
//! call the engine. `bridges::serve` runs a router with the connection limits.

mod acp;
mod adapters;
mod approval_inbox;
mod approvals;
mod auth;
mod capabilities;
mod chat_sessions;
mod chats;
mod console;
pub(crate) mod envelope;
mod extract;
mod files;
mod flows;
mod gateway;
mod keys;
mod mcp;
mod memory;
mod messages;
mod openapi;
mod path_params;
mod project;
mod providers;
mod request_id;
mod sessions;
mod state;
mod stream;
mod system;
mod tasks;
mod traces;

pub use acp::ACP_PATH;
pub use console::{CONTENT_SECURITY_POLICY, ConsoleSource};
pub use envelope::{ApiError, ErrorBody, ErrorEnvelope};
pub use extract::MAX_BODY_BYTES;
pub use openapi::document as openapi_document;
pub use state::{ApiRoute, HttpConfig, HttpState};

use crate::bridges::a2a;
use crate::bridges::access::{self, Guard, HostPolicy};
use crate::engine::Engine;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::{HeaderName, Method, Uri, header};
use std::sync::Arc;
use std::time::Instant;
use stream::StreamHub;
use tower_http::cors::{AllowOrigin, CorsLayer};

const SESSIONS: &str = "/hecate/v1/agent-chat/sessions";
const SESSION: &str = "/hecate/v1/agent-chat/sessions/{id}";
const TASKS: &str = "/hecate/v1/tasks";
const TASK: &str = "/hecate/v1/tasks/{id}";
const RUN: &str = "/hecate/v1/tasks/{id}/runs/{run_id}";
const CHAT_SESSION: &str = "/hecate/v1/chat/sessions/{id}";
const CAPABILITY_OVERRIDES: &str = "/hecate/v1/model-capabilities/overrides";

/// Every route the server answers. Add new resources here (one module each).
pub fn routes() -> Vec<ApiRoute> {
    vec![
        ApiRoute::get("/healthz", system::healthz),
        ApiRoute::get("/hecate/v1/system/stats", system::stats),
        ApiRoute::get("/hecate/v1/providers/presets", providers::list_presets),
        ApiRoute::get("/hecate/v1/providers/status", providers::status),
        ApiRoute::get(
            "/hecate/v1/settings/providers/local-discovery",
            providers::local_discovery,
        ),
        ApiRoute::put(CAPABILITY_OVERRIDES, capabilities::put_override),
        ApiRoute::delete(CAPABILITY_OVERRIDES, capabilities::delete_override),
        ApiRoute::post("/hecate/v1/model-capabilities/probes", capabilities::probe),
        ApiRoute::get("/hecate/v1/openapi.json", openapi::openapi_json),
        ApiRoute::get("/hecate/v1/memory/search", memory::search),
        ApiRoute::get("/hecate/v1/memory/status", memory::status),
        ApiRoute::get(SESSIONS, sessions::list),
        ApiRoute::post(SESSIONS, sessions::create),
        ApiRoute::get(SESSION, sessions::get),
        ApiRoute::delete(SESSION, sessions::delete),
        ApiRoute::post(
            "/hecate/v1/agent-chat/sessions/{id}/messages",
            messages::send,
        ),
        ApiRoute::get(
            "/hecate/v1/agent-chat/sessions/{id}/messages",
            messages::list,
        ),
        ApiRoute::post(
            "/hecate/v1/agent-chat/sessions/{id}/cancel",
            sessions::cancel,
        ),
        ApiRoute::post("/hecate/v1/agent-chat/sessions/{id}/close", sessions::close),
        ApiRoute::get(
            "/hecate/v1/agent-chat/sessions/{id}/stream",
            stream::sse::stream,
        ),
        ApiRoute::get(
            "/hecate/v1/agent-chat/sessions/{id}/messages/{message_id}/files",
            files::list,
        ),
        ApiRoute::get(
            "/hecate/v1/agent-chat/sessions/{id}/messages/{message_id}/files/{path}",
            files::diff,
        ),
        ApiRoute::post(
            "/hecate/v1/agent-chat/sessions/{id}/messages/{message_id}/revert",
            files::revert,
        ),
        ApiRoute::get(
            "/hecate/v1/agent-chat/sessions/{id}/approvals",
            approvals::list,
        ),
        ApiRoute::get(
            "/hecate/v1/agent-chat/sessions/{id}/approvals/{approval_id}",
            approvals::get,
        ),
        ApiRoute::post(
            "/hecate/v1/agent-chat/sessions/{id}/approvals/{approval_id}/resolve",
            approvals::resolve,
        ),
        ApiRoute::post(
            "/hecate/v1/agent-chat/sessions/{id}/approvals/{approval_id}/cancel",
            approvals::cancel,
        ),
        ApiRoute::get("/hecate/v1/approvals", approval_inbox::list),
        ApiRoute::get("/hecate/v1/agent-chat/grants", approvals::list_grants),
        ApiRoute::post("/hecate/v1/agent-chat/grants", approvals::create_grant),
        ApiRoute::delete(
            "/hecate/v1/agent-chat/grants/{grant_id}",
            approvals::revoke_grant,
        ),
        ApiRoute::get("/hecate/v1/keys", keys::list),
        ApiRoute::post("/hecate/v1/keys", keys::create),
        ApiRoute::delete("/hecate/v1/keys/{key}", keys::revoke),
        ApiRoute::get("/hecate/v1/agent-adapters", adapters::list),
        ApiRoute::post("/hecate/v1/agent-adapters/{id}/probe", adapters::probe),
        ApiRoute::get("/hecate/v1/agent-adapters/{id}/health", adapters::health),
        ApiRoute::post(
            "/hecate/v1/agent-adapters/{id}/refresh-launcher",
            adapters::refresh_launcher,
        ),
        ApiRoute::post(
            "/hecate/v1/agent-adapters/{id}/install",
            adapters::start_install,
        ),
        ApiRoute::get(
            "/hecate/v1/agent-adapters/{id}/install",
            adapters::get_install,
        ),
        ApiRoute::get("/hecate/v1/agent-adapters/processes", adapters::processes),
        ApiRoute::post(
            "/hecate/v1/agent-adapters/processes/{id}/kill",
            adapters::kill_process,
        ),
        ApiRoute::get(TASKS, tasks::crud::list),
        ApiRoute::post(TASKS, tasks::crud::create),
        ApiRoute::get(TASK, tasks::crud::get),
        ApiRoute::delete(TASK, tasks::crud::delete),
        ApiRoute::post("/hecate/v1/tasks/{id}/start", tasks::crud::start),
        ApiRoute::get("/hecate/v1/tasks/{id}/runs", tasks::runs::list),
        ApiRoute::get(RUN, tasks::runs::get),
        ApiRoute::post(
            "/hecate/v1/tasks/{id}/runs/{run_id}/cancel",
            tasks::runs::cancel,
        ),
        ApiRoute::post(
            "/hecate/v1/tasks/{id}/runs/{run_id}/retry",
            tasks::runs::retry,
        ),
        ApiRoute::post(
            "/hecate/v1/tasks/{id}/runs/{run_id}/resume",
            tasks::runs::resume,
        ),
        ApiRoute::get(
            "/hecate/v1/tasks/{id}/runs/{run_id}/steps",
            tasks::runs::steps,
        ),
        ApiRoute::get(
            "/hecate/v1/tasks/{id}/runs/{run_id}/steps/{step_id}",
            tasks::runs::step,
        ),
        ApiRoute::get(
            "/hecate/v1/tasks/{id}/runs/{run_id}/artifacts",
            tasks::runs::artifacts,
        ),
        ApiRoute::get(
            "/hecate/v1/tasks/{id}/runs/{run_id}/artifacts/{artifact_id}",
            tasks::runs::artifact,
        ),
        ApiRoute::get(
            "/hecate/v1/tasks/{id}/artifacts",
            tasks::runs::task_artifacts,
        ),
        ApiRoute::get(
            "/hecate/v1/tasks/{id}/runs/{run_id}/patches",
            tasks::patches::list,
        ),
        ApiRoute::get(
            "/hecate/v1/tasks/{id}/runs/{run_id}/patches/{artifact_id}",
            tasks::patches::get,
        ),
        ApiRoute::post(
            "/hecate/v1/tasks/{id}/runs/{run_id}/patches/{artifact_id}/apply",
            tasks::patches::apply,
        ),
        ApiRoute::post(
            "/hecate/v1/tasks/{id}/runs/{run_id}/patches/{artifact_id}/revert",
            tasks::patches::revert,
        ),
        ApiRoute::get(
            "/hecate/v1/tasks/{id}/runs/{run_id}/events",
            tasks::events::run_events,
        ),
        ApiRoute::post(
            "/hecate/v1/tasks/{id}/runs/{run_id}/events",
            tasks::events::append_run_events,
        ),
        ApiRoute::get(
            "/hecate/v1/tasks/{id}/runs/{run_id}/stream",
            tasks::events::run_stream,
        ),
        ApiRoute::get("/hecate/v1/tasks/{id}/approvals", tasks::approvals::list),
        ApiRoute::get(
            "/hecate/v1/tasks/{id}/approvals/{approval_id}",
            tasks::approvals::get,
        ),
        ApiRoute::post(
            "/hecate/v1/tasks/{id}/approvals/{approval_id}/resolve",
            tasks::approvals::resolve,
        ),
        ApiRoute::get("/hecate/v1/events", tasks::events::feed),
        ApiRoute::get("/hecate/v1/events/stream", tasks::events::feed_stream),
        ApiRoute::post(
            "/hecate/v1/tasks/{id}/runs/{run_id}/continue",
            tasks::chain::continue_run,
        ),
        ApiRoute::post(
            "/hecate/v1/tasks/{id}/runs/{run_id}/retry-from-turn",
            tasks::chain::retry_from_turn,
        ),
        ApiRoute::post("/hecate/v1/mcp/probe", mcp::probe),
        ApiRoute::get("/hecate/v1/system/mcp/cache", mcp::cache),
        ApiRoute::get("/hecate/v1/mcp/servers", mcp::servers),
        ApiRoute::delete("/hecate/v1/mcp/servers/{name}/sign-in", mcp::sign_out),
        ApiRoute::put(
            "/hecate/v1/mcp/servers/{name}/tools/{tool}/policy",
            mcp::set_tool_policy,
        ),
        ApiRoute::get("/hecate/v1/mcp/calls", mcp::calls),
        ApiRoute::get("/hecate/v1/chat/sessions", chat_sessions::list),
        ApiRoute::post("/hecate/v1/chat/sessions", chat_sessions::create),
        ApiRoute::get(CHAT_SESSION, chat_sessions::get),
        ApiRoute::patch(CHAT_SESSION, chat_sessions::update),
        ApiRoute::delete(CHAT_SESSION, chat_sessions::delete),
        ApiRoute::get(
            "/hecate/v1/chat/sessions/{id}/replay",
            chat_sessions::replay,
        ),
        ApiRoute::get("/hecate/v1/traces", traces::list),
        ApiRoute::get("/hecate/v1/traces/costs", traces::costs),
        ApiRoute::get("/hecate/v1/flows", flows::catalog),
        ApiRoute::get("/hecate/v1/flows/{agent_id}/chats", flows::chats),
        ApiRoute::post("/hecate/v1/chats", chats::start),
        ApiRoute::get("/hecate/v1/chats/{chatId}", chats::get),
        ApiRoute::post("/hecate/v1/chats/{chatId}/messages", chats::send),
        ApiRoute::post("/hecate/v1/chats/{chatId}/responses", chats::process),
        ApiRoute::post("/hecate/v1/chats/{chatId}/summary", chats::summary),
    ]
}

/// Builds the router over `engine`. Must run inside the tokio runtime: it starts
/// the stream hub's tap on the engine bus, so call it before any turn starts.
pub fn router(engine: Engine, config: HttpConfig) -> Router {
    let idp = config
        .idp
        .map(|s| Arc::new(crate::bridges::idp::IdentityProvider::new(s)));
    let guard = Arc::new(
        Guard::new(
            config.token.clone(),
            HostPolicy::for_bound(config.bound.ip()),
        )
        .with_keys(engine.clone(), &config.namespace)
        .with_idp(idp.clone()),
    );
    let state = HttpState {
        hub: StreamHub::start(engine.clone(), config.namespace.clone()),
        engine,
        namespace: Arc::from(config.namespace.as_str()),
        started: Instant::now(),
        shutdown: config.shutdown,
    };
    let mcp = crate::bridges::mcp::http_router(
        state.engine.clone(),
        crate::bridges::mcp::McpHttpConfig {
            namespace: config.namespace.clone(),
            token: config.token.clone(),
            bound: config.bound,
            shutdown: state.shutdown.clone(),
            tool_loading: config.mcp_tool_loading,
            idp,
        },
    );
    let mut app = Router::new();
    for route in routes() {
        app = app.route(route.path, route.handler);
    }
    let acp = acp::router(
        guard.clone(),
        state.engine.clone(),
        state.namespace.clone(),
        state.shutdown.clone(),
        config.acp_default_target,
    );
    app.merge(console::router(guard.clone(), config.console))
        .merge(acp)
        .merge(a2a::mount(&state.engine, &state.namespace, &guard))
        .merge(crate::bridges::idp::metadata::router(&guard))
        .nest("/v1", gateway::router(guard.clone(), state.engine.clone()))
        .nest_service("/mcp", mcp)
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(
            guard,
            auth::middleware,
        ))
        .layer(cors())
        .layer(axum::middleware::from_fn(request_id::middleware))
        .with_state(state)
}

/// CORS for browser UIs served from loopback origins.
fn cors() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::predicate(|origin, _| {
            origin.to_str().is_ok_and(access::origin_is_loopback)
        }))
        .allow_methods([
            Method::GET,
            Method::POST,
            Method::PUT,
            Method::PATCH,
            Method::DELETE,
        ])
        .allow_headers([
            header::AUTHORIZATION,
            header::CONTENT_TYPE,
            HeaderName::from_static("last-event-id"),
            request_id::X_REQUEST_ID,
            crate::bridges::access::X_API_KEY,
            HeaderName::from_static("anthropic-version"),
            HeaderName::from_static("anthropic-beta"),
            HeaderName::from_static("x-hecate-session-id"),
            HeaderName::from_static("a2a-version"),
            HeaderName::from_static(chats::X_HECATE_APP_KEY),
            HeaderName::from_static(chats::X_HECATE_USER_TOKEN),
        ])
        .expose_headers([
            request_id::X_REQUEST_ID,
            request_id::X_TRACE_ID,
            HeaderName::from_static("x-ratelimit-limit"),
            HeaderName::from_static("x-ratelimit-remaining"),
            HeaderName::from_static("x-ratelimit-reset"),
            header::RETRY_AFTER,
        ])
}

async fn not_found(uri: Uri) -> ApiError {
    ApiError::no_route(uri.path())
}
