//! What an interrupted turn keeps: reconciliation rebuilds the answer a dead
//! process had streamed from the run's stored text and reasoning deltas and
//! stores it as a failed assistant message, so the transcript shows what the
//! user saw before the crash.

use super::OpResult;
use super::messages;
use crate::domain::event::RuntimeEvent;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::message::{ContentBlock, MessageStatus, NewMessage, Role, RuntimeSnapshot};
use crate::domain::partial::PartialAnswer;
use crate::domain::run::INTERRUPTED_REASON;
use deadpool_postgres::GenericClient;

/// Stores the partial answer of run `run_id` (in `session_id`) as a failed
/// assistant message, inside the caller's transaction. Returns whether one was
/// stored: nothing is when the run already has an assistant message, has no
/// user message to take the runtime from, or streamed no text.
pub(super) async fn keep_partial_answer<C: GenericClient>(
    tx: &C,
    session_id: &SessionId,
    run_id: &str,
) -> OpResult<bool> {
    let answered: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM messages WHERE run_id = $1 AND role = 'assistant')",
            &[&run_id],
        )
        .await?
        .try_get(0)?;
    if answered {
        return Ok(false);
    }
    let body = tx
        .query_opt(
            "SELECT body_json FROM messages WHERE run_id = $1 AND role = 'user' \
             ORDER BY sequence LIMIT 1",
            &[&run_id],
        )
        .await?;
    let Some(body) = body else {
        return Ok(false);
    };
    let body: String = body.try_get(0)?;
    let runtime: RuntimeSnapshot = match serde_json::from_str::<serde_json::Value>(&body)?
        .get_mut("runtime")
        .map(serde_json::Value::take)
    {
        Some(v) => serde_json::from_value(v)?,
        None => return Ok(false),
    };
    let mut partial = PartialAnswer::default();
    let rows = tx
        .query(
            "SELECT data_json FROM run_events WHERE run_id = $1 \
             AND type IN ('text_delta', 'thought_delta') ORDER BY sequence",
            &[&run_id],
        )
        .await?;
    for row in &rows {
        let data: String = row.try_get(0)?;
        // An event that does not parse is skipped; the rest still counts.
        if let Ok(event) = serde_json::from_str::<RuntimeEvent>(&data) {
            partial.push(&event);
        }
    }
    if partial.is_empty() {
        return Ok(false);
    }
    let blocks = partial.blocks();
    let mut answer = NewMessage::text(Role::Assistant, partial.text(), runtime);
    if !blocks
        .iter()
        .all(|b| matches!(b, ContentBlock::Text { .. }))
    {
        answer.content_blocks = blocks;
    }
    answer.status = MessageStatus::Failed;
    answer.error = Some(INTERRUPTED_REASON.to_string());
    answer.run_id = Some(RunId(run_id.to_string()));
    messages::append(tx, session_id, vec![answer], None).await?;
    Ok(true)
}
