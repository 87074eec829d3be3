//! Owner identity of this process for session leases, a liveness check for
//! owners on the same host, and the sweep that closes what gone owners left.

use super::Engine;
use crate::store::ReconcileReport;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// An owner id `host:pid:nonce` for this process.
pub fn new_owner_id() -> String {
    let nonce = uuid::Uuid::new_v4().simple().to_string();
    format!("{}:{}:{}", hostname(), std::process::id(), &nonce[..8])
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string())
}

/// Whether `owner` is known to be dead: it ran on this host and its process no longer
/// exists. Owners on other hosts are never declared dead here (their lease expires).
pub fn owner_is_dead(owner: &str) -> bool {
    let mut parts = owner.rsplitn(3, ':');
    let (_nonce, pid, host) = (parts.next(), parts.next(), parts.next());
    let (Some(pid), Some(host)) = (pid.and_then(|p| p.parse::<u32>().ok()), host) else {
        return false;
    };
    if host != hostname() || !std::path::Path::new("/proc/self").exists() {
        return false;
    }
    pid != std::process::id() && !crate::adapters::process::pid_is_running(pid)
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_vanished_pid_is_dead() {
        let me = new_owner_id();
        assert!(!owner_is_dead(&me));
        let ghost = format!("{}:{}:deadbeef", hostname(), u32::MAX - 7);
        assert!(owner_is_dead(&ghost));
        assert!(!owner_is_dead("other-host:1:abc"));
        assert!(!owner_is_dead("garbage"));
    }
}
