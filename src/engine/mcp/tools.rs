//! Calls to upstream MCP tools made through the hub: the policy gate (auto,
//! approval through the approval coordinator, block), the pooled call with
//! progress, logging and cancellation passed through, eviction of broken
//! connections, and an audit record of every call in the store.

use super::types::{DEFAULT_CALL_TIMEOUT, ToolPolicy, UpstreamTool, client_error};
use crate::adapters::mcp::McpClientError;
use crate::domain::approval::{Approval, ApprovalMode, Decision, Scope};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::event::EngineEvent;
use crate::domain::ids::RunId;
use crate::domain::permission::{
    PermissionAsker, PermissionKind, PermissionOption, PermissionOutcome, PermissionRequest,
};
use crate::domain::time::{now_millis, now_rfc3339};
use crate::engine::Mcp;
use crate::engine::approvals::TurnAsker;
use crate::engine::bus::Received;
use crate::store::McpCallRecord;
use crate::telemetry::spans::McpCall;
use futures::future::BoxFuture;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

pub use crate::adapters::mcp::Notice as UpstreamNotice;

/// Someone who can answer an approval on the spot (an MCP client's user, through
/// elicitation). `None` means they did not answer; the approval is cancelled.
pub trait ApprovalPrompter: Send + Sync {
    /// Asks about `approval` and waits for the decision.
    fn prompt(&self, approval: Approval) -> BoxFuture<'static, Option<(Decision, Scope)>>;
}

/// Who makes a proxied call and how to reach them while it runs.
#[derive(Clone, Default)]
pub struct McpCallOptions {
    /// The calling client, for the audit log (e.g. `claude-code (stdio)`).
    pub client: String,
    /// Where progress and logging notifications of the upstream call go.
    pub notices: Option<mpsc::UnboundedSender<UpstreamNotice>>,
    /// Cancelled when the caller cancels; the upstream is told.
    pub cancel: CancellationToken,
    /// Asks the caller's user when the policy requires approval.
    pub prompter: Option<Arc<dyn ApprovalPrompter>>,
}

/// How the policy gate decided.
struct Gate {
    decision: &'static str,
    approval_id: Option<String>,
    allowed: bool,
}

impl<'e> Mcp<'e> {
    /// Asks the approval coordinator about a `require_approval` call; the caller's
    /// prompter (when any) answers the pending approval, otherwise an operator
    /// (`hecate approvals resolve`) or the timeout does.
    async fn gate_by_approval(
        self,
        namespace: &str,
        tool: &UpstreamTool,
        opts: &McpCallOptions,
    ) -> Result<Gate> {
        let hold = self.hold_gateway(namespace).await?;
        let session_id = hold.session_id.clone();
        let run_id = RunId::generate();
        let asker = TurnAsker {
            engine: self.engine.clone(),
            namespace: namespace.to_string(),
            adapter_id: Some(format!("mcp:{}", tool.server)),
            workspace: None,
            mode: ApprovalMode::Prompt,
            timeout: self.engine.config().approval_timeout,
            cancel: opts.cancel.clone(),
            span: tracing::Span::current(),
        };
        let request = PermissionRequest {
            session_id: session_id.clone(),
            run_id: run_id.clone(),
            tool_call_id: run_id.to_string(),
            title: format!(
                "Call {} ({} on MCP server {})",
                tool.exposed, tool.tool, tool.server
            ),
            tool_kind: Some(format!("mcp:{}", tool.exposed)),
            raw: json!({"server": tool.server, "tool": tool.tool, "client": opts.client}),
            options: vec![
                PermissionOption {
                    id: "allow_once".into(),
                    name: "Allow once".into(),
                    kind: PermissionKind::AllowOnce,
                },
                PermissionOption {
                    id: "allow_always".into(),
                    name: "Allow for this session".into(),
                    kind: PermissionKind::AllowAlways,
                },
                PermissionOption {
                    id: "reject_once".into(),
                    name: "Reject".into(),
                    kind: PermissionKind::RejectOnce,
                },
            ],
        };
        let mut events = self.engine.bus().subscribe(Some(session_id));
        let ask = asker.ask(request);
        tokio::pin!(ask);
        let mut approval_id = None;
        let outcome = loop {
            tokio::select! {
                outcome = &mut ask => break outcome,
                ev = events.recv() => match ev {
                    Some(Received::Event(EngineEvent::ApprovalRequested { approval, .. }))
                        if approval.run_id.as_ref() == Some(&run_id) =>
                    {
                        approval_id = Some(approval.id.to_string());
                        if let Some(p) = opts.prompter.clone() {
                            self.spawn_prompt(namespace, p, *approval);
                        }
                    }
                    Some(Received::Event(EngineEvent::ApprovalResolved { approval, .. }))
                        if approval.run_id.as_ref() == Some(&run_id) =>
                    {
                        approval_id = Some(approval.id.to_string());
                    }
                    Some(_) => {}
                    None => {}
                },
            }
        };
        drop(hold);
        let (decision, allowed) = match outcome {
            PermissionOutcome::Selected { option_id } if option_id.starts_with("allow") => {
                ("approved", true)
            }
            PermissionOutcome::Selected { .. } => ("rejected", false),
            PermissionOutcome::Cancelled => ("cancelled", false),
        };
        Ok(Gate {
            decision,
            approval_id,
            allowed,
        })
    }

