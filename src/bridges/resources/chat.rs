//! Wire types of the gateway's recordings: chat sessions
//! (`/hecate/v1/chat/sessions`), their messages, provider calls and replay, and
//! gateway traces (`/hecate/v1/traces`).

use crate::domain::gateway_conversation::{
    GatewayCall, GatewayConversation, GatewayConversationSummary, GatewayMessage, GatewayTrace,
    RouteCandidate,
};
use crate::domain::provider_call::format_usd;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use utoipa::{IntoParams, ToSchema};

/// Query of `GET /hecate/v1/chat/sessions`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ListChatSessionsQuery {
    /// At most this many sessions, most recently updated first (1–1000, default 50).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    /// Skip this many sessions of that order (default 0).
    #[param(minimum = 0)]
    pub offset: Option<u32>,
}

/// Query of `GET /hecate/v1/traces`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct TracesQuery {
    /// Only the request with this `X-Request-Id`.
    pub request_id: Option<String>,
    /// Only requests recorded in this chat session.
    pub session_id: Option<String>,
    /// Only requests that started at or after this RFC 3339 time.
    pub since: Option<String>,
    /// Only requests that started before this RFC 3339 time.
    pub until: Option<String>,
    /// Only requests whose model is this: the model sent to the provider, or
    /// the one the client named (which may be `provider/model`).
    pub model: Option<String>,
    /// Only requests the route sent to this provider.
    pub provider: Option<String>,
    /// Only requests that ended with this status.
    #[param(inline)]
    pub status: Option<TraceStatus>,
    /// At most this many traces, newest first (1–1000, default 50).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
    /// Skip this many traces of that order (default 0).
    #[param(minimum = 0)]
    pub offset: Option<u32>,
}

/// How a traced request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum TraceStatus {
    /// Answered in full.
    Completed,
    /// Failed, before or during the answer.
    Failed,
    /// The client left before the end.
    Cancelled,
}

impl TraceStatus {
    /// The stored status.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }
}

/// A cost as a dollar string, `None` when unknown.
fn usd(micros: Option<i64>) -> Option<String> {
    micros.map(format_usd)
}

/// A chat session in a list: counts and its newest call, no message bodies.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct ChatSessionSummaryDto {
    /// Session id.
    pub id: String,
    /// Title.
    pub title: String,
    /// System prompt.
    pub system_prompt: String,
    /// The client's user field.
    pub user: String,
    /// Creation time.
    pub created_at: String,
    /// Time of the last recorded exchange.
    pub updated_at: String,
    /// Number of messages.
    pub message_count: u64,
    /// Number of provider calls.
    pub provider_call_count: u64,
    /// Model of the newest call.
    pub last_model: Option<String>,
    /// Provider of the newest call.
    pub last_provider: Option<String>,
    /// Cost of the newest call in USD, when known.
    pub last_cost_usd: Option<String>,
    /// Request id of the newest call.
    pub last_request_id: Option<String>,
}

impl From<&GatewayConversationSummary> for ChatSessionSummaryDto {
    fn from(s: &GatewayConversationSummary) -> Self {
        let last = s.last_call.as_ref();
        Self {
            id: s.session.id.clone(),
            title: s.session.title.clone(),
            system_prompt: s.session.system_prompt.clone(),
            user: s.session.user.clone(),
            created_at: s.session.created_at.clone(),
            updated_at: s.session.updated_at.clone(),
            message_count: s.message_count,
            provider_call_count: s.provider_call_count,
            last_model: last.map(|c| c.model.clone()),
            last_provider: last.map(|c| c.provider.clone()),
            last_cost_usd: last.and_then(|c| usd(c.cost_micros_usd)),
            last_request_id: last.map(|c| c.request_id.clone()),
        }
    }
}

/// `{"object": "chat_sessions", "data": […]}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChatSessionListResponse {
    /// Always `chat_sessions`.
    pub object: String,
    /// The page.
    pub data: Vec<ChatSessionSummaryDto>,
}

/// One message: its place in the stream and the message itself (OpenAI Chat
/// Completions fields: `role`, `content`, `tool_calls`, `tool_call_id`; `partial`
/// on an answer that was cut off; `content_blocks` on an assistant turn with
/// Anthropic thinking and `tool_error` on a tool result sent as an error).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChatMessageDto {
    /// Message id.
    pub id: String,
    /// Position in the session, from 0.
    pub sequence: i64,
    /// The provider call that produced it (assistant messages).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub produced_by_call_id: Option<String>,
    /// Creation time.
    pub created_at: String,
    /// The message fields.
    #[serde(flatten)]
    #[schema(value_type = Object)]
    pub message: Map<String, Value>,
}

