//! What answers a prompt. Each runtime turns a prompt, with the context the engine
//! chose, into a stream of domain events and a final report. Runtimes never decide
//! policy and never load history themselves.

pub mod a2a;
pub mod agent;
pub mod external;
mod handoff;
pub mod model;
pub mod model_target;

use crate::adapters::providers::ProviderError;
use crate::domain::error::HecateError;
use crate::domain::event::RuntimeEvent;
use crate::domain::gateway_conversation::RouteCandidate;
use crate::domain::ids::{RunId, SessionId, TaskId, TaskRunId};
use crate::domain::mcp::McpServerConfig;
use crate::domain::message::{ContentBlock, Message, ToolCall};
use crate::domain::permission::PermissionAsker;
use crate::domain::provider_call::Usage;
use crate::domain::workspace::WorkspaceDelegate;
use model_target::ModelTarget;
use std::sync::Arc;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// Everything a runtime needs for one turn.
#[derive(Clone)]
pub struct TurnContext {
    /// Session.
    pub session_id: SessionId,
    /// Run.
    pub run_id: RunId,
    /// Correlation id.
    pub request_id: String,
    /// What answers the turn.
    pub target: TurnTarget,
    /// System prompt.
    pub system: Option<String>,
    /// The history the engine chose, ending with the new user message.
    pub history: Vec<Message>,
    /// Messages recalled from the user's other sessions (`recall = k`), as one
    /// text, for runtimes that take a prompt rather than a message list (external
    /// agents and Hecate's agent put it before the prompt); a model turn gets it
    /// in `history` instead.
    pub recalled: Option<String>,
    /// Cancelled when the turn must stop.
    pub cancel: CancellationToken,
    /// Where to send events as they happen.
    pub events: UnboundedSender<RuntimeEvent>,
    /// How to ask permission for a tool call.
    pub asker: Arc<dyn PermissionAsker>,
    /// Who serves an external agent's fs/terminal requests instead of Hecate.
    pub workspace_delegate: Option<Arc<dyn WorkspaceDelegate>>,
    /// The reasoning effort a model turn asks the provider for (`low`,
    /// `medium`, `high`), when the client chose one.
    pub reasoning_effort: Option<String>,
}

/// The runtime target of a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnTarget {
    /// A provider model.
    Model {
        /// Provider name: the first the turn tries.
        provider: String,
        /// Model name.
        model: String,
        /// Whether the turn's request named the provider; otherwise the other
        /// providers serving the model may take the turn when it fails before
        /// its first token.
        pinned: bool,
    },
    /// A supervised external ACP agent.
    External {
        /// Catalog adapter id.
        adapter_id: String,
        /// Canonical workspace directory.
        workspace: String,
        /// The agent's own session id from an earlier turn, if any.
        native_session_id: Option<String>,
        /// MCP servers the client asked the agent to use.
        mcp_servers: Vec<McpServerConfig>,
    },
    /// Hecate's own agent: an `agent_loop` task the engine creates or continues.
    Agent {
        /// Provider name of a new task.
        provider: String,
        /// Model name of a new task.
        model: String,
        /// Canonical workspace directory the task works in.
        workspace: String,
        /// The ended run of the session's task a follow-up continues, if any.
        continue_from: Option<(TaskId, TaskRunId)>,
        /// MCP servers the client handed to the session; they join a new
        /// task's `mcp_servers`.
        mcp_servers: Vec<McpServerConfig>,
    },
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEnd {
    /// Finished normally.
    Completed,
    /// Failed with a classified error.
    Failed(HecateError),
    /// Stopped by cancellation.
    Cancelled,
}

/// What a runtime reports when a turn ends, whatever the ending.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnReport {
    /// How it ended.
    pub end: TurnEnd,
    /// Output content (partial unless completed).
    pub blocks: Vec<ContentBlock>,
    /// Tool calls the model requested.
    pub tool_calls: Vec<ToolCall>,
    /// Usage, when reported.
    pub usage: Option<Usage>,
    /// Cost in micro-USD, when the price is known.
    pub cost_micros_usd: Option<i64>,
    /// Whether an upstream call was made (and so should be recorded).
    pub called_upstream: bool,
    /// Wall time of the upstream call.
    pub duration_ms: i64,
    /// The external agent's session id after the turn.
    pub native_session_id: Option<String>,
    /// The `agent_loop` task and run that answered a Hecate Agent turn.
    pub backing_task: Option<(TaskId, TaskRunId)>,
    /// The provider's failure, when it failed before anything streamed (so
    /// another provider may take the turn).
    pub upstream_failure: Option<ProviderError>,
    /// A model turn's route: each candidate and what became of it.
    pub route: Vec<RouteCandidate>,
    /// The provider and model that answered a model turn (or failed it last).
    pub answered_by: Option<ModelTarget>,
}

impl TurnReport {
    /// An empty report that ended with `end`.
    pub fn ended(end: TurnEnd) -> Self {
        Self {
            end,
            blocks: Vec::new(),
            tool_calls: Vec::new(),
            usage: None,
            cost_micros_usd: None,
            called_upstream: false,
            duration_ms: 0,
            native_session_id: None,
            backing_task: None,
            upstream_failure: None,
            route: Vec::new(),
            answered_by: None,
        }
    }
}
