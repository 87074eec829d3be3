//! The one public resource model every face renders: request bodies,
//! `{"object", "data"}` responses and the resources they carry. They mirror the
//! domain types (which stay free of HTTP, MCP and OpenAPI concerns), derive
//! `ToSchema` for the OpenAPI document and, where an MCP tool takes or answers
//! them (sessions, messages, approvals, tasks …), `JsonSchema` for its schemas.

pub mod agent;
pub mod agent_ops;
pub mod capability;
pub mod chat;
pub mod events;
pub mod flow_chat;
pub mod keys;
pub mod mcp;
pub mod memory;
pub mod message;
pub mod session;
pub mod system;
pub mod tasks;
pub mod trace_costs;

use crate::domain::HecateError;
use crate::domain::message::Role;
use crate::domain::session::RuntimeKind;
use crate::engine::TranscriptWindow;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

pub use message::{ActivityDto, MessageDto, ToolCallDto, UsageDto};
pub use session::{
    HistoryDto, ProviderCallDto, RunDto, SegmentDto, SessionDto, SessionSummaryDto, TranscriptDto,
    TranscriptPageDto,
};
pub use system::{GatewayStatsDto, HealthDto, McpPoolDto, StatsDto, StoreDto};

/// The runtime kinds a request may name.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RuntimeKindName {
    /// One provider call per turn.
    Model,
    /// Hecate's own tool loop.
    Agent,
    /// A supervised external ACP agent.
    ExternalAgent,
}

/// Parses a requested runtime kind; anything else is `agent_chat.runtime_kind_invalid`.
pub fn parse_runtime_kind(raw: Option<&str>) -> Result<Option<RuntimeKind>, HecateError> {
    match raw {
        None | Some("") => Ok(None),
        Some(s) => s.parse::<RuntimeKind>().map(Some),
    }
}

/// Body of `POST /hecate/v1/agent-chat/sessions`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[schema(example = json!({"runtime_kind": "model", "model": "ollama/qwen2.5-coder", "title": "Hecate Chat"}))]
#[serde(deny_unknown_fields)]
pub struct CreateSessionRequest {
    /// `model` (default), `agent` or `external_agent`.
    #[schema(value_type = Option<RuntimeKindName>)]
    pub runtime_kind: Option<String>,
    /// Provider name; optional when `model` is `provider/model` or unambiguous.
    pub provider: Option<String>,
    /// Model, bare or as `provider/model`.
    pub model: Option<String>,
    /// External-agent adapter id (`external_agent` sessions).
    pub adapter_id: Option<String>,
    /// Human title.
    pub title: Option<String>,
    /// Workspace directory; must exist.
    pub workspace: Option<String>,
    /// System prompt for direct model turns.
    pub system_prompt: Option<String>,
    /// Turn limit of the session.
    pub max_turns_per_session: Option<u32>,
    /// Wall-clock limit from the first turn, in milliseconds.
    pub max_session_duration_ms: Option<u64>,
    /// Idle limit between turns, in milliseconds.
    pub idle_timeout_ms: Option<u64>,
    /// Working-memory strategy; the config's `[history]` when absent.
    pub history: Option<HistoryDto>,
    /// The user whose long-term memory the session writes to and recalls from
    /// (1 to 128 bytes); absent: the namespace's shared memory.
    pub user: Option<String>,
    /// Messages recalled from the user's other sessions into each turn (0 to
    /// 50); `[memory] recall` when absent.
    pub recall: Option<i64>,
}

/// Body of `POST /hecate/v1/agent-chat/sessions/{id}/messages`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[schema(example = json!({"content": "Explain this error and suggest a fix."}))]
#[serde(deny_unknown_fields)]
pub struct SendMessageRequest {
    /// The prompt.
    pub content: String,
    /// Runtime for this turn (must be a permitted switch).
    #[schema(value_type = Option<RuntimeKindName>)]
    pub runtime_kind: Option<String>,
    /// Provider override for this turn.
    pub provider: Option<String>,
    /// Model override, bare or `provider/model`.
    pub model: Option<String>,
    /// System prompt override (kept on the session).
    pub system_prompt: Option<String>,
    /// Workspace override (kept on the session; must exist).
    pub workspace: Option<String>,
    /// External-agent adapter for an `external_agent` turn (hands the session to it).
    pub adapter_id: Option<String>,
}

/// Query of `GET /hecate/v1/agent-chat/sessions`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListSessionsQuery {
    /// At most this many sessions, newest first (1–1000, default 50).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
}

/// Query of `GET /hecate/v1/agent-chat/sessions/{id}` and of its `/messages`: one
/// page of the transcript, the newest unless a cursor says otherwise.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TranscriptQuery {
    /// At most this many messages (1–1000, default 200).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    /// Only messages older than this sequence, the newest of them (a page's
    /// `first_sequence` gives the page before it).
    pub before_sequence: Option<i64>,
    /// Only messages newer than this sequence, the oldest of them (a page's
    /// `last_sequence` gives the page after it). Not with `before_sequence`.
    pub after_sequence: Option<i64>,
    /// Only messages of these roles, comma-separated (`system`, `user`,
    /// `assistant`, `tool`); the page and its neighbours count only them.
    pub role: Option<String>,
}

