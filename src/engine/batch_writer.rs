//! A writer that stores records after the caller has answered: the caller
//! appends each record to the process's journal (when there is one) and queues
//! it, and one task stores what is queued in batches, one transaction each, so
//! busy callers share a commit and none waits for the store. A flush waits until
//! everything queued before it was stored (or failed); the engine flushes before
//! reading such records back and at shutdown. A batch the store refuses is kept
//! and tried again; its lines stay in the journal until it is stored.

use crate::domain::error::Result;
use crate::store::journal::{JournalLog, Ticket};
use async_trait::async_trait;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{Notify, mpsc, oneshot};

/// Largest number of records stored in one transaction.
const MAX_BATCH: usize = 512;

/// Pause before a refused batch is tried again.
const RETRY: Duration = Duration::from_secs(1);

/// Most refused records kept in memory; older ones wait in the journal for
/// the next start.
const MAX_KEPT: usize = 100_000;

/// Where a writer stores its records.
#[async_trait]
pub(crate) trait BatchSink<T>: Send + Sync {
    /// Stores `batch` in one transaction (all or none).
    async fn store(&self, batch: &[T]) -> Result<()>;
}

/// How a writer runs.
pub(crate) struct WriterSettings {
    /// What the records are, for log lines (`gateway traces`, ...).
    pub what: &'static str,
    /// The pause after each stored batch, so that records arriving meanwhile
    /// share the next one; also how long a record may wait when callers are busy.
    pub gather: Duration,
    /// Where records are journalled before they are queued; none: not journalled.
    pub journal: Option<JournalLog>,
}

enum Item<T> {
    Record(T, Option<Ticket>),
    Flush(oneshot::Sender<()>),
}

/// The queue in front of one writer task.
pub(crate) struct BatchWriter<T> {
    tx: mpsc::UnboundedSender<Item<T>>,
    journal: Option<Arc<JournalLog>>,
    flush_wanted: Arc<Notify>,
    what: &'static str,
}

impl<T> Clone for BatchWriter<T> {
    fn clone(&self) -> Self {
        Self {
            tx: self.tx.clone(),
            journal: self.journal.clone(),
            flush_wanted: self.flush_wanted.clone(),
            what: self.what,
        }
    }
}

impl<T: Serialize + Send + Sync + 'static> BatchWriter<T> {
    /// Starts the writer task storing into `sink` (needs a Tokio runtime).
    pub(crate) fn start(sink: Arc<dyn BatchSink<T>>, settings: WriterSettings) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let journal = settings.journal.map(Arc::new);
        let flush_wanted = Arc::new(Notify::new());
        let task = WriterTask {
            sink,
            rx,
            journal: journal.clone(),
            flush_wanted: flush_wanted.clone(),
            gather: settings.gather,
            what: settings.what,
        };
        tokio::spawn(task.run());
        Self {
            tx,
            journal,
            flush_wanted,
            what: settings.what,
        }
    }

    /// Journals and queues one record; it is stored with the next batch.
    pub(crate) fn record(&self, record: T) {
        let ticket = self.journal.as_ref().and_then(|j| match j.append(&record) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!(what = self.what, error = %e, "could not journal a record");
                None
            }
        });
        if self.tx.send(Item::Record(record, ticket)).is_err() {
            tracing::warn!(
                what = self.what,
                "the writer has stopped; a record was not stored"
            );
        }
    }

    /// Waits until every record queued before this call is stored (or failed).
    pub(crate) async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Item::Flush(done)).is_ok() {
            self.flush_wanted.notify_one();
            let _ = wait.await;
        }
    }
}

struct WriterTask<T> {
    sink: Arc<dyn BatchSink<T>>,
    rx: mpsc::UnboundedReceiver<Item<T>>,
    journal: Option<Arc<JournalLog>>,
    flush_wanted: Arc<Notify>,
    gather: Duration,
    what: &'static str,
}

