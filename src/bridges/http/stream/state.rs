//! The state a server's session streams share: the engine and namespace, the
//! events of turns running in this process as the tap saw them, the compacted
//! logs of terminal runs, and the feed of each streamed session. The tap (`hub`)
//! writes it, the feed tasks (`feed`) read it; it imports neither.

use super::frames::{ApprovalFrame, DIRTY_STORE, FeedHandle};
use crate::domain::event::RuntimeEvent;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::run::{Run, RunEvent};
use crate::domain::time::format_rfc3339;
use crate::engine::Engine;
use std::collections::HashMap;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex, MutexGuard};

/// Compacted logs of terminal runs kept for rendering; past this many runs the
/// cache starts over.
pub const CACHED_RUN_LOGS: usize = 20_000;

/// The events of a turn running in this process, as the tap saw them.
#[derive(Debug, Clone)]
pub struct LiveRun {
    /// The run.
    pub run_id: RunId,
    /// Its events so far, numbered like the stored log from 1, kept as the
    /// engine sent them: they are rendered only when a reader asks.
    pub events: Vec<LiveEvent>,
    /// False once the tap lagged during this run: sequences are then unknown and
    /// readers fall back to the stored log.
    pub exact: bool,
}

/// One runtime event of a live run, as the tap received it.
#[derive(Debug, Clone)]
pub struct LiveEvent {
    /// What happened.
    pub update: RuntimeEvent,
    /// When the tap received it.
    pub at: time::OffsetDateTime,
}

impl LiveRun {
    /// The run `run_id` as the tap first sees it: no events yet, none missed.
    pub fn new(run_id: RunId) -> Self {
        Self {
            run_id,
            events: Vec::new(),
            exact: true,
        }
    }

    /// Forgets the events kept so far: the tap missed one, so readers fall back
    /// to the stored log for the rest of the run.
    pub fn lose_events(&mut self) {
        self.exact = false;
        self.events.clear();
    }
}

/// Shared state of the hub.
#[derive(Debug)]
pub struct HubInner {
    /// The engine.
    pub engine: Engine,
    /// The namespace this server serves.
    pub namespace: String,
    pub(super) live: Mutex<HashMap<SessionId, LiveRun>>,
    pub(super) feeds: Mutex<HashMap<SessionId, FeedHandle>>,
    pub(super) subscribers: Arc<AtomicUsize>,
    /// Compacted event logs of terminal runs (they never change once terminal).
    pub(super) logs: Mutex<HashMap<RunId, Vec<RunEvent>>>,
}

impl HubInner {
    pub(super) fn feeds(&self) -> MutexGuard<'_, HashMap<SessionId, FeedHandle>> {
        self.feeds.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn live(&self) -> MutexGuard<'_, HashMap<SessionId, LiveRun>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The live events of `run_id` when the tap has them exactly.
    pub fn live_events(&self, session_id: &SessionId, run_id: &RunId) -> Option<Vec<RunEvent>> {
        self.live()
            .get(session_id)
            .filter(|r| &r.run_id == run_id && r.exact)
            .map(|r| {
                r.events
                    .iter()
                    .zip(1..)
                    .map(|(e, sequence)| RunEvent {
                        run_id: run_id.clone(),
                        sequence,
                        event_type: e.update.kind().to_string(),
                        data: serde_json::to_value(&e.update).unwrap_or_default(),
                        occurred_at: format_rfc3339(e.at),
                    })
                    .collect()
            })
    }

    /// The cached render logs of the terminal runs among `runs`, and the terminal
    /// runs that are not cached yet.
    pub fn cached_logs<'a>(
        &self,
        runs: impl IntoIterator<Item = &'a Run>,
    ) -> (HashMap<RunId, Vec<RunEvent>>, Vec<RunId>) {
        let cache = self.logs.lock().unwrap_or_else(|p| p.into_inner());
        let mut found = HashMap::new();
        let mut missing = Vec::new();
        for run in runs.into_iter().filter(|r| r.status.is_terminal()) {
            match cache.get(&run.id) {
                Some(events) => {
                    found.insert(run.id.clone(), events.clone());
                }
                None => missing.push(run.id.clone()),
            }
        }
        (found, missing)
    }

    /// Keeps the render logs in `logs` of the runs that `runs` shows terminal.
    pub fn remember_logs(&self, runs: &[Run], logs: &HashMap<RunId, Vec<RunEvent>>) {
        let mut cache = self.logs.lock().unwrap_or_else(|p| p.into_inner());
        for run in runs.iter().filter(|r| r.status.is_terminal()) {
            if let Some(events) = logs.get(&run.id) {
                if cache.len() >= CACHED_RUN_LOGS {
                    cache.clear();
                }
                cache.insert(run.id.clone(), events.clone());
            }
        }
    }

    /// Drops the cached render log of `run_id` (it gained an event after it ended).
    pub fn forget_log(&self, run_id: &RunId) {
        self.logs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(run_id);
    }

    /// Whether the tap follows a turn of `session_id` in this process.
    pub fn is_live(&self, session_id: &SessionId) -> bool {
        self.live().contains_key(session_id)
    }

    /// Removes the feed of `session_id` if nobody subscribes any more; returns
    /// whether it was removed (the feed task then ends).
    pub fn retire_feed_if_unused(&self, session_id: &SessionId) -> bool {
        let mut feeds = self.feeds();
        match feeds.get(session_id) {
            Some(h) if h.state.receiver_count() == 0 => {
                feeds.remove(session_id);
                true
            }
            Some(_) => false,
            None => true,
        }
    }

    /// Forgets the feed of `session_id` (its session is gone); its subscribers end.
    pub fn remove_feed(&self, session_id: &SessionId) {
        self.feeds().remove(session_id);
    }

    pub(super) fn mark(&self, session_id: &SessionId, flags: u8) {
        if let Some(h) = self.feeds().get(session_id) {
            h.mark(flags);
        }
    }

    pub(super) fn send_approval(&self, session_id: &SessionId, frame: ApprovalFrame) {
        if let Some(h) = self.feeds().get(session_id) {
            let _ = h.approvals.send(frame);
            h.mark(DIRTY_STORE);
        }
    }
}
