//! Arguments and structured outputs of Hecate's own MCP tools. Each type derives
//! a JSON Schema: inputs become `inputSchema`, outputs `outputSchema`. Outputs
//! carry the public resources (`bridges::resources`) that HTTP and the CLI
//! render; the types here only wrap them in the tools' envelopes.

use crate::bridges::resources::agent::{
    ApprovalDto, ChangedFileDto, DecisionName, GrantDto, ScopeName,
};
use crate::bridges::resources::{MessageDto, SessionDto, SessionSummaryDto, TranscriptPageDto};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `list_sessions` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSessionsArgs {
    /// At most this many sessions, newest first (default 50, at most 500).
    pub limit: Option<u32>,
}

/// `search_sessions` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchSessionsArgs {
    /// Text to find (case-insensitive) in session titles, ids and messages.
    pub query: String,
    /// At most this many matches (default 20).
    pub limit: Option<u32>,
}

/// Arguments naming one session.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SessionArgs {
    /// The session id (`agent_chat_...`).
    pub session_id: String,
}

/// `get_transcript` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TranscriptArgs {
    /// The session id.
    pub session_id: String,
    /// Only the last N messages (the same as `limit` without a cursor).
    pub last: Option<u32>,
    /// At most this many messages (1–1000, default 200).
    pub limit: Option<u32>,
    /// Only messages older than this sequence, the newest of them (a page's
    /// `first_sequence` gives the page before it).
    pub before_sequence: Option<i64>,
    /// Only messages newer than this sequence, the oldest of them (a page's
    /// `last_sequence` gives the page after it). Not with `before_sequence`.
    pub after_sequence: Option<i64>,
    /// Only messages of these roles, comma-separated (`system`, `user`,
    /// `assistant`, `tool`).
    pub role: Option<String>,
}

/// `create_session` arguments: a model (`provider/model`) or an agent (adapter id).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateSessionArgs {
    /// Title.
    pub title: Option<String>,
    /// Model as `provider/model` for a model session.
    pub model: Option<String>,
    /// External agent adapter id (see `list_adapters`) for an agent session.
    pub agent: Option<String>,
    /// Workspace directory (required for agents).
    pub workspace: Option<String>,
    /// System prompt for model sessions.
    pub system_prompt: Option<String>,
}

/// How the agent's permission requests are answered in a turn.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalModeArg {
    /// Ask: the calling client's user through elicitation when it supports it,
    /// otherwise an operator (`hecate approvals resolve`), with a timeout.
    Prompt,
    /// Allow once without asking.
    Auto,
    /// Reject without asking.
    Deny,
}

/// `send_message` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendMessageArgs {
    /// The session id.
    pub session_id: String,
    /// The prompt.
    pub content: String,
    /// Permission handling for this turn (Hecate's configured mode when absent).
    pub approval_mode: Option<ApprovalModeArg>,
}

/// `ask_agent` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskAgentArgs {
    /// Who answers: `agent:ID` (an external coding agent from `list_adapters`),
    /// `model:PROVIDER/MODEL`, or Hecate's own agent: `hecate:PROVIDER/MODEL` or
    /// `hecate` (the default model).
    pub target: String,
    /// The task or question.
    pub prompt: String,
    /// Workspace directory the agent works in (required for agents).
    pub workspace: Option<String>,
    /// Continue this session instead of starting a new one.
    pub session_id: Option<String>,
    /// Permission handling (elicitation to the caller when it supports it, else
    /// Hecate's configured mode, when absent).
    pub approval_mode: Option<ApprovalModeArg>,
}

/// `list_approvals` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListApprovalsArgs {
    /// Only this session's approvals.
    pub session_id: Option<String>,
    /// Include resolved approvals too (default: pending only).
    pub all: Option<bool>,
}

/// `resolve_approval` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveApprovalArgs {
    /// The approval id (`appr_...`).
    pub approval_id: String,
    /// Approve or reject.
    pub decision: DecisionName,
    /// Scope (default `once`); wider scopes create a grant.
    pub scope: Option<ScopeName>,
}

/// `revoke_grant` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RevokeGrantArgs {
    /// The grant id (`grant_...`).
    pub grant_id: String,
}

/// `probe_adapter` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ProbeAdapterArgs {
    /// The adapter id.
    pub adapter_id: String,
}

/// No arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `list_sessions` / `search_sessions` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionsOut {
    /// Sessions, newest first, with their counts (as HTTP lists them).
    pub sessions: Vec<SessionSummaryDto>,
}

/// A message as `get_transcript` shows it: the message resource, plus its plain
/// text under `text`, the name this tool has always answered it under (the
/// resource calls it `content`; both carry the same text).
#[derive(Debug, Serialize, JsonSchema)]
pub struct TranscriptMessage {
    /// The message.
    #[serde(flatten)]
    pub message: MessageDto,
    /// Plain text (the same as `content`).
    pub text: String,
}

impl From<MessageDto> for TranscriptMessage {
    fn from(message: MessageDto) -> Self {
        Self {
            text: message.content.clone(),
            message,
        }
    }
}

/// `get_transcript` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TranscriptOut {
    /// The session.
    pub session: SessionDto,
    /// Messages in order.
    pub messages: Vec<TranscriptMessage>,
    /// Where the messages sit in the session, and whether there is more either side.
    pub page: TranscriptPageDto,
}

/// `get_session` / `create_session` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionOut {
    /// The session.
    pub session: SessionDto,
}

/// What a turn produced (`send_message`, `ask_agent`). MCP's own answer: HTTP
/// answers a turn with the whole transcript, so no resource has this shape.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TurnOut {
    /// The session the turn ran in (continue it with `session_id`).
    pub session_id: String,
    /// The run.
    pub run_id: String,
    /// `completed`, `failed` or `cancelled`.
    pub status: String,
    /// The answer text (partial when the turn did not complete).
    pub answer: String,
    /// Files the turn changed in a Git workspace.
    pub files_changed: Vec<ChangedFileDto>,
    /// The error, when it failed: `{type, message, ...}`.
    pub error: Option<Value>,
}

/// `cancel_turn` / `revoke_grant` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct DoneOut {
    /// Always true when the tool succeeded.
    pub ok: bool,
}

/// `list_approvals` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ApprovalsOut {
    /// Approvals, oldest first.
    pub approvals: Vec<ApprovalDto>,
}

/// `resolve_approval` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ApprovalOut {
    /// The resolved approval.
    pub approval: ApprovalDto,
}

/// `list_grants` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct GrantsOut {
    /// Grants.
    pub grants: Vec<GrantDto>,
}

/// `list_adapters` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AdaptersOut {
    /// Catalog agents with availability (`id`, `name`, `status`, `version`, ...).
    pub adapters: Vec<Value>,
}

/// `probe_adapter` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ProbeOut {
    /// The probe report (`status`, `stage`, `error`, `stderr_tail`, ...).
    pub report: Value,
}

/// `upstream_status` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UpstreamStatusOut {
    /// Configured upstream MCP servers with their policy and tool count.
    pub servers: Vec<Value>,
    /// Client pool: `entries`, `in_use`, `idle`.
    pub pool: Value,
}
