//! The MCP server handler: Hecate's own tools, the aggregated upstream tools,
//! resources and prompts, served per connection (one instance per stdio process
//! or per Streamable HTTP session). Everything goes through the engine.

use super::errors::{protocol_error, resource_not_found};
use super::watch;
use crate::domain::error::ErrorType;
use crate::engine::Engine;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CompleteRequestParams, CompleteResult,
    GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
    SubscribeRequestParams, Tool, UnsubscribeRequestParams,
};
// Logging is SEP-2577-deprecated in rmcp but still part of protocol 2025-11-25.
#[allow(deprecated)]
use rmcp::model::SetLevelRequestParams;
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use std::collections::HashSet;
use std::sync::{Arc, Mutex, OnceLock};
use tokio_util::sync::CancellationToken;

/// Instructions sent to clients in `initialize`.
const INSTRUCTIONS: &str = "Hecate is a local hub for coding agents and models. Use list_sessions / \
get_transcript to read conversations shared with the CLI and HTTP API, ask_agent to delegate a task \
to another agent (agent:ID from list_adapters) or a model (model:PROVIDER/MODEL), and \
list_approvals / resolve_approval for pending permission requests. Tools named SERVER__tool are \
upstream MCP servers proxied under Hecate's policy. Resources hecate://sessions/{id} are live \
transcripts you can subscribe to.";

/// What one MCP server instance serves.
#[derive(Debug, Clone)]
pub struct McpServerOptions {
    /// The namespace sessions live in (the global `--namespace`, `default` unless set).
    pub namespace: String,
    /// `stdio` or `http`, recorded in the audit log with the client's name.
    pub transport: String,
    /// Serve only this upstream, under its tools' original names (`/mcp/{NAME}`).
    pub upstream: Option<String>,
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
        self.engine.mcp_release_subscriptions(uris);
    }
}

/// The MCP server handler of one connection.
#[derive(Clone)]
pub struct HecateMcp {
    pub(crate) engine: Engine,
    pub(crate) opts: Arc<McpServerOptions>,
    own: Arc<ToolRouter<HecateMcp>>,
    pub(crate) conn: Arc<Connection>,
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
            own: Arc::new(Self::own_tools()),
        }
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
    fn is_own_uri(&self, uri: &str) -> bool {
        self.is_hub() && uri.starts_with(super::resources::SCHEME)
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
    async fn subscribe_uri(&self, uri: &str) -> Result<(), ErrorData> {
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
            .mcp_subscribe(uri, self.opts.upstream.as_deref())
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

    /// Unsubscribes this connection from `uri`; the engine's subscription is
    /// released when this connection held one.
    async fn unsubscribe_uri(&self, uri: &str) -> Result<(), ErrorData> {
        self.watch(uri, false);
        if self.is_own_uri(uri) {
            return Ok(());
        }
        let mut upstream = self.conn.upstream_subscriptions.lock().await;
        if !upstream.remove(uri) {
            return Ok(());
        }
        self.engine
            .mcp_unsubscribe(uri)
            .await
            .map(|_| ())
            .map_err(|e| protocol_error(&e))
    }

    /// The caller as recorded in the audit log: client name and transport.
    pub(crate) fn caller(&self, peer: &Peer<RoleServer>) -> String {
        let name = peer
            .peer_info()
            .map(|i| i.client_info.name.clone())
            .unwrap_or_else(|| "unknown".into());
        format!("{name} ({})", self.opts.transport)
    }
}

impl ServerHandler for HecateMcp {
    #[allow(deprecated)]
    fn get_info(&self) -> ServerConfig {
        let caps = ServerCapabilities::builder()
            .enable_logging()
            .enable_completions()
            .enable_prompts()
            .enable_prompts_list_changed()
            .enable_resources()
            .enable_resources_list_changed()
            .enable_resources_subscribe()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        ServerConfig::new(caps)
            .with_server_info(
                Implementation::new("hecate", env!("CARGO_PKG_VERSION")).with_title("Hecate"),
            )
            .with_instructions(INSTRUCTIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        if self.conn.peer.set(context.peer.clone()).is_ok() {
            watch::start(self, context.peer);
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = self.own_tool_list();
        tools.extend(self.upstream_tools().await);
        Ok(ListToolsResult::with_all_items(tools))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        if self.is_hub() {
            self.own.get(name).cloned()
        } else {
            None
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.is_hub() && self.own.has_route(&request.name) {
            return self
                .own
                .call(ToolCallContext::new(self, request, context))
                .await;
        }
        self.call_upstream(request, context).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(self.resources().await))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(ListResourceTemplatesResult::with_all_items(
            self.resource_templates().await,
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.read(&request.uri).await.map(Into::into)
    }

    #[allow(deprecated)]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribe_uri(&request.uri).await
    }

    #[allow(deprecated)]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.unsubscribe_uri(&request.uri).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(ListPromptsResult::with_all_items(self.prompts().await))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.prompt(&request.name, request.arguments)
            .await
            .map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let Some(server) = &self.opts.upstream else {
            return Ok(CompleteResult::default());
        };
        let params = serde_json::to_value(&request).unwrap_or_default();
        match self.engine.mcp_complete(server, params).await {
            Ok(v) => serde_json::from_value(v)
                .map_err(|e| ErrorData::internal_error(format!("upstream completion: {e}"), None)),
            Err(e) => Err(super::errors::protocol_error(&e)),
        }
    }

    #[allow(deprecated)]
    async fn set_level(
        &self,
        _request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }
}
