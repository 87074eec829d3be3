//! The MCP audit log for `agent_loop` runs: every MCP tool call a run makes,
//! refuses or withholds is one record in the same log as calls proxied for MCP
//! clients (`hecate mcp calls`), with the run as the calling client.

use super::Loop;
use crate::domain::message::ToolCall;
use crate::domain::time::{now_millis, now_rfc3339};
use crate::engine::mcp::types::ToolPolicy;
use crate::store::McpCallRecord;

/// When an audited call began: its RFC 3339 instant and epoch milliseconds.
pub(super) struct CallStart(String, i64);

impl CallStart {
    /// Now.
    pub(super) fn now() -> Self {
        Self(now_rfc3339(), now_millis())
    }
}

/// How an audited call ended: the gate's decision and the call's outcome.
pub(super) struct CallEnd<'a> {
    /// `allowed`, `approved`, `rejected` or `blocked`.
    pub decision: &'a str,
    /// `ok`, `tool_error`, `cancelled` or `not_called`.
    pub outcome: &'a str,
    /// The first line of the error, when the outcome is not `ok`.
    pub error: Option<&'a str>,
}

impl Loop<'_> {
    /// Queues the audit record of `call` when it names an MCP tool of the run
    /// (offered or withheld); built-in tools are not audited here.
    pub(super) fn audit_mcp_call(&self, call: &ToolCall, start: CallStart, end: CallEnd<'_>) {
        let Some(audit) = self.rt.inner.audit.get() else {
            return;
        };
        let (server, tool, policy) = match self.mcp.get(&call.name) {
            Some(t) => (
                t.server.clone(),
                t.tool.clone(),
                if t.needs_approval {
                    ToolPolicy::RequireApproval
                } else {
                    ToolPolicy::Auto
                },
            ),
            None if self.mcp.is_blocked(&call.name) => {
                let rest = call.name.strip_prefix("mcp__").unwrap_or(&call.name);
                let (server, tool) = rest.split_once("__").unwrap_or((rest, ""));
                (server.to_string(), tool.to_string(), ToolPolicy::Block)
            }
            None => return,
        };
        let keys =
            serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(&call.arguments)
                .map(|a| a.keys().cloned().collect())
                .unwrap_or_default();
        let approval_id = self.conversation.approvals.get(&call.id).cloned();
        audit.record(McpCallRecord {
            id: format!("mcpcall_{}", uuid::Uuid::now_v7().simple()),
            namespace: self.task.namespace.clone(),
            server,
            tool,
            exposed_name: call.name.clone(),
            client: format!("hecate agent (task {}, run {})", self.task.id, self.run.id),
            policy: policy.as_str().to_string(),
            decision: end.decision.to_string(),
            approval_id,
            outcome: end.outcome.to_string(),
            error_type: end.error.map(|_| "tool_error".to_string()),
            error_message: end.error.map(str::to_string),
            argument_keys: keys,
            argument_bytes: call.arguments.len() as u64,
            started_at: start.0,
            duration_ms: now_millis() - start.1,
        });
    }
}
