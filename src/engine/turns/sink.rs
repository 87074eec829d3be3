//! The event sink of a running turn: numbers its runtime events, publishes them,
//! keeps the partial answer, and stores them in batches.

use super::cap::{Capped, TextCap};
use crate::domain::error::ErrorType;
use crate::domain::event::{EngineEvent, RuntimeEvent};
use crate::domain::ids::{RunId, SessionId};
use crate::domain::message::ContentBlock;
use crate::domain::partial::PartialAnswer;
use crate::domain::time::now_rfc3339;
use crate::engine::Engine;
use crate::store::NewRunEvent;
use serde_json::Value;
use std::time::{Duration, Instant};

/// The most text one merged delta carries (see [`merge_delta`]).
const MERGED_DELTA_BYTES: usize = 64 * 1024;

/// Merges `next` into `into` when both are text (or both thought) deltas and
/// the result stays under [`MERGED_DELTA_BYTES`]; otherwise hands `next` back.
/// Only deltas already waiting in the turn's queue are merged, so a burst the
/// runtime read at once is one event and nothing waits for a later piece.
pub(super) fn merge_delta(into: &mut RuntimeEvent, next: RuntimeEvent) -> Option<RuntimeEvent> {
    match (into, next) {
        (RuntimeEvent::TextDelta { text }, RuntimeEvent::TextDelta { text: more })
        | (RuntimeEvent::ThoughtDelta { text }, RuntimeEvent::ThoughtDelta { text: more })
            if text.len() + more.len() <= MERGED_DELTA_BYTES =>
        {
            text.push_str(&more);
            None
        }
        (_, next) => Some(next),
    }
}

/// Run events are flushed to the store after this many, or this long.
const FLUSH_EVERY_EVENTS: usize = 64;
pub(super) const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// Numbers and publishes runtime events, keeps what they say for a partial answer,
/// and flushes them to the run's event log in batches (the last batch goes with
/// the answer, see `take_pending`).
pub(super) struct EventSink {
    engine: Engine,
    session_id: SessionId,
    run_id: RunId,
    /// Sequence of the next event in the run (from 1).
    next_sequence: i64,
    pending: Vec<NewRunEvent>,
    last_flush: Instant,
    partial: PartialAnswer,
    cap: TextCap,
    /// The stored batches, kept when the turn's answer is built from memory
    /// (`None` otherwise).
    stored: Option<Vec<NewRunEvent>>,
}

impl EventSink {
    /// A sink for one turn; `cap` bounds the text (answer and reasoning) it
    /// keeps; with `keep_stored`, the batches it stores are kept too, for the
    /// turn's answer.
    pub(super) fn new(
        engine: Engine,
        session_id: SessionId,
        run_id: RunId,
        cap: Option<usize>,
        keep_stored: bool,
    ) -> Self {
        Self {
            engine,
            session_id,
            run_id,
            next_sequence: 1,
            pending: Vec::new(),
            last_flush: Instant::now(),
            partial: PartialAnswer::default(),
            cap: TextCap::new(cap),
            stored: keep_stored.then(Vec::new),
        }
    }

    pub(super) async fn push(&mut self, ev: RuntimeEvent) {
        match self.cap.admit(ev) {
            Capped::Keep(ev) => self.record(ev).await,
            Capped::Cut(ev) => {
                if let Some(ev) = ev {
                    self.record(ev).await;
                }
                let limit_bytes = self.cap.limit_bytes();
                self.record(RuntimeEvent::OutputCapped { limit_bytes })
                    .await;
            }
            Capped::Drop => {}
        }
    }

