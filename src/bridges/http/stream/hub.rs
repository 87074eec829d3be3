//! The live side of session streams. One tap task per server follows the engine
//! bus from startup and keeps each running turn's runtime events under the
//! sequences the engine gave them (the ones they are stored under), as long as it
//! has every event from the first. Each session with at least one SSE subscriber
//! has a feed (see `feed`) that renders snapshots once and shares them with every
//! subscriber.

use super::feed;
use super::frames::{ApprovalFrame, DIRTY_EVENTS, DIRTY_STORE, FeedHandle, FeedState};
use super::state::{HubInner, LiveEvent, LiveRun};
use crate::domain::event::EngineEvent;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::run::{Run, RunEvent};
use crate::engine::Engine;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, broadcast, watch};

/// Approval events buffered per subscriber; a slower one loses the oldest.
pub const APPROVAL_BUFFER: usize = 16;

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

impl StreamHub {
    /// Starts the tap on `engine`'s bus (call before any turn of this server
    /// starts). The tap is a bus observer: it runs in place as each event is
    /// published, so it never lags and no task is woken per event.
    pub fn start(engine: Engine, namespace: String) -> Self {
        let bus = engine.bus().clone();
        let inner = Arc::new(HubInner {
            engine,
            namespace,
            live: Mutex::new(HashMap::new()),
            feeds: Mutex::new(HashMap::new()),
            subscribers: Arc::new(AtomicUsize::new(0)),
            logs: Mutex::new(HashMap::new()),
        });
        // Weak: the engine's bus must not keep the hub (and so the engine) alive.
        let hub = Arc::downgrade(&inner);
        bus.observe(Arc::new(move |event: &EngineEvent| {
            if let Some(hub) = hub.upgrade() {
                tap(&hub, event);
            }
        }));
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

/// Follows the bus: keeps each running turn's events and wakes the feeds.
fn tap(hub: &HubInner, event: &EngineEvent) {
    match event {
        EngineEvent::TurnStarted {
            session_id, run_id, ..
        } => {
            hub.live()
                .insert(session_id.clone(), LiveRun::new(run_id.clone()));
            hub.mark(session_id, DIRTY_STORE);
        }
        EngineEvent::Runtime {
            session_id,
            run_id,
            sequence,
            update,
        } => {
            {
                let mut live = hub.live();
                let run = live
                    .entry(session_id.clone())
                    .or_insert_with(|| LiveRun::new(run_id.clone()));
                if &run.run_id != run_id {
                    *run = LiveRun::new(run_id.clone());
                }
                // The engine numbers the events; the tap keeps them only while
                // it has every one from the first (a turn that started before
                // the tap leaves a gap).
                if run.exact && *sequence == run.events.len() as i64 + 1 {
                    run.events.push(LiveEvent {
                        update: update.clone(),
                        at: time::OffsetDateTime::now_utc(),
                    });
                } else {
                    run.lose_events();
                }
            }
            hub.mark(session_id, DIRTY_EVENTS);
        }
        EngineEvent::TurnFinished { session_id, .. } => {
            hub.live().remove(session_id);
            hub.mark(session_id, DIRTY_STORE);
        }
        EngineEvent::FilesReverted {
            session_id, run_id, ..
        } => {
            // The finished run gained an event: its cached log is stale.
            hub.forget_log(run_id);
            hub.mark(session_id, DIRTY_STORE);
        }
        event => {
            if let Some(frame) = ApprovalFrame::of_event(event) {
                hub.send_approval(event.session_id(), frame);
            }
        }
    }
}
