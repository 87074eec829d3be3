//! The messages table: its columns, the JSON kept beside them, and how a row
//! becomes a `Message`.

use super::StoredRow;
use crate::domain::ids::{CallId, MessageId, RunId, SessionId};
use crate::domain::message::{
    ContentBlock, Message, MessageStatus, NewMessage, Role, RuntimeSnapshot, ToolCall,
};
use crate::domain::provider_call::ProviderCall;
use serde::{Deserialize, Serialize};

/// The parts of a message kept as JSON beside its indexed columns (`body_json`).
#[derive(Serialize, Deserialize)]
struct MessageBody {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    content_blocks: Vec<ContentBlock>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tool_call_id: Option<String>,
    #[serde(default)]
    tool_error: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    runtime: RuntimeSnapshot,
}

/// The columns `message` reads, in its order.
pub(crate) const MESSAGE_COLUMNS: &str = "id, session_id, sequence, role, content, \
     produced_by_call_id, run_id, status, is_summary, body_json, created_at";

/// The message in a row that starts with `MESSAGE_COLUMNS`.
pub(crate) fn message<R: StoredRow>(r: &R) -> Result<Message, R::Error> {
    let body: MessageBody = r.json(9)?;
    let role: String = r.col(3)?;
    let status: String = r.col(7)?;
    Ok(Message {
        id: MessageId(r.col(0)?),
        session_id: SessionId(r.col(1)?),
        sequence: r.col(2)?,
        role: Role::parse(&role).unwrap_or(Role::User),
        content: r.col(4)?,
        produced_by_call_id: r.col::<Option<String>>(5)?.map(CallId),
        run_id: r.col::<Option<String>>(6)?.map(RunId),
        status: match status.as_str() {
            "running" => MessageStatus::Running,
            "failed" => MessageStatus::Failed,
            "cancelled" => MessageStatus::Cancelled,
            _ => MessageStatus::Completed,
        },
        is_summary: r.col(8)?,
        content_blocks: body.content_blocks,
        tool_calls: body.tool_calls,
        tool_call_id: body.tool_call_id,
        tool_error: body.tool_error,
        error: body.error,
        runtime: body.runtime,
        created_at: r.col(10)?,
    })
}

/// The message `m` becomes once appended to `session_id` at `sequence`, and the
/// `body_json` column stored beside its indexed ones.
pub(crate) fn appended(
    m: NewMessage,
    session_id: &SessionId,
    sequence: i64,
    created_at: &str,
) -> serde_json::Result<(Message, String)> {
    let body = MessageBody {
        content_blocks: m.content_blocks,
        tool_calls: m.tool_calls,
        tool_call_id: m.tool_call_id,
        tool_error: m.tool_error,
        error: m.error,
        runtime: m.runtime,
    };
    let body_json = serde_json::to_string(&body)?;
    let message = Message {
        id: m.id,
        session_id: session_id.clone(),
        sequence,
        role: m.role,
        content: m.content,
        content_blocks: body.content_blocks,
        tool_calls: body.tool_calls,
        tool_call_id: body.tool_call_id,
        tool_error: body.tool_error,
        produced_by_call_id: m.produced_by_call_id,
        run_id: m.run_id,
        status: m.status,
        error: body.error,
        is_summary: m.is_summary,
        runtime: body.runtime,
        created_at: created_at.to_owned(),
    };
    Ok((message, body_json))
}

/// The columns `provider_call` reads, in its order.
pub(crate) const PROVIDER_CALL_COLUMNS: &str = "id, session_id, run_id, request_id, provider, \
     model, prompt_tokens, completion_tokens, total_tokens, cost_micros_usd, duration_ms, \
     created_at";

/// A session's provider call from a row that starts with `PROVIDER_CALL_COLUMNS`.
pub(crate) fn provider_call<R: StoredRow>(r: &R) -> Result<ProviderCall, R::Error> {
    Ok(ProviderCall {
        id: CallId(r.col(0)?),
        session_id: SessionId(r.col(1)?),
        run_id: r.col::<Option<String>>(2)?.map(RunId),
        request_id: r.col(3)?,
        provider: r.col(4)?,
        model: r.col(5)?,
        usage: r.usage(6)?,
        cost_micros_usd: r.col(9)?,
        duration_ms: r.col(10)?,
        created_at: r.col(11)?,
    })
}
