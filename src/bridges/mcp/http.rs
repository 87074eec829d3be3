//! Streamable HTTP: an axum router to mount at `/mcp` (`nest_service`), serving
//! the hub at `/mcp` and one upstream at `/mcp/{NAME}` (its tools under their
//! own names, still through the engine). rmcp provides sessions
//! (`Mcp-Session-Id`), SSE with resumption (`Last-Event-ID`), the body limit and
//! Host/Origin validation; the guard here adds the bearer token (constant time)
//! and answers with Hecate's error envelope. A JSON POST body is triaged like a
//! stdio line ([`super::triage`]) before rmcp sees it, so a body that is not
//! JSON, not JSON-RPC, names an unknown method or has ill-typed parameters gets
//! the same JSON-RPC error as over stdio (rmcp would answer 415 in plain text,
//! or take a known method with ill-typed parameters for an unknown one).

use super::server::{HecateMcp, McpServerOptions};
use super::triage::{self, Triage};
use crate::domain::error::ErrorType;
use crate::engine::Engine;
use axum::Router;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::StreamableHttpServerConfig;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use serde_json::json;
use std::net::SocketAddr;
use std::sync::Arc;
use subtle::ConstantTimeEq;
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
}

type Svc = StreamableHttpService<HecateMcp, LocalSessionManager>;

#[derive(Clone)]
struct AppState {
    cfg: Arc<McpHttpConfig>,
}

fn service(engine: &Engine, cfg: &McpHttpConfig, upstream: Option<String>) -> Svc {
    let mut config = StreamableHttpServerConfig::default()
        .with_cancellation_token(cfg.shutdown.child_token())
        .with_max_request_body_bytes(MAX_BODY_BYTES);
    if cfg.bound.ip().is_loopback() {
        config = config
            .with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
            .with_allowed_origins([
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
                "https://localhost:*",
                "https://127.0.0.1:*",
                "https://[::1]:*",
            ])
            .enforce_origin_validation();
    } else {
        config = config.disable_allowed_hosts();
    }
    let engine = engine.clone();
    let opts = McpServerOptions {
        namespace: cfg.namespace.clone(),
        transport: "http".into(),
        upstream,
    };
    StreamableHttpService::new(
        move || Ok(HecateMcp::new(engine.clone(), opts.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}

/// The router to nest at `/mcp`: `/` is the hub, `/{NAME}` one upstream (the
/// upstreams configured on `engine` when the router is built).
pub fn router(engine: Engine, cfg: McpHttpConfig) -> Router {
    let mut app = Router::new().route_service("/", service(&engine, &cfg, None));
    for s in engine.mcp_servers().iter() {
        app = app.route_service(
            &format!("/{}", s.name),
            service(&engine, &cfg, Some(s.name.clone())),
        );
    }
    let state = AppState { cfg: Arc::new(cfg) };
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
    let body = json!({"error": {"type": t.code(), "message": message}});
    (status, axum::Json(body)).into_response()
}

fn header_str(h: &HeaderMap, name: header::HeaderName) -> Option<&str> {
    h.get(name).map(|v| v.to_str().unwrap_or("\u{fffd}"))
}

/// `localhost`, `*.localhost` or a loopback IP literal.
fn is_loopback_name(name: &str) -> bool {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

/// The host part of an authority: brackets and port removed.
fn host_name(authority: &str) -> &str {
    let a = authority.trim();
    if let Some(rest) = a.strip_prefix('[') {
        return rest.split(']').next().unwrap_or("");
    }
    match a.rsplit_once(':') {
        Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => a,
    }
}

fn origin_is_loopback(origin: &str) -> bool {
    origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
        .map(|rest| is_loopback_name(host_name(rest.split('/').next().unwrap_or(""))))
        .unwrap_or(false)
}

/// Checks Host and Origin (loopback binds) and the bearer token.
fn check(cfg: &McpHttpConfig, headers: &HeaderMap) -> Result<(), Box<Response>> {
    if cfg.bound.ip().is_loopback() {
        if let Some(host) = header_str(headers, header::HOST)
            && !is_loopback_name(host_name(host))
        {
            return Err(Box::new(error(
                StatusCode::FORBIDDEN,
                ErrorType::InvalidRequest,
                &format!("Host {host:?} is not a loopback name"),
            )));
        }
        if let Some(origin) = header_str(headers, header::ORIGIN)
            && !origin_is_loopback(origin)
        {
            return Err(Box::new(error(
                StatusCode::FORBIDDEN,
                ErrorType::InvalidRequest,
                &format!("Origin {origin:?} is not a loopback origin"),
            )));
        }
    }
    let Some(expected) = cfg.token.as_deref().filter(|t| !t.is_empty()) else {
        return Ok(());
    };
    let presented = header_str(headers, header::AUTHORIZATION)
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, t)| t.trim());
    match presented {
        Some(t) if bool::from(t.as_bytes().ct_eq(expected.as_bytes())) => Ok(()),
        _ => {
            let mut r = error(
                StatusCode::UNAUTHORIZED,
                ErrorType::InvalidRequest,
                "a valid `Authorization: Bearer <token>` header is required",
            );
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            Err(Box::new(r))
        }
    }
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
    let Ok(bytes) = axum::body::to_bytes(body, MAX_BODY_BYTES).await else {
        return error(
            StatusCode::PAYLOAD_TOO_LARGE,
            ErrorType::InvalidRequest,
            &format!("the body exceeds {MAX_BODY_BYTES} bytes"),
        );
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

async fn guard(State(st): State<AppState>, req: Request, next: Next) -> Response {
    if let Err(r) = check(&st.cfg, req.headers()) {
        return *r;
    }
    let delete = req.method() == axum::http::Method::DELETE;
    let mut response = next.run(req).await;
    // rmcp answers a session's DELETE with 202; the Python SDK takes only 200 or
    // 204 as a terminated session (and logs a failure otherwise).
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(token: Option<&str>) -> McpHttpConfig {
        McpHttpConfig {
            namespace: "default".into(),
            token: token.map(str::to_string),
            bound: SocketAddr::from(([127, 0, 0, 1], 1)),
            shutdown: CancellationToken::new(),
        }
    }

    fn headers(pairs: &[(header::HeaderName, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(k.clone(), HeaderValue::from_str(v).expect("header"));
        }
        h
    }

    fn status(r: Result<(), Box<Response>>) -> u16 {
        r.err().map(|r| r.status().as_u16()).unwrap_or(200)
    }

    #[test]
    fn token_host_and_origin_rules() {
        let c = cfg(Some("s3cret"));
        let ok = headers(&[
            (header::HOST, "127.0.0.1:9"),
            (header::AUTHORIZATION, "Bearer s3cret"),
        ]);
        assert_eq!(status(check(&c, &ok)), 200);
        assert_eq!(
            status(check(
                &c,
                &headers(&[(header::AUTHORIZATION, "Bearer nope")])
            )),
            401
        );
        assert_eq!(status(check(&c, &headers(&[]))), 401);
        let rebind = headers(&[
            (header::HOST, "evil.example"),
            (header::AUTHORIZATION, "Bearer s3cret"),
        ]);
        assert_eq!(status(check(&c, &rebind)), 403);
        let foreign = headers(&[
            (header::ORIGIN, "https://evil.example"),
            (header::AUTHORIZATION, "Bearer s3cret"),
        ]);
        assert_eq!(status(check(&c, &foreign)), 403);
        let local = headers(&[(header::ORIGIN, "http://localhost:3000")]);
        assert_eq!(status(check(&cfg(None), &local)), 200);
    }
}
