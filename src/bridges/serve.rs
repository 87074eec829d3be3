//! Serving a router over HTTP/1.1 on a TCP listener with the limits that keep
//! slow or idle clients from holding the server: a deadline for each request
//! head (hyper's header read timeout, running from the connection's start, so
//! it also closes connections that send nothing and keep-alive connections idle
//! that long),
//! a deadline between the frames of a request body (tower-http's
//! `RequestBodyTimeout`, answered 408 and the connection closed), and a cap on
//! open connections. Responses being written, such as SSE streams, are never
//! cut: they hold their connection's slot until they end.
//!
//! A connection over the cap is refused visibly: it is answered `503` with
//! `Retry-After: 1` and closed (Hecate's error envelope, JSON-RPC-shaped under
//! `/mcp`). At most [`MAX_REFUSING`] such answers are in flight; beyond that an
//! over-the-cap connection is closed unanswered.

use crate::bridges::http::envelope::ApiError;
use crate::bridges::mcp::wire::reply;
use axum::Router;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use hyper::server::conn::http1;
use hyper::service::Service as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use serde_json::Map;
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower_http::timeout::{RequestBodyTimeout, TimeoutError};

/// Type code of a connection refused because the server is at its connection cap.
pub const SERVER_BUSY: &str = "server_busy";

/// Most over-the-cap connections answered `503` at once.
pub const MAX_REFUSING: usize = 64;

/// Most header fields hyper parses before answering 431 itself (with an empty
/// body); the access guard answers 431 with an envelope well below this.
const PARSER_MAX_HEADERS: usize = 512;

/// One of the server's connection slots ([`ServeLimits::max_connections`]),
/// carried by every request of its connection: whoever takes over the
/// connection (a WebSocket) keeps a clone for as long as it runs.
#[derive(Debug, Clone)]
pub struct ConnectionSlot {
    _permit: Arc<OwnedSemaphorePermit>,
}

/// The limits one server applies to its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeLimits {
    /// Deadline for a request head, from the connection's first byte (or the end
    /// of the previous response) to its last header line.
    pub header_read_timeout: Duration,
    /// Longest wait for the next piece of a request body that has not all arrived.
    pub body_read_timeout: Duration,
    /// Most connections served at once (SSE streams included).
    pub max_connections: usize,
}

/// Serves `app` on `listener` under `limits` until `shutdown` resolves, then
/// stops accepting and waits for the open connections to finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ServeLimits,
    shutdown: impl Future<Output = ()>,
) {
    let app = app.layer(axum::middleware::map_response(close_after_timeout));
    let service = RequestBodyTimeout::new(app, limits.body_read_timeout);
    // Served connections finish gracefully on shutdown (tracked here, since a
    // connection that may upgrade has no `GracefulShutdown` watch); refusals use the watch.
    let graceful = GracefulShutdown::new();
    let connections = TaskTracker::new();
    let stop = CancellationToken::new();
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let refusing = Arc::new(Semaphore::new(MAX_REFUSING));
    tokio::pin!(shutdown);
    loop {
        let tcp = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    accept_failed(e).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
        if let Ok(slot) = slots.clone().try_acquire_owned() {
            let slot = ConnectionSlot {
                _permit: Arc::new(slot),
            };
            let tower = TowerToHyperService::new(service.clone());
            // Each request carries the slot, so a connection upgraded to a
            // WebSocket keeps holding it after hyper lets go of the connection.
            let held = slot.clone();
            let service = hyper::service::service_fn(move |mut req: hyper::Request<_>| {
                req.extensions_mut().insert(held.clone());
                tower.call(req)
            });
            let stop = stop.clone();
            connections.spawn(async move {
                let mut builder = http1::Builder::new();
                builder
                    .timer(TokioTimer::new())
                    .header_read_timeout(limits.header_read_timeout)
                    .max_headers(PARSER_MAX_HEADERS);
                // Upgrades are allowed: `/acp` turns its connection into a WebSocket,
                // which lives on in its own task (it watches the server's shutdown itself).
                let conn = builder
                    .serve_connection(TokioIo::new(tcp), service)
                    .with_upgrades();
                tokio::pin!(conn);
                let ended = tokio::select! {
                    r = conn.as_mut() => r,
                    () = stop.cancelled() => {
                        conn.as_mut().graceful_shutdown();
                        conn.await
                    }
                };
                if let Err(e) = ended {
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                drop(slot);
            });
        } else if let Ok(permit) = refusing.clone().try_acquire_owned() {
            tokio::spawn(refuse(tcp, limits, graceful.watcher(), permit));
        } else {
            tracing::warn!("connection cap and refusal queue full; closing a connection");
        }
    }
    drop(listener);
    stop.cancel();
    connections.close();
    tokio::join!(graceful.shutdown(), connections.wait());
}

/// Answers every request of an over-the-cap connection with 503, then closes it.
async fn refuse(
    tcp: TcpStream,
    limits: ServeLimits,
    watcher: hyper_util::server::graceful::Watcher,
    permit: OwnedSemaphorePermit,
) {
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .keep_alive(false);
    let service = hyper::service::service_fn(|req: hyper::Request<hyper::body::Incoming>| {
        let response = busy(req.uri().path(), limits.max_connections);
        async move { Ok::<_, Infallible>(response) }
    });
    if let Err(e) = watcher
        .watch(builder.serve_connection(TokioIo::new(tcp), service))
        .await
    {
        tracing::debug!(error = %e, "refused connection ended with an error");
    }
    drop(permit);
}

/// The 503 of a connection over the cap, in the envelope of the path's surface.
fn busy(path: &str, cap: usize) -> Response {
    let message = format!("the server is at its cap of {cap} open connections");
    let mut response = if path == "/mcp" || path.starts_with("/mcp/") {
        let mut details = Map::new();
        details.insert("max_connections".into(), cap.into());
        reply::error(
            StatusCode::SERVICE_UNAVAILABLE,
            SERVER_BUSY,
            &message,
            details,
        )
    } else {
        ApiError::custom(
            StatusCode::SERVICE_UNAVAILABLE,
            SERVER_BUSY,
            message,
            "The server is busy.",
            "Retry shortly; raise `[server] max_connections` if this is regular load.",
        )
        .with_detail("max_connections", cap)
        .into_response()
    };
    let headers = response.headers_mut();
    headers.insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    headers.insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// A 408 (a body that stopped arriving) closes its connection: the rest of the
/// body may still be on its way and cannot be told from the next request.
async fn close_after_timeout(mut response: Response) -> Response {
    if response.status() == StatusCode::REQUEST_TIMEOUT {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Whether reading a request body failed because the body read timeout passed.
pub fn is_body_timeout(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cause = Some(e);
    while let Some(e) = cause {
        if e.is::<TimeoutError>() {
            return true;
        }
        cause = e.source();
    }
    false
}

/// Logs an accept error; one that is not about a single connection (out of file
/// descriptors) pauses accepting for a moment instead of spinning.
async fn accept_failed(e: std::io::Error) {
    use std::io::ErrorKind::{ConnectionAborted, ConnectionRefused, ConnectionReset};
    if matches!(
        e.kind(),
        ConnectionAborted | ConnectionRefused | ConnectionReset
    ) {
        return;
    }
    tracing::error!(error = %e, "accepting a connection failed");
    tokio::time::sleep(Duration::from_millis(100)).await;
}
