//! Owner leases on sessions and startup reconciliation of what dead owners left.

use super::{OpResult, SqliteStore, partial};
use crate::domain::approval::HUB_RESTARTED_PATH;
use crate::domain::error::Result;
use crate::domain::ids::SessionId;
use crate::domain::run::INTERRUPTED_REASON;
use crate::domain::time::{now_millis, now_rfc3339};
use crate::store::contract::owner_gone;
use crate::store::{LeaseStore, OwnerIsDead, ReconcileReport};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

/// Takes or renews the lease of `owner` until `now + ttl_ms`, inside the caller's
/// transaction; `Some(holder)` names another live owner (then nothing changed).
pub(super) fn take(
    c: &Connection,
    session_id: &SessionId,
    owner: &str,
    ttl_ms: i64,
) -> OpResult<Option<String>> {
    let now = now_millis();
    let n = c
        .prepare_cached(
            "UPDATE sessions SET owner_id = ?2, lease_expires_ms = ?3 WHERE id = ?1 AND \
         (owner_id IS NULL OR owner_id = ?2 OR lease_expires_ms IS NULL OR lease_expires_ms < ?4)",
        )?
        .execute(params![session_id.as_str(), owner, now + ttl_ms, now])?;
    if n > 0 {
        return Ok(None);
    }
    Ok(
        c.prepare_cached("SELECT owner_id FROM sessions WHERE id = ?1")?
            .query_row(params![session_id.as_str()], |r| {
                r.get::<_, Option<String>>(0)
            })
            .optional()?
            .flatten(),
    )
}

/// Releases the lease if `owner` holds it.
pub(super) fn release(c: &Connection, session_id: &SessionId, owner: &str) -> OpResult<()> {
    c.prepare_cached(
        "UPDATE sessions SET owner_id = NULL, lease_expires_ms = NULL \
         WHERE id = ?1 AND owner_id = ?2",
    )?
    .execute(params![session_id.as_str(), owner])?;
    Ok(())
}

/// Whether session `session_id` has a run still open (running or awaiting an
/// approval), inside the caller's transaction.
pub(super) fn has_open_runs(c: &Connection, session_id: &SessionId) -> OpResult<bool> {
    Ok(c.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM runs WHERE session_id = ?1 \
         AND status IN ('running','awaiting_approval'))",
    )?
    .query_row(params![session_id.as_str()], |r| r.get(0))?)
}

/// Closes what a turn whose owner is gone left open in `session_id`, inside the
/// caller's transaction: each open run ends `failed` / `interrupted` with the
/// answer it had streamed kept as a failed message, its pending approvals are
/// cancelled, and running messages are marked failed. Counts go to `report`.
/// Called by reconciliation, and by `begin_turn` once it holds the lease (a
/// run still open then was left by an owner whose lease expired).
pub(super) fn close_interrupted(
    tx: &Connection,
    session_id: &SessionId,
    report: &mut ReconcileReport,
) -> OpResult<()> {
    let id = session_id.as_str();
    let now = now_millis();
    let now_text = now_rfc3339();
    let open_runs: Vec<String> = tx
        .prepare(
            "SELECT id FROM runs WHERE session_id = ?1 \
             AND status IN ('running','awaiting_approval')",
        )?
        .query_map(params![id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for run_id in &open_runs {
        if partial::keep_partial_answer(tx, session_id, run_id)? {
            report.answers_kept += 1;
        }
    }
    report.runs_failed += tx
        .prepare_cached(
            "UPDATE runs SET status = 'failed', error_type = ?2, \
         error_message = 'the process driving this turn stopped before it finished', \
         completed_at = ?3, duration_ms = MAX(0, ?4 - started_ms) \
         WHERE session_id = ?1 AND status IN ('running','awaiting_approval')",
        )?
        .execute(params![id, INTERRUPTED_REASON, now_text, now])?;
    // Nobody timed out: the process that asked is gone.
    report.approvals_cancelled += tx
        .prepare_cached(
            "UPDATE approvals SET status = 'cancelled', path = ?2, resolved_at = ?3 \
         WHERE session_id = ?1 AND status = 'pending'",
        )?
        .execute(params![id, HUB_RESTARTED_PATH, now_text])?;
    tx.prepare_cached(
        "UPDATE messages SET status = 'failed' WHERE session_id = ?1 AND status = 'running'",
    )?
    .execute(params![id])?;
    Ok(())
}

#[async_trait]
impl LeaseStore for SqliteStore {
    async fn acquire_lease(
        &self,
        session_id: &SessionId,
        owner: &str,
        ttl_ms: i64,
    ) -> Result<Option<String>> {
        let (session_id, owner) = (session_id.clone(), owner.to_owned());
        self.write(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let holder = take(&tx, &session_id, &owner, ttl_ms)?;
            tx.commit()?;
            Ok(holder)
        })
        .await
    }

    async fn release_lease(&self, session_id: &SessionId, owner: &str) -> Result<()> {
        let (session_id, owner) = (session_id.clone(), owner.to_owned());
        self.write(move |c| release(c, &session_id, &owner)).await
    }

    async fn reconcile(&self, is_dead: OwnerIsDead) -> Result<ReconcileReport> {
        self.write(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let now = now_millis();
            let now_text = now_rfc3339();
            // Sessions whose owner is gone: no lease, an expired lease, or a dead owner.
            let mut stale: Vec<String> = Vec::new();
            {
                let mut stmt = tx.prepare(
                    "SELECT DISTINCT s.id, s.owner_id, s.lease_expires_ms FROM sessions s \
                     WHERE s.id IN (SELECT session_id FROM runs WHERE status IN ('running','awaiting_approval')) \
                        OR s.id IN (SELECT session_id FROM approvals WHERE status = 'pending')",
                )?;
                let rows = stmt.query_map([], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, Option<String>>(1)?,
                        r.get::<_, Option<i64>>(2)?,
                    ))
                })?;
                for row in rows {
                    let (id, owner, expires) = row?;
                    if owner_gone(owner, expires, now, &is_dead) {
                        stale.push(id);
                    }
                }
            }
            let mut report = ReconcileReport::default();
            for id in &stale {
                close_interrupted(&tx, &SessionId(id.clone()), &mut report)?;
                tx.prepare_cached("UPDATE sessions SET status = 'failed', owner_id = NULL, lease_expires_ms = NULL, \
                     updated_at = ?2 WHERE id = ?1 AND status IN ('running','awaiting_approval')")?.execute(
                    params![id, now_text],
                )?;
            }
            tx.commit()?;
            Ok(report)
        })
        .await
    }
}
