//! Session resources on the wire: the header, listing summaries, the full
//! transcript, runs, provider calls and derived segments.

use super::chat::TraceDto;
use super::message::MessageDto;
use crate::domain::error::HecateError;
use crate::domain::memory::{HistoryParts, HistoryStrategy};
use crate::domain::provider_call::{ProviderCall, format_usd};
use crate::domain::run::Run;
use crate::domain::segment::Segment;
use crate::domain::session::{Session, SessionSummary};
use crate::engine::Transcript;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// A session's working-memory strategy: which part of its transcript a turn sees.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[schema(example = json!({"strategy": "token_budget", "max_tokens": 8192}))]
#[serde(deny_unknown_fields)]
pub struct HistoryDto {
    /// `buffer_window` (the last `window` messages), `summary_buffer` (the newest
    /// summary and everything after it) or `token_budget` (the newest messages that
    /// fit `max_tokens`). `summary_checkpoint` is accepted as `summary_buffer`.
    pub strategy: String,
    /// Window size for `buffer_window` (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<usize>,
    /// Token budget for `token_budget` (default 8192).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<usize>,
    /// Messages between two summaries, for `summary_buffer` (default 20; 1 to 10,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarize_every: Option<u64>,
    /// Messages `summary_buffer` loads before the first summary (default 100; 1 to
    /// 10,000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_messages: Option<usize>,
}

impl HistoryDto {
    /// The strategy it names; an unknown name is
    /// `agent_chat.history_strategy_invalid` naming `history.strategy`, a summary
    /// setting out of range or on another strategy `invalid_request` naming it.
    pub fn to_strategy(&self) -> Result<HistoryStrategy, HecateError> {
        HistoryStrategy::from_parts(
            |key| format!("history.{key}"),
            HistoryParts {
                strategy: &self.strategy,
                window: self.window,
                max_tokens: self.max_tokens,
                summarize_every: self.summarize_every,
                max_messages: self.max_messages,
            },
        )
    }
}

impl From<&HistoryStrategy> for HistoryDto {
    fn from(h: &HistoryStrategy) -> Self {
        let mut dto = Self {
            strategy: h.name().to_string(),
            window: None,
            max_tokens: None,
            summarize_every: None,
            max_messages: None,
        };
        match *h {
            HistoryStrategy::BufferWindow { window } => dto.window = Some(window),
            HistoryStrategy::SummaryBuffer {
                summarize_every,
                max_messages,
            } => {
                dto.summarize_every = Some(summarize_every);
                dto.max_messages = Some(max_messages);
            }
            HistoryStrategy::TokenBudget { max_tokens } => dto.max_tokens = Some(max_tokens),
        }
        dto
    }
}

/// A session header: runtime, target, guardrails and lifecycle.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct SessionDto {
    /// Session id (`agent_chat_…`).
    pub id: String,
    /// Namespace the session lives in.
    pub namespace: String,
    /// Human title.
    pub title: String,
    /// `model`, `agent` or `external_agent`.
    pub runtime_kind: String,
    /// Provider, for model and agent runtimes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model, for model and agent runtimes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The effective capabilities of the session's provider/model now (model
    /// and agent runtimes); each message keeps those of its own turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    // An object in MCP schemas: `CapabilitiesDto` derives no `JsonSchema` (yet).
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub capabilities: Option<super::capability::CapabilitiesDto>,
    /// External-agent adapter id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_id: Option<String>,
    /// Canonical workspace directory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// System prompt for direct model turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// `idle`, `running`, `awaiting_approval`, `completed`, `failed`, `cancelled` or `closed`.
    pub status: String,
    /// The external agent's own session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_session_id: Option<String>,
    /// Turn limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns_per_session: Option<u32>,
    /// Wall-clock limit from the first turn, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_session_duration_ms: Option<u64>,
    /// Idle limit between turns, in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_timeout_ms: Option<u64>,
    /// Working-memory strategy; absent on sessions created before it was stored,
    /// which use the config's `[history]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<HistoryDto>,
    /// The user whose long-term memory the session uses; absent: the
    /// namespace's shared memory.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Messages recalled from the user's other sessions into each model turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recall: Option<u32>,
    /// Turns started so far.
    pub turns_used: u32,
    /// When the first turn started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_started_at: Option<String>,
    /// When the last turn ended (or the session was created).
    pub last_activity_at: String,
    /// Creation time.
    pub created_at: String,
    /// Last update time.
    pub updated_at: String,
}

