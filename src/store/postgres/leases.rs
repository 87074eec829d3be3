//! Owner leases on sessions and reconciliation of what dead owners left. The
//! lease is taken by one conditional `UPDATE` of the session's row, which
//! PostgreSQL serialises per row, so two replicas never both hold it.

use super::cached::CachedStatements;
use super::{OpResult, PostgresStore, partial};
use crate::domain::approval::HUB_RESTARTED_PATH;
use crate::domain::error::Result;
use crate::domain::ids::SessionId;
use crate::domain::run::INTERRUPTED_REASON;
use crate::domain::time::{now_millis, now_rfc3339};
use crate::store::contract::owner_gone;
use crate::store::{LeaseStore, OwnerIsDead, ReconcileReport};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;

/// Takes or renews a session's lease (`$2` the owner, `$3` the new expiry, `$4`
/// now); it also locks the session's row until the transaction ends.
pub(super) const TAKE: &str = "UPDATE sessions SET owner_id = $2, lease_expires_ms = $3 \
     WHERE id = $1 AND (owner_id IS NULL OR owner_id = $2 OR lease_expires_ms IS NULL \
     OR lease_expires_ms < $4)";
/// Releases a session's lease held by `$2`.
pub(super) const RELEASE: &str =
    "UPDATE sessions SET owner_id = NULL, lease_expires_ms = NULL WHERE id = $1 AND owner_id = $2";
/// Whether a session has a run still open.
pub(super) const OPEN_RUNS: &str = "SELECT EXISTS (SELECT 1 FROM runs WHERE session_id = $1 \
     AND status IN ('running','awaiting_approval'))";

/// Takes or renews the lease of `owner` until `now + ttl_ms` by the one `UPDATE`
/// (which then also locks the session's row); `false` when it matched nothing.
pub(super) async fn try_take<C: GenericClient>(
    c: &C,
    session_id: &SessionId,
    owner: &str,
    ttl_ms: i64,
) -> OpResult<bool> {
    let now = now_millis();
    let n = c
        .execute_cached(TAKE, &[&session_id.as_str(), &owner, &(now + ttl_ms), &now])
        .await?;
    Ok(n > 0)
}

/// Takes or renews the lease of `owner` until `now + ttl_ms`, inside the caller's
/// transaction; `Some(holder)` names another live owner (then nothing changed).
pub(super) async fn take<C: GenericClient>(
    c: &C,
    session_id: &SessionId,
    owner: &str,
    ttl_ms: i64,
) -> OpResult<Option<String>> {
    if try_take(c, session_id, owner, ttl_ms).await? {
        return Ok(None);
    }
    let row = c
        .query_opt(
            "SELECT owner_id FROM sessions WHERE id = $1",
            &[&session_id.as_str()],
        )
        .await?;
    Ok(match row {
        Some(r) => r.try_get::<_, Option<String>>(0)?,
        None => None,
    })
}

/// Releases the lease if `owner` holds it.
pub(super) async fn release<C: GenericClient>(
    c: &C,
    session_id: &SessionId,
    owner: &str,
) -> OpResult<()> {
    c.execute_cached(RELEASE, &[&session_id.as_str(), &owner])
        .await?;
    Ok(())
}

