//! Gateway conversations: the header, the message stream and the provider-call
//! stream; an exchange (with its trace) is one `BEGIN IMMEDIATE` transaction.

use super::reads::{all, one};
use super::traces::{insert_trace, select_trace_costs, select_traces, spend_since};
use super::{OpResult, SqliteStore};
use crate::domain::HecateError;
use crate::domain::error::Result;
use crate::domain::gateway_conversation::{
    GatewayCall, GatewayConversation, GatewayConversationSummary, GatewayMessage, GatewayTrace,
    RecordedExchange, TraceCostBy, TraceCostGroup, TraceFilter,
};
use crate::domain::time::now_rfc3339;
use crate::store::GatewayConversationStore;
use crate::store::gateway_conversations::{
    ConversationUpdate, chat_session_changed, chat_session_taken,
};
use crate::store::rows::gateway_conversations::{
    self as decode, CONVERSATION_CALL_COLUMNS, CONVERSATION_COLUMNS,
};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

fn session_in(c: &Connection, namespace: &str, id: &str) -> OpResult<GatewayConversation> {
    one(
        c,
        &format!(
            "SELECT {CONVERSATION_COLUMNS} FROM chat_sessions WHERE id = ?1 AND namespace = ?2"
        ),
        params![id, namespace],
        |r| decode::conversation(r),
        "chat session",
        id,
    )
}

fn insert_message(tx: &Transaction<'_>, session_id: &str, m: &GatewayMessage) -> OpResult<()> {
    tx.prepare_cached(
        "INSERT INTO chat_session_messages \
         (id, session_id, sequence, produced_by_call_id, message_json, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        m.id,
        session_id,
        m.sequence,
        m.produced_by_call_id,
        serde_json::to_string(&m.message)?,
        m.created_at
    ])?;
    Ok(())
}

fn append(tx: &Transaction<'_>, ex: RecordedExchange) -> OpResult<Vec<GatewayMessage>> {
    let now = now_rfc3339();
    let owner: Option<String> = tx
        .prepare_cached("SELECT namespace FROM chat_sessions WHERE id = ?1")?
        .query_row(params![ex.session_id], |r| r.get(0))
        .optional()?;
    match owner {
        Some(ns) if ns != ex.namespace => {
            return Err(HecateError::not_found("chat session", &ex.session_id).into());
        }
        Some(_) => {
            tx.prepare_cached("UPDATE chat_sessions SET updated_at = ?2 WHERE id = ?1")?
                .execute(params![ex.session_id, now])?;
        }
        None => {
            tx.prepare_cached(&format!(
                "INSERT INTO chat_sessions ({CONVERSATION_COLUMNS}) VALUES (?1, ?2, '', '', '', ?3, ?3)"
            ))?
            .execute(params![ex.session_id, ex.namespace, now])?;
        }
    }
    let count: i64 = tx
        .prepare_cached("SELECT COUNT(*) FROM chat_session_messages WHERE session_id = ?1")?
        .query_row(params![ex.session_id], |r| r.get(0))?;
    if count as u64 != ex.expected_count {
        return Err(chat_session_changed(&ex.session_id, count, ex.expected_count).into());
    }
    let call = &ex.call;
    tx.prepare_cached(&format!(
        "INSERT INTO chat_session_provider_calls (session_id, {CONVERSATION_CALL_COLUMNS}) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
    ))?
    .execute(params![
        ex.session_id,
        call.id,
        call.request_id,
        call.provider,
        call.model,
        call.cost_micros_usd,
        call.usage.prompt_tokens as i64,
        call.usage.completion_tokens as i64,
        call.usage.total_tokens as i64,
        call.outcome,
        call.duration_ms,
        call.created_at,
    ])?;
    let stored = decode::exchange_messages(ex.new_messages, ex.answer, count, &call.id, &now);
    for m in &stored {
        insert_message(tx, &ex.session_id, m)?;
    }
    insert_trace(tx, &ex.trace)?;
    Ok(stored)
}

fn message_rows(c: &Connection, session_id: &str) -> OpResult<Vec<GatewayMessage>> {
    let mut stmt = c.prepare_cached(
        "SELECT id, sequence, produced_by_call_id, message_json, created_at \
         FROM chat_session_messages WHERE session_id = ?1 ORDER BY sequence",
    )?;
    let rows = stmt.query_map(params![session_id], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, Option<String>>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, sequence, produced_by_call_id, json, created_at) = row?;
        out.push(GatewayMessage {
            id,
            sequence,
            produced_by_call_id,
            message: serde_json::from_str(&json)?,
            created_at,
        });
    }
    Ok(out)
}

fn summaries(
    c: &Connection,
    namespace: &str,
    limit: usize,
    offset: usize,
) -> OpResult<Vec<GatewayConversationSummary>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {CONVERSATION_COLUMNS}, \
         (SELECT COUNT(*) FROM chat_session_messages m WHERE m.session_id = s.id), \
         (SELECT COUNT(*) FROM chat_session_provider_calls p WHERE p.session_id = s.id) \
         FROM chat_sessions s WHERE namespace = ?1 \
         ORDER BY updated_at DESC, id DESC LIMIT ?2 OFFSET ?3"
    ))?;
    let rows = stmt.query_map(params![namespace, limit as i64, offset as i64], |r| {
        Ok((
            decode::conversation(r)?,
            r.get::<_, i64>(7)?.max(0) as u64,
            r.get::<_, i64>(8)?.max(0) as u64,
        ))
    })?;
    let mut last = c.prepare_cached(&format!(
        "SELECT {CONVERSATION_CALL_COLUMNS} FROM chat_session_provider_calls WHERE session_id = ?1 \
         ORDER BY created_at DESC, rowid DESC LIMIT 1"
    ))?;
    let mut out = Vec::new();
    for row in rows {
        let (session, message_count, provider_call_count) = row?;
        let last_call = last
            .query_row(params![session.id], |r| decode::call(r))
            .optional()?;
        out.push(GatewayConversationSummary {
            session,
            message_count,
            provider_call_count,
            last_call,
        });
    }
    Ok(out)
}

