//! The workers of one process: each claims the next run from the store's queue
//! under a lease, executes it, and looks again; idle workers wake when this
//! process queues work and poll for work queued by other processes. A run whose
//! worker died is claimed again once its lease expires.

use super::TaskRuntime;
use super::runtime::Inner;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

impl TaskRuntime {
    /// Starts this process's workers; they stop when `shutdown` fires (a run in
    /// progress is stopped and left to be claimed again).
    pub fn start_workers(&self, shutdown: CancellationToken) -> Vec<JoinHandle<()>> {
        (0..self.inner.config.workers.max(1))
            .map(|_| {
                let runtime = self.clone();
                let shutdown = shutdown.clone();
                let counted = Counted::new(self.inner.clone());
                tokio::spawn(async move {
                    let _counted = counted;
                    runtime.work(shutdown).await
                })
            })
            .collect()
    }

    async fn work(self, shutdown: CancellationToken) {
        let lease_ms = self.inner.config.lease.as_millis() as i64;
        let owner = self.inner.owner.clone();
        while !shutdown.is_cancelled() {
            // Armed before looking, so work queued while we look still wakes us.
            let woken = self.inner.wake.notified();
            tokio::pin!(woken);
            woken.as_mut().enable();
            match self.store().claim_task_run(&owner, lease_ms).await {
                Ok(Some(mut claimed)) => {
                    self.publish(std::mem::take(&mut claimed.events));
                    self.execute(claimed, &shutdown).await;
                    continue;
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(error = %e, "claiming a task run failed");
                }
            }
            tokio::select! {
                _ = &mut woken => {}
                _ = tokio::time::sleep(self.inner.config.poll) => {}
                _ = shutdown.cancelled() => {}
            }
        }
    }

    /// How often a worker renews its lease.
    pub(super) fn renew_every(&self) -> Duration {
        (self.inner.config.lease / 3).max(Duration::from_millis(50))
    }
}

/// Counts a worker as running from its start until its task ends or is
/// dropped.
struct Counted(Arc<Inner>);

impl Counted {
    fn new(inner: Arc<Inner>) -> Self {
        inner.workers.fetch_add(1, Ordering::SeqCst);
        Self(inner)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.workers.fetch_sub(1, Ordering::SeqCst);
    }
}
