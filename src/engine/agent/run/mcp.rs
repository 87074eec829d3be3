//! The MCP servers of an `agent_loop` run: the configured upstream servers
//! (`[mcp_servers.NAME]`, with their tool policies) and the task's own
//! `mcp_servers` entries (a task entry replaces a configured server of the same
//! name; its stdio server starts in the run's workspace), brought up through
//! the engine's client pool and listed. Blocked tools are withheld,
//! `require_approval` ones marked for the gate, and every server's outcome is a
//! run event; a server that fails is left out and the loop goes on without it.

use crate::domain::task::Task;
use crate::engine::mcp::entry;
use crate::engine::mcp::types::{
    DEFAULT_CALL_TIMEOUT, LIST_TIMEOUT, ServerSpec, ToolPolicy, UpstreamServer, client_error,
    expose_names,
};
use crate::engine::tasks::TaskRuntime;
use crate::runtimes::agent::mcp::{McpConnection, McpTool, McpToolset};
use crate::store::tasks::NewTaskEvent;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;

/// Prefix of every MCP tool name the model sees.
const PREFIX: &str = "mcp";

/// One server taking part in a run.
struct Source {
    /// The server with its policy (a task's own entry as an unconfigured one).
    server: UpstreamServer,
    origin: &'static str,
}

impl Source {
    fn wholly_blocked(&self) -> bool {
        self.server.policy == ToolPolicy::Block
            && self
                .server
                .tool_policies
                .values()
                .all(|p| *p == ToolPolicy::Block)
    }
}

/// What bringing one server up gave.
enum Brought {
    Up(McpConnection, Vec<Value>),
    Failed(&'static str, crate::domain::error::HecateError),
}

impl TaskRuntime {
    /// The servers of `task`: configured ones first, then the task's entries.
    fn mcp_sources(&self, task: &Task, workspace: &Path) -> Vec<Source> {
        let mut sources: Vec<Source> = match self.inner.mcp.get() {
            Some(hub) => hub
                .servers()
                .iter()
                .map(|s| Source {
                    server: s.clone(),
                    origin: "config",
                })
                .collect(),
            None => Vec::new(),
        };
        // Entries were checked when the task was created.
        for e in entry::parse_all(&task.spec.mcp_servers).unwrap_or_default() {
            sources.retain(|s| s.server.name != e.name);
            let spec = match e.spec {
                ServerSpec::Stdio {
                    command, args, env, ..
                } => ServerSpec::Stdio {
                    command,
                    args,
                    env,
                    cwd: Some(workspace.to_path_buf()),
                },
                http => http,
            };
            sources.push(Source {
                server: UpstreamServer {
                    name: e.name,
                    spec,
                    policy: e.policy,
                    policy_configured: e.policy_configured,
                    tool_policies: BTreeMap::new(),
                    call_timeout: None,
                    oauth: Default::default(),
                },
                origin: "task",
            });
        }
        sources
    }

    /// Brings the run's MCP servers up and lists their tools; answers the
    /// toolset and one event per server.
    pub(super) async fn agent_mcp(
        &self,
        task: &Task,
        workspace: &Path,
    ) -> (McpToolset, Vec<NewTaskEvent>) {
        let Some(hub) = self.inner.mcp.get() else {
            return (McpToolset::default(), Vec::new());
        };
        let sources = self.mcp_sources(task, workspace);
        if sources.is_empty() {
            return (McpToolset::default(), Vec::new());
        }
        let pool = hub.pool.clone();
        let bring_up = sources.iter().map(|s| {
            let pool = pool.clone();
            let cached = (s.origin == "config")
                .then(|| hub.cached_tools(&s.server.name))
                .flatten();
            async move {
                if s.wholly_blocked() {
                    return None;
                }
                let lease = match pool.acquire(&s.server.spec, s.server.call_timeout).await {
                    Ok(l) => l,
                    Err(e) => {
                        return Some(Brought::Failed("start", client_error(&s.server.name, &e)));
                    }
                };
                lease.name_as(&s.server.name);
                let tools = match cached {
                    Some(t) => t,
                    None => match lease.list_tools(LIST_TIMEOUT).await {
                        Ok(t) => t,
                        Err(e) => {
                            if e.is_fatal_to_connection() {
                                pool.evict(&lease);
                            }
                            return Some(Brought::Failed(
                                "tools_list",
                                client_error(&s.server.name, &e),
                            ));
                        }
                    },
                };
                lease.note_tool_count(tools.len());
                let conn = McpConnection {
                    name: s.server.name.clone(),
                    lease,
                    call_timeout: s.server.call_timeout.unwrap_or(DEFAULT_CALL_TIMEOUT),
                };
                Some(Brought::Up(conn, tools))
            }
        });
        let results = futures::future::join_all(bring_up).await;
        let mut events = Vec::new();
        let mut connections = Vec::new();
        let mut listed: Vec<(&Source, Value)> = Vec::new();
        let mut blocked = Vec::new();
        for (s, r) in sources.iter().zip(results) {
            match r {
                None => {
                    blocked.push(format!("{PREFIX}__{}__", s.server.name));
                    events.push(NewTaskEvent::new(
                        "mcp.server.blocked",
                        json!({"server": s.server.name, "source": s.origin, "policy": "block"}),
                    ));
                }
                Some(Brought::Failed(stage, e)) => events.push(NewTaskEvent::new(
                    "mcp.server.failed",
                    json!({"server": s.server.name, "source": s.origin, "stage": stage,
                           "error_type": e.error_type.code(), "error": e.message}),
                )),
                Some(Brought::Up(conn, tools)) => {
                    events.push(NewTaskEvent::new(
                        "mcp.server.ready",
                        json!({"server": s.server.name, "source": s.origin,
                               "policy": s.server.policy.as_str(), "tools": tools.len()}),
                    ));
                    connections.push(conn);
                    listed.extend(tools.into_iter().map(|t| (s, t)));
                }
            }
        }
        let pairs: Vec<(String, String)> = listed
            .iter()
            .map(|(s, t)| (format!("{PREFIX}__{}", s.server.name), name_of(t)))
            .collect();
        let mut tools = Vec::new();
        for ((s, def), exposed) in listed.iter().zip(expose_names(&pairs)) {
            let tool = name_of(def);
            match s.server.policy_for_tool(&tool, def) {
                ToolPolicy::Block => blocked.push(exposed),
                policy => tools.push(McpTool {
                    exposed,
                    server: s.server.name.clone(),
                    description: def
                        .get("description")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    input_schema: def
                        .get("inputSchema")
                        .cloned()
                        .unwrap_or_else(|| json!({"type": "object"})),
                    tool,
                    needs_approval: policy == ToolPolicy::RequireApproval,
                }),
            }
        }
        (McpToolset::new(pool, connections, tools, blocked), events)
    }
}

fn name_of(def: &Value) -> String {
    crate::adapters::mcp::tool_def::name_of(def)
}
