//! Read-only engine queries the bridges need beyond the session lifecycle: a
//! session's run-event logs, whether a turn runs here, and waiting for one to settle.

use super::Engine;
use crate::domain::error::Result;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::run::RunEvent;
use std::collections::HashMap;
use std::time::Duration;

/// How often `wait_turn_settled` re-checks the busy marker between bus events.
const SETTLE_POLL: Duration = Duration::from_millis(20);

impl Engine {
    /// The stored event logs of the given runs of a session, keyed by run id. Runs
    /// that belong to another session are left out; the session must be visible
    /// in `namespace`.
    pub async fn run_events_of(
        &self,
        namespace: &str,
        session_id: &SessionId,
        run_ids: Vec<RunId>,
    ) -> Result<HashMap<RunId, Vec<RunEvent>>> {
        let (ns, sid) = (namespace.to_string(), session_id.clone());
        self.blocking(move |s| {
            s.get_session(&ns, &sid)?;
            let mut out = HashMap::with_capacity(run_ids.len());
            for run_id in run_ids {
                match s.get_run(&run_id) {
                    Ok(run) if run.session_id == sid => {
                        let events = s.list_run_events(&run_id, None)?;
                        out.insert(run_id, events);
                    }
                    Ok(_) => {}
                    Err(e) if e.error_type == crate::domain::ErrorType::NotFound => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(out)
        })
        .await
    }

    /// Whether this process is running a turn of `session_id` right now.
    pub fn is_turn_running(&self, session_id: &SessionId) -> bool {
        self.active().contains_key(session_id)
    }

    /// Waits until this process runs no turn of `session_id`, at most `timeout`;
    /// returns whether it settled.
    pub async fn wait_turn_settled(&self, session_id: &SessionId, timeout: Duration) -> bool {
        let mut events = self.bus().subscribe(Some(session_id.clone()));
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if !self.is_turn_running(session_id) {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            if let Ok(None) = tokio::time::timeout(SETTLE_POLL, events.recv()).await {
                tokio::time::sleep(SETTLE_POLL).await;
            }
        }
    }

    /// Number of approvals waiting for a decision in `namespace`.
    pub async fn pending_approval_count(&self, namespace: &str) -> Result<usize> {
        self.list_approvals(
            namespace,
            None,
            Some(crate::domain::approval::ApprovalStatus::Pending),
        )
        .await
        .map(|v| v.len())
    }
}
