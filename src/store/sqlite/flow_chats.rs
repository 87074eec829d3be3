//! Client-hosted chats in SQLite: `flow_chats`, `flow_chat_messages` and
//! `flow_memory`, every key starting with the namespace; a turn's writes are one
//! `BEGIN IMMEDIATE` transaction guarded by the chat's version.

use super::reads::{all, one};
use super::{OpResult, SqliteStore, StoreOpError};
use crate::domain::error::Result;
use crate::domain::flow::{FlowChat, FlowChatMessage, FlowChatWrite, MemoryOwner};
use crate::domain::time::now_rfc3339;
use crate::store::flow_chats::FlowChatStore;
use crate::store::rows::flow_chats::{self as decode, CHAT_COLUMNS, MESSAGE_COLUMNS};
use async_trait::async_trait;
use rusqlite::types::ToSql;
use rusqlite::{Connection, TransactionBehavior, params, params_from_iter};
use serde_json::{Map, Value};

fn chat_in(c: &Connection, namespace: &str, id: &str) -> OpResult<FlowChat> {
    one(
        c,
        &format!("SELECT {CHAT_COLUMNS} FROM flow_chats WHERE namespace = ?1 AND id = ?2"),
        params![namespace, id],
        |r| decode::chat(r),
        "chat",
        id,
    )
}

/// Writes `chat`'s header with `sql`, whose parameters are the chat's key,
/// position, version and update time (`?1`..`?10`), then `more`.
fn put_header(c: &Connection, sql: &str, chat: &FlowChat, more: &[&dyn ToSql]) -> OpResult<()> {
    let p = &chat.position;
    let route = serde_json::to_string(&p.route)?;
    let key_and_position = params![
        chat.namespace,
        chat.id,
        p.conversation,
        p.stage,
        p.ended,
        p.on_track,
        p.off_track_reason,
        route,
        chat.version,
        chat.updated_at
    ];
    let values = key_and_position.iter().chain(more).copied();
    c.prepare_cached(sql)?.execute(params_from_iter(values))?;
    Ok(())
}

fn write(c: &mut Connection, w: FlowChatWrite) -> OpResult<(FlowChat, FlowChatMessage)> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut chat = chat_in(&tx, &w.namespace, &w.chat_id)?;
    decode::check_version(&chat, &w)?;
    let now = now_rfc3339();
    let sequence: i64 = tx
        .prepare_cached(
            "SELECT COALESCE(MAX(sequence), 0) + 1 FROM flow_chat_messages \
             WHERE namespace = ?1 AND chat_id = ?2",
        )?
        .query_row(params![w.namespace, w.chat_id], |r| r.get(0))?;
    let data = decode::data_json(&w.message)?;
    tx.prepare_cached(
        "INSERT INTO flow_chat_messages \
         (namespace, chat_id, sequence, role, content, stage, data_json, created_at) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(params![
        w.namespace,
        w.chat_id,
        sequence,
        w.message.role.as_str(),
        w.message.content,
        w.message.stage,
        data,
        now
    ])?;
    if let Some((owner, fields)) = &w.memory {
        let mut upsert = tx.prepare_cached(
            "INSERT INTO flow_memory \
             (namespace, app_id, user_id, agent_id, field, value_json, chat_id, updated_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) \
             ON CONFLICT (namespace, app_id, user_id, agent_id, field) DO UPDATE SET \
             value_json = excluded.value_json, chat_id = excluded.chat_id, \
             updated_at = excluded.updated_at",
        )?;
        for (field, value) in fields {
            upsert.execute(params![
                w.namespace,
                owner.app_id,
                owner.user_id,
                owner.agent_id,
                field,
                serde_json::to_string(value)?,
                w.chat_id,
                now
            ])?;
        }
    }
    decode::advance(&mut chat, w.position, &now);
    put_header(
        &tx,
        "UPDATE flow_chats SET conversation = ?3, stage = ?4, ended = ?5, on_track = ?6, \
         off_track_reason = ?7, route_json = ?8, version = ?9, updated_at = ?10 \
         WHERE namespace = ?1 AND id = ?2",
        &chat,
        &[],
    )?;
    tx.commit()?;
    let message = decode::stored_message(w.message, sequence, now);
    Ok((chat, message))
}

#[async_trait]
impl FlowChatStore for SqliteStore {
    async fn create_flow_chat(&self, chat: &FlowChat) -> Result<()> {
        let chat = chat.clone();
        self.write(move |c| {
            put_header(
                c,
                "INSERT INTO flow_chats (namespace, id, conversation, stage, ended, on_track, \
                 off_track_reason, route_json, version, updated_at, agent_id, app_id, user_id, \
                 created_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
                &chat,
                &[
                    &chat.agent_id,
                    &chat.app_id,
                    &chat.user_id,
                    &chat.created_at,
                ],
            )
        })
        .await
    }

    async fn get_flow_chat(&self, namespace: &str, id: &str) -> Result<FlowChat> {
        let (namespace, id) = (namespace.to_string(), id.to_string());
        self.read(move |c| chat_in(c, &namespace, &id)).await
    }

    async fn list_flow_chats(
        &self,
        namespace: &str,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<FlowChat>> {
        let (namespace, agent_id) = (namespace.to_string(), agent_id.to_string());
        self.read(move |c| {
            all(
                c,
                &format!(
                    "SELECT {CHAT_COLUMNS} FROM flow_chats WHERE namespace = ?1 AND agent_id = ?2 \
                     ORDER BY updated_at DESC, id DESC LIMIT ?3"
                ),
                params![namespace, agent_id, limit.min(i64::MAX as usize) as i64],
                |r| decode::chat(r),
            )
        })
        .await
    }

    async fn list_flow_chat_messages(
        &self,
        namespace: &str,
        chat_id: &str,
    ) -> Result<Vec<FlowChatMessage>> {
        let (namespace, chat_id) = (namespace.to_string(), chat_id.to_string());
        self.read(move |c| {
            c.prepare_cached(&format!(
                "SELECT {MESSAGE_COLUMNS} FROM flow_chat_messages \
                 WHERE namespace = ?1 AND chat_id = ?2 ORDER BY sequence"
            ))?
            .query_and_then(params![namespace, chat_id], |r| {
                decode::message::<_, StoreOpError>(r)
            })?
            .collect()
        })
        .await
    }

    async fn write_flow_chat(&self, w: FlowChatWrite) -> Result<(FlowChat, FlowChatMessage)> {
        self.write(move |c| write(c, w)).await
    }

    async fn flow_memory(
        &self,
        namespace: &str,
        owner: &MemoryOwner,
    ) -> Result<Map<String, Value>> {
        let namespace = namespace.to_string();
        let owner = owner.clone();
        self.read(move |c| {
            let fields = c
                .prepare_cached(
                    "SELECT field, value_json FROM flow_memory WHERE namespace = ?1 \
                     AND app_id = ?2 AND user_id = ?3 AND agent_id = ?4 ORDER BY field",
                )?
                .query_map(
                    params![namespace, owner.app_id, owner.user_id, owner.agent_id],
                    |r| decode::memory_field(r),
                )?
                .collect::<rusqlite::Result<Map<String, Value>>>()?;
            Ok(fields)
        })
        .await
    }
}
