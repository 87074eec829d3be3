//! `GET /acp`: ACP over a WebSocket (the ACP bridge's `websocket` module), for
//! editors on other machines or behind `hecate acp --remote`. The shared access
//! rules run before the upgrade, so a refused client never gets a socket: 401
//! `unauthorized` (with `WWW-Authenticate: Bearer`) without the token, 403
//! `forbidden` for a foreign Host or Origin, both in the error envelope. A plain
//! request without the upgrade gets 426 `invalid_request`. An open socket counts
//! against `[server] max_connections` like any other connection.

use super::envelope::ApiError;
use crate::bridges::access::{Guard, INVALID_REQUEST};
use crate::bridges::acp::BridgeConfig;
use crate::bridges::acp::websocket::{limit_frames, serve_websocket};
use crate::bridges::serve::ConnectionSlot;
use crate::engine::Engine;
use axum::Extension;
use axum::Router;
use axum::extract::State;
use axum::extract::ws::{WebSocketUpgrade, rejection::WebSocketUpgradeRejection};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The path ACP is served on.
pub const ACP_PATH: &str = "/acp";

/// How long a new thread waits for providers to list their models.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Clone)]
struct AcpState {
    guard: Arc<Guard>,
    engine: Engine,
    namespace: Arc<str>,
    shutdown: CancellationToken,
}

/// The `/acp` route over `engine`, behind `guard`; open sockets close when
/// `shutdown` fires.
pub fn router<S: Clone + Send + Sync + 'static>(
    guard: Arc<Guard>,
    engine: Engine,
    namespace: Arc<str>,
    shutdown: CancellationToken,
) -> Router<S> {
    Router::new()
        .route(ACP_PATH, get(socket))
        .with_state(AcpState {
            guard,
            engine,
            namespace,
            shutdown,
        })
}

async fn socket(
    State(st): State<AcpState>,
    uri: Uri,
    headers: HeaderMap,
    slot: Option<Extension<ConnectionSlot>>,
    upgrade: Result<WebSocketUpgrade, WebSocketUpgradeRejection>,
) -> Response {
    if let Err(d) = st.guard.check(&uri, &headers) {
        let mut response = ApiError::from(d).into_response();
        if response.status() == StatusCode::UNAUTHORIZED {
            response
                .headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        return response;
    }
    let upgrade = match upgrade {
        Ok(u) => u,
        Err(rejection) => return not_an_upgrade(&rejection),
    };
    let config = BridgeConfig {
        namespace: st.namespace.to_string(),
        default_target: None,
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
