//! The start and the end of a turn, each one transaction, built from the same
//! statements the single-row operations use.

use super::cached::{CachedStatements, prepare_all};
use super::{OpError, OpResult, PostgresStore, leases, messages, runs, sessions};
use crate::domain::error::{HecateError, Result};
use crate::domain::segment::next_segment_id;
use crate::domain::time::now_rfc3339;
use crate::store::{BeginTurn, FinishTurn, TurnBegun, TurnFinished, TurnStore};
use async_trait::async_trait;
use deadpool_postgres::{Object, Transaction};
use tokio_postgres::IsolationLevel;

#[async_trait]
impl TurnStore for PostgresStore {
    async fn begin_turn(&self, turn: BeginTurn) -> Result<TurnBegun> {
        let mut c = self.client().await?;
        let r = async {
            let tx = read_committed(&mut c).await?;
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
            let tx = read_committed(&mut c).await?;
            let finished = finish(&tx, turn).await?;
            tx.commit().await?;
            Ok(finished)
        }
        .await;
        self.done(r)
    }
}

/// A READ COMMITTED transaction whatever the server's default: each statement
/// then reads a fresh snapshot, so a sequence read behind a row lock sees what
/// the lock's previous holder committed.
async fn read_committed(c: &mut Object) -> OpResult<Transaction<'_>> {
    Ok(c.build_transaction()
        .isolation_level(IsolationLevel::ReadCommitted)
        .start()
        .await?)
}

async fn begin(tx: &Transaction<'_>, turn: BeginTurn) -> OpResult<TurnBegun> {
    let (session, owner) = (&turn.session, &turn.owner);
    let id = &session.id;
    let mut user = turn.user;
    // One round trip: the lease (its UPDATE also locks the session's row), whether
    // a run is still open, the newest message and, read under that lock, the next
    // sequence. The statements are sent together and run in this order.
    let last_sql = messages::last_messages_sql();
    prepare_all(
        tx,
        &[
            leases::TAKE,
            leases::OPEN_RUNS,
            &last_sql,
            messages::NEXT_SEQUENCE,
        ],
    )
    .await?;
    let (taken, mut open, mut previous, mut next) = futures::try_join!(
        leases::try_take(tx, id, owner, turn.lease_ttl_ms),
        leases::has_open_runs(tx, id),
        messages::last(tx, id, 1),
        messages::next_sequence(tx, id),
    )?;
    // The lease was not taken at once, so the reads above ran without the row
    // lock: another owner holds it, or released it in between (then it is taken
    // now, and what was read is read again under the lock).
    let mut read_again = !taken;
    if !taken {
        if let Some(holder) = leases::take(tx, id, owner, turn.lease_ttl_ms).await? {
            return Ok(TurnBegun::HeldElsewhere { owner: holder });
        }
        open = leases::has_open_runs(tx, id).await?;
    }
    // A run still open now was left by an owner whose lease expired (a dead
    // replica, or this process after its store went away): it ends
    // interrupted, keeping what it streamed, before this turn starts.
    if open {
        let mut closed = crate::store::ReconcileReport::default();
        leases::close_interrupted(tx, id, &mut closed).await?;
        tracing::warn!(
            session_id = %id,
            runs_failed = closed.runs_failed,
            answers_kept = closed.answers_kept,
            "took over a session whose previous owner stopped mid-turn"
        );
        // The partial answer it kept is now the newest message.
        read_again = true;
    }
    if read_again {
        previous = messages::last(tx, id, 1).await?;
        next = messages::next_sequence(tx, id).await?;
    }
    let previous = previous.pop().map(|m| m.runtime);
    user.runtime.segment_id = next_segment_id(previous.as_ref(), &user.runtime);
    // One round trip: the run, the prompt (which refers to it), the header and
    // the history, read after the prompt so it ends with it (a strategy that
    // reads more than once sends its later reads after the round).
    let insert_sql = messages::insert_message_sql();
    prepare_all(tx, &[runs::INSERT_RUN, &insert_sql, sessions::WRITE_HEADER]).await?;
    let now = now_rfc3339();
    let ((), mut stored, (), history) = futures::try_join!(
        runs::insert(tx, &turn.run),
        messages::append_at(tx, id, vec![user], None, next, &now),
        sessions::write_header(tx, session),
        messages::history(tx, id, turn.history),
    )?;
    let user = stored
        .pop()
        .ok_or_else(|| HecateError::store("the user message was not stored"))?;
    Ok(TurnBegun::Started {
        user: Box::new(user),
        history,
    })
}

/// Locks a session's row and reads its lease holder.
const LOCK_AND_HOLDER: &str = "SELECT owner_id FROM sessions WHERE id = $1 FOR UPDATE";

async fn finish(tx: &Transaction<'_>, turn: FinishTurn) -> OpResult<TurnFinished> {
    let (session, owner, run_id) = (&turn.session, &turn.owner, &turn.run_id);
    let id = &session.id;
    // One round trip: the session's row locked with its lease holder, and the
    // answer's sequence read under that lock.
    prepare_all(tx, &[LOCK_AND_HOLDER, messages::NEXT_SEQUENCE]).await?;
    let (holder, next) = futures::try_join!(
        async {
            let row = tx
                .query_opt_cached(LOCK_AND_HOLDER, &[&id.as_str()])
                .await?;
            let holder: Option<String> = match row {
                Some(row) => row.try_get(0)?,
                None => None,
            };
            Ok::<_, OpError>(holder)
        },
        messages::next_sequence(tx, id),
    )?;
    // A turn that lost its lease to another process keeps its answer and run end
    // but never writes over the header the new owner keeps.
    let keeps_header = holder.as_deref().is_none_or(|h| h == owner);
    // One round trip for the rest, sent in this order: the provider call, the
    // answer, the run's end and events, the header, the lease, the run read back.
    let (insert_sql, select_sql) = (messages::insert_message_sql(), runs::select_sql());
    prepare_all(
        tx,
        &[
            messages::INSERT_CALL,
            &insert_sql,
            runs::FINISH_RUN,
            runs::INSERT_EVENTS,
            sessions::WRITE_HEADER,
            sessions::TOUCH,
            leases::RELEASE,
            &select_sql,
        ],
    )
    .await?;
    let now = now_rfc3339();
    let (mut stored, (), (), (), (), run) = futures::try_join!(
        messages::append_at(tx, id, vec![turn.assistant], turn.call.as_ref(), next, &now),
        runs::finish(tx, run_id, turn.status, turn.error.as_ref()),
        runs::insert_events(tx, run_id, &turn.events),
        async {
            if keeps_header {
                sessions::write_header(tx, session).await?;
            } else {
                // The new owner's header stays, but readers must see that the
                // session's rows changed (see `Engine::transcript_window`).
                sessions::touch(tx, id, &now).await?;
            }
            Ok::<_, OpError>(())
        },
        leases::release(tx, id, owner),
        runs::select(tx, run_id),
    )?;
    let assistant = stored
        .pop()
        .ok_or_else(|| HecateError::store("the assistant message was not stored"))?;
    for a in &turn.artifacts {
        messages::insert_artifact(tx, &assistant.id, a).await?;
    }
    // Sequences are gap-free from 0: the answer's is the count less one.
    let message_count = (assistant.sequence + 1) as u64;
    Ok(TurnFinished {
        assistant,
        run,
        message_count,
    })
}
