//! Upstream MCP tools as this connection exposes them (namespaced `NAME__tool`
//! on the hub, original names on a single-upstream endpoint) and proxied calls:
//! through the engine's policy gate, with upstream progress and logging relayed
//! to the caller before the result, and MCP cancellation passed on. A caller on
//! revision 2026-07-28 gets an upstream's elicitation and sampling requests as
//! questions of its call's rounds, and log messages only at the level its
//! request's `_meta` opted in to.

use super::access::{call_refusal, definition_is_read_only, identity_of};
use super::elicit::{ElicitingPrompter, Reach};
use super::errors::{protocol_error, tool_error};
use super::modern::is_modern;
use super::modern::progress::ProgressSink;
use super::modern::rounds::Asker;
use super::server::HecateMcp;
use crate::domain::api_key::Identity;
use crate::domain::error::{ErrorType, HecateError};
use crate::engine::{ApprovalPrompter, McpCallOptions, UpstreamNotice, UpstreamTool};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientCapabilities, ElicitRequest,
    InputRequest, ProgressNotificationParam, ServerRequest, Tool,
};
// Logging and sampling are SEP-2577-deprecated in rmcp but still protocol 2025-11-25.
#[allow(deprecated)]
use rmcp::model::{CreateMessageRequest, LoggingLevel, LoggingMessageNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use std::sync::Arc;
use tokio::sync::mpsc;

impl HecateMcp {
    /// Whether `t` belongs to what this connection serves.
    fn in_scope(&self, t: &UpstreamTool) -> bool {
        self.opts.upstream.as_ref().is_none_or(|u| *u == t.server)
    }

    /// The upstream tools this connection lists to `identity`, schemas verbatim.
    pub(crate) async fn upstream_tools(&self, identity: &Identity) -> Vec<Tool> {
        let catalog = self.engine.mcp().tools().await;
        for f in &catalog.failures {
            tracing::warn!(server = %f.server, error = %f.error, "upstream MCP server unavailable");
        }
        catalog
            .tools
            .into_iter()
            .filter(|t| self.in_scope(t) && identity.allows_tool(&t.server, &t.tool))
            .filter_map(|t| {
                let mut def = Arc::unwrap_or_clone(t.definition);
                if !self.is_hub()
                    && let Some(obj) = def.as_object_mut()
                {
                    obj.insert("name".into(), serde_json::Value::String(t.tool.clone()));
                }
                match serde_json::from_value::<Tool>(def) {
                    Ok(tool) => Some(tool),
                    Err(e) => {
                        tracing::warn!(tool = %t.exposed, error = %e, "skipping an upstream tool with an invalid definition");
                        None
                    }
                }
            })
            .collect()
    }

    /// The hub-wide name of a tool this connection calls `name`.
    async fn exposed_name(&self, name: &str) -> String {
        match &self.opts.upstream {
            None => name.to_string(),
            Some(server) => self.engine.mcp().exposed_name(server, name).await,
        }
    }

    /// Proxies a call to an upstream tool.
    pub(crate) async fn call_upstream(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let exposed = self.exposed_name(&request.name).await;
        let identity = identity_of(&context.extensions);
        if identity.scope().is_some() {
            let catalog = self.engine.mcp().tools().await;
            if let Some(t) = catalog.tools.iter().find(|t| t.exposed == exposed)
                && let Some(refusal) = call_refusal(
                    &identity,
                    &t.server,
                    &t.tool,
                    definition_is_read_only(&t.definition),
                )
            {
                return Err(refusal);
            }
        }
        let (tx, mut rx) = mpsc::unbounded_channel();
        let prompter = Reach::of(&context)
            .map(|reach| Arc::new(ElicitingPrompter { reach }) as Arc<dyn ApprovalPrompter>);
        let opts = McpCallOptions {
            client: self.caller(&context, &identity),
            notices: Some(tx),
            cancel: context.ct.clone(),
            prompter,
        };
        let relay_to = Relay {
            peer: context.peer.clone(),
            progress: ProgressSink::of(&context),
            capabilities: context.client_capabilities(),
            asker: context.extensions.get::<Asker>().cloned(),
            modern: is_modern(&context),
        };
        let call = self
            .engine
            .mcp()
            .call_tool(self.ns(), &exposed, request.arguments, opts);
        tokio::pin!(call);
        let result = loop {
            tokio::select! {
                r = &mut call => break r,
                Some(n) = rx.recv() => relay_to.relay(n).await,
            }
        };
        while let Ok(n) = rx.try_recv() {
            relay_to.relay(n).await;
        }
        match result {
            Ok(v) => match serde_json::from_value::<CallToolResult>(v) {
                Ok(r) => Ok(r.into()),
                Err(e) => Ok(tool_error(&HecateError::gateway(format!(
                    "the upstream's result is not a CallToolResult: {e}"
                )))
                .into()),
            },
            Err(e) if e.error_type == ErrorType::NotFound => Err(protocol_error(&e)),
            Err(e) => Ok(tool_error(&e).into()),
        }
    }
}

/// Where an upstream's notifications and requests during a call go: the
/// caller's progress token, the capabilities it declared, and, for a client on
/// revision 2026-07-28, the rounds of its call instead of server→client requests.
struct Relay {
    peer: Peer<RoleServer>,
    /// Where the caller's progress and log messages go (for a call in rounds,
    /// the current round).
    progress: ProgressSink,
    capabilities: Option<ClientCapabilities>,
    asker: Option<Asker>,
    /// A 2026-07-28 caller, which gets log messages only at or above the
    /// level its current request opted in to (`_meta`).
    modern: bool,
}

impl Relay {
    /// Puts an upstream's server→client request to the caller and returns its answer.
    #[allow(deprecated)]
    async fn forward(
        &self,
        method: &str,
        params: serde_json::Value,
    ) -> Result<serde_json::Value, (i32, String)> {
        let caps = self.capabilities.as_ref();
        let bad = |e: serde_json::Error| (-32602, format!("{method}: {e}"));
        let (hint, input) = match method {
            "sampling/createMessage" if caps.is_some_and(|c| c.sampling.is_some()) => (
                "sampling",
                InputRequest::CreateMessage(CreateMessageRequest::new(
                    serde_json::from_value(params).map_err(bad)?,
                )),
            ),
            "elicitation/create" if caps.is_some_and(|c| c.elicitation.is_some()) => (
                "elicitation",
                InputRequest::Elicitation(ElicitRequest::new(
                    serde_json::from_value(params).map_err(bad)?,
                )),
            ),
            _ => {
                return Err((
                    -32601,
                    format!("{method}: the calling client does not support it"),
                ));
            }
        };
        if self.modern {
            let Some(asker) = &self.asker else {
                return Err((
                    -32601,
                    format!("{method}: the calling client cannot be asked during this request"),
                ));
            };
            return asker.ask(hint, input).await.ok_or_else(|| {
                (
                    -32603,
                    format!("{method}: the calling client gave no answer"),
                )
            });
        }
        let request = match input {
            InputRequest::CreateMessage(r) => ServerRequest::CreateMessageRequest(r),
            InputRequest::Elicitation(r) => ServerRequest::ElicitRequest(r),
            _ => return Err((-32601, format!("{method}: not relayed"))),
        };
        match self.peer.send_request(request).await {
            Ok(r) => serde_json::to_value(&r).map_err(|e| (-32603, e.to_string())),
            Err(rmcp::ServiceError::McpError(e)) => Err((e.code.0, e.message.into_owned())),
            Err(e) => Err((-32603, e.to_string())),
        }
    }

    /// Forwards one upstream notification to the caller.
    #[allow(deprecated)]
    async fn relay(&self, n: UpstreamNotice) {
        let sent = match n {
            UpstreamNotice::Progress {
                progress,
                total,
                message,
            } => {
                let Some((peer, token)) = self.progress.target() else {
                    return;
                };
                let mut p = ProgressNotificationParam::new(token, progress);
                if let Some(t) = total {
                    p = p.with_total(t);
                }
                if let Some(m) = message {
                    p = p.with_message(m);
                }
                peer.notify_progress(p).await
            }
            UpstreamNotice::Request {
                method,
                params,
                reply,
            } => {
                let _ = reply.send(self.forward(&method, params).await);
                return;
            }
            UpstreamNotice::Log {
                level,
                logger,
                data,
            } => {
                let level =
                    serde_json::from_value::<LoggingLevel>(serde_json::Value::String(level))
                        .unwrap_or(LoggingLevel::Info);
                let Some((peer, floor)) = self.progress.log_target() else {
                    return;
                };
                if self.modern && floor.is_none_or(|floor| (level as u8) < (floor as u8)) {
                    return;
                }
                let mut p = LoggingMessageNotificationParam::new(level, data);
                if let Some(l) = logger {
                    p = p.with_logger(l);
                }
                peer.notify_logging_message(p).await
            }
        };
        if let Err(e) = sent {
            tracing::debug!(error = %e, "could not relay an upstream notification");
        }
    }
}