impl From<&GatewayMessage> for ChatMessageDto {
    fn from(m: &GatewayMessage) -> Self {
        Self {
            id: m.id.clone(),
            sequence: m.sequence,
            produced_by_call_id: m.produced_by_call_id.clone(),
            created_at: m.created_at.clone(),
            message: m.message.as_object().cloned().unwrap_or_default(),
        }
    }
}

/// One provider call of a chat session.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChatProviderCallDto {
    /// Call id.
    pub id: String,
    /// The gateway request that made it.
    pub request_id: String,
    /// Provider.
    pub provider: String,
    /// Model.
    pub model: String,
    /// Cost in micro-USD, `null` when the price is unknown.
    pub cost_micros_usd: Option<i64>,
    /// The same as a dollar string.
    pub cost_usd: Option<String>,
    /// Input tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
    /// Both.
    pub total_tokens: u64,
    /// `completed`, or `cancelled` when the client went away mid-answer.
    pub outcome: String,
    /// Wall time in milliseconds.
    pub duration_ms: i64,
    /// Creation time.
    pub created_at: String,
}

impl From<&GatewayCall> for ChatProviderCallDto {
    fn from(c: &GatewayCall) -> Self {
        Self {
            id: c.id.clone(),
            request_id: c.request_id.clone(),
            provider: c.provider.clone(),
            model: c.model.clone(),
            cost_micros_usd: c.cost_micros_usd,
            cost_usd: usd(c.cost_micros_usd),
            prompt_tokens: c.usage.prompt_tokens,
            completion_tokens: c.usage.completion_tokens,
            total_tokens: c.usage.total_tokens,
            outcome: c.outcome.clone(),
            duration_ms: c.duration_ms,
            created_at: c.created_at.clone(),
        }
    }
}

/// A chat session with both streams.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChatSessionDto {
    /// Session id.
    pub id: String,
    /// Title.
    pub title: String,
    /// System prompt.
    pub system_prompt: String,
    /// The client's user field.
    pub user: String,
    /// Creation time.
    pub created_at: String,
    /// Time of the last recorded exchange.
    pub updated_at: String,
    /// Messages in sequence order.
    pub messages: Vec<ChatMessageDto>,
    /// Provider calls, oldest first.
    pub provider_calls: Vec<ChatProviderCallDto>,
}

impl ChatSessionDto {
    /// The wire form of a session and its streams.
    pub fn new(
        s: &GatewayConversation,
        messages: &[GatewayMessage],
        calls: &[GatewayCall],
    ) -> Self {
        Self {
            id: s.id.clone(),
            title: s.title.clone(),
            system_prompt: s.system_prompt.clone(),
            user: s.user.clone(),
            created_at: s.created_at.clone(),
            updated_at: s.updated_at.clone(),
            messages: messages.iter().map(ChatMessageDto::from).collect(),
            provider_calls: calls.iter().map(ChatProviderCallDto::from).collect(),
        }
    }
}

/// Body of `POST /hecate/v1/chat/sessions`: a session made before its first
/// request, so that its title and system prompt apply from the start.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[schema(example = json!({"id": "chat_support_42", "title": "Support", "system_prompt": "Answer in French."}))]
#[serde(deny_unknown_fields)]
pub struct CreateChatSessionRequest {
    /// The id requests will name (1 to 128 letters, digits, `_`, `-`, `.`,
    /// `:`); absent: a fresh `chat_…` id.
    pub id: Option<String>,
    /// The title.
    #[serde(default)]
    pub title: String,
    /// Put in front of each request of the session that has no system prompt
    /// of its own, and not recorded as a message.
    #[serde(default)]
    pub system_prompt: String,
    /// Who the session is for.
    #[serde(default)]
    pub user: String,
}

/// Body of `PATCH /hecate/v1/chat/sessions/{id}`: what to change; an absent
/// field is kept, an empty `system_prompt` removes it.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[schema(example = json!({"title": "Support (escalated)"}))]
#[serde(deny_unknown_fields)]
pub struct UpdateChatSessionRequest {
    /// The new title.
    pub title: Option<String>,
    /// The new system prompt.
    pub system_prompt: Option<String>,
}