    fn spawn_prompt(
        self,
        namespace: &str,
        prompter: Arc<dyn ApprovalPrompter>,
        approval: Approval,
    ) {
        let engine = self.engine.clone();
        let ns = namespace.to_string();
        tokio::spawn(async move {
            let id = approval.id.clone();
            let answer = prompter.prompt(approval).await;
            let result = match answer {
                Some((decision, scope)) => {
                    engine.approvals().resolve(&ns, &id, decision, scope).await
                }
                None => engine.approvals().cancel(&ns, &id).await,
            };
            if let Err(e) = result
                && e.error_type != ErrorType::Conflict
            {
                tracing::warn!(error = %e, "could not apply the client's approval answer");
            }
        });
    }

    /// Calls the upstream tool exposed as `exposed` with `arguments`, enforcing its
    /// policy. Returns the upstream's `CallToolResult` JSON verbatim (which may be
    /// a tool error). `not_found` means no such tool (a protocol error for MCP
    /// clients); any other error is the call's failure, reported as a tool error.
    pub async fn call_tool(
        self,
        namespace: &str,
        exposed: &str,
        arguments: Option<Map<String, Value>>,
        opts: McpCallOptions,
    ) -> Result<Value> {
        let started_at = now_rfc3339();
        let started = now_millis();
        let tool = match self.find_upstream_tool(exposed).await {
            Some(t) => t,
            None => {
                let (error, blocked) = self.unknown_or_blocked(exposed);
                if let Some((server, tool)) = blocked {
                    let record = McpCallRecord {
                        id: format!("mcpcall_{}", uuid::Uuid::now_v7().simple()),
                        namespace: namespace.to_string(),
                        server,
                        tool,
                        exposed_name: exposed.to_string(),
                        client: opts.client.clone(),
                        policy: ToolPolicy::Block.as_str().into(),
                        decision: "blocked".into(),
                        approval_id: None,
                        outcome: "not_called".into(),
                        error_type: Some(error.error_type.code().to_string()),
                        error_message: Some(error.message.clone()),
                        argument_keys: arguments
                            .as_ref()
                            .map(|a| a.keys().cloned().collect())
                            .unwrap_or_default(),
                        argument_bytes: 0,
                        started_at,
                        duration_ms: now_millis() - started,
                    };
                    self.engine.inner.deferred.audit.record(record);
                }
                return Err(error);
            }
        };
        let mut record = McpCallRecord {
            id: format!("mcpcall_{}", uuid::Uuid::now_v7().simple()),
            namespace: namespace.to_string(),
            server: tool.server.clone(),
            tool: tool.tool.clone(),
            exposed_name: tool.exposed.clone(),
            client: opts.client.clone(),
            policy: tool.policy.as_str().to_string(),
            decision: "allowed".into(),
            approval_id: None,
            outcome: "not_called".into(),
            error_type: None,
            error_message: None,
            argument_keys: arguments
                .as_ref()
                .map(|a| a.keys().cloned().collect())
                .unwrap_or_default(),
            argument_bytes: arguments
                .as_ref()
                .map(|a| {
                    serde_json::to_string(a)
                        .map(|s| s.len() as u64)
                        .unwrap_or(0)
                })
                .unwrap_or(0),
            started_at,
            duration_ms: 0,
        };
        let result = self
            .gated_call(namespace, &tool, arguments, &opts, &mut record)
            .await;
        record.duration_ms = now_millis() - started;
        if let Err(e) = &result {
            record.error_type = Some(e.error_type.code().to_string());
            record.error_message = Some(e.message.clone());
        }
        self.engine.inner.deferred.audit.record(record);
        result
    }

