//! The background task that stops supervised agent processes left unused for the
//! runtime's process idle limit.

use crate::runtimes::external::ExternalRuntime;
use std::sync::Arc;
use std::time::Duration;

/// Starts the task that stops agent processes unused for the runtime's
/// process idle limit (when it has one); it ends when the runtime is dropped.
pub(super) fn spawn_agent_reaper(rt: &Arc<ExternalRuntime>) {
    let Some(idle) = rt.process_idle() else {
        return;
    };
    let every = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
    let weak = Arc::downgrade(rt);
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(every).await;
            let Some(rt) = weak.upgrade() else { break };
            rt.reap_idle(idle).await;
        }
    });
}
