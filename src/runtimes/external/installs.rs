//! The managed installs this process runs or ran: at most one per adapter at a
//! time, each with the stages it went through and how it ended, kept (the newest
//! per adapter) so a client that started one can follow it by polling.

use crate::adapters::acp::agent::install::InstallStage;
use crate::domain::error::HecateError;
use crate::domain::time::now_rfc3339;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

/// Where an install stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallState {
    /// npm (or a step around it) is still working.
    Running,
    /// The new install is in place.
    Succeeded,
    /// Nothing was put in place; `error` says why.
    Failed,
}

/// One stage an install reached, with when.
#[derive(Debug, Clone, Serialize)]
pub struct StageMark {
    /// The stage.
    pub stage: InstallStage,
    /// When it started (RFC 3339).
    pub at: String,
    /// Milliseconds since the install started.
    pub elapsed_ms: u64,
}

/// One install of an adapter's managed package.
#[derive(Debug, Clone)]
pub struct InstallJob {
    /// `inst_…`, unique in this process.
    pub id: String,
    /// The adapter installed.
    pub adapter_id: String,
    /// Running, succeeded or failed.
    pub state: InstallState,
    /// The stages reached so far, in order (the last is the current one).
    pub stages: Vec<StageMark>,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it ended (RFC 3339).
    pub finished_at: Option<String>,
    /// Why it failed, with the fix.
    pub error: Option<HecateError>,
}

/// The install table of one runtime.
#[derive(Debug, Default)]
pub struct InstallJobs {
    jobs: Mutex<HashMap<String, InstallJob>>,
}

impl InstallJobs {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, InstallJob>> {
        self.jobs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The newest install of `adapter_id`, running or ended.
    pub fn get(&self, adapter_id: &str) -> Option<InstallJob> {
        self.lock().get(adapter_id).cloned()
    }

    /// Registers a new running install of `adapter_id`; the running one when
    /// there is one already.
    pub fn begin(self: &Arc<Self>, adapter_id: &str) -> Result<InstallTicket, Box<InstallJob>> {
        let mut jobs = self.lock();
        if let Some(job) = jobs.get(adapter_id)
            && job.state == InstallState::Running
        {
            return Err(Box::new(job.clone()));
        }
        let id = format!("inst_{}", uuid::Uuid::now_v7().simple());
        jobs.insert(
            adapter_id.to_string(),
            InstallJob {
                id: id.clone(),
                adapter_id: adapter_id.to_string(),
                state: InstallState::Running,
                stages: Vec::new(),
                started_at: now_rfc3339(),
                finished_at: None,
                error: None,
            },
        );
        Ok(InstallTicket {
            jobs: self.clone(),
            adapter_id: adapter_id.to_string(),
            id,
            started: Instant::now(),
            finished: false,
        })
    }
}

/// The hold of one running install on its row: it records the stages and the
/// end; dropped before [`InstallTicket::finish`] (the install's future was
/// dropped), the row ends as failed.
#[derive(Debug)]
pub struct InstallTicket {
    jobs: Arc<InstallJobs>,
    adapter_id: String,
    id: String,
    started: Instant,
    finished: bool,
}

impl InstallTicket {
    /// The adapter being installed.
    pub fn adapter_id(&self) -> &str {
        &self.adapter_id
    }

    /// The job's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    fn update(&self, f: impl FnOnce(&mut InstallJob)) {
        let mut jobs = self.jobs.lock();
        if let Some(job) = jobs.get_mut(&self.adapter_id)
            && job.id == self.id
        {
            f(job);
        }
    }

    /// Records that the install reached `stage`.
    pub fn stage(&self, stage: InstallStage) {
        let elapsed_ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.update(|job| {
            job.stages.push(StageMark {
                stage,
                at: now_rfc3339(),
                elapsed_ms,
            })
        });
    }

    /// Records how the install ended.
    pub fn finish(mut self, outcome: Result<(), &HecateError>) {
        self.finished = true;
        self.update(|job| {
            job.finished_at = Some(now_rfc3339());
            match outcome {
                Ok(()) => job.state = InstallState::Succeeded,
                Err(e) => {
                    job.state = InstallState::Failed;
                    job.error = Some(e.clone());
                }
            }
        });
    }
}

impl Drop for InstallTicket {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        let error = HecateError::new(
            crate::domain::error::ErrorType::GatewayError,
            format!(
                "{}: the install stopped before it finished",
                self.adapter_id
            ),
        )
        .with_operator_action("Start the install again; nothing was put in place.");
        self.update(|job| {
            job.state = InstallState::Failed;
            job.finished_at = Some(now_rfc3339());
            job.error = Some(error);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_install_per_adapter_at_a_time_and_a_dropped_one_fails() {
        let jobs = Arc::new(InstallJobs::default());
        let first = jobs.begin("a").expect("first");
        first.stage(InstallStage::Resolving);
        let running = jobs.begin("a").expect_err("second refused");
        assert_eq!(running.id, first.id());
        assert!(jobs.begin("b").is_ok(), "another adapter may install");
        first.finish(Ok(()));
        let done = jobs.get("a").expect("kept");
        assert_eq!(done.state, InstallState::Succeeded);
        assert_eq!(done.stages.len(), 1);

        let again = jobs.begin("a").expect("after the end");
        drop(again);
        let dropped = jobs.get("a").expect("kept");
        assert_eq!(dropped.state, InstallState::Failed);
        assert!(dropped.error.is_some());
    }
}
