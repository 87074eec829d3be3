//! The event bus: fans engine events out to subscribers. Each subscriber has a
//! bounded buffer; a slow one loses old events (and is told how many) instead of
//! ever blocking a turn. Observers instead see every event in place, on the
//! publisher's thread: for bookkeeping that must never lag and is too small to
//! be worth waking a task for each event.

use crate::domain::event::EngineEvent;
use crate::domain::ids::SessionId;
use std::sync::{Arc, RwLock};
use tokio::sync::broadcast;

/// Events buffered per subscriber before the oldest are dropped.
pub const SUBSCRIBER_BUFFER: usize = 1024;

/// Code called with every published event, in order, on the publisher's
/// thread: it must take microseconds and never wait (a short lock is fine).
pub type Observer = Arc<dyn Fn(&EngineEvent) + Send + Sync>;

/// A broadcast bus of engine events.
#[derive(Clone)]
pub struct EventBus {
    tx: broadcast::Sender<EngineEvent>,
    observers: Arc<RwLock<Vec<Observer>>>,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBus")
            .field("subscribers", &self.tx.receiver_count())
            .finish_non_exhaustive()
    }
}

impl Default for EventBus {
    fn default() -> Self {
        Self::new(SUBSCRIBER_BUFFER)
    }
}

impl EventBus {
    /// A bus whose subscribers each buffer `capacity` events.
    pub fn new(capacity: usize) -> Self {
        let (tx, _) = broadcast::channel(capacity);
        Self {
            tx,
            observers: Arc::default(),
        }
    }

    /// Publishes without waiting: the observers see the event first, then it
    /// is queued for every subscriber; having neither is fine.
    pub fn publish(&self, event: EngineEvent) {
        for observe in self
            .observers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
        {
            observe(&event);
        }
        let _ = self.tx.send(event);
    }

    /// Adds an observer of every event published from now on.
    pub fn observe(&self, observer: Observer) {
        self.observers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .push(observer);
    }

    /// Subscribes to events of one session (or all sessions with `None`).
    pub fn subscribe(&self, session: Option<SessionId>) -> Subscription {
        Subscription {
            rx: self.tx.subscribe(),
            session,
        }
    }

    /// Number of live subscribers.
    pub fn subscriber_count(&self) -> usize {
        self.tx.receiver_count()
    }
}

/// What a subscriber receives next.
#[derive(Debug, Clone, PartialEq)]
pub enum Received {
    /// An event.
    Event(EngineEvent),
    /// The subscriber fell behind and `n` events were dropped for it.
    Lagged(u64),
}

/// A subscriber's end of the bus, filtered to one session when asked.
#[derive(Debug)]
pub struct Subscription {
    rx: broadcast::Receiver<EngineEvent>,
    session: Option<SessionId>,
}

impl Subscription {
    /// The next event for this subscriber, or `None` when the bus is gone.
    pub async fn recv(&mut self) -> Option<Received> {
        loop {
            match self.rx.recv().await {
                Ok(ev) => {
                    if self.session.as_ref().is_none_or(|s| ev.session_id() == s) {
                        return Some(Received::Event(ev));
                    }
                }
                Err(broadcast::error::RecvError::Lagged(n)) => return Some(Received::Lagged(n)),
                Err(broadcast::error::RecvError::Closed) => return None,
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::domain::ids::RunId;

    /// A `TurnStarted` event of session `s` (run `r`), for tests of event routing.
    pub(crate) fn started(s: &str) -> EngineEvent {
        EngineEvent::TurnStarted {
            session_id: SessionId::from(s),
            run_id: RunId::from("r"),
        }
    }

    #[tokio::test]
    async fn filters_by_session_and_never_blocks_on_slow_subscribers() {
        let bus = EventBus::new(4);
        let mut only_a = bus.subscribe(Some(SessionId::from("a")));
        let mut slow = bus.subscribe(None);
        bus.publish(started("b"));
        bus.publish(started("a"));
        assert_eq!(only_a.recv().await, Some(Received::Event(started("a"))));
        for _ in 0..10 {
            bus.publish(started("c"));
        }
        assert!(matches!(slow.recv().await, Some(Received::Lagged(_))));
    }

    #[test]
    fn an_observer_sees_every_event_in_order_and_never_lags() {
        let bus = EventBus::new(4);
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let into = seen.clone();
        bus.observe(Arc::new(move |e: &EngineEvent| {
            into.lock()
                .expect("not poisoned")
                .push(e.session_id().to_string());
        }));
        for s in ["a", "b", "c", "d", "e", "f"] {
            bus.publish(started(s));
        }
        assert_eq!(
            *seen.lock().expect("not poisoned"),
            ["a", "b", "c", "d", "e", "f"]
        );
    }
}