/// The roles a `role=` query names (comma-separated, blanks ignored); an unknown
/// role is `invalid_request` naming `role`.
pub fn parse_roles(role: Option<&str>) -> Result<Vec<Role>, HecateError> {
    let mut roles = Vec::new();
    for name in role.unwrap_or("").split(',').map(str::trim) {
        if name.is_empty() {
            continue;
        }
        let r = Role::parse(name).ok_or_else(|| {
            HecateError::invalid(format!(
                "role {name:?} is not one of system, user, assistant, tool"
            ))
            .with_detail("field", "role")
        })?;
        if !roles.contains(&r) {
            roles.push(r);
        }
    }
    Ok(roles)
}

/// The largest page any list of the API answers.
pub const MAX_PAGE: u32 = 1000;

/// Default page of a transcript.
const DEFAULT_TRANSCRIPT_LIMIT: u32 = 200;

/// A list's page size: `default` when the query names none, else the named size
/// if it lies in 1..=[`MAX_PAGE`]; anything else is `invalid_request` naming it.
pub fn page_size(limit: Option<u32>, default: u32) -> Result<usize, HecateError> {
    match limit {
        None => Ok(default as usize),
        Some(n) if (1..=MAX_PAGE).contains(&n) => Ok(n as usize),
        Some(n) => Err(HecateError::invalid(format!(
            "limit must be between 1 and {MAX_PAGE}, got {n}"
        ))
        .with_detail("limit", n)),
    }
}

impl TranscriptQuery {
    /// The newest page at the default size.
    pub fn newest_page() -> TranscriptWindow {
        TranscriptWindow::Before {
            before: None,
            limit: DEFAULT_TRANSCRIPT_LIMIT as usize,
            roles: Vec::new(),
        }
    }

    /// The window this query asks for: the newest page unless a cursor says
    /// otherwise; a limit outside 1–1000, both cursors at once or an unknown
    /// role is `invalid_request`.
    pub fn window(&self) -> Result<TranscriptWindow, HecateError> {
        let limit = page_size(self.limit, DEFAULT_TRANSCRIPT_LIMIT)?;
        let roles = parse_roles(self.role.as_deref())?;
        match (self.before_sequence, self.after_sequence) {
            (Some(_), Some(_)) => Err(HecateError::invalid(
                "before_sequence and after_sequence cannot be combined: page one way at a time",
            )),
            (before, None) => Ok(TranscriptWindow::Before {
                before,
                limit,
                roles,
            }),
            (None, Some(after)) => Ok(TranscriptWindow::After {
                after,
                limit,
                roles,
            }),
        }
    }
}

/// `{"object": "agent_chat_messages", "data": […], "page": …}`: one page of a
/// session's messages.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct MessageListResponse {
    /// Always `agent_chat_messages`.
    pub object: String,
    /// The messages, oldest first.
    pub data: Vec<MessageDto>,
    /// Where they sit in the session.
    pub page: TranscriptPageDto,
}

/// Query of `GET /hecate/v1/agent-chat/sessions/{id}/stream`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StreamQuery {
    /// Resume after this run-event sequence of the session's latest run (an
    /// alternative to the `Last-Event-ID` header).
    #[param(minimum = 0)]
    pub after_sequence: Option<i64>,
}

/// `{"object": "agent_chat_session", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SessionResponse {
    /// Always `agent_chat_session`.
    pub object: String,
    /// The session with its transcript.
    pub data: TranscriptDto,
}

/// `{"object": "agent_chat_sessions", "data": […]}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SessionListResponse {
    /// Always `agent_chat_sessions`.
    pub object: String,
    /// Session summaries, newest first.
    pub data: Vec<SessionSummaryDto>,
}

/// What `POST …/{id}/cancel` answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CancelDto {
    /// The session.
    pub id: String,
    /// Always `cancelling`: the turn was signalled and ends shortly.
    pub status: String,
}

/// `{"object": "agent_chat_cancel", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CancelResponse {
    /// Always `agent_chat_cancel`.
    pub object: String,
    /// The signalled session.
    pub data: CancelDto,
}

/// What `DELETE …/{id}` answers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeletedDto {
    /// The deleted session.
    pub id: String,
    /// Always true.
    pub deleted: bool,
}

/// `{"object": "agent_chat_session_deleted", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct DeletedResponse {
    /// Always `agent_chat_session_deleted`.
    pub object: String,
    /// The deleted session.
    pub data: DeletedDto,
}

/// `{"object": "system_stats", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StatsResponse {
    /// Always `system_stats`.
    pub object: String,
    /// The figures.
    pub data: StatsDto,
}
