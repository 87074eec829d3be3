//! One connection to an upstream MCP server (stdio child process or Streamable
//! HTTP), driven with rmcp as a client. Results cross this module as JSON values,
//! verbatim, so nothing above the adapter sees MCP types. Progress and logging
//! notifications are routed to the in-flight call that asked for them; list
//! changes are broadcast.

use super::error::McpClientError;
use super::process::UpstreamProcess;
use super::spec::ResolvedTransport;
// Logging is SEP-2577-deprecated in rmcp but still part of protocol 2025-11-25.
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientCapabilities,
    ClientConfig, ClientRequest, CompleteRequest, CompleteRequestParams, ElicitRequestParams,
    ElicitResult, GetPromptRequestParams, Implementation, PingRequest, ProgressNotificationParam,
    ProgressToken, ReadResourceRequestParams, ResourceUpdatedNotificationParam, ServerResult,
};
#[allow(deprecated)]
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, LoggingMessageNotificationParam,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RequestContext, RunningService};
use rmcp::{ClientHandler, ErrorData, RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

/// How long a dying process gets to flush its last stderr lines into an error.
const STDERR_DRAIN: Duration = Duration::from_millis(150);

/// The answer to an upstream's request: the result JSON, or a JSON-RPC error.
pub type Reply = Result<Value, (i32, String)>;

/// A notification (or request) an upstream sent while one of our calls was in
/// flight.
#[derive(Debug)]
pub enum Notice {
    /// `notifications/progress` for the call.
    Progress {
        /// Progress so far.
        progress: f64,
        /// Total, when known.
        total: Option<f64>,
        /// A message, when given.
        message: Option<String>,
    },
    /// `notifications/message` (logging) sent while the call ran.
    Log {
        /// Level name (debug, info, warning, error, ...).
        level: String,
        /// Logger name.
        logger: Option<String>,
        /// The payload.
        data: Value,
    },
    /// A server→client request (`sampling/createMessage`, `elicitation/create`)
    /// to be answered by whoever made the call.
    Request {
        /// The method.
        method: String,
        /// Its params.
        params: Value,
        /// Where the answer goes.
        reply: tokio::sync::oneshot::Sender<Reply>,
    },
}

/// A list or resource an upstream says has changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// `notifications/tools/list_changed`.
    Tools,
    /// `notifications/resources/list_changed`.
    Resources,
    /// `notifications/prompts/list_changed`.
    Prompts,
    /// `notifications/resources/updated` for a URI.
    Resource(String),
}

#[derive(Default)]
struct Routes {
    progress: Mutex<ProgressRoutes>,
    inflight: Mutex<HashMap<u64, mpsc::UnboundedSender<Notice>>>,
    next: AtomicU64,
}

/// Progress sinks by token, plus progress that arrived before its call's token
/// was registered (the token is only known once the request is sent).
#[derive(Default)]
struct ProgressRoutes {
    sinks: HashMap<ProgressToken, mpsc::UnboundedSender<Notice>>,
    early: HashMap<ProgressToken, Vec<Notice>>,
}

/// Most tokens whose early progress is kept.
const EARLY_TOKENS: usize = 256;

impl ProgressRoutes {
    fn register(&mut self, token: ProgressToken, sink: mpsc::UnboundedSender<Notice>) {
        for n in self.early.remove(&token).unwrap_or_default() {
            let _ = sink.send(n);
        }
        self.sinks.insert(token, sink);
    }

    fn route(&mut self, token: ProgressToken, notice: Notice) {
        match self.sinks.get(&token) {
            Some(sink) => {
                let _ = sink.send(notice);
            }
            None => {
                if self.early.len() >= EARLY_TOKENS && !self.early.contains_key(&token) {
                    self.early.clear();
                }
                self.early.entry(token).or_default().push(notice);
            }
        }
    }
}

