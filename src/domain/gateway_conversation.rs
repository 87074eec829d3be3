//! Gateway conversations (the seed's chat sessions, `/hecate/v1/chat/sessions`):
//! SDK-style conversations recorded from `/v1` requests that carry a session id, as two streams — the
//! messages, in order, and the provider calls, linked by `produced_by_call_id` —
//! and the per-request gateway traces that every `/v1` request leaves.

use crate::domain::provider_call::Usage;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Longest client-supplied chat session id accepted.
pub const MAX_CHAT_SESSION_ID_LEN: usize = 128;

/// Whether `id` is an acceptable chat session id: 1 to 128 characters of ASCII
/// letters, digits, `_`, `-`, `.` or `:`.
pub fn valid_chat_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_CHAT_SESSION_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b':'))
}

/// The header of a gateway conversation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayConversation {
    /// Session id, chosen by the client.
    pub id: String,
    /// Namespace the session lives in.
    pub namespace: String,
    /// Title (empty unless set).
    pub title: String,
    /// System prompt applied to the session (empty unless set).
    pub system_prompt: String,
    /// The client's `user` field, when it sent one.
    pub user: String,
    /// Creation time.
    pub created_at: String,
    /// Time of the last append.
    pub updated_at: String,
}

/// One entry of a chat session's message stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayMessage {
    /// Message id.
    pub id: String,
    /// Position in the session, from 0, gap-free.
    pub sequence: i64,
    /// The provider call that produced it (assistant messages), else `None`.
    pub produced_by_call_id: Option<String>,
    /// The message in the OpenAI Chat Completions shape (`role`, `content`,
    /// `tool_calls`, `tool_call_id`), plus `partial: true` on an answer that was
    /// cut off.
    pub message: Value,
    /// Creation time.
    pub created_at: String,
}

impl GatewayMessage {
    /// Whether this is an answer the client never received whole.
    pub fn is_partial(&self) -> bool {
        self.message.get("partial").and_then(Value::as_bool) == Some(true)
    }
}

/// One upstream request made for a chat session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayCall {
    /// Call id; messages point at it.
    pub id: String,
    /// The gateway request that made it.
    pub request_id: String,
    /// Provider that answered.
    pub provider: String,
    /// Model as sent to the provider.
    pub model: String,
    /// Token usage.
    pub usage: Usage,
    /// Cost in micro-USD, `None` when the price is unknown.
    pub cost_micros_usd: Option<i64>,
    /// How the exchange ended: `completed` or `cancelled` (client went away).
    pub outcome: String,
    /// Wall time in milliseconds.
    pub duration_ms: i64,
    /// Creation time.
    pub created_at: String,
}

/// What a change to a chat session's header sets; an absent field is kept.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GatewayConversationPatch {
    /// The new title.
    pub title: Option<String>,
    /// The new system prompt (empty: none).
    pub system_prompt: Option<String>,
}

/// A chat session in a list: counts and the newest call, no message bodies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayConversationSummary {
    /// The session header.
    pub session: GatewayConversation,
    /// Number of messages.
    pub message_count: u64,
    /// Number of provider calls.
    pub provider_call_count: u64,
    /// The newest provider call, when there is one.
    pub last_call: Option<GatewayCall>,
}

/// What one gateway request did, whether or not it carried a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GatewayTrace {
    /// The request id (`X-Request-Id`).
    pub request_id: String,
    /// The trace id (`X-Trace-Id`).
    pub trace_id: String,
    /// Namespace of the server that answered.
    pub namespace: String,
    /// The chat session it was recorded in, when it carried one.
    pub session_id: Option<String>,
    /// The client's wire format: `openai` or `anthropic`.
    pub client_format: String,
    /// The model the client asked for (empty: the default model).
    pub requested_model: String,
    /// The provider the route chose (empty when routing failed).
    pub provider: String,
    /// The model sent to it.
    pub model: String,
    /// `completed`, `failed` or `cancelled`.
    pub status: String,
    /// Token usage.
    pub usage: Usage,
    /// Cost in micro-USD, `None` when unknown.
    pub cost_micros_usd: Option<i64>,
    /// Wall time from the request to the end of the answer, in milliseconds.
    pub duration_ms: i64,
    /// Stable error type of a failure.
    pub error_type: Option<String>,
    /// Error message of a failure.
    pub error_message: Option<String>,
    /// When the request arrived.
    pub started_at: String,
    /// Why the selected candidate was chosen (`requested_model`,
    /// `pinned_provider`, `global_default_model`); empty when routing failed
    /// before a model was resolved.
    pub route_reason: String,
    /// Every provider/model the router considered, in the order it did.
    pub route_candidates: Vec<RouteCandidate>,
}

/// One provider/model the gateway's router considered for a request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RouteCandidate {
    /// The provider's name.
    pub provider: String,
    /// The model as that provider names it.
    pub model: String,
    /// `selected` (it answered), `failed` (it was tried and failed before
    /// answering), `skipped` (not tried, see `skip_reason`) or `unused` (a
    /// fallback that was not needed).
    pub outcome: String,
    /// Why it was skipped or failed: `policy_denied`, `budget_denied`,
    /// `preflight_price_missing`, `capability_missing`, `provider_rate_limited`,
    /// `circuit_open`, `provider_unhealthy`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// More about it (the upstream status, how long a cooldown lasts, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

/// Which traces a listing wants; every field narrows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceFilter {
    /// Only this request.
    pub request_id: Option<String>,
    /// Only requests recorded in this chat session.
    pub session_id: Option<String>,
    /// Only requests that started at or after this RFC 3339 instant.
    pub since: Option<String>,
    /// Only requests that started before this RFC 3339 instant.
    pub until: Option<String>,
    /// Only requests whose model (the one sent to the provider, or the one the
    /// client named) is this.
    pub model: Option<String>,
    /// Only requests the route sent to this provider.
    pub provider: Option<String>,
    /// Only requests that ended with this status (`completed`, `failed`,
    /// `cancelled`).
    pub status: Option<String>,
    /// Leave out requests of this client format (such as `agent_chat`, the traces
    /// of Agent Chat's own model turns).
    pub except_client_format: Option<String>,
    /// Page size.
    pub limit: usize,
    /// Entries of the newest-first order to skip.
    pub offset: usize,
}

/// How `GET /hecate/v1/traces/costs` groups the traces it sums.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceCostBy {
    /// The UTC day a request started (`YYYY-MM-DD`).
    Day,
    /// The provider the route sent a request to.
    Provider,
    /// The model sent to the provider, or the one the client named when none was.
    Model,
}

/// What the traces of one group cost: requests, tokens and micro-USD.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TraceCostGroup {
    /// The day, provider or model; `(no provider)` or `(no model)` when blank.
    pub key: String,
    /// How many traces the group holds.
    pub requests: u64,
    /// How many of them have no known cost (they count as nothing).
    pub unpriced: u64,
    /// Their total tokens.
    pub tokens: u64,
    /// What the priced ones cost, in micro-USD.
    pub cost_micros_usd: i64,
}

/// One exchange to record in a chat session, written in one transaction.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedExchange {
    /// Namespace of the session.
    pub namespace: String,
    /// Session id; created when absent.
    pub session_id: String,
    /// How many messages the session held when the request was matched against
    /// it; a different count at write time is a `conflict` (nothing written).
    pub expected_count: u64,
    /// The request's new messages (user, system, client tool results), in order.
    pub new_messages: Vec<Value>,
    /// The answer, produced by `call`.
    pub answer: Value,
    /// The provider call.
    pub call: GatewayCall,
    /// The request's trace, written in the same transaction.
    pub trace: GatewayTrace,
}
