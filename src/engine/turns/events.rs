//! Each turn's own path to whoever started it. The bus fans events out to
//! observers and lets a slow one lag; the caller of `send_message` instead gets a
//! bounded channel of its turn's events: when it reads slowly, the turn waits
//! (backpressure) and nothing is dropped, however busy other sessions are.

use crate::domain::event::EngineEvent;
use crate::domain::ids::{RunId, SessionId};
use crate::engine::bus::Received;
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::mpsc;

/// Events a turn may get ahead of its reader before it waits.
pub const TURN_EVENT_BUFFER: usize = 256;

/// The receiving end of one turn's events, from `TurnStarted` to `TurnFinished`.
#[derive(Debug)]
pub struct TurnEvents {
    rx: mpsc::Receiver<EngineEvent>,
}

impl TurnEvents {
    /// The next event of this turn; `None` once the turn has finished and every
    /// event was read. Never [`Received::Lagged`]: this path does not drop.
    pub async fn recv(&mut self) -> Option<Received> {
        self.rx.recv().await.map(Received::Event)
    }

    /// Stops reading: the turn no longer waits for this receiver.
    pub fn close(&mut self) {
        self.rx.close();
    }
}

/// The open turn channels of this process, by session (one turn per session),
/// each tagged with its run so a turn that is ending never closes or feeds the
/// channel of the next turn of the same session.
#[derive(Debug, Default)]
pub(crate) struct TurnTaps {
    taps: Mutex<HashMap<SessionId, (RunId, mpsc::Sender<EngineEvent>)>>,
}

impl TurnTaps {
    fn taps(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<SessionId, (RunId, mpsc::Sender<EngineEvent>)>> {
        self.taps.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the channel of run `run_id` of `session_id` (replacing a stale one).
    pub(crate) fn open(&self, session_id: &SessionId, run_id: &RunId) -> TurnEvents {
        let (tx, rx) = mpsc::channel(TURN_EVENT_BUFFER);
        self.taps().insert(session_id.clone(), (run_id.clone(), tx));
        TurnEvents { rx }
    }

    /// Closes the channel of run `run_id` of `session_id` (not a newer turn's);
    /// its reader drains what is queued.
    pub(crate) fn close(&self, session_id: &SessionId, run_id: &RunId) {
        let mut taps = self.taps();
        if taps.get(session_id).is_some_and(|(run, _)| run == run_id) {
            taps.remove(session_id);
        }
    }

    /// The open, read channel `event` belongs to: its session's running turn,
    /// unless the event names another run.
    pub(crate) fn sender(&self, event: &EngineEvent) -> Option<mpsc::Sender<EngineEvent>> {
        self.taps()
            .get(event.session_id())
            .filter(|(run, tx)| !tx.is_closed() && event.run_id().is_none_or(|r| r == run))
            .map(|(_, tx)| tx.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::bus::tests::started;

    #[tokio::test]
    async fn a_full_turn_channel_waits_instead_of_dropping() {
        let taps = TurnTaps::default();
        let sid = SessionId::from("a");
        let mut events = taps.open(&sid, &RunId::from("r"));
        let tx = taps.sender(&started("a")).expect("open");
        for _ in 0..TURN_EVENT_BUFFER {
            tx.try_send(started("a")).expect("room");
        }
        assert!(tx.try_send(started("a")).is_err(), "bounded");
        let waiting = tokio::spawn(async move { tx.send(started("a")).await.is_ok() });
        assert!(matches!(events.recv().await, Some(Received::Event(_))));
        assert!(
            waiting.await.expect("task"),
            "the waiting send went through"
        );
        taps.close(&sid, &RunId::from("r"));
        let mut n = 0;
        while events.recv().await.is_some() {
            n += 1;
        }
        assert_eq!(
            n, TURN_EVENT_BUFFER,
            "every queued event is read after close"
        );
    }

    #[tokio::test]
    async fn a_closed_reader_never_holds_the_turn() {
        let taps = TurnTaps::default();
        let sid = SessionId::from("a");
        let mut events = taps.open(&sid, &RunId::from("r"));
        events.close();
        assert!(taps.sender(&started("a")).is_none());
    }

    /// A turn that is ending (its busy marker already gone) neither closes nor
    /// feeds the channel of the next turn of the same session.
    #[tokio::test]
    async fn an_ending_turn_leaves_the_next_turns_channel_alone() {
        let taps = TurnTaps::default();
        let sid = SessionId::from("a");
        let _old = taps.open(&sid, &RunId::from("r"));
        let mut new = taps.open(&sid, &RunId::from("r2"));
        assert!(taps.sender(&started("a")).is_none(), "the old run's event");
        taps.close(&sid, &RunId::from("r"));
        let next = EngineEvent::TurnStarted {
            session_id: sid.clone(),
            run_id: RunId::from("r2"),
        };
        taps.sender(&next)
            .expect("still open")
            .try_send(next.clone())
            .expect("room");
        assert!(matches!(new.recv().await, Some(Received::Event(e)) if e == next));
    }
}