#[async_trait]
impl GatewayConversationStore for SqliteStore {
    async fn append_recorded_exchange(&self, ex: RecordedExchange) -> Result<Vec<GatewayMessage>> {
        self.write(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let stored = append(&tx, ex)?;
            tx.commit()?;
            Ok(stored)
        })
        .await
    }

    async fn create_conversation(&self, session: &GatewayConversation) -> Result<()> {
        let s = session.clone();
        self.write(move |c| {
            let n = c
                .prepare_cached(&format!(
                    "INSERT INTO chat_sessions ({CONVERSATION_COLUMNS}) VALUES (?1,?2,?3,?4,?5,?6,?7) \
                     ON CONFLICT (id) DO NOTHING"
                ))?
                .execute(params![
                    s.id,
                    s.namespace,
                    s.title,
                    s.system_prompt,
                    s.user,
                    s.created_at,
                    s.updated_at
                ])?;
            if n == 0 {
                return Err(chat_session_taken(&s.id).into());
            }
            Ok(())
        })
        .await
    }

    async fn update_conversation(
        &self,
        update: ConversationUpdate<'_>,
    ) -> Result<GatewayConversation> {
        let patch = update.patch.clone();
        let (namespace, id) = (update.namespace.to_owned(), update.id.to_owned());
        self.write(move |c| {
            let tx = c.transaction()?;
            let n = tx
                .prepare_cached(
                    "UPDATE chat_sessions SET title = COALESCE(?3, title), \
                     system_prompt = COALESCE(?4, system_prompt), updated_at = ?5 \
                     WHERE id = ?1 AND namespace = ?2",
                )?
                .execute(params![
                    id,
                    namespace,
                    patch.title,
                    patch.system_prompt,
                    now_rfc3339()
                ])?;
            if n == 0 {
                return Err(HecateError::not_found("chat session", &id).into());
            }
            let session = session_in(&tx, &namespace, &id)?;
            tx.commit()?;
            Ok(session)
        })
        .await
    }

    async fn get_conversation(&self, namespace: &str, id: &str) -> Result<GatewayConversation> {
        let (namespace, id) = (namespace.to_owned(), id.to_owned());
        self.read(move |c| session_in(c, &namespace, &id)).await
    }

    async fn list_conversations(
        &self,
        namespace: &str,
        limit: usize,
        offset: usize,
    ) -> Result<Vec<GatewayConversationSummary>> {
        let namespace = namespace.to_owned();
        self.read(move |c| summaries(c, &namespace, limit, offset))
            .await
    }

    async fn list_conversation_messages(&self, session_id: &str) -> Result<Vec<GatewayMessage>> {
        let session_id = session_id.to_owned();
        self.read(move |c| message_rows(c, &session_id)).await
    }

    async fn list_conversation_calls(&self, session_id: &str) -> Result<Vec<GatewayCall>> {
        let session_id = session_id.to_owned();
        self.read(move |c| {
            all(
                c,
                &format!(
                    "SELECT {CONVERSATION_CALL_COLUMNS} FROM chat_session_provider_calls \
                     WHERE session_id = ?1 ORDER BY created_at, rowid"
                ),
                params![session_id],
                |r| decode::call(r),
            )
        })
        .await
    }

    async fn delete_conversation(&self, namespace: &str, id: &str) -> Result<()> {
        let (namespace, id) = (namespace.to_owned(), id.to_owned());
        self.write(move |c| {
            let n = c
                .prepare_cached("DELETE FROM chat_sessions WHERE id = ?1 AND namespace = ?2")?
                .execute(params![id, namespace])?;
            if n == 0 {
                return Err(HecateError::not_found("chat session", &id).into());
            }
            Ok(())
        })
        .await
    }

    async fn record_traces(&self, traces: &[GatewayTrace]) -> Result<()> {
        let traces = traces.to_vec();
        self.write(move |c| {
            let tx = c.transaction()?;
            for trace in &traces {
                insert_trace(&tx, trace)?;
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn list_traces(
        &self,
        namespace: &str,
        filter: &TraceFilter,
    ) -> Result<Vec<GatewayTrace>> {
        let (namespace, filter) = (namespace.to_owned(), filter.clone());
        self.read(move |c| select_traces(c, &namespace, &filter))
            .await
    }

    async fn trace_spend_since(&self, namespace: &str, since: &str) -> Result<i64> {
        let (namespace, since) = (namespace.to_owned(), since.to_owned());
        self.read(move |c| spend_since(c, &namespace, &since)).await
    }

    async fn trace_costs(
        &self,
        namespace: &str,
        filter: &TraceFilter,
        by: TraceCostBy,
    ) -> Result<Vec<TraceCostGroup>> {
        let (namespace, filter) = (namespace.to_owned(), filter.clone());
        self.read(move |c| select_trace_costs(c, &namespace, &filter, by))
            .await
    }
}