    async fn record(&mut self, ev: RuntimeEvent) {
        self.partial.push(&ev);
        let sequence = self.next_sequence;
        self.next_sequence += 1;
        self.pending.push(NewRunEvent {
            sequence,
            event_type: ev.kind().to_string(),
            data: serde_json::to_value(&ev).unwrap_or(Value::Null),
            occurred_at: now_rfc3339(),
        });
        self.engine
            .emit(EngineEvent::Runtime {
                session_id: self.session_id.clone(),
                run_id: self.run_id.clone(),
                sequence,
                update: ev,
            })
            .await;
        if self.pending.len() >= FLUSH_EVERY_EVENTS || self.last_flush.elapsed() >= FLUSH_EVERY {
            self.flush().await;
        }
    }

    pub(super) async fn flush(&mut self) {
        self.last_flush = Instant::now();
        if self.pending.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.pending);
        match self
            .engine
            .store()
            .append_run_events(&self.run_id, &batch)
            .await
        {
            // Stored (a conflict means an earlier try committed and only its
            // answer was lost).
            Ok(()) => self.keep(batch),
            Err(e) if e.error_type == ErrorType::Conflict => self.keep(batch),
            Err(e) => {
                // Kept for the next flush (or the turn's end), in order.
                tracing::warn!(error = %e, "could not persist run events; keeping them for the next try");
                let newer = std::mem::replace(&mut self.pending, batch);
                self.pending.extend(newer);
            }
        }
    }

    fn keep(&mut self, batch: Vec<NewRunEvent>) {
        if let Some(stored) = &mut self.stored {
            stored.extend(batch);
        }
    }

    /// The batches stored so far, when they were kept.
    pub(super) fn take_stored(&mut self) -> Option<Vec<NewRunEvent>> {
        self.stored.take()
    }

    /// Records `ev` merged with the deltas already waiting behind it in `queue`
    /// (see [`merge_delta`]), then what follows them; `seen` looks at every
    /// event taken from the queue before it is merged.
    pub(super) async fn push_queued(
        &mut self,
        mut ev: RuntimeEvent,
        queue: &mut tokio::sync::mpsc::UnboundedReceiver<RuntimeEvent>,
        mut seen: impl FnMut(&RuntimeEvent),
    ) {
        seen(&ev);
        while let Ok(next) = queue.try_recv() {
            seen(&next);
            if let Some(apart) = merge_delta(&mut ev, next) {
                self.push(std::mem::replace(&mut ev, apart)).await;
            }
        }
        self.push(ev).await;
    }

    /// The events not yet stored, for `finish_turn` to store with the answer.
    pub(super) fn take_pending(&mut self) -> Vec<NewRunEvent> {
        std::mem::take(&mut self.pending)
    }

    pub(super) fn partial_blocks(&self) -> Vec<ContentBlock> {
        self.partial.blocks()
    }

    /// When the events waiting in memory must reach the store, if any wait.
    pub(super) fn flush_due(&self) -> Option<Instant> {
        (!self.pending.is_empty()).then(|| self.last_flush + FLUSH_EVERY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> RuntimeEvent {
        RuntimeEvent::TextDelta { text: t.into() }
    }

    #[test]
    fn deltas_of_one_kind_merge_and_anything_else_stays_apart() {
        let mut ev = text("a");
        assert!(merge_delta(&mut ev, text("b")).is_none());
        assert!(matches!(&ev, RuntimeEvent::TextDelta { text } if text == "ab"));
        let thought = RuntimeEvent::ThoughtDelta { text: "t".into() };
        let back = merge_delta(&mut ev, thought).expect("a thought is not text");
        assert!(matches!(back, RuntimeEvent::ThoughtDelta { .. }));
        let mut t = RuntimeEvent::ThoughtDelta { text: "x".into() };
        assert!(merge_delta(&mut t, RuntimeEvent::ThoughtDelta { text: "y".into() }).is_none());
        assert!(matches!(&t, RuntimeEvent::ThoughtDelta { text } if text == "xy"));
        // A merged delta stays bounded.
        let mut big = text(&"x".repeat(MERGED_DELTA_BYTES));
        assert!(merge_delta(&mut big, text("y")).is_some());
    }
}
