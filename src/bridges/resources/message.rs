//! Messages on the wire: content, runtime snapshot, and for assistant messages the
//! run metadata (ids, timing, usage) and the compact activity timeline.

use crate::domain::activity::Activity;
use crate::domain::message::{Message, ToolCall};
use crate::domain::provider_call::{ProviderCall, format_usd};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// A tool call an assistant message requested.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct ToolCallDto {
    /// Call id.
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments as a JSON string, verbatim from the model.
    pub arguments: String,
}

impl From<&ToolCall> for ToolCallDto {
    fn from(t: &ToolCall) -> Self {
        Self {
            id: t.id.clone(),
            name: t.name.clone(),
            arguments: t.arguments.clone(),
        }
    }
}

/// One row of the compact activity timeline of a turn.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct ActivityDto {
    /// `thinking`, `tool_call`, `approval`, `files_changed`, `final_answer` or `run_result`.
    #[serde(rename = "type")]
    pub activity_type: String,
    /// `running`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// Short title.
    pub title: String,
    /// Optional detail line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// When the first event behind this row happened.
    pub created_at: String,
    /// The permission request an `approval` row is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// For an `approval` row: whether it still waits for a person.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub needs_action: Option<bool>,
}

impl From<&Activity> for ActivityDto {
    fn from(a: &Activity) -> Self {
        Self {
            activity_type: a.activity_type.clone(),
            status: a.status.clone(),
            title: a.title.clone(),
            detail: a.detail.clone(),
            created_at: a.created_at.clone(),
            approval_id: None,
            needs_action: None,
        }
    }
}

/// Tokens and cost of the provider call that produced a message.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct UsageDto {
    /// Input tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
    /// Total tokens.
    pub total_tokens: u64,
    /// Cost in micro-USD; absent when the price is unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_micros_usd: Option<i64>,
    /// The same cost as a decimal dollar string.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<String>,
}

impl From<&ProviderCall> for UsageDto {
    fn from(c: &ProviderCall) -> Self {
        Self {
            prompt_tokens: c.usage.prompt_tokens,
            completion_tokens: c.usage.completion_tokens,
            total_tokens: c.usage.total_tokens,
            cost_micros_usd: c.cost_micros_usd,
            cost_usd: c.cost_micros_usd.map(format_usd),
        }
    }
}

/// An entry of a session's message stream; its default is an empty entry with
/// every optional field absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, ToSchema, JsonSchema)]
pub struct MessageDto {
    /// Message id (`msg_…`; `pending_<run_id>` for a running turn's live answer).
    pub id: String,
    /// Position in the session (monotonic, gap-free, from 0).
    pub sequence: i64,
    /// `system`, `user`, `assistant` or `tool`.
    pub role: String,
    /// Plain-text content.
    pub content: String,
    /// Rich content blocks (text, thinking, tool_use, tool_result, image, resource)
    /// when richer than plain text.
    #[schema(value_type = Vec<Object>)]
    pub content_blocks: Vec<Value>,
    /// Tool calls requested by an assistant message.
    pub tool_calls: Vec<ToolCallDto>,
    /// For tool messages, the call answered. No Agent Chat runtime stores tool
    /// messages in a transcript today (Hecate's agent keeps its tool exchanges
    /// in its task), so this is absent from every transcript.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// For tool messages, whether the tool failed.
    pub tool_error: bool,
    /// The provider call that emitted this message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub produced_by_call_id: Option<String>,
    /// `completed`, `running`, `failed` or `cancelled`.
    pub status: String,
    /// Error type when the producing turn failed or was cancelled.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Error message when the producing turn failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Whether this message is a history summary checkpoint.
    pub is_summary: bool,
    /// Runtime snapshot: kind.
    pub runtime_kind: String,
    /// Runtime snapshot: segment.
    pub segment_id: String,
    /// Runtime snapshot: provider.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provider: Option<String>,
    /// Runtime snapshot: model.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Runtime snapshot: adapter.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_id: Option<String>,
    /// The `agent_loop` task behind a Hecate Agent answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<String>,
    /// The task run that produced a Hecate Agent answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_run_id: Option<String>,
    /// Runtime snapshot: the model's effective capabilities when the turn ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    // An object in MCP schemas: `CapabilitiesDto` derives no `JsonSchema` (yet).
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub capabilities: Option<super::capability::CapabilitiesDto>,
    /// Where the time of a Hecate Agent answer went (from its task run's steps
    /// and approvals).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub timing: Option<crate::domain::timing::AgentTiming>,
    /// `git diff --stat` of the files an external agent's turn changed (after a
    /// revert, of what still differs).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diff_stat: Option<String>,
    /// The turn this message belongs to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Request id of the turn (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// Trace id of the turn, when tracing exported one (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_id: Option<String>,
    /// The id of the turn's span (`agent_chat.run`) in that trace (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub span_id: Option<String>,
    /// When the turn started (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    /// When the turn ended (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<String>,
    /// Turn duration in milliseconds (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<i64>,
    /// Tokens and cost of the producing call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<UsageDto>,
    /// Compact activity timeline of the turn (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub activities: Option<Vec<ActivityDto>>,
    /// Raw diagnostic frames the runtime reported, as JSON text, when there were any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw_output: Option<String>,
    /// The adapter's display name (external-agent answers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub adapter_name: Option<String>,
    /// How Hecate drives the adapter, `acp` (external-agent answers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_kind: Option<String>,
    /// The agent's own session id (external-agent answers of the session's
    /// current adapter).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub native_session_id: Option<String>,
    /// How the adapter's cost is known: `external` means only when it reports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_mode: Option<String>,
    /// The workspace the agent worked in (external-agent answers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<String>,
    /// Creation time.
    pub created_at: String,
}

impl From<&Message> for MessageDto {
    fn from(m: &Message) -> Self {
        Self {
            id: m.id.to_string(),
            sequence: m.sequence,
            role: m.role.as_str().to_string(),
            content: m.content.clone(),
            content_blocks: m
                .content_blocks
                .iter()
                .map(|b| serde_json::to_value(b).unwrap_or(Value::Null))
                .collect(),
            tool_calls: m.tool_calls.iter().map(ToolCallDto::from).collect(),
            tool_call_id: m.tool_call_id.clone(),
            tool_error: m.tool_error,
            produced_by_call_id: m.produced_by_call_id.as_ref().map(|c| c.to_string()),
            status: m.status.as_str().to_string(),
            error: m.error.clone(),
            is_summary: m.is_summary,
            runtime_kind: m.runtime.runtime_kind.as_str().to_string(),
            segment_id: m.runtime.segment_id.to_string(),
            provider: m.runtime.provider.clone(),
            model: m.runtime.model.clone(),
            adapter_id: m.runtime.adapter_id.clone(),
            task_id: m.runtime.task_id.clone(),
            task_run_id: m.runtime.task_run_id.clone(),
            capabilities: m
                .runtime
                .capabilities
                .as_ref()
                .map(super::capability::CapabilitiesDto::from),
            run_id: m.run_id.as_ref().map(|r| r.to_string()),
            created_at: m.created_at.clone(),
            ..Self::default()
        }
    }
}
