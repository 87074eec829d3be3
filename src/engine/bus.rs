//! The event bus: fans engine events out to subscribers. Each subscriber has a
//! bounded buffer; a slow one loses old events (and is told how many) instead of
//! ever blocking a turn.

use crate::domain::event::EngineEvent;
use crate::domain::ids::SessionId;
use tokio::sync::broadcast;

/// Events buffered per subscriber before the oldest are dropped.
pub const SUBSCRIBER_BUFFER: usize = 1024;

/// A broadcast bus of engine events.
#[derive(Debug, Clone)]
pub struct EventBus {
    tx: broadcast::Sender<EngineEvent>,
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
        Self { tx }
    }

    /// Publishes without waiting; having no subscriber is fine.
    pub fn publish(&self, event: EngineEvent) {
        let _ = self.tx.send(event);
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
}
