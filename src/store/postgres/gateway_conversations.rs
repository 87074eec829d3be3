//! Gateway conversations: the header, the message stream and the provider-call
//! stream; an exchange (with its trace) is one transaction holding the
//! session's row lock, so two replicas never number the same message.

use super::traces::{insert_trace, select_trace_costs, select_traces, spend_since};
use super::{OpResult, PostgresStore, big, limit};
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
use deadpool_postgres::GenericClient;

async fn insert_message<C: GenericClient>(
    tx: &C,
    session_id: &str,
    m: &GatewayMessage,
) -> OpResult<()> {
    tx.execute(
        "INSERT INTO chat_session_messages \
         (id, session_id, sequence, produced_by_call_id, message_json, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6)",
        &[
            &m.id,
            &session_id,
            &m.sequence,
            &m.produced_by_call_id,
            &serde_json::to_string(&m.message)?,
            &m.created_at,
        ],
    )
    .await?;
    Ok(())
}

async fn append<C: GenericClient>(tx: &C, ex: RecordedExchange) -> OpResult<Vec<GatewayMessage>> {
    let now = now_rfc3339();
    // Create the session when absent, then hold its row for the whole exchange.
    tx.execute(
        &format!(
            "INSERT INTO chat_sessions ({CONVERSATION_COLUMNS}) VALUES ($1, $2, '', '', '', $3, $3) \
             ON CONFLICT (id) DO NOTHING"
        ),
        &[&ex.session_id, &ex.namespace, &now],
    )
    .await?;
    let owner: String = tx
        .query_one(
            "SELECT namespace FROM chat_sessions WHERE id = $1 FOR UPDATE",
            &[&ex.session_id],
        )
        .await?
        .try_get(0)?;
    if owner != ex.namespace {
        return Err(HecateError::not_found("chat session", &ex.session_id).into());
    }
    tx.execute(
        "UPDATE chat_sessions SET updated_at = $2 WHERE id = $1",
        &[&ex.session_id, &now],
    )
    .await?;
    let count: i64 = tx
        .query_one(
            "SELECT COUNT(*) FROM chat_session_messages WHERE session_id = $1",
            &[&ex.session_id],
        )
        .await?
        .try_get(0)?;
    if count as u64 != ex.expected_count {
        return Err(chat_session_changed(&ex.session_id, count, ex.expected_count).into());
    }
    let call = &ex.call;
    tx.execute(
        &format!(
            "INSERT INTO chat_session_provider_calls (session_id, {CONVERSATION_CALL_COLUMNS}) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        ),
        &[
            &ex.session_id,
            &call.id,
            &call.request_id,
            &call.provider,
            &call.model,
            &call.cost_micros_usd,
            &big(call.usage.prompt_tokens),
            &big(call.usage.completion_tokens),
            &big(call.usage.total_tokens),
            &call.outcome,
            &call.duration_ms,
            &call.created_at,
        ],
    )
    .await?;
    let stored = decode::exchange_messages(ex.new_messages, ex.answer, count, &call.id, &now);
    for m in &stored {
        insert_message(tx, &ex.session_id, m).await?;
    }
    insert_trace(tx, &ex.trace).await?;
    Ok(stored)
}

async fn summaries<C: GenericClient>(
    c: &C,
    namespace: &str,
    n: usize,
    offset: usize,
) -> OpResult<Vec<GatewayConversationSummary>> {
    let sql = format!(
        "SELECT {CONVERSATION_COLUMNS}, \
         (SELECT COUNT(*) FROM chat_session_messages m WHERE m.session_id = s.id), \
         (SELECT COUNT(*) FROM chat_session_provider_calls p WHERE p.session_id = s.id) \
         FROM chat_sessions s WHERE namespace = $1 \
         ORDER BY updated_at DESC, id DESC LIMIT $2 OFFSET $3"
    );
    let rows = c
        .query(sql.as_str(), &[&namespace, &limit(n), &limit(offset)])
        .await?;
    let last = c
        .prepare_cached(&format!(
            "SELECT {CONVERSATION_CALL_COLUMNS} FROM chat_session_provider_calls WHERE session_id = $1 \
             ORDER BY created_at DESC, seq DESC LIMIT 1"
        ))
        .await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let session = decode::conversation(row)?;
        let last_call = match c.query_opt(&last, &[&session.id]).await? {
            Some(r) => Some(decode::call(&r)?),
            None => None,
        };
        out.push(GatewayConversationSummary {
            session,
            message_count: row.try_get::<_, i64>(7)?.max(0) as u64,
            provider_call_count: row.try_get::<_, i64>(8)?.max(0) as u64,
            last_call,
        });
    }
    Ok(out)
}

#[async_trait]
impl GatewayConversationStore for PostgresStore {
    async fn append_recorded_exchange(&self, ex: RecordedExchange) -> Result<Vec<GatewayMessage>> {
        let mut c = self.client().await?;
        let r = async {
            let tx = c.transaction().await?;
            let stored = append(&tx, ex).await?;
            tx.commit().await?;
            Ok(stored)
        }
        .await;
        self.done(r)
    }