impl Routes {
    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Removes a call's routes when it ends, however it ends.
struct RouteGuard {
    routes: Arc<Routes>,
    token: Option<ProgressToken>,
    slot: u64,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        let mut progress = Routes::lock(&self.routes.progress);
        if let Some(token) = &self.token {
            progress.sinks.remove(token);
            progress.early.remove(token);
        }
        drop(progress);
        Routes::lock(&self.routes.inflight).remove(&self.slot);
    }
}

#[derive(Clone)]
struct Handler {
    routes: Arc<Routes>,
    changes: broadcast::Sender<Changed>,
}

impl Handler {
    /// Forwards a server→client request to the most recent in-flight call.
    async fn forward(&self, method: &str, params: Value) -> Result<Value, ErrorData> {
        let sink = {
            let inflight = Routes::lock(&self.routes.inflight);
            inflight
                .iter()
                .max_by_key(|(k, _)| **k)
                .map(|(_, s)| s.clone())
        };
        let Some(sink) = sink else {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!("{method}: no call in flight whose client could answer"),
                None,
            ));
        };
        let (reply, rx) = tokio::sync::oneshot::channel();
        sink.send(Notice::Request {
            method: method.to_string(),
            params,
            reply,
        })
        .map_err(|_| ErrorData::internal_error("the caller is gone", None))?;
        match rx.await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err((code, message))) => {
                Err(ErrorData::new(rmcp::model::ErrorCode(code), message, None))
            }
            Err(_) => Err(ErrorData::internal_error("the caller did not answer", None)),
        }
    }
}

#[allow(deprecated)]
impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // Sampling and elicitation are advertised so upstreams can ask; each
        // request is forwarded to the client that made the call in flight.
        let caps: ClientCapabilities = serde_json::from_value(serde_json::json!({
            "sampling": {},
            "elicitation": {}
        }))
        .unwrap_or_default();
        ClientConfig::new(
            caps,
            Implementation::new("hecate", env!("CARGO_PKG_VERSION")),
        )
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let v = self
            .forward(
                "sampling/createMessage",
                serde_json::to_value(&params).unwrap_or_default(),
            )
            .await?;
        serde_json::from_value(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let v = self
            .forward(
                "elicitation/create",
                serde_json::to_value(&request).unwrap_or_default(),
            )
            .await?;
        serde_json::from_value(v).map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        Routes::lock(&self.routes.progress).route(
            params.progress_token,
            Notice::Progress {
                progress: params.progress,
                total: params.total,
                message: params.message,
            },
        );
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let level = serde_json::to_value(params.level)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "info".into());
        for sink in Routes::lock(&self.routes.inflight).values() {
            let _ = sink.send(Notice::Log {
                level: level.clone(),
                logger: params.logger.clone(),
                data: params.data.clone(),
            });
        }
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.changes.send(Changed::Resource(params.uri));
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changes.send(Changed::Resources);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changes.send(Changed::Tools);
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.changes.send(Changed::Prompts);
    }
}

/// A live, initialized connection to one upstream.
pub struct Upstream {
    service: RunningService<RoleClient, Handler>,
    routes: Arc<Routes>,
    process: Option<UpstreamProcess>,
    changes: broadcast::Sender<Changed>,
    label: String,
}

impl std::fmt::Debug for Upstream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Upstream")
            .field("label", &self.label)
            .field("pid", &self.pid())
            .finish()
    }
}

fn service_error(e: ServiceError, what: &str, timeout: Duration, tail: String) -> McpClientError {
    match e {
        ServiceError::McpError(d) => McpClientError::Protocol {
            code: d.code.0,
            message: d.message.into_owned(),
        },
        ServiceError::Timeout { .. } => McpClientError::Timeout {
            what: what.to_string(),
            millis: timeout.as_millis(),
        },
        ServiceError::Cancelled { .. } => McpClientError::Cancelled,
        other => McpClientError::Closed {
            message: other.to_string(),
            stderr_tail: tail,
        },
    }
}

