//! Client-hosted chats in SQLite: `flow_chats`, `flow_chat_messages` and
//! `flow_memory`, every key starting with the namespace; a turn's writes are one
//! `BEGIN IMMEDIATE` transaction guarded by the chat's version.

use super::{OpResult, SqliteStore};
use crate::domain::HecateError;
use crate::domain::error::ErrorType;
use crate::domain::error::Result;
use crate::domain::flow::{
    FlowChat, FlowChatMessage, FlowChatWrite, FlowPosition, FlowRole, MemoryOwner,
};
use crate::domain::time::now_rfc3339;
use crate::store::flow_chats::FlowChatStore;
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, Row, TransactionBehavior, params};
use serde_json::{Map, Value};

const CHAT_COLUMNS: &str = "namespace, id, agent_id, app_id, user_id, conversation, stage, \
     ended, on_track, off_track_reason, route_json, version, created_at, updated_at";

/// A chat row with its route still as JSON text.
fn row_to_chat(r: &Row<'_>) -> rusqlite::Result<(FlowChat, String)> {
    Ok((
        FlowChat {
            namespace: r.get(0)?,
            id: r.get(1)?,
            agent_id: r.get(2)?,
            app_id: r.get(3)?,
            user_id: r.get(4)?,
            position: FlowPosition {
                conversation: r.get(5)?,
                stage: r.get(6)?,
                ended: r.get(7)?,
                on_track: r.get(8)?,
                off_track_reason: r.get(9)?,
                route: Vec::new(),
            },
            version: r.get(11)?,
            created_at: r.get(12)?,
            updated_at: r.get(13)?,
        },
        r.get(10)?,
    ))
}

fn chat_in(c: &Connection, namespace: &str, id: &str) -> OpResult<FlowChat> {
    let found = c
        .prepare_cached(&format!(
            "SELECT {CHAT_COLUMNS} FROM flow_chats WHERE namespace = ?1 AND id = ?2"
        ))?
        .query_row(params![namespace, id], row_to_chat)
        .optional()?;
    let Some((mut chat, route)) = found else {
        return Err(HecateError::not_found("chat", id).into());
    };
    chat.position.route = serde_json::from_str(&route)?;
    Ok(chat)
}

fn row_to_message(r: &Row<'_>) -> rusqlite::Result<(FlowChatMessage, Option<String>, String)> {
    let role: String = r.get(1)?;
    Ok((
        FlowChatMessage {
            sequence: r.get(0)?,
            role: FlowRole::User,
            content: r.get(2)?,
            stage: r.get(3)?,
            data: None,
            created_at: r.get(5)?,
        },
        r.get(4)?,
        role,
    ))
}

fn finish_message(
    (mut m, data, role): (FlowChatMessage, Option<String>, String),
) -> OpResult<FlowChatMessage> {
    m.role = FlowRole::parse(&role)
        .ok_or_else(|| HecateError::store(format!("unknown stored chat role `{role}`")))?;
    m.data = data.map(|d| serde_json::from_str(&d)).transpose()?;
    Ok(m)
}

fn write(c: &mut Connection, w: FlowChatWrite) -> OpResult<(FlowChat, FlowChatMessage)> {
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let mut chat = chat_in(&tx, &w.namespace, &w.chat_id)?;
    if chat.version != w.expected_version {
        return Err(HecateError::new(
            ErrorType::Conflict,
            format!(
                "chat {} changed while this call ran (version {} instead of {}); retry",
                w.chat_id, chat.version, w.expected_version
            ),
        )
        .into());
    }
    let now = now_rfc3339();
    let sequence: i64 = tx
        .prepare_cached(
            "SELECT COALESCE(MAX(sequence), 0) + 1 FROM flow_chat_messages \
             WHERE namespace = ?1 AND chat_id = ?2",
        )?
        .query_row(params![w.namespace, w.chat_id], |r| r.get(0))?;
    let data = w
        .message
        .data
        .as_ref()
        .map(serde_json::to_string)
        .transpose()?;
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
    if let Some(p) = w.position {
        chat.position = p;
    }
    chat.version += 1;
    chat.updated_at = now.clone();
    let p = &chat.position;
    tx.prepare_cached(
        "UPDATE flow_chats SET conversation = ?3, stage = ?4, ended = ?5, on_track = ?6, \
         off_track_reason = ?7, route_json = ?8, version = ?9, updated_at = ?10 \
         WHERE namespace = ?1 AND id = ?2",
    )?
    .execute(params![
        w.namespace,
        w.chat_id,
        p.conversation,
        p.stage,
        p.ended,
        p.on_track,
        p.off_track_reason,
        serde_json::to_string(&p.route)?,
        chat.version,
        now
    ])?;
    tx.commit()?;
    let message = FlowChatMessage {
        sequence,
        role: w.message.role,
        content: w.message.content,
        stage: w.message.stage,
        data: w.message.data,
        created_at: now,
    };
    Ok((chat, message))
}

#[async_trait]
impl FlowChatStore for SqliteStore {
    async fn create_flow_chat(&self, chat: &FlowChat) -> Result<()> {
        let chat = chat.clone();
        self.write(move |c| {
            let p = &chat.position;
            c.prepare_cached(&format!(
                "INSERT INTO flow_chats ({CHAT_COLUMNS}) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
            ))?
            .execute(params![
                chat.namespace,
                chat.id,
                chat.agent_id,
                chat.app_id,
                chat.user_id,
                p.conversation,
                p.stage,
                p.ended,
                p.on_track,
                p.off_track_reason,
                serde_json::to_string(&p.route)?,
                chat.version,
                chat.created_at,
                chat.updated_at
            ])?;
            Ok(())
        })
        .await
    }

    async fn get_flow_chat(&self, namespace: &str, id: &str) -> Result<FlowChat> {
        let (namespace, id) = (namespace.to_string(), id.to_string());
        self.read(move |c| chat_in(c, &namespace, &id)).await
    }

    async fn list_flow_chat_messages(
        &self,
        namespace: &str,
        chat_id: &str,
    ) -> Result<Vec<FlowChatMessage>> {
        let (namespace, chat_id) = (namespace.to_string(), chat_id.to_string());
        self.read(move |c| {
            let rows = c
                .prepare_cached(
                    "SELECT sequence, role, content, stage, data_json, created_at \
                     FROM flow_chat_messages WHERE namespace = ?1 AND chat_id = ?2 \
                     ORDER BY sequence",
                )?
                .query_map(params![namespace, chat_id], row_to_message)?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            rows.into_iter().map(finish_message).collect()
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
            let rows = c
                .prepare_cached(
                    "SELECT field, value_json FROM flow_memory WHERE namespace = ?1 \
                     AND app_id = ?2 AND user_id = ?3 AND agent_id = ?4 ORDER BY field",
                )?
                .query_map(
                    params![namespace, owner.app_id, owner.user_id, owner.agent_id],
                    |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)),
                )?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            rows.into_iter()
                .map(|(k, v)| Ok((k, serde_json::from_str(&v)?)))
                .collect()
        })
        .await
    }
}