    /// Finds the tool exposed as `exposed`: first among the tools of the server its
    /// prefix names (so a broken upstream elsewhere does not delay the call), then
    /// in the whole catalog.
    async fn find_upstream_tool(self, exposed: &str) -> Option<UpstreamTool> {
        if let Some(c) = self.mcp_cached_catalog() {
            return c.get(exposed).cloned();
        }
        let servers = self.servers();
        if let Some((prefix, _)) = exposed.split_once("__") {
            let own: Vec<_> = servers.iter().filter(|s| s.name == prefix).collect();
            if !own.is_empty()
                && let Some(t) = self
                    .mcp_tools_of(own)
                    .await
                    .tools
                    .into_iter()
                    .find(|t| t.exposed == exposed)
            {
                self.warm_mcp_catalog();
                return Some(t);
            }
        }
        match self.mcp_catalog_if_complete().await {
            Ok(c) => c.get(exposed).cloned(),
            Err(partial) => partial.tools.into_iter().find(|t| t.exposed == exposed),
        }
    }

    /// The hub-wide name of upstream `server`'s tool `tool` (`server__tool` when
    /// the catalog does not list it).
    pub async fn exposed_name(self, server: &str, tool: &str) -> String {
        let found = match self.mcp_catalog_if_complete().await {
            Ok(c) => c.exposed_name(server, tool).map(str::to_string),
            Err(partial) => partial
                .tools
                .into_iter()
                .find(|t| t.server == server && t.tool == tool)
                .map(|t| t.exposed),
        };
        found.unwrap_or_else(|| format!("{server}__{tool}"))
    }

    /// The error for a call to a tool not in the catalog, with the server and
    /// tool when the name is a tool the policy blocks.
    fn unknown_or_blocked(self, exposed: &str) -> (HecateError, Option<(String, String)>) {
        let blocked = self.servers().iter().find_map(|s| {
            exposed
                .strip_prefix(&format!("{}__", s.name))
                .filter(|tool| s.policy_for(tool) == ToolPolicy::Block)
                .map(|tool| (s.name.clone(), tool.to_string()))
        });
        match blocked {
            Some(b) => (
                HecateError::invalid(format!("tool {exposed} is blocked by the hub's policy"))
                    .with_detail("policy", "block"),
                Some(b),
            ),
            None => (HecateError::not_found("tool", exposed), None),
        }
    }

    async fn gated_call(
        self,
        namespace: &str,
        tool: &UpstreamTool,
        arguments: Option<Map<String, Value>>,
        opts: &McpCallOptions,
        record: &mut McpCallRecord,
    ) -> Result<Value> {
        if tool.policy == ToolPolicy::RequireApproval {
            let gate = self.gate_by_approval(namespace, tool, opts).await?;
            record.decision = gate.decision.to_string();
            record.approval_id = gate.approval_id;
            if !gate.allowed {
                return Err(HecateError::new(
                    ErrorType::Conflict,
                    format!(
                        "the call to {} was not approved ({})",
                        tool.exposed, gate.decision
                    ),
                )
                .with_detail("decision", gate.decision));
            }
        }
        let server = self.mcp_server(&tool.server)?;
        let hub = self.engine.mcp_hub();
        let lease = self.lease(&server).await.inspect_err(|_| {
            record.outcome = "failed".into();
        })?;
        let timeout = server.call_timeout.unwrap_or(DEFAULT_CALL_TIMEOUT);
        let traced = McpCall::start(&server.name, &tool.tool, lease.transport());
        let answer = lease
            .call_tool(
                &tool.tool,
                arguments,
                opts.notices.clone(),
                &opts.cancel,
                timeout,
            )
            .instrument(traced.span().clone())
            .await;
        match &answer {
            Ok(v) if v.get("isError").and_then(Value::as_bool) == Some(true) => {
                traced.finish("tool_error", None)
            }
            Ok(_) => traced.finish("ok", None),
            Err(McpClientError::Cancelled) => traced.finish("cancelled", None),
            Err(e) => traced.finish("failed", Some(&e.to_string())),
        }
        match answer {
            Ok(v) => {
                hub.note_sign_in(&server.name, None);
                let is_error = v.get("isError").and_then(Value::as_bool).unwrap_or(false);
                record.outcome = if is_error { "tool_error" } else { "ok" }.into();
                Ok(v)
            }
            Err(McpClientError::Cancelled) => {
                record.outcome = "cancelled".into();
                Err(HecateError::new(
                    ErrorType::Conflict,
                    format!("the call to {} was cancelled", tool.exposed),
                ))
            }
            Err(e) => {
                if e.is_fatal_to_connection() {
                    hub.pool.evict(&lease);
                }
                record.outcome = "failed".into();
                let e = client_error(&server.name, &e);
                hub.note_sign_in(&server.name, Some(&e));
                Err(e)
            }
        }
    }

    /// The newest audit records of proxied calls in `namespace`.
    pub async fn list_calls(self, namespace: &str, limit: usize) -> Result<Vec<McpCallRecord>> {
        self.engine.inner.deferred.audit.flush().await;
        self.engine.store().list_mcp_calls(namespace, limit).await
    }
}
