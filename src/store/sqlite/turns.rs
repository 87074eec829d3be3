//! The start and the end of a turn, each one `BEGIN IMMEDIATE` transaction on the
//! writer connection (borrowed by the caller's thread when it is free), built from
//! the same statements the single-row operations use.

use super::{OpResult, SqliteStore, leases, messages, runs, sessions};
use crate::domain::error::{HecateError, Result};
use crate::domain::segment::next_segment_id;
use crate::store::{BeginTurn, FinishTurn, TurnBegun, TurnFinished, TurnStore};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

#[async_trait]
impl TurnStore for SqliteStore {
    async fn begin_turn(&self, turn: BeginTurn) -> Result<TurnBegun> {
        self.write_inline(move |c| begin(c, &turn)).await
    }

    async fn finish_turn(&self, turn: FinishTurn) -> Result<TurnFinished> {
        self.write_inline(move |c| finish(c, &turn)).await
    }
}

fn begin(c: &mut Connection, turn: &BeginTurn) -> OpResult<TurnBegun> {
    let (session, owner) = (&turn.session, &turn.owner);
    let mut user = turn.user.clone();
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    if let Some(holder) = leases::take(&tx, &session.id, owner, turn.lease_ttl_ms)? {
        return Ok(TurnBegun::HeldElsewhere { owner: holder });
    }
    // A run still open now was left by an owner whose lease expired: it ends
    // interrupted, keeping what it streamed, before this turn starts.
    if leases::has_open_runs(&tx, &session.id)? {
        let mut closed = crate::store::ReconcileReport::default();
        leases::close_interrupted(&tx, &session.id, &mut closed)?;
        tracing::warn!(
            session_id = %session.id,
            runs_failed = closed.runs_failed,
            answers_kept = closed.answers_kept,
            "took over a session whose previous owner stopped mid-turn"
        );
    }
    let previous = messages::last(&tx, &session.id, 1)?
        .pop()
        .map(|m| m.runtime);
    user.runtime.segment_id = next_segment_id(previous.as_ref(), &user.runtime);
    runs::insert(&tx, &turn.run)?;
    let user = messages::append(&tx, &session.id, vec![user], None)?
        .pop()
        .ok_or_else(|| HecateError::store("the user message was not stored"))?;
    sessions::write_header(&tx, session)?;
    let history = messages::history(&tx, &session.id, turn.history)?;
    tx.commit()?;
    Ok(TurnBegun::Started {
        user: Box::new(user),
        history,
    })
}

fn finish(c: &mut Connection, turn: &FinishTurn) -> OpResult<TurnFinished> {
    let (session, owner, run_id) = (&turn.session, &turn.owner, &turn.run_id);
    let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let assistant = messages::append(
        &tx,
        &session.id,
        vec![turn.assistant.clone()],
        turn.call.as_ref(),
    )?
    .pop()
    .ok_or_else(|| HecateError::store("the assistant message was not stored"))?;
    for a in &turn.artifacts {
        messages::insert_artifact(&tx, &assistant.id, a)?;
    }
    runs::finish(&tx, run_id, turn.status, turn.error.as_ref())?;
    runs::insert_events(&tx, run_id, &turn.events)?;
    // A turn that lost its lease to another process keeps its answer and run end
    // but never writes over the header the new owner keeps.
    let holder: Option<String> = tx
        .prepare_cached("SELECT owner_id FROM sessions WHERE id = ?1")?
        .query_row(params![session.id.as_str()], |r| r.get(0))
        .optional()?
        .flatten();
    if holder.as_deref().is_none_or(|h| h == owner) {
        sessions::write_header(&tx, session)?;
    }
    leases::release(&tx, &session.id, owner)?;
    let run = runs::select(&tx, run_id)?;
    // Sequences are gap-free from 0: the answer's is the count less one.
    let message_count = (assistant.sequence + 1) as u64;
    tx.commit()?;
    Ok(TurnFinished {
        assistant,
        run,
        message_count,
    })
}
