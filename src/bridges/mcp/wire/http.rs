//! Streamable HTTP: an axum router to mount at `/mcp` (`nest_service`), serving
//! the hub at `/mcp` and one upstream at `/mcp/{NAME}` (its tools under their
//! own names, still through the engine). rmcp provides sessions
//! (`Mcp-Session-Id`), SSE with resumption (`Last-Event-ID`) and the body limit;
//! the guard here applies the access rules shared with `/hecate/v1`
//! ([`crate::bridges::access`]: head size, Host/Origin, bearer token) and every
//! error Hecate or rmcp answers with is a JSON-RPC error object with `"id": null`
//! ([`super::reply`]). A JSON POST body is triaged like a
//! stdio line ([`super::triage`]) before rmcp sees it, so a body that is not
//! JSON, not JSON-RPC, names an unknown method or has ill-typed parameters gets
//! the same JSON-RPC error as over stdio (rmcp would answer 415 in plain text,
//! or take a known method with ill-typed parameters for an unknown one). rmcp
//! serves a request of a 2026-07-28 client (its revision, capabilities and
//! client in `_meta`, the `MCP-Protocol-Version` header matching) without a
//! session, on a handler of its own; calls of such clients waiting for their
//! next round are shared by the endpoint's handlers.

use super::super::modern::rounds::Rounds;
use super::super::server::{HecateMcp, McpServerOptions};
use super::reply;
use super::triage::{self, Triage};
use crate::bridges::access::{Guard, HostPolicy};
use crate::bridges::roles::Surface;
use crate::bridges::serve::is_body_timeout;
use crate::domain::error::ErrorType;
use crate::engine::{Engine, ToolLoading};
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::Map;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Largest JSON-RPC POST body accepted, in bytes (larger gets 413).
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How the endpoint is configured.
#[derive(Debug, Clone)]
pub struct McpHttpConfig {
    /// Namespace every session of this endpoint lives in.
    pub namespace: String,
    /// Bearer token required on every request, when set (`[server] token` / `HECATE_TOKEN`).
    pub token: Option<String>,
    /// The address the server is bound to: loopback binds accept only loopback
    /// Host and Origin values (DNS-rebinding protection).
    pub bound: SocketAddr,
    /// Cancelled on shutdown; open sessions and streams end.
    pub shutdown: CancellationToken,
    /// How the hub lists upstream tools (`[mcp] tool_loading`).
    pub tool_loading: ToolLoading,
    /// The identity provider whose access tokens are accepted beside the token.
    pub idp: Option<Arc<crate::bridges::idp::IdentityProvider>>,
}

type Svc = StreamableHttpService<HecateMcp, LocalSessionManager>;

#[derive(Clone)]
struct AppState {
    guard: Arc<Guard>,
}

/// Largest rmcp plain-text error body rewrapped as a JSON-RPC error, in bytes.
const MAX_PLAIN_ERROR_BYTES: usize = 64 * 1024;

