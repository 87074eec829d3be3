//! Each turn's own path to whoever started it. The bus fans events out to
//! observers and lets a slow one lag; the caller of `send_message` instead gets a
//! bounded channel of its turn's events: when it reads slowly, the turn waits
//! (backpressure) and nothing is dropped, however busy other sessions are.

use super::bus::Received;
use crate::domain::event::EngineEvent;
use crate::domain::ids::SessionId;
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

/// The open turn channels of this process, by session (one turn per session).
#[derive(Debug, Default)]
pub(crate) struct TurnTaps {
    taps: Mutex<HashMap<SessionId, mpsc::Sender<EngineEvent>>>,
}

impl TurnTaps {
    fn taps(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, mpsc::Sender<EngineEvent>>> {
        self.taps.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Opens the channel of a turn of `session_id` (replacing a stale one).
    pub(crate) fn open(&self, session_id: &SessionId) -> TurnEvents {
        let (tx, rx) = mpsc::channel(TURN_EVENT_BUFFER);
        self.taps().insert(session_id.clone(), tx);
        TurnEvents { rx }
    }

    /// Closes the turn channel of `session_id`; its reader drains what is queued.
    pub(crate) fn close(&self, session_id: &SessionId) {
        self.taps().remove(session_id);
    }

    /// The sender of `session_id`'s running turn, if one is open and read.
    pub(crate) fn sender(&self, session_id: &SessionId) -> Option<mpsc::Sender<EngineEvent>> {
        self.taps()
            .get(session_id)
            .filter(|tx| !tx.is_closed())
            .cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::RunId;

    fn started(s: &str) -> EngineEvent {
        EngineEvent::TurnStarted {
            session_id: SessionId::from(s),
            run_id: RunId::from("r"),
        }
    }

    #[tokio::test]
    async fn a_full_turn_channel_waits_instead_of_dropping() {
        let taps = TurnTaps::default();
        let sid = SessionId::from("a");
        let mut events = taps.open(&sid);
        let tx = taps.sender(&sid).expect("open");
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
        taps.close(&sid);
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
        let mut events = taps.open(&sid);
        events.close();
        assert!(taps.sender(&sid).is_none());
    }
}