impl From<&Session> for SessionDto {
    fn from(s: &Session) -> Self {
        Self {
            id: s.id.to_string(),
            namespace: s.namespace.clone(),
            title: s.title.clone(),
            runtime_kind: s.runtime_kind.as_str().to_string(),
            provider: s.provider.clone(),
            model: s.model.clone(),
            capabilities: None,
            adapter_id: s.adapter_id.clone(),
            workspace: s.workspace.clone(),
            system_prompt: s.system_prompt.clone(),
            status: s.status.as_str().to_string(),
            native_session_id: s.native_session_id.clone(),
            max_turns_per_session: s.guardrails.max_turns,
            max_session_duration_ms: s.guardrails.max_duration_ms,
            idle_timeout_ms: s.guardrails.idle_timeout_ms,
            history: s.history.as_ref().map(HistoryDto::from),
            user: s.memory.user.clone(),
            recall: s.memory.recall,
            turns_used: s.turns_used,
            session_started_at: s.session_started_at.clone(),
            last_activity_at: s.last_activity_at.clone(),
            created_at: s.created_at.clone(),
            updated_at: s.updated_at.clone(),
        }
    }
}

/// A session header with counts, as listings show it (no message bodies).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct SessionSummaryDto {
    /// The header.
    #[serde(flatten)]
    pub session: SessionDto,
    /// Stored messages.
    pub message_count: u64,
    /// Stored provider calls.
    pub provider_call_count: u64,
    /// Summed known cost in micro-USD; absent when no call had a known price.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_cost_micros_usd: Option<i64>,
    /// The same cost as a decimal dollar string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_cost_usd: Option<String>,
}

impl From<&SessionSummary> for SessionSummaryDto {
    fn from(s: &SessionSummary) -> Self {
        Self {
            session: SessionDto::from(&s.session),
            message_count: s.message_count,
            provider_call_count: s.provider_call_count,
            total_cost_micros_usd: s.total_cost_micros_usd,
            total_cost_usd: s.total_cost_micros_usd.map(format_usd),
        }
    }
}

/// One upstream model request with its tokens and cost.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ProviderCallDto {
    /// Call id (`call_…`); messages point at it with `produced_by_call_id`.
    pub id: String,
    /// Owning turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Request id of the turn that made the call.
    pub request_id: String,
    /// Provider name.
    pub provider: String,
    /// Model as sent.
    pub model: String,
    /// Input tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
    /// Cost in micro-USD; absent when the price is unknown (never a fake zero).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_micros_usd: Option<i64>,
    /// The same cost as a decimal dollar string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<String>,
    /// Wall time of the call in milliseconds.
    pub duration_ms: i64,
    /// Creation time.
    pub created_at: String,
}

impl From<&ProviderCall> for ProviderCallDto {
    fn from(c: &ProviderCall) -> Self {
        Self {
            id: c.id.to_string(),
            run_id: c.run_id.as_ref().map(|r| r.to_string()),
            request_id: c.request_id.clone(),
            provider: c.provider.clone(),
            model: c.model.clone(),
            prompt_tokens: c.usage.prompt_tokens,
            completion_tokens: c.usage.completion_tokens,
            total_tokens: c.usage.total_tokens,
            cost_micros_usd: c.cost_micros_usd,
            cost_usd: c.cost_micros_usd.map(format_usd),
            duration_ms: c.duration_ms,
            created_at: c.created_at.clone(),
        }
    }
}

