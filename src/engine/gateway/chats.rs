//! Reading back what the gateway recorded: chat sessions (list, one with both
//! streams, its replay, delete) and traces, each in the caller's namespace.

use crate::domain::chat::{
    ChatMessage, ChatProviderCall, ChatSession, ChatSessionSummary, GatewayTrace, TraceFilter,
};
use crate::domain::error::{HecateError, Result};
use crate::domain::time::format_rfc3339;
use crate::engine::Engine;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A chat session with both of its streams.
#[derive(Debug, Clone, PartialEq)]
pub struct ChatSessionView {
    /// The header.
    pub session: ChatSession,
    /// Messages in sequence order.
    pub messages: Vec<ChatMessage>,
    /// Provider calls, oldest first.
    pub provider_calls: Vec<ChatProviderCall>,
}

/// An RFC 3339 bound in the stored form (UTC, milliseconds), or `invalid_request`.
fn bound(name: &str, value: Option<String>) -> Result<Option<String>> {
    value
        .map(|v| {
            OffsetDateTime::parse(&v, &Rfc3339)
                .map(format_rfc3339)
                .map_err(|e| HecateError::invalid(format!("`{name}` is not an RFC 3339 time: {e}")))
        })
        .transpose()
}

impl Engine {
    /// Chat sessions of `namespace`, most recently updated first.
    pub async fn list_chat_sessions(
        &self,
        namespace: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<ChatSessionSummary>> {
        self.store()
            .list_chat_sessions(namespace, limit, offset)
            .await
    }

    /// One chat session with its messages and provider calls, or `not_found`.
    pub async fn chat_session(&self, namespace: &str, id: &str) -> Result<ChatSessionView> {
        let store = self.store();
        let session = store.get_chat_session(namespace, id).await?;
        let (messages, provider_calls) = futures::try_join!(
            store.list_chat_messages(id),
            store.list_chat_provider_calls(id)
        )?;
        Ok(ChatSessionView {
            session,
            messages,
            provider_calls,
        })
    }

    /// The conversation to send on the next call: the messages in sequence
    /// order, without the answers that were cut off.
    pub async fn replay_chat_session(&self, namespace: &str, id: &str) -> Result<Vec<Value>> {
        let store = self.store();
        store.get_chat_session(namespace, id).await?;
        Ok(store
            .list_chat_messages(id)
            .await?
            .into_iter()
            .filter(|m| !m.is_partial())
            .map(|m| m.message)
            .collect())
    }

    /// Deletes a chat session with both streams, or `not_found`.
    pub async fn delete_chat_session(&self, namespace: &str, id: &str) -> Result<()> {
        self.store().delete_chat_session(namespace, id).await
    }

    /// Gateway traces of `namespace` that `filter` selects, newest first; the
    /// time bounds are read as RFC 3339.
    pub async fn gateway_traces(
        &self,
        namespace: &str,
        mut filter: TraceFilter,
    ) -> Result<Vec<GatewayTrace>> {
        filter.since = bound("since", filter.since)?;
        filter.until = bound("until", filter.until)?;
        self.store().list_traces(namespace, &filter).await
    }
}
