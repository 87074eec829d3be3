//! What an interrupted turn keeps: reconciliation rebuilds the answer a dead
//! process had streamed from the run's stored text and reasoning deltas and
//! stores it as a failed assistant message, so the transcript shows what the
//! user saw before the crash.

use super::OpResult;
use super::messages;
use crate::domain::ids::SessionId;
use crate::store::partial_answer::{body_runtime, interrupted_answer};
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
    let Some(runtime) = body_runtime(&body.try_get::<_, String>(0)?)? else {
        return Ok(false);
    };
    let deltas = tx
        .query(
            "SELECT data_json FROM run_events WHERE run_id = $1 \
             AND type IN ('text_delta', 'thought_delta') ORDER BY sequence",
            &[&run_id],
        )
        .await?
        .iter()
        .map(|row| row.try_get(0))
        .collect::<Result<Vec<String>, _>>()?;
    let Some(answer) = interrupted_answer(&deltas, run_id, runtime) else {
        return Ok(false);
    };
    messages::append(tx, session_id, vec![answer], None).await?;
    Ok(true)
}
