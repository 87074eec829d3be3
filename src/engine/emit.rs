//! How the engine tells the world: every event goes to the bus for observers
//! (HTTP streams, MCP watchers), and an event of a session with a running turn
//! also goes to that turn's own bounded channel (see `turns::events`).

use super::Engine;
use crate::domain::event::EngineEvent;

impl Engine {
    /// Publishes `event`, waiting while its turn's reader is a full buffer behind.
    /// Only the turn's own side (its task, its runtime, its approval asker) calls
    /// this, so the wait slows that turn alone.
    pub(crate) async fn emit(&self, event: EngineEvent) {
        let tap = self.inner.turn_taps.sender(&event);
        self.inner.bus.publish(event.clone());
        if let Some(tx) = tap {
            // A reader that went away is fine: the turn goes on.
            let _ = tx.send(event).await;
        }
    }

    /// Publishes `event` without waiting: for callers that may be the turn's own
    /// reader (resolving an approval from the prompt loop), which must never wait
    /// on their own channel. The turn still gets the event, queued in order
    /// behind what it already holds.
    pub(crate) fn emit_detached(&self, event: EngineEvent) {
        let tap = self.inner.turn_taps.sender(&event);
        self.inner.bus.publish(event.clone());
        if let Some(tx) = tap {
            match tx.try_send(event) {
                Ok(()) => {}
                Err(tokio::sync::mpsc::error::TrySendError::Full(event)) => {
                    if tokio::runtime::Handle::try_current().is_ok() {
                        tokio::spawn(async move {
                            let _ = tx.send(event).await;
                        });
                    }
                }
                Err(tokio::sync::mpsc::error::TrySendError::Closed(_)) => {}
            }
        }
    }
}
