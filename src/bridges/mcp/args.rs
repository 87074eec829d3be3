//! Arguments and structured outputs of Hecate's own MCP tools. Each type derives
//! a JSON Schema: inputs become `inputSchema`, outputs `outputSchema`.

use crate::bridges::resources::agent::{ApprovalDto, DecisionName, GrantDto, ScopeName};
use crate::domain::message::Message;
use crate::domain::provider_call::ProviderCall;
use crate::domain::session::{Session, SessionSummary};
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
    /// Only the last N messages (all when absent).
    pub last: Option<u32>,
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

/// A session as the tools show it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionInfo {
    /// Id.
    pub id: String,
    /// Title.
    pub title: String,
    /// `model`, `agent` or `external_agent`.
    pub runtime_kind: String,
    /// Lifecycle status.
    pub status: String,
    /// Provider, for model sessions.
    pub provider: Option<String>,
    /// Model, for model sessions.
    pub model: Option<String>,
    /// Adapter, for agent sessions.
    pub adapter_id: Option<String>,
    /// Workspace.
    pub workspace: Option<String>,
    /// Turns started.
    pub turns_used: u32,
    /// Stored messages (listings only).
    pub message_count: Option<u64>,
    /// Creation time.
    pub created_at: String,
    /// Last update.
    pub updated_at: String,
}

impl From<&Session> for SessionInfo {
    fn from(s: &Session) -> Self {
        Self {
            id: s.id.to_string(),
            title: s.title.clone(),
            runtime_kind: s.runtime_kind.as_str().into(),
            status: s.status.as_str().into(),
            provider: s.provider.clone(),
            model: s.model.clone(),
            adapter_id: s.adapter_id.clone(),
            workspace: s.workspace.clone(),
            turns_used: s.turns_used,
            message_count: None,
            created_at: s.created_at.clone(),
            updated_at: s.updated_at.clone(),
        }
    }
}

impl From<&SessionSummary> for SessionInfo {
    fn from(s: &SessionSummary) -> Self {
        let mut info = Self::from(&s.session);
        info.message_count = Some(s.message_count);
        info
    }
}

/// `list_sessions` / `search_sessions` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionsOut {
    /// Sessions, newest first.
    pub sessions: Vec<SessionInfo>,
}

/// A message as the tools show it.
#[derive(Debug, Serialize, JsonSchema)]
pub struct MessageInfo {
    /// Position in the session.
    pub sequence: i64,
    /// `user`, `assistant`, `system` or `tool`.
    pub role: String,
    /// Plain text.
    pub text: String,
    /// `completed`, `failed`, `cancelled` or `running`.
    pub status: String,
    /// The turn.
    pub run_id: Option<String>,
    /// Error type of a failed turn.
    pub error: Option<String>,
    /// Trace id of the turn that produced an assistant message, when traced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// The id of that turn's span (`agent_chat.run`), when traced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_id: Option<String>,
    /// Tokens and cost of the model call (or agent turn) that produced an
    /// assistant message, when one was recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageInfo>,
    /// Creation time.
    pub created_at: String,
}

/// Tokens and cost of the call that produced a message.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UsageInfo {
    /// Input tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
    /// Cost in micro-USD; absent when it is unknown (no price, or an agent that
    /// reported none).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_micros_usd: Option<i64>,
}

impl From<&ProviderCall> for UsageInfo {
    fn from(c: &ProviderCall) -> Self {
        Self {
            prompt_tokens: c.usage.prompt_tokens,
            completion_tokens: c.usage.completion_tokens,
            total_tokens: c.usage.total_tokens,
            cost_micros_usd: c.cost_micros_usd,
        }
    }
}

impl From<&Message> for MessageInfo {
    fn from(m: &Message) -> Self {
        Self {
            sequence: m.sequence,
            role: m.role.as_str().into(),
            text: m.content.clone(),
            status: m.status.as_str().into(),
            run_id: m.run_id.as_ref().map(ToString::to_string),
            error: m.error.clone(),
            trace_id: None,
            span_id: None,
            usage: None,
            created_at: m.created_at.clone(),
        }
    }
}

/// `get_transcript` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TranscriptOut {
    /// The session.
    pub session: SessionInfo,
    /// Messages in order.
    pub messages: Vec<MessageInfo>,
}

/// `get_session` / `create_session` output.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionOut {
    /// The session.
    pub session: SessionInfo,
}

/// A file a turn changed.
#[derive(Debug, Serialize, JsonSchema)]
pub struct FileInfo {
    /// Workspace-relative path.
    pub path: String,
    /// `added`, `modified`, `deleted` or `renamed`.
    pub status: String,
    /// Lines added.
    pub additions: u64,
    /// Lines removed.
    pub deletions: u64,
}

/// What a turn produced (`send_message`, `ask_agent`).
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
    pub files_changed: Vec<FileInfo>,
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
