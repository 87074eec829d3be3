//! Reading back what the gateway recorded: gateway conversations (list, one with both
//! streams, its replay, delete) and traces, each in the caller's namespace.

use crate::domain::error::{HecateError, Result};
use crate::domain::gateway_conversation::{
    GatewayCall, GatewayConversation, GatewayConversationPatch, GatewayConversationSummary,
    GatewayMessage, GatewayTrace, TraceCostBy, TraceCostGroup, TraceFilter, valid_chat_session_id,
};
use crate::domain::ids::GatewayConversationId;
use crate::domain::time::{format_rfc3339, now_rfc3339};
use crate::engine::Gateway;
use crate::store::gateway_conversations::ConversationUpdate;
use serde_json::Value;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// A chat session with both of its streams.
#[derive(Debug, Clone, PartialEq)]
pub struct GatewayConversationView {
    /// The header.
    pub session: GatewayConversation,
    /// Messages in sequence order.
    pub messages: Vec<GatewayMessage>,
    /// Provider calls, oldest first.
    pub provider_calls: Vec<GatewayCall>,
}

/// A chat session to create before its first request.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewGatewayConversation {
    /// The id the client chooses; none: a fresh `chat_…` id.
    pub id: Option<String>,
    /// The title.
    pub title: String,
    /// The system prompt the gateway puts in front of each request that has none.
    pub system_prompt: String,
    /// Who the session is for (the seed's `user_name`).
    pub user: String,
}

/// The `invalid_request` of a session id the gateway would not accept.
fn check_session_id(id: &str) -> Result<()> {
    if valid_chat_session_id(id) {
        return Ok(());
    }
    Err(HecateError::invalid(format!(
        "{id:?} is not a chat session id (1 to 128 letters, digits, `_`, `-`, `.` or `:`)"
    ))
    .with_detail("field", "id"))
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

impl<'e> Gateway<'e> {
    /// Chat sessions of `namespace`, most recently updated first.
    pub async fn list_conversations(
        self,
        namespace: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<GatewayConversationSummary>> {
        self.engine
            .store()
            .list_conversations(namespace, limit, offset)
            .await
    }

    /// Creates an empty chat session with its title and system prompt, before
    /// any request names it; `conflict` when the id is taken.
    pub async fn create_conversation(
        self,
        namespace: &str,
        new: NewGatewayConversation,
    ) -> Result<GatewayConversation> {
        let id = match new.id {
            Some(id) => {
                check_session_id(&id)?;
                id
            }
            None => GatewayConversationId::generate().0,
        };
        let now = now_rfc3339();
        let session = GatewayConversation {
            id,
            namespace: namespace.to_string(),
            title: new.title,
            system_prompt: new.system_prompt,
            user: new.user,
            created_at: now.clone(),
            updated_at: now,
        };
        self.engine.store().create_conversation(&session).await?;
        Ok(session)
    }

    /// Sets a chat session's title and/or system prompt, or `not_found`; the
    /// new prompt applies from the next request.
    pub async fn update_conversation(
        self,
        namespace: &str,
        id: &str,
        patch: GatewayConversationPatch,
    ) -> Result<GatewayConversationView> {
        if patch.title.is_none() && patch.system_prompt.is_none() {
            return Err(HecateError::invalid(
                "nothing to change: send `title` and/or `system_prompt`",
            ));
        }
        self.engine
            .store()
            .update_conversation(ConversationUpdate {
                namespace,
                id,
                patch: &patch,
            })
            .await?;
        self.conversation(namespace, id).await
    }

    /// One chat session with its messages and provider calls, or `not_found`.
    pub async fn conversation(self, namespace: &str, id: &str) -> Result<GatewayConversationView> {
        let store = self.engine.store();
        let session = store.get_conversation(namespace, id).await?;
        let (messages, provider_calls) = futures::try_join!(
            store.list_conversation_messages(id),
            store.list_conversation_calls(id)
        )?;
        Ok(GatewayConversationView {
            session,
            messages,
            provider_calls,
        })
    }

    /// The conversation to send on the next call: the messages in sequence
    /// order, without the answers that were cut off.
    pub async fn replay_conversation(self, namespace: &str, id: &str) -> Result<Vec<Value>> {
        let store = self.engine.store();
        store.get_conversation(namespace, id).await?;
        Ok(store
            .list_conversation_messages(id)
            .await?
            .into_iter()
            .filter(|m| !m.is_partial())
            .map(|m| m.message)
            .collect())
    }

    /// Deletes a chat session with both streams, or `not_found`.
    pub async fn delete_conversation(self, namespace: &str, id: &str) -> Result<()> {
        self.engine.store().delete_conversation(namespace, id).await
    }

    /// Gateway traces of `namespace` that `filter` selects, newest first; the
    /// time bounds are read as RFC 3339.
    pub async fn traces(
        self,
        namespace: &str,
        mut filter: TraceFilter,
    ) -> Result<Vec<GatewayTrace>> {
        filter.since = bound("since", filter.since)?;
        filter.until = bound("until", filter.until)?;
        // Traces are stored just after their answers; this reads them all.
        self.engine.inner.deferred.traces.flush().await;
        self.engine.store().list_traces(namespace, &filter).await
    }

    /// What the traces of `namespace` that `filter` selects cost per group of
    /// `by`, with the upper time bound the sums were taken under: `until`, or
    /// now when the filter has none (so a later call with it sums the same).
    pub async fn trace_costs(
        self,
        namespace: &str,
        mut filter: TraceFilter,
        by: TraceCostBy,
    ) -> Result<(String, Vec<TraceCostGroup>)> {
        filter.since = bound("since", filter.since)?;
        filter.until = Some(bound("until", filter.until)?.unwrap_or_else(now_rfc3339));
        self.engine.inner.deferred.traces.flush().await;
        let groups = self
            .engine
            .store()
            .trace_costs(namespace, &filter, by)
            .await?;
        Ok((filter.until.unwrap_or_default(), groups))
    }
}
