//! The live side of session streams. One tap task per server follows the engine
//! bus from startup, so it sees every turn from its `TurnStarted` and numbers the
//! runtime events exactly as the engine stores them (run-event sequences start at
//! 1, in publish order). Each session with at least one SSE subscriber has a feed
//! (see `feed`) that renders snapshots once and shares them with every subscriber.

use super::feed::{self, ApprovalFrame, FeedState};
use crate::domain::event::EngineEvent;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::run::{Run, RunEvent};
use crate::domain::time::now_rfc3339;
use crate::engine::Engine;
use crate::engine::bus::Received;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{Notify, broadcast, watch};

/// Compacted logs of terminal runs kept for rendering; past this many runs the
/// cache starts over.
pub const CACHED_RUN_LOGS: usize = 20_000;

/// Approval events buffered per subscriber; a slower one loses the oldest.
pub const APPROVAL_BUFFER: usize = 16;

/// Dirty flag: new runtime events (render within the throttle).
pub const DIRTY_EVENTS: u8 = 1;
/// Dirty flag: stored state changed (reload the transcript, render now).
pub const DIRTY_STORE: u8 = 2;

/// The events of a turn running in this process, as the tap saw them.
#[derive(Debug, Clone)]
pub struct LiveRun {
    /// The run.
    pub run_id: RunId,
    /// Its events so far, numbered like the stored log.
    pub events: Vec<RunEvent>,
    /// False once the tap lagged during this run: sequences are then unknown and
    /// readers fall back to the stored log.
    pub exact: bool,
}

/// A session feed's shared parts, held by the hub and by the feed task.
#[derive(Debug, Clone)]
pub struct FeedHandle {
    /// Latest rendered state (`None` until the first render).
    pub state: watch::Sender<Option<Arc<FeedState>>>,
    /// Discrete approval events.
    pub approvals: broadcast::Sender<ApprovalFrame>,
    /// Wakes the feed task.
    pub wake: Arc<Notify>,
    /// Pending `DIRTY_*` flags.
    pub dirty: Arc<AtomicU8>,
}

impl FeedHandle {
    fn mark(&self, flags: u8) {
        self.dirty.fetch_or(flags, Ordering::SeqCst);
        self.wake.notify_one();
    }
}

/// What a new subscriber gets: the feed's state and its approval events.
#[derive(Debug)]
pub struct FeedSubscription {
    /// Rendered states.
    pub state: watch::Receiver<Option<Arc<FeedState>>>,
    /// Approval events from now on.
    pub approvals: broadcast::Receiver<ApprovalFrame>,
    /// Keeps this subscriber counted until the stream ends.
    pub count: SubscriberCount,
}

/// Counts one open SSE stream for `system/stats` while alive.
#[derive(Debug)]
pub struct SubscriberCount(Arc<AtomicUsize>);

impl Drop for SubscriberCount {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The live-stream hub of one server.
#[derive(Debug, Clone)]
pub struct StreamHub {
    inner: Arc<HubInner>,
}

/// Shared state of the hub.
#[derive(Debug)]
pub struct HubInner {
    /// The engine.
    pub engine: Engine,
    /// The namespace this server serves.
    pub namespace: String,
    live: Mutex<HashMap<SessionId, LiveRun>>,
    feeds: Mutex<HashMap<SessionId, FeedHandle>>,
    subscribers: Arc<AtomicUsize>,
    /// Compacted event logs of terminal runs (they never change once terminal).
    logs: Mutex<HashMap<RunId, Vec<RunEvent>>>,
}

impl StreamHub {
    /// Starts the tap on `engine`'s bus (call before any turn of this server starts).
    pub fn start(engine: Engine, namespace: String) -> Self {
        let bus = engine.bus().subscribe(None);
        let inner = Arc::new(HubInner {
            engine,
            namespace,
            live: Mutex::new(HashMap::new()),
            feeds: Mutex::new(HashMap::new()),
            subscribers: Arc::new(AtomicUsize::new(0)),
            logs: Mutex::new(HashMap::new()),
        });
        tokio::spawn(tap(inner.clone(), bus));
        Self { inner }
    }

    /// Open SSE streams.
    pub fn subscriber_count(&self) -> usize {
        self.inner.subscribers.load(Ordering::SeqCst)
    }