/// `{"object": "chat_session", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChatSessionResponse {
    /// Always `chat_session`.
    pub object: String,
    /// The session.
    pub data: ChatSessionDto,
}

/// A replay: the messages to send on the next call.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChatReplayDto {
    /// Session id.
    pub session_id: String,
    /// The conversation in sequence order, as OpenAI Chat Completions messages,
    /// without answers that were cut off.
    #[schema(value_type = Vec<Object>)]
    pub messages: Vec<Value>,
}

/// `{"object": "chat_session_replay", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChatReplayResponse {
    /// Always `chat_session_replay`.
    pub object: String,
    /// The replay.
    pub data: ChatReplayDto,
}

/// `{"object": "chat_session_deleted", "data": {"id", "deleted": true}}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChatDeletedResponse {
    /// Always `chat_session_deleted`.
    pub object: String,
    /// The deleted session.
    pub data: super::DeletedDto,
}

/// One gateway request as traced.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct TraceDto {
    /// `X-Request-Id`.
    pub request_id: String,
    /// `X-Trace-Id`.
    pub trace_id: String,
    /// The chat session it was recorded in.
    pub session_id: Option<String>,
    /// `openai`, `anthropic` or `openai_responses` (the client's wire format).
    pub client_format: String,
    /// The model the client named (empty: the default model).
    pub requested_model: String,
    /// The provider the route chose (empty when routing failed).
    pub provider: String,
    /// The model sent to it.
    pub model: String,
    /// `completed`, `failed` or `cancelled`.
    pub status: String,
    /// Input tokens.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
    /// Both.
    pub total_tokens: u64,
    /// Cost in micro-USD, `null` when unknown.
    pub cost_micros_usd: Option<i64>,
    /// The same as a dollar string.
    pub cost_usd: Option<String>,
    /// Milliseconds from the request to the end of its answer.
    pub duration_ms: i64,
    /// Stable error type of a failure.
    pub error_type: Option<String>,
    /// Error message of a failure.
    pub error_message: Option<String>,
    /// When the request arrived.
    pub started_at: String,
    /// Why the route was chosen: `requested_model`, `pinned_provider` or
    /// `global_default_model` (empty when the model did not resolve).
    pub route_reason: String,
    /// Every provider/model the router considered, in order, with its outcome.
    pub route_candidates: Vec<RouteCandidateDto>,
}

/// One provider/model the router considered for a request.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RouteCandidateDto {
    /// The provider.
    pub provider: String,
    /// The model as the provider names it.
    pub model: String,
    /// `selected`, `failed`, `skipped` or `unused`.
    pub outcome: String,
    /// Why it was skipped or failed: `policy_denied`, `budget_denied`,
    /// `preflight_price_missing`, `capability_missing`, `provider_rate_limited`,
    /// `circuit_open` or `provider_unhealthy`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// More about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl From<&RouteCandidate> for RouteCandidateDto {
    fn from(c: &RouteCandidate) -> Self {
        Self {
            provider: c.provider.clone(),
            model: c.model.clone(),
            outcome: c.outcome.clone(),
            skip_reason: c.skip_reason.clone(),
            detail: c.detail.clone(),
        }
    }
}

impl From<&GatewayTrace> for TraceDto {
    fn from(t: &GatewayTrace) -> Self {
        Self {
            request_id: t.request_id.clone(),
            trace_id: t.trace_id.clone(),
            session_id: t.session_id.clone(),
            client_format: t.client_format.clone(),
            requested_model: t.requested_model.clone(),
            provider: t.provider.clone(),
            model: t.model.clone(),
            status: t.status.clone(),
            prompt_tokens: t.usage.prompt_tokens,
            completion_tokens: t.usage.completion_tokens,
            total_tokens: t.usage.total_tokens,
            cost_micros_usd: t.cost_micros_usd,
            cost_usd: usd(t.cost_micros_usd),
            duration_ms: t.duration_ms,
            error_type: t.error_type.clone(),
            error_message: t.error_message.clone(),
            started_at: t.started_at.clone(),
            route_reason: t.route_reason.clone(),
            route_candidates: t
                .route_candidates
                .iter()
                .map(RouteCandidateDto::from)
                .collect(),
        }
    }
}

/// `{"object": "traces", "data": […]}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TraceListResponse {
    /// Always `traces`.
    pub object: String,
    /// The page, newest first.
    pub data: Vec<TraceDto>,
}
