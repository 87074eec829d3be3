//! The MCP server of one connection (one instance per stdio process or per
//! Streamable HTTP session): its options, per-connection state and the helpers
//! the handler, tools, resources and watchers share. The `ServerHandler`
//! dispatch is in `handler.rs`. Everything goes through the engine.

use super::errors::{protocol_error, resource_not_found};
use super::modern::rounds::Rounds;
use super::uris::SCHEME;
use crate::domain::api_key::Identity;
use crate::domain::error::ErrorType;
use crate::engine::{Engine, ToolLoading};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::Tool;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use tokio_util::sync::CancellationToken;

/// What one MCP server instance serves.
#[derive(Debug, Clone)]
pub struct McpServerOptions {
    /// The namespace sessions live in (the global `--namespace`, `default` unless set).
    pub namespace: String,
    /// `stdio` or `http`, recorded in the audit log with the client's name.
    pub transport: String,
    /// Serve only this upstream, under its tools' original names (`/mcp/{NAME}`).
    pub upstream: Option<String>,
    /// Whether the hub's `tools/list` holds every upstream tool or only
    /// Hecate's own, `search_tools` among them (`[mcp] tool_loading`).
    pub tool_loading: ToolLoading,
}

/// Per-connection state: the client peer once initialized, resource
/// subscriptions (every URI whose updates the client gets, and the upstream
/// ones this connection holds in the engine), and the stop signal of the
/// connection's watcher tasks.
pub(crate) struct Connection {
    pub(crate) peer: OnceLock<Peer<RoleServer>>,
    pub(crate) subscriptions: Arc<Mutex<HashSet<String>>>,
    /// Upstream URIs this connection follows through the engine; locked across
    /// the engine call so one connection's subscribe and unsubscribe of a URI
    /// cannot interleave.
    upstream_subscriptions: tokio::sync::Mutex<HashSet<String>>,
    engine: Engine,
    pub(crate) stop: CancellationToken,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.stop.cancel();
        let uris: Vec<String> = self.upstream_subscriptions.get_mut().drain().collect();
        self.engine.mcp().release_subscriptions(uris);
    }
}

/// The MCP server handler of one connection.
#[derive(Clone)]
pub struct HecateMcp {
    pub(crate) engine: Engine,
    pub(crate) opts: Arc<McpServerOptions>,
    pub(crate) own: Arc<ToolRouter<HecateMcp>>,
    pub(crate) conn: Arc<Connection>,
    /// Calls of 2026-07-28 clients waiting for their next round (shared by
    /// every instance of one HTTP endpoint, whose requests are stateless).
    pub(crate) rounds: Arc<Rounds>,
}

impl HecateMcp {
    /// A handler for one connection.
    pub fn new(engine: Engine, opts: McpServerOptions) -> Self {
        Self {
            conn: Arc::new(Connection {
                peer: OnceLock::new(),
                subscriptions: Arc::new(Mutex::new(HashSet::new())),
                upstream_subscriptions: tokio::sync::Mutex::new(HashSet::new()),
                engine: engine.clone(),
                stop: CancellationToken::new(),
            }),
            engine,
            opts: Arc::new(opts),
            rounds: Arc::new(Rounds::default()),
            own: Arc::new(
                Self::own_tools()
                    + Self::task_tools()
                    + Self::task_run_tools()
                    + Self::task_patch_tools()
                    + Self::chat_session_tools()
                    + Self::flow_chat_tools()
                    + Self::memory_tools()
                    + Self::tool_search_tools(),
            ),
        }
    }

    /// The same handler parking multi round-trip calls in `rounds`.
    pub(crate) fn with_rounds(mut self, rounds: Arc<Rounds>) -> Self {
        self.rounds = rounds;
        self
    }

    /// The namespace this connection acts in.
    pub(crate) fn ns(&self) -> &str {
        &self.opts.namespace
    }

    /// Whether this connection serves Hecate's own tools (not a single upstream).
    pub(crate) fn is_hub(&self) -> bool {
        self.opts.upstream.is_none()
    }

    /// Hecate's own tool definitions.
    pub fn own_tool_list(&self) -> Vec<Tool> {
        if self.is_hub() {
            self.own.list_all()
        } else {
            Vec::new()
        }
    }

    /// Whether `uri` is one of Hecate's own resources on this connection.
    pub(crate) fn is_own_uri(&self, uri: &str) -> bool {
        self.is_hub() && uri.starts_with(SCHEME)
    }

    fn watch(&self, uri: &str, on: bool) {
        let mut subs = self
            .conn
            .subscriptions
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        if on {
            subs.insert(uri.to_string());
        } else {
            subs.remove(uri);
        }
    }

    /// Subscribes this connection to `uri`: Hecate's own resources locally,
    /// upstream ones through the engine (once per connection and URI).
    pub(crate) async fn subscribe_uri(&self, uri: &str) -> Result<(), ErrorData> {
        if self.is_own_uri(uri) {
            self.watch(uri, true);
            return Ok(());
        }
        let mut upstream = self.conn.upstream_subscriptions.lock().await;
        if upstream.contains(uri) {
            return Ok(());
        }
        // Watched first, so an update sent right after the upstream accepts is
        // not missed.
        self.watch(uri, true);
        match self
            .engine
            .mcp()
            .subscribe(uri, self.opts.upstream.as_deref())
            .await
        {
            Ok(()) => {
                upstream.insert(uri.to_string());
                Ok(())
            }
            Err(e) => {
                self.watch(uri, false);
                Err(if e.error_type == ErrorType::NotFound {
                    resource_not_found(uri)
                } else {
                    protocol_error(&e)
                })
            }
        }
    }

    /// Whether this connection already follows upstream `uri` through the engine.
    pub(crate) async fn follows_upstream(&self, uri: &str) -> bool {
        self.conn.upstream_subscriptions.lock().await.contains(uri)
    }

    /// Unsubscribes this connection from `uri`; the engine's subscription is
    /// released when this connection held one.
    pub(crate) async fn unsubscribe_uri(&self, uri: &str) -> Result<(), ErrorData> {
        self.watch(uri, false);
        if self.is_own_uri(uri) {
            return Ok(());
        }
        let mut upstream = self.conn.upstream_subscriptions.lock().await;
        if !upstream.remove(uri) {
            return Ok(());
        }
        self.engine
            .mcp()
            .unsubscribe(uri)
            .await
            .map(|_| ())
            .map_err(|e| protocol_error(&e))
    }

    /// The caller as recorded in the audit log: client name (from the
    /// request's `_meta`, else the handshake) and transport, and the API key
    /// when one was presented.
    pub(crate) fn caller(
        &self,
        context: &RequestContext<RoleServer>,
        identity: &Identity,
    ) -> String {
        let name = context
            .client_info()
            .map(|i| i.name)
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| "unknown".into());
        match identity {
            Identity::Admin => format!("{name} ({})", self.opts.transport),
            Identity::Key(_) | Identity::Token(_) => {
                format!("{name} ({}, {})", self.opts.transport, identity.label())
            }
        }
    }
}
