//! MCP tools in an `agent_loop` run: the tools of the run's MCP servers as the
//! model sees them (`mcp__SERVER__tool`, the upstream's description and input
//! schema), and a call to one through the pooled connection the run holds,
//! its `CallToolResult` turned into a tool result. Which servers and tools take
//! part, and which calls wait for an approval, the engine decides.

use super::tools::{ToolOutcome, cap};
use crate::adapters::mcp::{Lease, McpClientError, Pool};
use crate::adapters::providers::ToolDefinition;
use crate::domain::message::ToolCall;
use crate::telemetry::spans::McpCall;
use serde_json::{Map, Value};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

/// One upstream tool offered to the model.
#[derive(Debug, Clone)]
pub struct McpTool {
    /// The name the model calls it by (`mcp__SERVER__tool`).
    pub exposed: String,
    /// The server's alias.
    pub server: String,
    /// The tool's own name upstream.
    pub tool: String,
    /// The upstream's description.
    pub description: String,
    /// The upstream's input schema, verbatim.
    pub input_schema: Value,
    /// Whether every call waits for an operator's approval.
    pub needs_approval: bool,
}

/// A server connection the run holds while it executes.
#[derive(Debug)]
pub struct McpConnection {
    /// The server's alias.
    pub name: String,
    /// The pooled connection.
    pub lease: Lease,
    /// Deadline of one call.
    pub call_timeout: Duration,
}

/// The MCP tools of one run and the connections behind them.
#[derive(Debug, Default)]
pub struct McpToolset {
    pool: Option<Pool>,
    connections: Vec<McpConnection>,
    tools: Vec<McpTool>,
    blocked: Vec<String>,
}

impl McpToolset {
    /// A toolset over `connections` offering `tools`; `blocked` are exposed
    /// names a policy withholds, or prefixes ending in `__` withholding every
    /// tool of a server (a call to one is refused with that reason).
    pub fn new(
        pool: Pool,
        connections: Vec<McpConnection>,
        tools: Vec<McpTool>,
        blocked: Vec<String>,
    ) -> Self {
        Self {
            pool: Some(pool),
            connections,
            tools,
            blocked,
        }
    }

    /// The tools, in order.
    pub fn tools(&self) -> &[McpTool] {
        &self.tools
    }

    /// The tool the model calls `name`.
    pub fn get(&self, name: &str) -> Option<&McpTool> {
        self.tools.iter().find(|t| t.exposed == name)
    }

    /// Whether `name` is a tool a policy withholds.
    pub fn is_blocked(&self, name: &str) -> bool {
        self.blocked
            .iter()
            .any(|b| b == name || (b.ends_with("__") && name.starts_with(b.as_str())))
    }

    /// The definitions the model is given.
    pub fn definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .map(|t| ToolDefinition {
                name: t.exposed.clone(),
                description: t.description.clone(),
                parameters: t.input_schema.clone(),
            })
            .collect()
    }

    /// Calls `tool` with the arguments of `call`; every failure is an error
    /// result the model sees.
    pub async fn call(
        &self,
        tool: &McpTool,
        call: &ToolCall,
        cancel: &CancellationToken,
    ) -> ToolOutcome {
        let raw = call.arguments.trim();
        let arguments: Option<Map<String, Value>> = if raw.is_empty() {
            None
        } else {
            match serde_json::from_str::<Value>(raw) {
                Ok(Value::Object(m)) => Some(m),
                Ok(Value::Null) => None,
                Ok(_) | Err(_) => {
                    return error_outcome(format!(
                        "malformed arguments for {}: expected a JSON object",
                        tool.exposed
                    ));
                }
            }
        };
        let Some(conn) = self.connections.iter().find(|c| c.name == tool.server) else {
            return error_outcome(format!("MCP server {} is not connected", tool.server));
        };
        let traced = McpCall::start(&conn.name, &tool.tool, conn.lease.transport());
        let answer = conn
            .lease
            .call_tool(&tool.tool, arguments, None, cancel, conn.call_timeout)
            .instrument(traced.span().clone())
            .await;
        match &answer {
            Ok(result) if result.get("isError").and_then(Value::as_bool) == Some(true) => {
                traced.finish("tool_error", None)
            }
            Ok(_) => traced.finish("ok", None),
            Err(McpClientError::Cancelled) => traced.finish("cancelled", None),
            Err(e) => traced.finish("failed", Some(&e.to_string())),
        }
        match answer {
            Ok(result) => {
                let (content, is_error) = render(&result);
                ToolOutcome {
                    is_error,
                    ..ToolOutcome::text(content)
                }
            }
            Err(McpClientError::Cancelled) => ToolOutcome {
                cancelled: true,
                ..error_outcome("cancelled".into())
            },
            Err(e) => {
                if e.is_fatal_to_connection()
                    && let Some(pool) = &self.pool
                {
                    pool.evict(&conn.lease);
                }
                error_outcome(format!("MCP server {}: {e}", tool.server))
            }
        }
    }
}

fn error_outcome(text: String) -> ToolOutcome {
    ToolOutcome {
        is_error: true,
        ..ToolOutcome::text(text)
    }
}

/// A `CallToolResult` as tool-result text and whether it is an error: text
/// parts verbatim, other parts as their JSON, the structured content as JSON
/// when nothing else was said.
pub fn render(result: &Value) -> (String, bool) {
    let is_error = result
        .get("isError")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut parts: Vec<String> = Vec::new();
    for c in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match (c.get("type").and_then(Value::as_str), c.get("text")) {
            (Some("text"), Some(Value::String(t))) => parts.push(t.clone()),
            (Some("image" | "audio"), _) => {
                let mime = c.get("mimeType").and_then(Value::as_str).unwrap_or("?");
                let len = c.get("data").and_then(Value::as_str).map_or(0, str::len);
                parts.push(format!(
                    "[{} content, {mime}, {len} base64 characters]",
                    c["type"].as_str().unwrap_or("binary")
                ));
            }
            _ => parts.push(c.to_string()),
        }
    }
    if let Some(s) = result.get("structuredContent").filter(|v| !v.is_null())
        && parts.is_empty()
    {
        parts.push(s.to_string());
    }
    (cap(parts.join("\n")), is_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn results_become_text_with_their_error_flag() {
        let (t, e) = render(&json!({"content": [{"type": "text", "text": "a"},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"}]}));
        assert_eq!(
            (t.as_str(), e),
            ("a\n[image content, image/png, 4 base64 characters]", false)
        );
        let (t, e) =
            render(&json!({"content": [], "structuredContent": {"x": 1}, "isError": true}));
        assert_eq!((t.as_str(), e), ("{\"x\":1}", true));
    }
}