impl Upstream {
    /// Spawns or dials `transport` and completes the MCP handshake within
    /// `init_timeout`. `base_env` is the sanitized environment a child starts from.
    pub async fn connect(
        transport: &ResolvedTransport,
        base_env: &[(String, String)],
        init_timeout: Duration,
    ) -> Result<Self, McpClientError> {
        let routes = Arc::new(Routes::default());
        let (changes, _) = broadcast::channel(64);
        let handler = Handler {
            routes: routes.clone(),
            changes: changes.clone(),
        };
        let label = transport.label();
        let (service, process) = match transport {
            ResolvedTransport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut full: Vec<(String, String)> = base_env.to_vec();
                full.retain(|(k, _)| !env.iter().any(|(e, _)| e == k));
                full.extend(env.iter().cloned());
                let (process, stdin, stdout) =
                    UpstreamProcess::spawn(command, args, &full, cwd.as_ref())?;
                let tail = process.stderr_tail();
                match tokio::time::timeout(init_timeout, handler.serve((stdout, stdin))).await {
                    Ok(Ok(service)) => (service, Some(process)),
                    Ok(Err(e)) => {
                        tokio::time::sleep(STDERR_DRAIN).await;
                        return Err(McpClientError::Initialize {
                            message: e.to_string(),
                            stderr_tail: tail.text(),
                        });
                    }
                    Err(_) => {
                        return Err(McpClientError::Initialize {
                            message: format!(
                                "no initialize answer within {} ms",
                                init_timeout.as_millis()
                            ),
                            stderr_tail: tail.text(),
                        });
                    }
                }
            }
            ResolvedTransport::Http { url, headers } => {
                use rmcp::transport::StreamableHttpClientTransport;
                use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
                let mut map = HashMap::new();
                for (k, v) in headers {
                    let name = axum::http::HeaderName::from_bytes(k.as_bytes())
                        .map_err(|e| McpClientError::Config(format!("header {k:?}: {e}")))?;
                    let value = axum::http::HeaderValue::from_str(v).map_err(|_| {
                        McpClientError::Config(format!("header {k:?} has an invalid value"))
                    })?;
                    map.insert(name, value);
                }
                let client = reqwest::Client::builder()
                    .build()
                    .map_err(|e| McpClientError::Config(format!("HTTP client: {e}")))?;
                let config =
                    StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(map);
                let t = StreamableHttpClientTransport::with_client(client, config);
                match tokio::time::timeout(init_timeout, handler.serve(t)).await {
                    Ok(Ok(service)) => (service, None),
                    Ok(Err(e)) => {
                        return Err(McpClientError::Initialize {
                            message: e.to_string(),
                            stderr_tail: String::new(),
                        });
                    }
                    Err(_) => {
                        return Err(McpClientError::Initialize {
                            message: format!(
                                "no initialize answer within {} ms",
                                init_timeout.as_millis()
                            ),
                            stderr_tail: String::new(),
                        });
                    }
                }
            }
        };
        Ok(Self {
            service,
            routes,
            process,
            changes,
            label,
        })
    }

    /// The child's pid (also its process group), for stdio upstreams.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(UpstreamProcess::pid)
    }

    /// A label for logs and errors (program or URL).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether the connection has closed (or the process exited).
    pub fn is_closed(&self) -> bool {
        self.service.is_transport_closed()
            || self
                .process
                .as_ref()
                .is_some_and(UpstreamProcess::has_exited)
    }

    /// The server's name and version from the handshake.
    pub fn server_info(&self) -> Value {
        self.service
            .peer()
            .peer_info()
            .map(|i| serde_json::to_value(&i.server_info).unwrap_or(Value::Null))
            .unwrap_or(Value::Null)
    }

    /// Subscribes to this upstream's list-change notifications.
    pub fn changes(&self) -> broadcast::Receiver<Changed> {
        self.changes.subscribe()
    }

    fn tail(&self) -> String {
        self.process
            .as_ref()
            .map(|p| p.stderr_tail().text())
            .unwrap_or_default()
    }

    async fn closed_error(&self, e: ServiceError, what: &str, timeout: Duration) -> McpClientError {
        if matches!(
            e,
            ServiceError::TransportClosed | ServiceError::TransportSend(_)
        ) {
            tokio::time::sleep(STDERR_DRAIN).await;
        }
        service_error(e, what, timeout, self.tail())
    }

    /// Kills the process group (stdio) and closes the connection now.
    pub fn shutdown(&self) {
        if let Some(p) = &self.process {
            p.kill_group();
        }
        self.service.cancellation_token().cancel();
    }

    /// Calls tool `name` with `arguments`; returns the upstream's `CallToolResult`
    /// verbatim as JSON (including tool errors with `isError: true`). Progress and
    /// logging notifications of the call go to `notices`; cancelling `cancel`
    /// sends `notifications/cancelled` upstream.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        notices: Option<mpsc::UnboundedSender<Notice>>,
        cancel: &CancellationToken,
        timeout: Duration,
    ) -> Result<Value, McpClientError> {
        let mut params = CallToolRequestParams::new(name.to_string());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = self.service.peer().clone();
        // Logging (and server requests) may arrive as soon as the request is out:
        // the call is registered as in flight first.
        let mut guard = notices.as_ref().map(|sink| {
            let slot = self.routes.next.fetch_add(1, Ordering::Relaxed);
            Routes::lock(&self.routes.inflight).insert(slot, sink.clone());
            RouteGuard {
                routes: self.routes.clone(),
                token: None,
                slot,
            }
        });
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| service_error(e, "tools/call", timeout, self.tail()))?;
        if let (Some(g), Some(sink)) = (guard.as_mut(), notices) {
            Routes::lock(&self.routes.progress).register(handle.progress_token.clone(), sink);
            g.token = Some(handle.progress_token.clone());
        }
        let id = handle.id.clone();
        let cancel_upstream = |reason: &'static str| {
            let peer = peer.clone();
            let id = id.clone();
            async move {
                let _ = peer
                    .notify_cancelled(CancelledNotificationParam::new(
                        Some(id),
                        Some(reason.to_string()),
                    ))
                    .await;
            }
        };
        tokio::select! {
            r = handle.await_response() => {
                // rmcp handles notifications in spawned tasks; give those read
                // before the response a turn so they reach the caller first.
                tokio::task::yield_now().await;
                match r {
                Ok(ServerResult::CallToolResult(result)) => {
                    serde_json::to_value(&result).map_err(|e| McpClientError::Protocol { code: -32603, message: e.to_string() })
                }
                Ok(other) => serde_json::to_value(&other).map_err(|e| McpClientError::Protocol { code: -32603, message: e.to_string() }),
                Err(e) => Err(self.closed_error(e, "tools/call", timeout).await),
            }},
            _ = cancel.cancelled() => {
                cancel_upstream("cancelled by the caller").await;
                Err(McpClientError::Cancelled)
            }
            _ = tokio::time::sleep(timeout) => {
                cancel_upstream("timed out in Hecate").await;
                Err(McpClientError::Timeout { what: format!("tools/call {name}"), millis: timeout.as_millis() })
            }
        }
    }

    async fn bounded<T>(
        &self,
        what: &str,
        timeout: Duration,
        fut: impl std::future::Future<Output = Result<T, ServiceError>>,
    ) -> Result<T, McpClientError> {
        match tokio::time::timeout(timeout, fut).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(e)) => Err(self.closed_error(e, what, timeout).await),
            Err(_) => Err(McpClientError::Timeout {
                what: what.to_string(),
                millis: timeout.as_millis(),
            }),
        }
    }

    /// Every tool of the upstream (all pages), each as its JSON definition with the
    /// input schema verbatim.
    pub async fn list_tools(&self, timeout: Duration) -> Result<Vec<Value>, McpClientError> {
        if self
            .service
            .peer()
            .peer_info()
            .is_some_and(|i| i.capabilities.tools.is_none())
        {
            return Ok(Vec::new());
        }
        let tools = self
            .bounded("tools/list", timeout, self.service.peer().list_all_tools())
            .await?;
        Ok(to_values(&tools))
    }

    /// Every resource of the upstream, as JSON (empty when it has none).
    pub async fn list_resources(&self, timeout: Duration) -> Result<Vec<Value>, McpClientError> {
        if !self.has_resources() {
            return Ok(Vec::new());
        }
        let r = self
            .bounded(
                "resources/list",
                timeout,
                self.service.peer().list_all_resources(),
            )
            .await?;
        Ok(to_values(&r))
    }

    /// Every resource template of the upstream, as JSON.
    pub async fn list_resource_templates(
        &self,
        timeout: Duration,
    ) -> Result<Vec<Value>, McpClientError> {
        if !self.has_resources() {
            return Ok(Vec::new());
        }
        let r = self
            .bounded(
                "resources/templates/list",
                timeout,
                self.service.peer().list_all_resource_templates(),
            )
            .await?;
        Ok(to_values(&r))
    }

    /// Reads one resource; the `ReadResourceResult` as JSON.
    pub async fn read_resource(
        &self,
        uri: &str,
        timeout: Duration,
    ) -> Result<Value, McpClientError> {
        let r = self
            .bounded(
                "resources/read",
                timeout,
                self.service
                    .peer()
                    .read_resource(ReadResourceRequestParams::new(uri.to_string())),
            )
            .await?;
        Ok(serde_json::to_value(&r).unwrap_or(Value::Null))
    }

    /// Every prompt of the upstream, as JSON.
    pub async fn list_prompts(&self, timeout: Duration) -> Result<Vec<Value>, McpClientError> {
        if self
            .service
            .peer()
            .peer_info()
            .is_some_and(|i| i.capabilities.prompts.is_none())
        {
            return Ok(Vec::new());
        }
        let r = self
            .bounded(
                "prompts/list",
                timeout,
                self.service.peer().list_all_prompts(),
            )
            .await?;
        Ok(to_values(&r))
    }

    /// Gets one prompt; the `GetPromptResult` as JSON.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<Map<String, Value>>,
        timeout: Duration,
    ) -> Result<Value, McpClientError> {
        let mut params = GetPromptRequestParams::new(name.to_string());
        if let Some(a) = arguments {
            params = params.with_arguments(a);
        }
        let r = self
            .bounded(
                "prompts/get",
                timeout,
                self.service.peer().get_prompt(params),
            )
            .await?;
        Ok(serde_json::to_value(&r).unwrap_or(Value::Null))
    }

    /// Asks for completions (`completion/complete`, params as JSON); the
    /// `CompleteResult` as JSON.
    pub async fn complete(
        &self,
        params: Value,
        timeout: Duration,
    ) -> Result<Value, McpClientError> {
        let params: CompleteRequestParams =
            serde_json::from_value(params).map_err(|e| McpClientError::Protocol {
                code: -32602,
                message: e.to_string(),
            })?;
        let r = self
            .bounded(
                "completion/complete",
                timeout,
                self.service
                    .peer()
                    .send_request(ClientRequest::CompleteRequest(CompleteRequest::new(params))),
            )
            .await?;
        Ok(serde_json::to_value(&r).unwrap_or(Value::Null))
    }

    /// Sends `ping` and waits for the answer.
    pub async fn ping(&self, timeout: Duration) -> Result<(), McpClientError> {
        self.bounded(
            "ping",
            timeout,
            self.service
                .peer()
                .send_request(ClientRequest::PingRequest(PingRequest::default())),
        )
        .await
        .map(|_| ())
    }

    fn has_resources(&self) -> bool {
        self.service
            .peer()
            .peer_info()
            .is_none_or(|i| i.capabilities.resources.is_some())
    }
}

fn to_values<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|t| serde_json::to_value(t).ok())
        .collect()
}