impl<T: Send + Sync + 'static> WriterTask<T> {
    async fn run(mut self) {
        let mut items = Vec::with_capacity(MAX_BATCH);
        let mut records: Vec<T> = Vec::new();
        // One entry per record, in step: where its line is in the journal.
        let mut tickets: Vec<Option<Ticket>> = Vec::new();
        loop {
            if records.is_empty() {
                if self.rx.recv_many(&mut items, MAX_BATCH).await == 0 {
                    break;
                }
            } else {
                // A refused batch waits, then goes again with whatever arrived.
                self.pause(RETRY).await;
                while let Ok(item) = self.rx.try_recv() {
                    items.push(item);
                }
            }
            let mut flushes = Vec::new();
            for item in items.drain(..) {
                match item {
                    Item::Record(r, t) => {
                        records.push(r);
                        tickets.push(t);
                    }
                    Item::Flush(done) => flushes.push(done),
                }
            }
            let stored = self.store(&mut records, &mut tickets).await;
            for done in flushes {
                let _ = done.send(());
            }
            if stored {
                self.pause(self.gather).await;
            }
        }
        if !records.is_empty() {
            self.store(&mut records, &mut tickets).await;
        }
    }

    /// Stores `records` a batch at a time and gives the journal back the
    /// tickets of those stored; answers whether anything was stored. What the
    /// store refused stays in `records`, its tickets in step in `tickets`.
    async fn store(&self, records: &mut Vec<T>, tickets: &mut Vec<Option<Ticket>>) -> bool {
        if records.is_empty() {
            return false;
        }
        let total = records.len();
        let mut stored = 0;
        while stored < total {
            let end = (stored + MAX_BATCH).min(total);
            if let Err(e) = self.sink.store(&records[stored..end]).await {
                tracing::warn!(
                    what = self.what, error = %e, waiting = total - stored,
                    "could not store a batch; it is tried again"
                );
                break;
            }
            stored = end;
        }
        records.drain(..stored);
        let done: Vec<Ticket> = tickets.drain(..stored).flatten().collect();
        if let Some(j) = &self.journal
            && !done.is_empty()
        {
            j.committed(&done);
        }
        if records.len() > MAX_KEPT {
            // Their lines stay in the journal (their tickets are never given
            // back), so the next start stores them.
            let dropped = records.len() - MAX_KEPT;
            records.drain(..dropped);
            tickets.drain(..dropped);
            tracing::warn!(
                what = self.what,
                dropped,
                "too many records wait for the store; the oldest wait in the journal for the next start"
            );
        }
        stored > 0
    }

    /// Sleeps for `d`, or less when a flush is asked for.
    async fn pause(&self, d: Duration) {
        tokio::select! {
            () = tokio::time::sleep(d) => {}
            () = self.flush_wanted.notified() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::error::HecateError;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    #[derive(Default)]
    struct Recording {
        down: AtomicBool,
        batches: Mutex<Vec<Vec<u32>>>,
    }

    #[async_trait]
    impl BatchSink<u32> for Recording {
        async fn store(&self, batch: &[u32]) -> Result<()> {
            if self.down.load(Ordering::SeqCst) {
                return Err(HecateError::store("the store is down"));
            }
            self.batches.lock().expect("lock").push(batch.to_vec());
            Ok(())
        }
    }

    fn stored(sink: &Recording) -> Vec<u32> {
        sink.batches.lock().expect("lock").concat()
    }

    fn writer(sink: &Arc<Recording>, gather: Duration) -> BatchWriter<u32> {
        BatchWriter::start(
            sink.clone(),
            WriterSettings {
                what: "numbers",
                gather,
                journal: None,
            },
        )
    }

    #[tokio::test]
    async fn a_flush_waits_for_every_record_queued_before_it_and_cuts_the_gather_short() {
        let sink = Arc::new(Recording::default());
        let w = writer(&sink, Duration::from_secs(3600));
        w.record(1);
        w.flush().await;
        for n in 2..1000 {
            w.record(n);
        }
        // The writer is now pausing an hour after its first batch; the flush
        // must not wait for that.
        tokio::time::timeout(Duration::from_secs(60), w.flush())
            .await
            .expect("the flush ends the pause");
        assert_eq!(stored(&sink), (1..1000).collect::<Vec<_>>());
        assert!(
            sink.batches.lock().expect("lock").len() <= 3,
            "records queued together share batches"
        );
    }

    #[tokio::test]
    async fn a_refused_batch_is_tried_again_and_nothing_is_lost() {
        let sink = Arc::new(Recording {
            down: AtomicBool::new(true),
            ..Recording::default()
        });
        let w = writer(&sink, Duration::ZERO);
        w.record(1);
        w.record(2);
        w.flush().await;
        assert!(stored(&sink).is_empty(), "the store refused them");
        w.record(3);
        w.flush().await;
        sink.down.store(false, Ordering::SeqCst);
        w.flush().await;
        assert_eq!(stored(&sink), vec![1, 2, 3]);
    }

    #[tokio::test]
    async fn journalled_records_leave_the_journal_once_stored() {
        let root = tempfile::tempdir().expect("tempdir");
        let journal = crate::store::journal::Journal::open(root.path(), "p").expect("journal");
        let sink = Arc::new(Recording {
            down: AtomicBool::new(true),
            ..Recording::default()
        });
        let w = BatchWriter::start(
            sink.clone() as Arc<dyn BatchSink<u32>>,
            WriterSettings {
                what: "numbers",
                gather: Duration::ZERO,
                journal: Some(journal.log("numbers").expect("log")),
            },
        );
        let segment = root.path().join("p").join("numbers.00000000.jsonl");
        w.record(7);
        w.flush().await;
        assert_eq!(
            std::fs::read_to_string(&segment).expect("segment"),
            "7\n",
            "a refused record stays journalled"
        );
        sink.down.store(false, Ordering::SeqCst);
        w.flush().await;
        assert_eq!(stored(&sink), vec![7]);
        assert_eq!(std::fs::read_to_string(&segment).expect("segment"), "");
    }
}
