//! One connection to an upstream MCP server (stdio child process or Streamable
//! HTTP), driven with rmcp as a client. Results cross this module as JSON values,
//! verbatim, so nothing above the adapter sees MCP types.

use super::error::McpClientError;
use super::handler::{CallRouteGuard, Handler, Routes};
pub use super::handler::{Changed, Notice, Reply};
use super::oauth::{AuthFlag, OAuthTarget, authorized_client};
use super::spec::ResolvedTransport;
use crate::adapters::process::{ChildProcess, Pipe, SpawnError, Spec, Stderr, TailLimits};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientRequest,
    CompleteRequest, CompleteRequestParams, GetPromptRequestParams, PingRequest,
    ReadResourceRequestParams, RequestParamsMeta, ServerResult, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::{RoleClient, ServiceError, ServiceExt};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::process::{ChildStdin, ChildStdout};
use tokio::sync::{broadcast, mpsc};
use tokio_util::sync::CancellationToken;

/// How long a dying process gets to flush its last stderr lines into an error.
const STDERR_DRAIN: Duration = Duration::from_millis(150);

/// A live, initialized connection to one upstream.
pub struct Upstream {
    service: RunningService<RoleClient, Handler>,
    routes: Arc<Routes>,
    process: Option<ChildProcess>,
    changes: broadcast::Sender<Changed>,
    label: String,
    /// The OAuth sign-in this connection uses and the failure it met, if any.
    auth: Option<(String, AuthFlag)>,
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

/// Starts an upstream server with exactly `env`, in its own process group, with
/// stdin/stdout piped for MCP and stderr kept as a tail for start-up errors.
fn spawn_upstream(
    command: &str,
    args: &[String],
    env: &[(String, String)],
    cwd: Option<&PathBuf>,
) -> Result<(ChildProcess, ChildStdin, ChildStdout), McpClientError> {
    let mut spec = Spec::new(command)
        .args(args)
        .env(env)
        .stdin(Pipe::Piped)
        .stdout(Pipe::Piped)
        .stderr(Stderr::Tail(TailLimits::UPSTREAM));
    if let Some(dir) = cwd {
        spec = spec.cwd(dir);
    }
    let (process, pipes) = ChildProcess::spawn(&spec)?;
    match (pipes.stdin, pipes.stdout) {
        (Some(stdin), Some(stdout)) => Ok((process, stdin, stdout)),
        _ => Err(McpClientError::Spawn(SpawnError {
            program: spec.program_label(),
            message: "the process pipes are missing".into(),
        })),
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
        Self::connect_signed_in(transport, base_env, init_timeout, None).await
    }

    /// [`Upstream::connect`], with an HTTP upstream signed in through OAuth as
    /// `oauth` says (its stored token as the bearer, refreshed as needed).
    pub(crate) async fn connect_signed_in(
        transport: &ResolvedTransport,
        base_env: &[(String, String)],
        init_timeout: Duration,
        oauth: Option<&OAuthTarget>,
    ) -> Result<Self, McpClientError> {
        let mut auth = None;
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
                let (process, stdin, stdout) = spawn_upstream(command, args, &full, cwd.as_ref())?;
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
                let started = match oauth {
                    Some(target) => {
                        let flag = AuthFlag::default();
                        let signed = authorized_client(target, url, client, flag.clone())
                            .await
                            .map_err(|e| McpClientError::Initialize {
                                message: e.to_string(),
                                stderr_tail: String::new(),
                            })?;
                        auth = Some((target.server.clone(), flag));
                        let t = StreamableHttpClientTransport::with_client(signed, config);
                        tokio::time::timeout(init_timeout, handler.serve(t)).await
                    }
                    None => {
                        let t = StreamableHttpClientTransport::with_client(client, config);
                        tokio::time::timeout(init_timeout, handler.serve(t)).await
                    }
                };
                match started {
                    Ok(Ok(service)) => (service, None),
                    Ok(Err(e)) => {
                        if let Some((server, flag)) = &auth
                            && let Some(reason) = flag.reason()
                        {
                            return Err(McpClientError::AuthRequired {
                                server: server.clone(),
                                reason,
                            });
                        }
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
            auth,
        })
    }

    /// The sign-in failure this connection met, as the error a caller gets.
    fn auth_failure(&self) -> Option<McpClientError> {
        let (server, flag) = self.auth.as_ref()?;
        flag.reason().map(|reason| McpClientError::AuthRequired {
            server: server.clone(),
            reason,
        })
    }

    /// The child's pid (also its process group), for stdio upstreams.
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(ChildProcess::pid)
    }

