//! What every HTTP handler shares: the server's configuration, the state the
//! handlers receive, and one API route (method, path, handler) as the router and
//! the OpenAPI document list it.

use super::stream::StreamHub;
use crate::engine::Engine;
use axum::handler::Handler;
use axum::routing::{self, MethodRouter};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// How a server is configured: the namespace it serves, its token and address.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Namespace every session of this server lives in.
    pub namespace: String,
    /// Bearer token required on `/hecate/v1/*`, when set.
    pub token: Option<String>,
    /// The address the server is bound to (decides the Host/Origin policy).
    pub bound: SocketAddr,
    /// Cancelled when the server shuts down; open streams then end.
    pub shutdown: CancellationToken,
    /// Where the operator console's files come from.
    pub console: super::ConsoleSource,
    /// How `/mcp` lists upstream tools (`[mcp] tool_loading`).
    pub mcp_tool_loading: crate::engine::ToolLoading,
    /// The target `/acp` starts new threads on when the client names none
    /// (`[acp] default_target`, checked).
    pub acp_default_target: Option<String>,
    /// The identity provider whose access tokens `/hecate/v1`, `/mcp` and the
    /// other surfaces accept (`[server.idp]`, checked).
    pub idp: Option<crate::domain::api_key::IdpSettings>,
}

/// Shared state of the HTTP handlers.
#[derive(Clone)]
pub struct HttpState {
    /// The engine.
    pub engine: Engine,
    /// The namespace this server serves.
    pub namespace: Arc<str>,
    /// When the server started.
    pub started: Instant,
    /// The live-stream hub.
    pub(super) hub: StreamHub,
    /// Ends open streams on shutdown.
    pub(super) shutdown: CancellationToken,
}

/// One API route: method and OpenAPI-style path, with its handler.
pub struct ApiRoute {
    /// Lower-case method name as OpenAPI writes it.
    pub method: &'static str,
    /// The path template, e.g. `/hecate/v1/agent-chat/sessions/{id}`.
    pub path: &'static str,
    pub(super) handler: MethodRouter<HttpState>,
}

impl ApiRoute {
    pub(super) fn get<H: Handler<T, HttpState>, T: 'static>(path: &'static str, h: H) -> Self {
        Self {
            method: "get",
            path,
            handler: routing::get(h),
        }
    }

    pub(super) fn post<H: Handler<T, HttpState>, T: 'static>(path: &'static str, h: H) -> Self {
        Self {
            method: "post",
            path,
            handler: routing::post(h),
        }
    }

    pub(super) fn put<H: Handler<T, HttpState>, T: 'static>(path: &'static str, h: H) -> Self {
        Self {
            method: "put",
            path,
            handler: routing::put(h),
        }
    }

    pub(super) fn patch<H: Handler<T, HttpState>, T: 'static>(path: &'static str, h: H) -> Self {
        Self {
            method: "patch",
            path,
            handler: routing::patch(h),
        }
    }

    pub(super) fn delete<H: Handler<T, HttpState>, T: 'static>(path: &'static str, h: H) -> Self {
        Self {
            method: "delete",
            path,
            handler: routing::delete(h),
        }
    }
}