    async fn create_conversation(&self, session: &GatewayConversation) -> Result<()> {
        let c = self.client().await?;
        let s = session;
        let r: OpResult<()> = async {
            let sql = format!(
                "INSERT INTO chat_sessions ({CONVERSATION_COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7) \
                 ON CONFLICT (id) DO NOTHING"
            );
            let n = c
                .execute(
                    sql.as_str(),
                    &[
                        &s.id,
                        &s.namespace,
                        &s.title,
                        &s.system_prompt,
                        &s.user,
                        &s.created_at,
                        &s.updated_at,
                    ],
                )
                .await?;
            if n == 0 {
                return Err(chat_session_taken(&s.id).into());
            }
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn update_conversation(
        &self,
        update: ConversationUpdate<'_>,
    ) -> Result<GatewayConversation> {
        let (namespace, id, patch) = (update.namespace, update.id, update.patch);
        let c = self.client().await?;
        let r: OpResult<GatewayConversation> = async {
            let sql = format!(
                "UPDATE chat_sessions SET title = COALESCE($3, title), \
                 system_prompt = COALESCE($4, system_prompt), updated_at = $5 \
                 WHERE id = $1 AND namespace = $2 RETURNING {CONVERSATION_COLUMNS}"
            );
            let now = now_rfc3339();
            match c
                .query_opt(
                    sql.as_str(),
                    &[&id, &namespace, &patch.title, &patch.system_prompt, &now],
                )
                .await?
            {
                Some(row) => decode::conversation(&row),
                None => Err(HecateError::not_found("chat session", id).into()),
            }
        }
        .await;
        self.done(r)
    }

    async fn get_conversation(&self, namespace: &str, id: &str) -> Result<GatewayConversation> {
        let c = self.client().await?;
        let r = async {
            let sql = format!(
                "SELECT {CONVERSATION_COLUMNS} FROM chat_sessions WHERE id = $1 AND namespace = $2"
            );
            match c.query_opt(sql.as_str(), &[&id, &namespace]).await? {
                Some(row) => decode::conversation(&row),
                None => Err(HecateError::not_found("chat session", id).into()),
            }
        }
        .await;
        self.done(r)
    }

    async fn list_conversations(
        &self,
        namespace: &str,
        n: usize,
        offset: usize,
    ) -> Result<Vec<GatewayConversationSummary>> {
        let c = self.client().await?;
        let r = summaries(&c, namespace, n, offset).await;
        self.done(r)
    }

    async fn list_conversation_messages(&self, session_id: &str) -> Result<Vec<GatewayMessage>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    "SELECT id, sequence, produced_by_call_id, message_json, created_at \
                     FROM chat_session_messages WHERE session_id = $1 ORDER BY sequence",
                    &[&session_id],
                )
                .await?;
            rows.iter()
                .map(|r| {
                    let json: String = r.try_get(3)?;
                    Ok(GatewayMessage {
                        id: r.try_get(0)?,
                        sequence: r.try_get(1)?,
                        produced_by_call_id: r.try_get(2)?,
                        message: serde_json::from_str(&json)?,
                        created_at: r.try_get(4)?,
                    })
                })
                .collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }

    async fn list_conversation_calls(&self, session_id: &str) -> Result<Vec<GatewayCall>> {
        let c = self.client().await?;
        let r = async {
            let sql = format!(
                "SELECT {CONVERSATION_CALL_COLUMNS} FROM chat_session_provider_calls WHERE session_id = $1 \
                 ORDER BY created_at, seq"
            );
            let rows = c.query(sql.as_str(), &[&session_id]).await?;
            rows.iter().map(decode::call).collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }

    async fn delete_conversation(&self, namespace: &str, id: &str) -> Result<()> {
        let c = self.client().await?;
        let r: OpResult<()> = async {
            let n = c
                .execute(
                    "DELETE FROM chat_sessions WHERE id = $1 AND namespace = $2",
                    &[&id, &namespace],
                )
                .await?;
            if n == 0 {
                return Err(HecateError::not_found("chat session", id).into());
            }
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn record_traces(&self, traces: &[GatewayTrace]) -> Result<()> {
        let mut c = self.client().await?;
        let r: OpResult<()> = async {
            let tx = c.transaction().await?;
            for trace in traces {
                insert_trace(&tx, trace).await?;
            }
            tx.commit().await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn list_traces(
        &self,
        namespace: &str,
        filter: &TraceFilter,
    ) -> Result<Vec<GatewayTrace>> {
        let c = self.client().await?;
        let r = select_traces(&c, namespace, filter).await;
        self.done(r)
    }

    async fn trace_spend_since(&self, namespace: &str, since: &str) -> Result<i64> {
        let c = self.client().await?;
        let r = spend_since(&c, namespace, since).await;
        self.done(r)
    }

    async fn trace_costs(
        &self,
        namespace: &str,
        filter: &TraceFilter,
        by: TraceCostBy,
    ) -> Result<Vec<TraceCostGroup>> {
        let c = self.client().await?;
        let r = select_trace_costs(&c, namespace, filter, by).await;
        self.done(r)
    }
}
