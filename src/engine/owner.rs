//! Owner identity of this process for session leases, a liveness check for
//! owners on the same host, and the sweep that closes what gone owners left.

use super::Engine;
use super::owner_id::owner_is_dead;
use crate::store::ReconcileReport;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

impl Engine {
    /// Runs reconciliation once per session lease period until `shutdown`: a
    /// turn whose owner died (on any host, once its lease expired) is closed as
    /// `interrupted` with what it streamed, so other replicas' readers and
    /// streams see it end without waiting for the next prompt or restart.
    pub fn start_owner_sweep(&self, shutdown: CancellationToken) -> JoinHandle<()> {
        let engine = self.clone();
        let every = Duration::from_millis(self.config().lease_ttl_ms.max(1000) as u64);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    () = tokio::time::sleep(every) => {}
                }
                match engine.store().reconcile(Arc::new(owner_is_dead)).await {
                    Ok(r) if r != ReconcileReport::default() => tracing::warn!(
                        runs_failed = r.runs_failed,
                        approvals_cancelled = r.approvals_cancelled,
                        answers_kept = r.answers_kept,
                        "closed turns whose owner stopped"
                    ),
                    Ok(_) => {}
                    Err(e) => tracing::warn!(error = %e, "owner sweep failed"),
                }
            }
        })
    }
}