    /// A label for logs and errors (program or URL).
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Whether the connection has closed (or the process exited).
    pub fn is_closed(&self) -> bool {
        self.service.is_transport_closed() || self.process.as_ref().is_some_and(|p| !p.is_alive())
    }

    /// The transport, as OpenTelemetry's `network.transport` names it: `pipe`
    /// for a child on stdio, `tcp` for Streamable HTTP.
    pub fn transport(&self) -> &'static str {
        if self.process.is_some() {
            "pipe"
        } else {
            "tcp"
        }
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
        if let Some(auth) = self.auth_failure() {
            return auth;
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
        // The caller's trace goes on to the upstream (SEP-414).
        let trace = crate::telemetry::current_trace_headers();
        if let Some(parent) = trace.get("traceparent") {
            params.set_traceparent(parent);
        }
        if let Some(state) = trace.get("tracestate").filter(|s| !s.is_empty()) {
            params.set_tracestate(state);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let peer = self.service.peer().clone();
        // Logging (and server requests) may arrive as soon as the request is out:
        // the call is registered as in flight first.
        let mut guard = notices.as_ref().map(|sink| {
            let slot = self.routes.next.fetch_add(1, Ordering::Relaxed);
            Routes::lock(&self.routes.inflight).insert(slot, sink.clone());
            CallRouteGuard {
                routes: self.routes.clone(),
                token: None,
                slot,
            }
        });
        let handle = peer
            .send_request_with_option(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| {
                self.auth_failure()
                    .unwrap_or_else(|| service_error(e, "tools/call", timeout, self.tail()))
            })?;
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

    /// Whether the upstream advertised `resources.subscribe` in its handshake.
    pub fn supports_subscribe(&self) -> bool {
        self.service.peer().peer_info().is_some_and(|i| {
            i.capabilities
                .resources
                .as_ref()
                .and_then(|r| r.subscribe)
                .unwrap_or(false)
        })
    }

    /// Sends `resources/subscribe` for `uri`; `Ok(false)` without sending when
    /// the upstream does not advertise `resources.subscribe`. Updates arrive as
    /// [`Changed::Resource`] on [`Upstream::changes`].
    // resources/subscribe is legacy-only in rmcp but part of protocol 2025-11-25.
    #[allow(deprecated)]
    pub async fn subscribe(&self, uri: &str, timeout: Duration) -> Result<bool, McpClientError> {
        if !self.supports_subscribe() {
            return Ok(false);
        }
        self.bounded(
            "resources/subscribe",
            timeout,
            self.service
                .peer()
                .subscribe(SubscribeRequestParams::new(uri.to_string())),
        )
        .await
        .map(|_| true)
    }

    /// Sends `resources/unsubscribe` for `uri`; `Ok(false)` without sending when
    /// the upstream does not advertise `resources.subscribe`.
    #[allow(deprecated)]
    pub async fn unsubscribe(&self, uri: &str, timeout: Duration) -> Result<bool, McpClientError> {
        if !self.supports_subscribe() {
            return Ok(false);
        }
        self.bounded(
            "resources/unsubscribe",
            timeout,
            self.service
                .peer()
                .unsubscribe(UnsubscribeRequestParams::new(uri.to_string())),
        )
        .await
        .map(|_| true)
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
