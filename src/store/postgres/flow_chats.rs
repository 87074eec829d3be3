//! Client-hosted chats in PostgreSQL: `flow_chats`, `flow_chat_messages` and
//! `flow_memory`, every key starting with the namespace; a turn's writes are one
//! transaction holding the chat's row lock and guarded by its version, so two
//! replicas never number the same message or both move one chat.

use super::{OpResult, PostgresStore};
use crate::domain::HecateError;
use crate::domain::error::Result;
use crate::domain::flow::{FlowChat, FlowChatMessage, FlowChatWrite, MemoryOwner};
use crate::domain::time::now_rfc3339;
use crate::store::flow_chats::FlowChatStore;
use crate::store::rows::flow_chats::{self as decode, CHAT_COLUMNS, MESSAGE_COLUMNS};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use serde_json::{Map, Value};
use tokio_postgres::types::ToSql;

/// The chat `(namespace, id)`, locked for the transaction when `lock` is set.
async fn chat_in<C: GenericClient>(
    c: &C,
    namespace: &str,
    id: &str,
    lock: bool,
) -> OpResult<FlowChat> {
    let sql = format!(
        "SELECT {CHAT_COLUMNS} FROM flow_chats WHERE namespace = $1 AND id = $2{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    match c.query_opt(sql.as_str(), &[&namespace, &id]).await? {
        Some(row) => decode::chat(&row),
        None => Err(HecateError::not_found("chat", id).into()),
    }
}

/// Writes `chat`'s header with `sql`, whose parameters are the chat's key,
/// position, version and update time (`$1`..`$10`), then `more`.
async fn put_header<C: GenericClient>(
    c: &C,
    sql: &str,
    chat: &FlowChat,
    more: &[&(dyn ToSql + Sync)],
) -> OpResult<()> {
    let p = &chat.position;
    let route = serde_json::to_string(&p.route)?;
    let mut values: Vec<&(dyn ToSql + Sync)> = vec![
        &chat.namespace,
        &chat.id,
        &p.conversation,
        &p.stage,
        &p.ended,
        &p.on_track,
        &p.off_track_reason,
        &route,
        &chat.version,
        &chat.updated_at,
    ];
    values.extend_from_slice(more);
    c.execute(sql, &values).await?;
    Ok(())
}

async fn write<C: GenericClient>(
    tx: &C,
    w: FlowChatWrite,
) -> OpResult<(FlowChat, FlowChatMessage)> {
    let mut chat = chat_in(tx, &w.namespace, &w.chat_id, true).await?;
    decode::check_version(&chat, &w)?;
    let now = now_rfc3339();
    let sequence: i64 = tx
        .query_one(
            "SELECT COALESCE(MAX(sequence), 0) + 1 FROM flow_chat_messages \
             WHERE namespace = $1 AND chat_id = $2",
            &[&w.namespace, &w.chat_id],
        )
        .await?
        .try_get(0)?;
    let data = decode::data_json(&w.message)?;
    tx.execute(
        "INSERT INTO flow_chat_messages \
         (namespace, chat_id, sequence, role, content, stage, data_json, created_at) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        &[
            &w.namespace,
            &w.chat_id,
            &sequence,
            &w.message.role.as_str(),
            &w.message.content,
            &w.message.stage,
            &data,
            &now,
        ],
    )
    .await?;
    if let Some((owner, fields)) = &w.memory {
        for (field, value) in fields {
            tx.execute(
                "INSERT INTO flow_memory \
                 (namespace, app_id, user_id, agent_id, field, value_json, chat_id, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                 ON CONFLICT (namespace, app_id, user_id, agent_id, field) DO UPDATE SET \
                 value_json = excluded.value_json, chat_id = excluded.chat_id, \
                 updated_at = excluded.updated_at",
                &[
                    &w.namespace,
                    &owner.app_id,
                    &owner.user_id,
                    &owner.agent_id,
                    field,
                    &serde_json::to_string(value)?,
                    &w.chat_id,
                    &now,
                ],
            )
            .await?;
        }
    }
    decode::advance(&mut chat, w.position, &now);
    put_header(
        tx,
        "UPDATE flow_chats SET conversation = $3, stage = $4, ended = $5, on_track = $6, \
         off_track_reason = $7, route_json = $8, version = $9, updated_at = $10 \
         WHERE namespace = $1 AND id = $2",
        &chat,
        &[],
    )
    .await?;
    let message = decode::stored_message(w.message, sequence, now);
    Ok((chat, message))
}

#[async_trait]
impl FlowChatStore for PostgresStore {
    async fn create_flow_chat(&self, chat: &FlowChat) -> Result<()> {
        let c = self.client().await?;
        let r = put_header(
            &c,
            "INSERT INTO flow_chats (namespace, id, conversation, stage, ended, on_track, \
             off_track_reason, route_json, version, updated_at, agent_id, app_id, user_id, \
             created_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)",
            chat,
            &[
                &chat.agent_id,
                &chat.app_id,
                &chat.user_id,
                &chat.created_at,
            ],
        )
        .await;
        self.done(r)
    }

    async fn get_flow_chat(&self, namespace: &str, id: &str) -> Result<FlowChat> {
        let c = self.client().await?;
        let r = chat_in(&c, namespace, id, false).await;
        self.done(r)
    }

    async fn list_flow_chats(
        &self,
        namespace: &str,
        agent_id: &str,
        n: usize,
    ) -> Result<Vec<FlowChat>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    format!(
                        "SELECT {CHAT_COLUMNS} FROM flow_chats WHERE namespace = $1 \
                         AND agent_id = $2 ORDER BY updated_at DESC, id DESC LIMIT $3"
                    )
                    .as_str(),
                    &[&namespace, &agent_id, &super::limit(n)],
                )
                .await?;
            rows.iter().map(decode::chat).collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }

    async fn list_flow_chat_messages(
        &self,
        namespace: &str,
        chat_id: &str,
    ) -> Result<Vec<FlowChatMessage>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    &format!(
                        "SELECT {MESSAGE_COLUMNS} FROM flow_chat_messages \
                         WHERE namespace = $1 AND chat_id = $2 ORDER BY sequence"
                    ),
                    &[&namespace, &chat_id],
                )
                .await?;
            rows.iter()
                .map(decode::message)
                .collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }

    async fn write_flow_chat(&self, w: FlowChatWrite) -> Result<(FlowChat, FlowChatMessage)> {
        in_transaction!(self, tx => write(&tx, w).await?)
    }

    async fn flow_memory(
        &self,
        namespace: &str,
        owner: &MemoryOwner,
    ) -> Result<Map<String, Value>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    "SELECT field, value_json FROM flow_memory WHERE namespace = $1 \
                     AND app_id = $2 AND user_id = $3 AND agent_id = $4 ORDER BY field",
                    &[&namespace, &owner.app_id, &owner.user_id, &owner.agent_id],
                )
                .await?;
            rows.iter()
                .map(decode::memory_field)
                .collect::<OpResult<Map<String, Value>>>()
        }
        .await;
        self.done(r)
    }
}
