//! The start and the end of a turn, each one transaction, built from the same
//! statements the single-row operations use.

use super::{OpResult, PostgresStore, leases, messages, runs, sessions};
use crate::domain::error::{HecateError, Result};
use crate::domain::segment::next_segment_id;
use crate::store::{BeginTurn, FinishTurn, TurnBegun, TurnFinished, TurnStore};
use async_trait::async_trait;
use deadpool_postgres::{GenericClient, Transaction};

#[async_trait]
impl TurnStore for PostgresStore {
    async fn begin_turn(&self, turn: BeginTurn) -> Result<TurnBegun> {
        let mut c = self.client().await?;
        let r = async {
            let tx = c.transaction().await?;
            let begun = begin(&tx, turn).await?;
            if matches!(begun, TurnBegun::Started { .. }) {
                tx.commit().await?;
            }
            Ok(begun)
        }
        .await;
        self.done(r)
    }

    async fn finish_turn(&self, turn: FinishTurn) -> Result<TurnFinished> {
        let mut c = self.client().await?;
        let r = async {
            let tx = c.transaction().await?;
            let finished = finish(&tx, turn).await?;
            tx.commit().await?;
            Ok(finished)
        }
        .await;
        self.done(r)
    }
}

async fn begin(tx: &Transaction<'_>, turn: BeginTurn) -> OpResult<TurnBegun> {
    let (session, owner) = (&turn.session, &turn.owner);
    let mut user = turn.user;
    if let Some(holder) = leases::take(tx, &session.id, owner, turn.lease_ttl_ms).await? {
        return Ok(TurnBegun::HeldElsewhere { owner: holder });
    }
    // A run still open now was left by an owner whose lease expired (a dead
    // replica, or this process after its store went away): it ends
    // interrupted, keeping what it streamed, before this turn starts.
    if leases::has_open_runs(tx, &session.id).await? {
        let mut closed = crate::store::ReconcileReport::default();
        leases::close_interrupted(tx, &session.id, &mut closed).await?;
        tracing::warn!(
            session_id = %session.id,
            runs_failed = closed.runs_failed,
            answers_kept = closed.answers_kept,
            "took over a session whose previous owner stopped mid-turn"
        );
    }
    let previous = messages::last(tx, &session.id, 1)
        .await?
        .pop()
        .map(|m| m.runtime);
    user.runtime.segment_id = next_segment_id(previous.as_ref(), &user.runtime);
    runs::insert(tx, &turn.run).await?;
    let user = messages::append(tx, &session.id, vec![user], None)
        .await?
        .pop()
        .ok_or_else(|| HecateError::store("the user message was not stored"))?;
    sessions::write_header(tx, session).await?;
    let history = messages::history(tx, &session.id, turn.history).await?;
    Ok(TurnBegun::Started {
        user: Box::new(user),
        history,
    })
}

async fn finish(tx: &Transaction<'_>, turn: FinishTurn) -> OpResult<TurnFinished> {
    let (session, owner, run_id) = (&turn.session, &turn.owner, &turn.run_id);
    let assistant = messages::append(tx, &session.id, vec![turn.assistant], turn.call.as_ref())
        .await?
        .pop()
        .ok_or_else(|| HecateError::store("the assistant message was not stored"))?;
    for a in &turn.artifacts {
        messages::insert_artifact(tx, &assistant.id, a).await?;
    }
    runs::finish(tx, run_id, turn.status, turn.error.as_ref()).await?;
    runs::insert_events(tx, run_id, &turn.events).await?;
    // A turn that lost its lease to another process keeps its answer and run end
    // but never writes over the header the new owner keeps.
    let holder: Option<String> = match tx
        .query_opt(
            "SELECT owner_id FROM sessions WHERE id = $1",
            &[&session.id.as_str()],
        )
        .await?
    {
        Some(row) => row.try_get(0)?,
        None => None,
    };
    if holder.as_deref().is_none_or(|h| h == owner) {
        sessions::write_header(tx, session).await?;
    }
    leases::release(tx, &session.id, owner).await?;
    let run = runs::select(tx, run_id).await?;
    // Sequences are gap-free from 0: the answer's is the count less one.
    let message_count = (assistant.sequence + 1) as u64;
    Ok(TurnFinished {
        assistant,
        run,
        message_count,
    })
}
