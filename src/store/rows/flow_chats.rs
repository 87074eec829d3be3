//! The client-hosted chat tables: their columns, how a row becomes a chat or
//! one of its messages, and how one write moves a chat.

use super::StoredRow;
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::flow::{
    FlowChat, FlowChatMessage, FlowChatWrite, FlowPosition, FlowRole, NewFlowChatMessage,
};
use serde_json::Value;

/// The columns of `flow_chats`, in the order `chat` reads them.
pub(crate) const CHAT_COLUMNS: &str = "namespace, id, agent_id, app_id, user_id, conversation, \
     stage, ended, on_track, off_track_reason, route_json, version, created_at, updated_at";

/// The columns `message` reads from `flow_chat_messages`, in its order.
pub(crate) const MESSAGE_COLUMNS: &str = "sequence, role, content, stage, data_json, created_at";

/// The chat header in a row that starts with `CHAT_COLUMNS`.
pub(crate) fn chat<R: StoredRow>(r: &R) -> Result<FlowChat, R::Error> {
    Ok(FlowChat {
        namespace: r.col(0)?,
        id: r.col(1)?,
        agent_id: r.col(2)?,
        app_id: r.col(3)?,
        user_id: r.col(4)?,
        position: FlowPosition {
            conversation: r.col(5)?,
            stage: r.col(6)?,
            ended: r.col(7)?,
            on_track: r.col(8)?,
            off_track_reason: r.col(9)?,
            route: r.json(10)?,
        },
        version: r.col(11)?,
        created_at: r.col(12)?,
        updated_at: r.col(13)?,
    })
}

/// The chat message in a row that starts with `MESSAGE_COLUMNS`; an unknown
/// role is the store's domain error.
pub(crate) fn message<R, E>(r: &R) -> Result<FlowChatMessage, E>
where
    R: StoredRow,
    E: From<R::Error> + From<HecateError>,
{
    let role: String = r.col(1)?;
    Ok(FlowChatMessage {
        sequence: r.col(0)?,
        role: FlowRole::parse(&role)
            .ok_or_else(|| HecateError::store(format!("unknown stored chat role `{role}`")))?,
        content: r.col(2)?,
        stage: r.col(3)?,
        data: r.opt_json(4)?,
        created_at: r.col(5)?,
    })
}

/// One memory field from a `field, value_json` row.
pub(crate) fn memory_field<R: StoredRow>(r: &R) -> Result<(String, Value), R::Error> {
    Ok((r.col(0)?, r.json(1)?))
}

/// Refuses `w` when the chat it targets is no longer at the version it read.
pub(crate) fn check_version(chat: &FlowChat, w: &FlowChatWrite) -> Result<(), HecateError> {
    if chat.version == w.expected_version {
        return Ok(());
    }
    Err(HecateError::new(
        ErrorType::Conflict,
        format!(
            "chat {} changed while this call ran (version {} instead of {}); retry",
            w.chat_id, chat.version, w.expected_version
        ),
    ))
}

/// Moves `chat` to `position` (when given) and its next version, written at `now`.
pub(crate) fn advance(chat: &mut FlowChat, position: Option<FlowPosition>, now: &str) {
    if let Some(p) = position {
        chat.position = p;
    }
    chat.version += 1;
    chat.updated_at = now.to_owned();
}

/// The `data_json` column of `m` (NULL when it carries no data).
pub(crate) fn data_json(m: &NewFlowChatMessage) -> serde_json::Result<Option<String>> {
    m.data.as_ref().map(serde_json::to_string).transpose()
}

/// The message `m` becomes once stored at `sequence` at `now`.
pub(crate) fn stored_message(m: NewFlowChatMessage, sequence: i64, now: String) -> FlowChatMessage {
    FlowChatMessage {
        sequence,
        role: m.role,
        content: m.content,
        stage: m.stage,
        data: m.data,
        created_at: now,
    }
}
