//! The contract for gateway conversations and gateway traces: the exchange of a
//! `/v1` request with a session id is written in one transaction with its trace;
//! a request without one leaves its trace alone.

use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::gateway_conversation::{
    GatewayCall, GatewayConversation, GatewayConversationPatch, GatewayConversationSummary,
    GatewayMessage, GatewayTrace, RecordedExchange, TraceCostBy, TraceCostGroup, TraceFilter,
};
use async_trait::async_trait;

/// The `conflict` of creating a chat session whose id is already in use,
/// the same from every backend.
pub(crate) fn chat_session_taken(id: &str) -> HecateError {
    HecateError::new(
        ErrorType::Conflict,
        format!("chat session {id} already exists"),
    )
    .with_detail("session_id", id)
}

/// The `conflict` of an exchange whose session no longer holds the
/// `expected` messages the request was built on (it holds `count`).
pub(crate) fn chat_session_changed(session_id: &str, count: i64, expected: u64) -> HecateError {
    HecateError::new(
        ErrorType::Conflict,
        format!(
            "chat session {session_id} changed while the request ran ({count} messages, \
             expected {expected})"
        ),
    )
    .with_detail("reason", "chat_session_changed")
}

/// A change to one gateway session's header (see
/// [`GatewayConversationStore::update_conversation`]).
#[derive(Debug, Clone, Copy)]
pub struct ConversationUpdate<'a> {
    /// The session's namespace.
    pub namespace: &'a str,
    /// The session id.
    pub id: &'a str,
    /// The fields to set; those it leaves `None` stay.
    pub patch: &'a GatewayConversationPatch,
}

/// Gateway chat sessions (two streams) and per-request traces.
#[async_trait]
pub trait GatewayConversationStore: Send + Sync {
    /// Creates the session when absent, appends the new messages (gap-free
    /// sequences), the provider call, the answer produced by it and the trace, in
    /// one transaction; `conflict` (nothing written) when the session no longer
    /// holds `expected_count` messages. Answers the appended messages.
    async fn append_recorded_exchange(
        &self,
        exchange: RecordedExchange,
    ) -> Result<Vec<GatewayMessage>>;
    /// Stores the traces of requests that recorded no exchange, in one
    /// transaction; a request id stored before is replaced.
    async fn record_traces(&self, traces: &[GatewayTrace]) -> Result<()>;
    /// Creates an empty session with its header; `conflict` (nothing written)
    /// when a session, in any namespace, already has the id.
    async fn create_conversation(&self, session: &GatewayConversation) -> Result<()>;
    /// Applies `update` to a session's header (and its `updated_at`), or
    /// `not_found`; answers the header as stored.
    async fn update_conversation(
        &self,
        update: ConversationUpdate<'_>,
    ) -> Result<GatewayConversation>;
    /// Reads a session header, or `not_found`.
    async fn get_conversation(&self, namespace: &str, id: &str) -> Result<GatewayConversation>;
    /// Sessions of a namespace, most recently updated first, `offset` skipped, at
    /// most `limit`.
    async fn list_conversations(
        &self,
        namespace: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<GatewayConversationSummary>>;
    /// The messages of a session in sequence order (empty for an unknown one).
    async fn list_conversation_messages(&self, session_id: &str) -> Result<Vec<GatewayMessage>>;
    /// The provider calls of a session, oldest first.
    async fn list_conversation_calls(&self, session_id: &str) -> Result<Vec<GatewayCall>>;
    /// Deletes a session with both streams, or `not_found`; its traces stay.
    async fn delete_conversation(&self, namespace: &str, id: &str) -> Result<()>;
    /// Traces of a namespace matching `filter`, newest first.
    async fn list_traces(&self, namespace: &str, filter: &TraceFilter)
    -> Result<Vec<GatewayTrace>>;
    /// What the traces of a namespace that started at or after `since` (RFC
    /// 3339) cost, in micro-USD; traces of unknown cost count as nothing.
    async fn trace_spend_since(&self, namespace: &str, since: &str) -> Result<i64>;
    /// What the traces of a namespace that `filter` selects (its page ignored)
    /// cost, summed per group of `by`; days ascending, providers and models
    /// dearest first.
    async fn trace_costs(
        &self,
        namespace: &str,
        filter: &TraceFilter,
        by: TraceCostBy,
    ) -> Result<Vec<TraceCostGroup>>;
}
