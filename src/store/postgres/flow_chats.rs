//! Client-hosted chats in PostgreSQL: `flow_chats`, `flow_chat_messages` and
//! `flow_memory`, every key starting with the namespace; a turn's writes are one
//! transaction holding the chat's row lock and guarded by its version, so two
//! replicas never number the same message or both move one chat.

use super::{OpResult, PostgresStore};
use crate::domain::HecateError;
use crate::domain::error::{ErrorType, Result};
use crate::domain::flow::{
    FlowChat, FlowChatMessage, FlowChatWrite, FlowPosition, FlowRole, MemoryOwner,
};
use crate::domain::time::now_rfc3339;
use crate::store::flow_chats::FlowChatStore;
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use serde_json::{Map, Value};
use tokio_postgres::Row;

const CHAT_COLUMNS: &str = "namespace, id, agent_id, app_id, user_id, conversation, stage, \
     ended, on_track, off_track_reason, route_json, version, created_at, updated_at";

fn row_to_chat(r: &Row) -> OpResult<FlowChat> {
    let route: String = r.try_get(10)?;
    Ok(FlowChat {
        namespace: r.try_get(0)?,
        id: r.try_get(1)?,
        agent_id: r.try_get(2)?,
        app_id: r.try_get(3)?,
        user_id: r.try_get(4)?,
        position: FlowPosition {
            conversation: r.try_get(5)?,
            stage: r.try_get(6)?,
            ended: r.try_get(7)?,
            on_track: r.try_get(8)?,
            off_track_reason: r.try_get(9)?,
            route: serde_json::from_str(&route)?,
        },
        version: r.try_get(11)?,
        created_at: r.try_get(12)?,
        updated_at: r.try_get(13)?,
    })
}

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
        Some(row) => row_to_chat(&row),
        None => Err(HecateError::not_found("chat", id).into()),
    }
}

fn row_to_message(r: &Row) -> OpResult<FlowChatMessage> {
    let role: String = r.try_get(1)?;
    let data: Option<String> = r.try_get(4)?;
    Ok(FlowChatMessage {
        sequence: r.try_get(0)?,
        role: FlowRole::parse(&role)
            .ok_or_else(|| HecateError::store(format!("unknown stored chat role `{role}`")))?,
        content: r.try_get(2)?,
        stage: r.try_get(3)?,
        data: data.map(|d| serde_json::from_str(&d)).transpose()?,
        created_at: r.try_get(5)?,
    })
}

async fn write<C: GenericClient>(
    tx: &C,
    w: FlowChatWrite,
) -> OpResult<(FlowChat, FlowChatMessage)> {
    let mut chat = chat_in(tx, &w.namespace, &w.chat_id, true).await?;
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
        .query_one(
            "SELECT COALESCE(MAX(sequence), 0) + 1 FROM flow_chat_messages \
             WHERE namespace = $1 AND chat_id = $2",
            &[&w.namespace, &w.chat_id],
        )
        .await?
        .try_get(0)?;
    let data = w
        .message
        .data
        .as_ref()
        .map(serde_json::to_string)
        .transpose()?;
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
    if let Some(p) = w.position {
        chat.position = p;
    }
    chat.version += 1;
    chat.updated_at = now.clone();
    let p = &chat.position;
    tx.execute(
        "UPDATE flow_chats SET conversation = $3, stage = $4, ended = $5, on_track = $6, \
         off_track_reason = $7, route_json = $8, version = $9, updated_at = $10 \
         WHERE namespace = $1 AND id = $2",
        &[
            &w.namespace,
            &w.chat_id,
            &p.conversation,
            &p.stage,
            &p.ended,
            &p.on_track,
            &p.off_track_reason,
            &serde_json::to_string(&p.route)?,
            &chat.version,
            &now,
        ],
    )
    .await?;
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
impl FlowChatStore for PostgresStore {
    async fn create_flow_chat(&self, chat: &FlowChat) -> Result<()> {
        let c = self.client().await?;
        let r: OpResult<()> = async {
            let p = &chat.position;
            let sql = format!(
                "INSERT INTO flow_chats ({CHAT_COLUMNS}) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"
            );
            c.execute(
                sql.as_str(),
                &[
                    &chat.namespace,
                    &chat.id,
                    &chat.agent_id,
                    &chat.app_id,
                    &chat.user_id,
                    &p.conversation,
                    &p.stage,
                    &p.ended,
                    &p.on_track,
                    &p.off_track_reason,
                    &serde_json::to_string(&p.route)?,
                    &chat.version,
                    &chat.created_at,
                    &chat.updated_at,
                ],
            )
            .await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn get_flow_chat(&self, namespace: &str, id: &str) -> Result<FlowChat> {
        let c = self.client().await?;
        let r = chat_in(&c, namespace, id, false).await;
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
                    "SELECT sequence, role, content, stage, data_json, created_at \
                     FROM flow_chat_messages WHERE namespace = $1 AND chat_id = $2 \
                     ORDER BY sequence",
                    &[&namespace, &chat_id],
                )
                .await?;
            rows.iter()
                .map(row_to_message)
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
                .map(|r| {
                    let (k, v): (String, String) = (r.try_get(0)?, r.try_get(1)?);
                    Ok((k, serde_json::from_str(&v)?))
                })
                .collect::<OpResult<Map<String, Value>>>()
        }
        .await;
        self.done(r)
    }
}