fn service(engine: &Engine, cfg: &McpHttpConfig, upstream: Option<String>) -> Svc {
    // Host and Origin are checked by the guard, with the same rules as
    // `/hecate/v1`; rmcp's own list would refuse loopback names it does not know.
    let config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cfg.shutdown.child_token())
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .disable_allowed_hosts();
    let engine = engine.clone();
    // Requests of 2026-07-28 clients are stateless (a handler each): a call
    // waiting for its client's next round is kept here, for the endpoint.
    let rounds = Arc::new(Rounds::default());
    let opts = McpServerOptions {
        namespace: cfg.namespace.clone(),
        transport: "http".into(),
        upstream,
        tool_loading: cfg.tool_loading,
    };
    StreamableHttpService::new(
        move || Ok(HecateMcp::new(engine.clone(), opts.clone()).with_rounds(rounds.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// The router to nest at `/mcp`: `/` is the hub, `/{NAME}` one upstream (the
/// upstreams configured on `engine` when the router is built).
pub fn router(engine: Engine, cfg: McpHttpConfig) -> Router {
    let mut app = Router::new().route_service("/", service(&engine, &cfg, None));
    for s in engine.mcp().servers().iter() {
        app = app.route_service(
            &format!("/{}", s.name),
            service(&engine, &cfg, Some(s.name.clone())),
        );
    }
    let state = AppState {
        guard: Arc::new(
            Guard::new(cfg.token.clone(), HostPolicy::for_bound(cfg.bound.ip()))
                .with_keys(engine.clone(), &cfg.namespace)
                .with_idp(cfg.idp.clone()),
        ),
    };
    app.layer(axum::middleware::from_fn(triage_body))
        .fallback(no_upstream)
        .layer(axum::middleware::from_fn_with_state(state.clone(), guard))
        .with_state(state)
}

async fn no_upstream(req: Request) -> Response {
    error(
        StatusCode::NOT_FOUND,
        ErrorType::NotFound,
        &format!(
            "no MCP endpoint at {}: use /mcp or /mcp/NAME of a configured upstream",
            req.uri().path()
        ),
    )
}

fn error(status: StatusCode, t: ErrorType, message: &str) -> Response {
    reply::error(status, t.code(), message, Map::new())
}

fn header_str(h: &axum::http::HeaderMap, name: header::HeaderName) -> Option<&str> {
    h.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// Whether rmcp would read this request's body as a JSON-RPC message: a JSON
/// POST within the size limit (anything else keeps rmcp's own answer).
fn is_json_post(req: &Request) -> bool {
    let h = req.headers();
    let json = header_str(h, header::CONTENT_TYPE).is_some_and(|v| {
        let essence = v.split(';').next().unwrap_or("").trim();
        essence.eq_ignore_ascii_case("application/json")
    });
    let fits = header_str(h, header::CONTENT_LENGTH)
        .and_then(|n| n.parse::<usize>().ok())
        .is_none_or(|n| n <= MAX_BODY_BYTES);
    req.method() == axum::http::Method::POST && json && fits
}

/// Triages a JSON POST body: a message rmcp can take goes on unchanged, a
/// malformed one is answered here (`200` with the error when it names a request
/// id, else `400`), a malformed notification or response is accepted (`202`).
async fn triage_body(req: Request, next: Next) -> Response {
    if !is_json_post(&req) {
        return next.run(req).await;
    }
    let (parts, body) = req.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(e) if is_body_timeout(&e) => {
            return error(
                StatusCode::REQUEST_TIMEOUT,
                ErrorType::InvalidRequest,
                "the request body stopped arriving before the body read timeout",
            );
        }
        Err(_) => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                ErrorType::InvalidRequest,
                &format!("the body exceeds {MAX_BODY_BYTES} bytes"),
            );
        }
    };
    match triage::frame(&bytes) {
        Triage::Message(_) => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Triage::Drop(_) => StatusCode::ACCEPTED.into_response(),
        Triage::Answer(msg) => {
            let status = match &*msg {
                rmcp::model::JsonRpcMessage::Error(e) if e.id.is_some() => StatusCode::OK,
                _ => StatusCode::BAD_REQUEST,
            };
            match triage::to_json(&msg) {
                Ok(body) => {
                    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
                }
                Err(e) => error(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    ErrorType::GatewayError,
                    &e.to_string(),
                ),
            }
        }
    }
}

async fn guard(State(st): State<AppState>, mut req: Request, next: Next) -> Response {
    match st
        .guard
        .admit(Surface::Mcp, req.method(), req.uri(), req.headers())
        .await
    {
        // rmcp hands the request's parts, extensions included, to the handler.
        Ok(identity) => {
            req.extensions_mut().insert(identity);
        }
        Err(d) => {
            return st
                .guard
                .with_challenge(reply::denial(&d), &d, Surface::Mcp, req.headers());
        }
    }
    let delete = req.method() == axum::http::Method::DELETE;
    let mut response = next.run(req).await;
    // rmcp answers a session's DELETE with 202; the Python SDK takes only 200 or
    // 204 as a terminated session (and logs a failure otherwise).
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    as_json_rpc_error(response).await
}

/// rmcp answers some refusals (406, 415, an unknown session's 404, ...) in plain
/// text: those become the same JSON-RPC error object as Hecate's own, with the
/// status and other headers kept.
async fn as_json_rpc_error(response: Response) -> Response {
    let status = response.status();
    let json = header_str(response.headers(), header::CONTENT_TYPE)
        .is_some_and(|v| v.starts_with("application/json") || v.starts_with("text/event-stream"));
    if json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_PLAIN_ERROR_BYTES)
        .await
        .map(|b| String::from_utf8_lossy(&b).trim().to_string())
        .unwrap_or_default();
    let t = match status {
        StatusCode::NOT_FOUND => ErrorType::NotFound,
        s if s.is_server_error() => ErrorType::GatewayError,
        _ => ErrorType::InvalidRequest,
    };
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("refused").to_string()
    } else {
        text
    };
    let (_, body) = error(status, t, &message).into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.insert(
        header::CONTENT_TYPE,
        axum::http::HeaderValue::from_static("application/json"),
    );
    Response::from_parts(parts, body)
}
