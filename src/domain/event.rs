//! Engine events: the normalized unit that flows out of a runtime and to every
//! subscriber. ACP updates, MCP progress and SSE frames are renderings of these.

use crate::domain::approval::{Approval, Scope};
use crate::domain::error::HecateError;
use crate::domain::ids::{MessageId, RunId, SessionId};
use crate::domain::provider_call::Usage;
use crate::domain::run::RunStatus;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a runtime reports while a turn runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum RuntimeEvent {
    /// A piece of answer text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// A piece of reasoning.
    ThoughtDelta {
        /// The text.
        text: String,
    },
    /// A tool call started.
    ToolCallStarted {
        /// Call id.
        id: String,
        /// Tool name or title.
        name: String,
        /// Tool kind, when known (read, edit, execute, ...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
        /// Arguments, when known.
        #[serde(default, skip_serializing_if = "Value::is_null")]
        input: Value,
    },
    /// A tool call progressed or finished.
    ToolCallUpdated {
        /// Call id.
        id: String,
        /// New status (pending, in_progress, completed, failed).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<String>,
        /// Output or other fields.
        #[serde(default, skip_serializing_if = "Value::is_null")]
        output: Value,
    },
    /// The agent's plan.
    Plan {
        /// Plan entries.
        entries: Value,
    },
    /// A file in the workspace changed.
    FileChanged {
        /// Workspace-relative path.
        path: String,
        /// What happened (modified, added, deleted).
        change: String,
    },
    /// Token usage for the turn so far.
    Usage {
        /// Counts.
        usage: Usage,
    },
    /// How full the context window is, and the session's cost so far (what an
    /// ACP `usage_update` carries).
    ContextUsage {
        /// Tokens in the context window now.
        used: u64,
        /// The context window's size in tokens.
        size: u64,
        /// The session's running cost total, when known.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost: Option<crate::domain::provider_call::ReportedCost>,
    },
    /// The agent replayed (or echoed) a user message, e.g. while loading a session.
    UserMessage {
        /// The text.
        text: String,
    },
    /// The commands the agent offers changed.
    AvailableCommands {
        /// The commands as the agent listed them.
        commands: Value,
    },
    /// The agent's current mode changed.
    ModeChanged {
        /// The new mode id.
        mode_id: String,
    },
    /// The agent's configuration options (e.g. model) changed.
    ConfigChanged {
        /// The options as the agent listed them.
        options: Value,
    },
    /// A raw frame kept for diagnostics.
    Raw {
        /// The frame.
        data: Value,
    },
    /// The turn runs as this task run (Hecate's agent), known before it ends.
    TaskLinked {
        /// The `agent_loop` task.
        task_id: String,
        /// Its run that carries the turn.
        task_run_id: String,
    },
    /// The turn's streamed text reached its per-turn limit: what came after was
    /// dropped, neither shown nor stored.
    OutputCapped {
        /// The limit, in bytes of text (answer and reasoning together).
        limit_bytes: u64,
    },
    /// The session's title (or its last activity) changed: named by its agent
    /// (ACP `session_info_update`) or by Hecate from the first prompt.
    SessionInfo {
        /// The new title, when it changed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
        /// When the session was last active (RFC 3339), when reported.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        updated_at: Option<String>,
    },
}

/// An event published by the engine about one session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EngineEvent {
    /// A turn started.
    TurnStarted {
        /// Session.
        session_id: SessionId,
        /// Run.
        run_id: RunId,
    },
    /// A runtime event inside a turn.
    Runtime {
        /// Session.
        session_id: SessionId,
        /// Run.
        run_id: RunId,
        /// Position of the event in its run, from 1: the sequence it is stored
        /// under, so live views and the run-event log agree.
        sequence: i64,
        /// The runtime event.
        update: RuntimeEvent,
    },
    /// A turn ended.
    TurnFinished {
        /// Session.
        session_id: SessionId,
        /// Run.
        run_id: RunId,
        /// Terminal status.
        status: RunStatus,
        /// The error, when it failed.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        error: Option<HecateError>,
    },
    /// A permission request is waiting for a decision.
    ApprovalRequested {
        /// Session.
        session_id: SessionId,
        /// The agent's tool call the request is about.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_call_id: Option<String>,
        /// The pending approval.
        approval: Box<Approval>,
        /// The adapter that asked, for an external agent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        adapter_id: Option<String>,
        /// The scopes a decision can take (see `approval::scope_choices`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        scope_choices: Vec<Scope>,
    },
    /// A permission request was decided (by someone, a grant, a mode, a timeout).
    ApprovalResolved {
        /// Session.
        session_id: SessionId,
        /// The resolved approval.
        approval: Box<Approval>,
    },
    /// Files a finished turn changed were restored to their state before it.
    FilesReverted {
        /// Session.
        session_id: SessionId,
        /// The turn whose changes were reverted.
        run_id: RunId,
        /// The turn's assistant message (its stored diff was refreshed).
        message_id: MessageId,
        /// The paths restored.
        paths: Vec<String>,
    },
}

impl EngineEvent {
    /// The session an event is about.
    pub fn session_id(&self) -> &SessionId {
        match self {
            Self::TurnStarted { session_id, .. }
            | Self::Runtime { session_id, .. }
            | Self::TurnFinished { session_id, .. }
            | Self::ApprovalRequested { session_id, .. }
            | Self::ApprovalResolved { session_id, .. }
            | Self::FilesReverted { session_id, .. } => session_id,
        }
    }

    /// The run (turn) an event is about, when it names one.
    pub fn run_id(&self) -> Option<&RunId> {
        match self {
            Self::TurnStarted { run_id, .. }
            | Self::Runtime { run_id, .. }
            | Self::TurnFinished { run_id, .. }
            | Self::FilesReverted { run_id, .. } => Some(run_id),
            Self::ApprovalRequested { approval, .. } | Self::ApprovalResolved { approval, .. } => {
                approval.run_id.as_ref()
            }
        }
    }
}

impl RuntimeEvent {
    /// The stable event type name used in run-event logs.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::TextDelta { .. } => "text_delta",
            Self::ThoughtDelta { .. } => "thought_delta",
            Self::ToolCallStarted { .. } => "tool_call_started",
            Self::ToolCallUpdated { .. } => "tool_call_updated",
            Self::Plan { .. } => "plan",
            Self::FileChanged { .. } => "file_changed",
            Self::Usage { .. } => "usage",
            Self::ContextUsage { .. } => "context_usage",
            Self::UserMessage { .. } => "user_message",
            Self::AvailableCommands { .. } => "available_commands",
            Self::ModeChanged { .. } => "mode_changed",
            Self::ConfigChanged { .. } => "config_changed",
            Self::Raw { .. } => "raw",
            Self::OutputCapped { .. } => "output_capped",
            Self::TaskLinked { .. } => "task_linked",
            Self::SessionInfo { .. } => "session_info",
        }
    }
}
