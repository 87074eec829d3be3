//! How a turn's loop waits for its next step: an event its runtime streamed,
//! the timer that stores waiting events, or the runtime's end. The runtime runs
//! inside the loop's own task and streams into a channel whose reader is that
//! same task, so its sends must not wake the task: each would queue it again
//! after the poll and wake the other Tokio worker to steal it.

use crate::domain::event::RuntimeEvent;
use crate::runtimes::TurnReport;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use tokio::sync::mpsc::UnboundedReceiver;

/// What the turn's loop does next.
pub(super) enum Step {
    /// Record a streamed event (and those queued behind it).
    Event(RuntimeEvent),
    /// Store the events waiting in memory.
    Flush,
    /// The runtime ended.
    Ended(Box<TurnReport>),
}

/// Polls for the next step. While the runtime is polled the queue's waker is a
/// no-op; the queue is read right after, and the real waker registered last,
/// for runtimes that send from other tasks (an ACP agent's connection). `flush`
/// is the store timer, when events wait for it.
pub(super) fn poll_step<R, F>(
    cx: &mut Context<'_>,
    events: &mut UnboundedReceiver<RuntimeEvent>,
    runtime: Pin<&mut R>,
    flush: Option<Pin<&mut F>>,
) -> Poll<Step>
where
    R: Future<Output = TurnReport> + ?Sized,
    F: Future<Output = ()> + ?Sized,
{
    let mut quiet = Context::from_waker(Waker::noop());
    if let Poll::Ready(Some(ev)) = events.poll_recv(&mut quiet) {
        return Poll::Ready(Step::Event(ev));
    }
    if let Poll::Ready(report) = runtime.poll(cx) {
        return Poll::Ready(Step::Ended(Box::new(report)));
    }
    if let Some(flush) = flush
        && flush.poll(cx).is_ready()
    {
        return Poll::Ready(Step::Flush);
    }
    match events.poll_recv(cx) {
        Poll::Ready(Some(ev)) => Poll::Ready(Step::Event(ev)),
        // Every sender gone: the runtime's end wakes this task.
        Poll::Ready(None) | Poll::Pending => Poll::Pending,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::Wake;

    /// A waker that counts its wakes.
    struct Count(AtomicUsize);

    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// No store timer: nothing waits to be stored.
    fn no_flush<'a>() -> Option<Pin<&'a mut std::future::Ready<()>>> {
        None
    }

    fn text(t: &str) -> RuntimeEvent {
        RuntimeEvent::TextDelta { text: t.into() }
    }

    #[test]
    fn the_runtimes_own_sends_never_wake_the_turn_but_another_tasks_do() {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let (sender, mut rx) = tokio::sync::mpsc::unbounded_channel();
        // A runtime that streams one piece on each poll after its first and
        // never ends.
        let mut polls = 0;
        let mut runtime = std::pin::pin!(std::future::poll_fn(move |_| {
            polls += 1;
            if polls > 1 {
                let _ = sender.send(text("piece"));
            }
            Poll::<TurnReport>::Pending
        }));

        // First poll: nothing streamed, so the real waker is registered.
        assert!(poll_step(&mut cx, &mut rx, runtime.as_mut(), no_flush()).is_pending());
        // Second poll: the runtime streams a piece, which is read at once and
        // woke nothing.
        let step = poll_step(&mut cx, &mut rx, runtime.as_mut(), no_flush());
        assert!(
            matches!(step, Poll::Ready(Step::Event(RuntimeEvent::TextDelta { ref text })) if text == "piece")
        );
        assert_eq!(count.0.load(Ordering::SeqCst), 0);

        // Waiting again, a piece sent from elsewhere wakes the turn.
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let mut idle = std::pin::pin!(std::future::pending::<TurnReport>());
        assert!(poll_step(&mut cx, &mut rx, idle.as_mut(), no_flush()).is_pending());
        tx.send(text("from another task")).expect("open");
        assert_eq!(count.0.load(Ordering::SeqCst), 1);
        let step = poll_step(&mut cx, &mut rx, idle.as_mut(), no_flush());
        assert!(matches!(step, Poll::Ready(Step::Event(_))));
    }
}