    /// Subscribes to a session's feed, starting the feed when it is the first.
    pub fn subscribe(&self, session_id: &SessionId) -> FeedSubscription {
        self.inner.subscribers.fetch_add(1, Ordering::SeqCst);
        let count = SubscriberCount(self.inner.subscribers.clone());
        let mut feeds = self.inner.feeds();
        let handle = match feeds.get(session_id) {
            Some(h) => h.clone(),
            None => {
                let (state, _) = watch::channel(None);
                let (approvals, _) = broadcast::channel(APPROVAL_BUFFER);
                let handle = FeedHandle {
                    state,
                    approvals,
                    wake: Arc::new(Notify::new()),
                    dirty: Arc::new(AtomicU8::new(DIRTY_STORE)),
                };
                feeds.insert(session_id.clone(), handle.clone());
                tokio::spawn(feed::run(
                    self.inner.clone(),
                    session_id.clone(),
                    handle.clone(),
                ));
                handle
            }
        };
        FeedSubscription {
            state: handle.state.subscribe(),
            approvals: handle.approvals.subscribe(),
            count,
        }
    }

    /// The live events of `run_id` when the tap has them exactly.
    pub fn live_events(&self, session_id: &SessionId, run_id: &RunId) -> Option<Vec<RunEvent>> {
        self.inner.live_events(session_id, run_id)
    }

    /// See [`HubInner::cached_logs`].
    pub fn cached_logs<'a>(
        &self,
        runs: impl IntoIterator<Item = &'a Run>,
    ) -> (HashMap<RunId, Vec<RunEvent>>, Vec<RunId>) {
        self.inner.cached_logs(runs)
    }

    /// See [`HubInner::remember_logs`].
    pub fn remember_logs(&self, runs: &[Run], logs: &HashMap<RunId, Vec<RunEvent>>) {
        self.inner.remember_logs(runs, logs)
    }
}

impl HubInner {
    fn feeds(&self) -> MutexGuard<'_, HashMap<SessionId, FeedHandle>> {
        self.feeds.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn live(&self) -> MutexGuard<'_, HashMap<SessionId, LiveRun>> {
        self.live.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The live events of `run_id` when the tap has them exactly.
    pub fn live_events(&self, session_id: &SessionId, run_id: &RunId) -> Option<Vec<RunEvent>> {
        self.live()
            .get(session_id)
            .filter(|r| &r.run_id == run_id && r.exact)
            .map(|r| r.events.clone())
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

    fn mark(&self, session_id: &SessionId, flags: u8) {
        if let Some(h) = self.feeds().get(session_id) {
            h.mark(flags);
        }
    }

    fn send_approval(&self, session_id: &SessionId, frame: ApprovalFrame) {
        if let Some(h) = self.feeds().get(session_id) {
            let _ = h.approvals.send(frame);
            h.mark(DIRTY_STORE);
        }
    }
}

/// Follows the bus: keeps each running turn's events and wakes the feeds.
async fn tap(hub: Arc<HubInner>, mut bus: crate::engine::bus::Subscription) {
    while let Some(received) = bus.recv().await {
        match received {
            Received::Event(EngineEvent::TurnStarted {
                session_id, run_id, ..
            }) => {
                hub.live().insert(
                    session_id.clone(),
                    LiveRun {
                        run_id,
                        events: Vec::new(),
                        exact: true,
                    },
                );
                hub.mark(&session_id, DIRTY_STORE);
            }
            Received::Event(EngineEvent::Runtime {
                session_id,
                run_id,
                update,
                ..
            }) => {
                {
                    let mut live = hub.live();
                    let run = live.entry(session_id.clone()).or_insert_with(|| LiveRun {
                        run_id: run_id.clone(),
                        events: Vec::new(),
                        exact: false,
                    });
                    if run.run_id != run_id {
                        *run = LiveRun {
                            run_id: run_id.clone(),
                            events: Vec::new(),
                            exact: false,
                        };
                    }
                    if run.exact {
                        let sequence = run.events.len() as i64 + 1;
                        run.events.push(RunEvent {
                            run_id,
                            sequence,
                            event_type: update.kind().to_string(),
                            data: serde_json::to_value(&update).unwrap_or_default(),
                            occurred_at: now_rfc3339(),
                        });
                    }
                }
                hub.mark(&session_id, DIRTY_EVENTS);
            }
            Received::Event(EngineEvent::TurnFinished { session_id, .. }) => {
                hub.live().remove(&session_id);
                hub.mark(&session_id, DIRTY_STORE);
            }
            Received::Event(EngineEvent::ApprovalRequested {
                session_id,
                approval,
                ..
            }) => hub.send_approval(&session_id, ApprovalFrame::requested(&approval)),
            Received::Event(EngineEvent::ApprovalResolved {
                session_id,
                approval,
                ..
            }) => hub.send_approval(&session_id, ApprovalFrame::resolved(&approval)),
            Received::Lagged(n) => {
                tracing::warn!(
                    dropped = n,
                    "HTTP stream tap fell behind; live turns re-read their stored events"
                );
                for run in hub.live().values_mut() {
                    run.exact = false;
                    run.events.clear();
                }
                for h in hub.feeds().values() {
                    h.mark(DIRTY_STORE);
                }
            }
        }
    }
}
