//! The rmcp client handler of an upstream connection: routes progress and
//! logging notifications to the in-flight call they belong to, forwards the
//! upstream's sampling and elicitation requests to that call's client, and
//! broadcasts list changes.

// Logging and sampling are SEP-2577-deprecated in rmcp but still protocol 2025-11-25.
#![allow(deprecated)]

use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, Implementation, LoggingMessageNotificationParam,
    ProgressNotificationParam, ProgressToken, ResourceUpdatedNotificationParam,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, ErrorData, RoleClient};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use tokio::sync::{broadcast, mpsc};

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
pub(crate) struct Routes {
    pub(crate) progress: Mutex<ProgressRoutes>,
    pub(crate) inflight: Mutex<HashMap<u64, mpsc::UnboundedSender<Notice>>>,
    pub(crate) next: AtomicU64,
}

/// Progress sinks by token, plus progress that arrived before its call's token
/// was registered (the token is only known once the request is sent).
#[derive(Default)]
pub(crate) struct ProgressRoutes {
    sinks: HashMap<ProgressToken, mpsc::UnboundedSender<Notice>>,
    early: HashMap<ProgressToken, Vec<Notice>>,
}

/// Most tokens whose early progress is kept.
const EARLY_TOKENS: usize = 256;

impl ProgressRoutes {
    pub(crate) fn register(&mut self, token: ProgressToken, sink: mpsc::UnboundedSender<Notice>) {
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
    pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Removes a call's routes when it ends, however it ends.
pub(crate) struct CallRouteGuard {
    pub(crate) routes: Arc<Routes>,
    pub(crate) token: Option<ProgressToken>,
    pub(crate) slot: u64,
}

impl Drop for CallRouteGuard {
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
pub(crate) struct Handler {
    pub(crate) routes: Arc<Routes>,
    pub(crate) changes: broadcast::Sender<Changed>,
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

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        // Sampling and elicitation are advertised so upstreams can ask; each
        // request is forwarded to the client that made the call in flight.
        let caps: ClientCapabilities = serde_json::from_value(serde_json::json!({
            "sampling": {},
            "elicitation": {}
        }))
        .unwrap_or_default();
        // The newest revision rmcp knows (2026-07-28) has no initialize handshake;
        // servers and the conformance suite still expect 2025-11-25 in it.
        ClientConfig::new(
            caps,
            Implementation::new("hecate", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE)
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