/// One turn: status, timing and correlation ids.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RunDto {
    /// Run id (`run_…`).
    pub id: String,
    /// `running`, `awaiting_approval`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// Error type when it failed (`interrupted` after a crash).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_type: Option<String>,
    /// Error message when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Request id of the request that started it.
    pub request_id: String,
    /// Trace id, when tracing exported one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// The id of the run's own span (`agent_chat.run`) in that trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_id: Option<String>,
    /// Start time.
    pub started_at: String,
    /// End time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Duration in milliseconds, once ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
}

impl From<&Run> for RunDto {
    fn from(r: &Run) -> Self {
        Self {
            id: r.id.to_string(),
            status: r.status.as_str().to_string(),
            error_type: r.error_type.clone(),
            error_message: r.error_message.clone(),
            request_id: r.request_id.clone(),
            trace_id: r.trace_id.clone(),
            span_id: r.span_id.clone(),
            started_at: r.started_at.clone(),
            completed_at: r.completed_at.clone(),
            duration_ms: r.duration_ms,
        }
    }
}

/// A derived run of consecutive messages with the same runtime snapshot.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SegmentDto {
    /// Segment id (`seg_…`).
    pub segment_id: String,
    /// Runtime kind.
    pub runtime_kind: String,
    /// Provider snapshot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Model snapshot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Adapter snapshot.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_id: Option<String>,
    /// Run id of the latest turn in the segment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_run_id: Option<String>,
    /// The `agent_loop` task behind a Hecate Agent segment (its latest, when the
    /// segment started a fresh one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// That task's latest run in the segment.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_run_id: Option<String>,
    /// Status of the segment's last message.
    pub status: String,
    /// Number of messages.
    pub message_count: u64,
    /// First message time.
    pub first_at: String,
    /// Last message time.
    pub last_at: String,
}

impl From<&Segment> for SegmentDto {
    fn from(s: &Segment) -> Self {
        Self {
            segment_id: s.runtime.segment_id.to_string(),
            runtime_kind: s.runtime.runtime_kind.as_str().to_string(),
            provider: s.runtime.provider.clone(),
            model: s.runtime.model.clone(),
            adapter_id: s.runtime.adapter_id.clone(),
            latest_run_id: s.latest_run_id.clone(),
            task_id: s.runtime.task_id.clone(),
            task_run_id: s.runtime.task_run_id.clone(),
            status: s.status.clone(),
            message_count: s.message_count as u64,
            first_at: s.first_at.clone(),
            last_at: s.last_at.clone(),
        }
    }
}

/// A session with everything stored about it, plus the live state of a running
/// turn (its assistant message, with status `running`, is synthesized from the
/// run's events until the turn stores it).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TranscriptDto {
    /// The header.
    #[serde(flatten)]
    pub session: SessionDto,
    /// The latest run's id, when the session has run a turn.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_run_id: Option<String>,
    /// Messages in sequence order.
    pub messages: Vec<MessageDto>,
    /// Provider calls, oldest first.
    pub provider_calls: Vec<ProviderCallDto>,
    /// Runs, oldest first.
    pub runs: Vec<RunDto>,
    /// Derived segments.
    pub segments: Vec<SegmentDto>,
    /// Model calls the session's supervised agent made through `/v1`
    /// (`[agents.gateway]`), oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gateway_calls: Vec<TraceDto>,
    /// Where `messages` sit in the session, and whether there is more either side.
    pub page: TranscriptPageDto,
}

/// Where a window of a transcript sits in its session. Messages are numbered from
/// 0 without gaps, so a page's sequences are also the cursors of its neighbours.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct TranscriptPageDto {
    /// Older messages exist: ask again with `before_sequence` set to `first_sequence`.
    pub older: bool,
    /// Newer messages exist: ask again with `after_sequence` set to `last_sequence`.
    pub newer: bool,
    /// The sequence of the first message held (absent when none is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_sequence: Option<i64>,
    /// The sequence of the last stored message held (absent when none is).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_sequence: Option<i64>,
}

impl From<&Transcript> for TranscriptPageDto {
    fn from(t: &Transcript) -> Self {
        Self {
            older: t.page.older,
            newer: t.page.newer,
            first_sequence: t.messages.first().map(|m| m.sequence),
            last_sequence: t.messages.last().map(|m| m.sequence),
        }
    }
}
