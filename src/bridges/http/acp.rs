//! `GET /acp`: ACP over a WebSocket (the ACP bridge's `websocket` module), for
//! editors on other machines or behind `hecate acp --remote`. The shared access
//! rules run before the upgrade, so a refused client never gets a socket: 401
//! `unauthorized` (with `WWW-Authenticate: Bearer`) without the token, 403
//! `forbidden` for a foreign Host or Origin, both in the error envelope. A plain
//! request without the upgrade gets 426 `invalid_request`. An open socket counts
//! against `[server] max_connections` like any other connection. New threads
//! start on `?target=` when the client names one (a 400 naming `target` when it
//! does not parse), else on `[acp] default_target`, else on the first target.

use super::envelope::ApiError;
use crate::bridges::access::{Guard, INVALID_REQUEST};
use crate::bridges::acp::BridgeConfig;
use crate::bridges::acp::websocket::{limit_frames, serve_websocket};
use crate::bridges::roles::Surface;
use crate::bridges::serve::ConnectionSlot;
use crate::domain::error::HecateError;
use crate::engine::Engine;
use crate::engine::targets::TargetRef;
use axum::Extension;
use axum::Router;
use axum::extract::State;
use axum::extract::ws::{WebSocketUpgrade, rejection::WebSocketUpgradeRejection};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The path ACP is served on.
pub const ACP_PATH: &str = "/acp";

/// How long a new thread waits for providers to list their models.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(2);

/// The query `/acp` takes.
#[derive(Debug, serde::Deserialize)]
struct AcpQuery {
    /// The target new threads of this connection start on.
    target: Option<String>,
}

#[derive(Clone)]
struct AcpState {
    guard: Arc<Guard>,
    engine: Engine,
    namespace: Arc<str>,
    shutdown: CancellationToken,
    default_target: Option<String>,
}

/// The `/acp` route over `engine`, behind `guard`, starting new threads on
/// `default_target` unless the client names one; open sockets close when
/// `shutdown` fires.
pub fn router<S: Clone + Send + Sync + 'static>(
    guard: Arc<Guard>,
    engine: Engine,
    namespace: Arc<str>,
    shutdown: CancellationToken,
    default_target: Option<String>,
) -> Router<S> {
    Router::new()
        .route(ACP_PATH, get(socket))
        .with_state(AcpState {
            guard,
            engine,
            namespace,
            shutdown,
            default_target,
        })
}

/// The target a connection's new threads start on: `?target=` when given
/// (checked), else the server's default.
fn connection_target(uri: &Uri, default: Option<&String>) -> Result<Option<String>, ApiError> {
    let asked = axum::extract::Query::<AcpQuery>::try_from_uri(uri)
        .map_err(|e| ApiError::invalid(format!("bad query string: {}", e.body_text())))?
        .0
        .target;
    match asked {
        None => Ok(default.cloned()),
        Some(t) => match TargetRef::parse(&t) {
            Ok(_) => Ok(Some(t)),
            Err(e) => Err(ApiError::from(
                HecateError::invalid(format!("target {t:?} is not a target: {}", e.message))
                    .with_detail("field", "target"),
            )),
        },
    }
}

async fn socket(
    State(st): State<AcpState>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    slot: Option<Extension<ConnectionSlot>>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    if let Err(d) = st.guard.admit(Surface::Acp, &method, &uri, &headers).await {
        return super::auth::refusal(d);
    }
    let default_target = match connection_target(&uri, st.default_target.as_ref()) {
        Ok(t) => t,
        Err(e) => return e.into_response(),
    };
    let upgrade = match upgrade {
        Ok(u) => u,
        Err(rejection) => return not_an_upgrade(&rejection),
    };
    let config = BridgeConfig {
        namespace: st.namespace.to_string(),
        default_target,
        discovery_timeout: DISCOVERY_TIMEOUT,
    };
    // The socket holds its connection's slot of `max_connections` while it runs.
    limit_frames(upgrade).on_upgrade(async move |socket| {
        serve_websocket(st.engine, config, socket, st.shutdown).await;
        drop(slot);
    })
}

fn not_an_upgrade(rejection: &WebSocketUpgradeRejection) -> Response {
    let mut response = ApiError::custom(
        StatusCode::UPGRADE_REQUIRED,
        INVALID_REQUEST,
        format!("{ACP_PATH} speaks ACP over a WebSocket only: {rejection}"),
        "This address takes a WebSocket connection from an ACP client.",
        "Connect with a WebSocket client (or `hecate acp --remote URL`), sending one JSON-RPC message per text message.",
    )
    .into_response();
    response
        .headers_mut()
        .insert(header::UPGRADE, HeaderValue::from_static("websocket"));
    response
}
