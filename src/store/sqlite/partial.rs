//! What an interrupted turn keeps: startup reconciliation rebuilds the answer a
//! dead process had streamed from the run's stored text and reasoning deltas and
//! stores it as a failed assistant message, so the transcript shows what the
//! user saw before the crash.

use super::OpResult;
use super::messages;
use crate::domain::ids::SessionId;
use crate::store::partial_answer::{body_runtime, interrupted_answer};
use rusqlite::{Connection, OptionalExtension, params};

/// Stores the partial answer of run `run_id` (in `session_id`) as a failed
/// assistant message, inside the caller's transaction. Returns whether one was
/// stored: nothing is when the run already has an assistant message, has no
/// user message to take the runtime from, or streamed no text.
pub(super) fn keep_partial_answer(
    tx: &Connection,
    session_id: &SessionId,
    run_id: &str,
) -> OpResult<bool> {
    let answered: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM messages WHERE run_id = ?1 AND role = 'assistant')",
        params![run_id],
        |r| r.get(0),
    )?;
    if answered {
        return Ok(false);
    }
    let body: Option<String> = tx
        .query_row(
            "SELECT body_json FROM messages WHERE run_id = ?1 AND role = 'user' \
             ORDER BY sequence LIMIT 1",
            params![run_id],
            |r| r.get(0),
        )
        .optional()?;
    let Some(body) = body else {
        return Ok(false);
    };
    let Some(runtime) = body_runtime(&body)? else {
        return Ok(false);
    };
    let deltas = tx
        .prepare(
            "SELECT data_json FROM run_events WHERE run_id = ?1 \
             AND type IN ('text_delta', 'thought_delta') ORDER BY sequence",
        )?
        .query_map(params![run_id], |r| r.get(0))?
        .collect::<rusqlite::Result<Vec<String>>>()?;
    let Some(answer) = interrupted_answer(&deltas, run_id, runtime) else {
        return Ok(false);
    };
    messages::append(tx, session_id, vec![answer], None)?;
    Ok(true)
}