/// Closes what a turn whose owner is gone left open in `session_id`, inside the
/// caller's transaction: each open run ends `failed` / `interrupted` with the
/// answer it had streamed kept as a failed message, its pending approvals are
/// cancelled, and running messages are marked failed. Counts go to `report`.
/// Called by reconciliation, and by `begin_turn` once it holds the lease (a
/// run still open then was left by an owner whose lease expired).
pub(super) async fn close_interrupted<C: GenericClient>(
    tx: &C,
    session_id: &SessionId,
    report: &mut ReconcileReport,
) -> OpResult<()> {
    let id = session_id.as_str();
    let open_runs = tx
        .query(
            "SELECT id FROM runs WHERE session_id = $1 \
             AND status IN ('running','awaiting_approval') ORDER BY started_ms, seq",
            &[&id],
        )
        .await?;
    let now = now_millis();
    let now_text = now_rfc3339();
    for run in &open_runs {
        let run_id: String = run.try_get(0)?;
        if partial::keep_partial_answer(tx, session_id, &run_id).await? {
            report.answers_kept += 1;
        }
    }
    report.runs_failed += tx
        .execute(
            "UPDATE runs SET status = 'failed', error_type = $2, \
             error_message = 'the process driving this turn stopped before it finished', \
             completed_at = $3, duration_ms = GREATEST(0, $4 - started_ms) \
             WHERE session_id = $1 AND status IN ('running','awaiting_approval')",
            &[&id, &INTERRUPTED_REASON, &now_text, &now],
        )
        .await? as usize;
    // Nobody timed out: the process that asked is gone.
    report.approvals_cancelled += tx
        .execute(
            "UPDATE approvals SET status = 'cancelled', path = $2, resolved_at = $3 \
             WHERE session_id = $1 AND status = 'pending'",
            &[&id, &HUB_RESTARTED_PATH, &now_text],
        )
        .await? as usize;
    tx.execute(
        "UPDATE messages SET status = 'failed' WHERE session_id = $1 AND status = 'running'",
        &[&id],
    )
    .await?;
    Ok(())
}

/// Whether session `session_id` has a run still open (running or awaiting an
/// approval), inside the caller's transaction.
pub(super) async fn has_open_runs<C: GenericClient>(
    tx: &C,
    session_id: &SessionId,
) -> OpResult<bool> {
    Ok(tx
        .query_one_cached(OPEN_RUNS, &[&session_id.as_str()])
        .await?
        .try_get(0)?)
}

#[async_trait]
impl LeaseStore for PostgresStore {
    async fn acquire_lease(
        &self,
        session_id: &SessionId,
        owner: &str,
        ttl_ms: i64,
    ) -> Result<Option<String>> {
        let c = self.client().await?;
        let r = take(&c, session_id, owner, ttl_ms).await;
        self.done(r)
    }

    async fn release_lease(&self, session_id: &SessionId, owner: &str) -> Result<()> {
        let c = self.client().await?;
        let r = release(&c, session_id, owner).await;
        self.done(r)
    }

    async fn reconcile(&self, is_dead: OwnerIsDead) -> Result<ReconcileReport> {
        let mut c = self.client().await?;
        let r = async {
            let tx = c.transaction().await?;
            let now = now_millis();
            let now_text = now_rfc3339();
            // Sessions whose owner is gone: no lease, an expired lease, or a dead
            // owner. Rows another transaction holds are left to the next pass.
            let rows = tx
                .query(
                    "SELECT s.id, s.owner_id, s.lease_expires_ms FROM sessions s \
                     WHERE s.id IN (SELECT session_id FROM runs \
                                    WHERE status IN ('running','awaiting_approval')) \
                        OR s.id IN (SELECT session_id FROM approvals WHERE status = 'pending') \
                     FOR UPDATE SKIP LOCKED",
                    &[],
                )
                .await?;
            let mut stale: Vec<String> = Vec::new();
            for row in &rows {
                if owner_gone(row.try_get(1)?, row.try_get(2)?, now, &is_dead) {
                    stale.push(row.try_get(0)?);
                }
            }
            let mut report = ReconcileReport::default();
            for id in &stale {
                close_interrupted(&tx, &SessionId(id.clone()), &mut report).await?;
                tx.execute(
                    "UPDATE sessions SET status = 'failed', owner_id = NULL, \
                     lease_expires_ms = NULL, updated_at = $2 \
                     WHERE id = $1 AND status IN ('running','awaiting_approval')",
                    &[id, &now_text],
                )
                .await?;
            }
            tx.commit().await?;
            Ok(report)
        }
        .await;
        self.done(r)
    }
}
