//! The recall indexer: messages are queued by the turn path (a channel send, never
//! a wait) and embedded in batches by one task, then stored as vectors. A batch
//! goes out when it is full or `batch_delay` after its first message. When the
//! embeddings provider fails, the batch is kept and retried with a growing pause
//! (the backlog is capped; the oldest messages beyond it are dropped and
//! counted), and recall reports itself degraded meanwhile. A flush sends what is
//! queued now and waits for it; shutdown flushes.

use crate::adapters::providers::Embedder;
use crate::domain::recall::{MemoryEntry, MemoryVector};
use crate::store::Store;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;

/// Most messages kept waiting while embeddings fail.
pub const MAX_BACKLOG: usize = 10_000;

/// First pause after a failed batch; it doubles up to [`MAX_BACKOFF`].
const MIN_BACKOFF: Duration = Duration::from_millis(500);

/// Longest pause between two attempts while embeddings fail.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

enum Item {
    Entry(Box<MemoryEntry>),
    Flush(oneshot::Sender<()>),
}

/// Counters and the current failure, shared by the queue and its task.
#[derive(Debug, Default)]
pub(crate) struct IndexStats {
    /// Queued and not yet stored (or dropped).
    pub(crate) pending: AtomicU64,
    /// Stored since start.
    pub(crate) indexed: AtomicU64,
    /// Dropped from a full backlog since start.
    pub(crate) dropped: AtomicU64,
    /// Requests sent to the embeddings model since start.
    pub(crate) batches: AtomicU64,
    /// Why the last batch failed, until one succeeds.
    pub(crate) failing: Mutex<Option<String>>,
}

impl IndexStats {
    /// The current failure, if any.
    pub(crate) fn failing(&self) -> Option<String> {
        self.failing
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Records why embeddings fail now, or that they work again.
    pub(crate) fn set_failing(&self, why: Option<String>) {
        *self.failing.lock().unwrap_or_else(|p| p.into_inner()) = why;
    }
}

/// The queue in front of the indexing task.
#[derive(Clone)]
pub(crate) struct Indexer {
    tx: mpsc::UnboundedSender<Item>,
    stats: Arc<IndexStats>,
}

/// How the task batches.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Batching {
    /// Messages per embeddings request.
    pub(crate) size: usize,
    /// Gather time after a batch's first message.
    pub(crate) delay: Duration,
}

impl Indexer {
    /// Starts the indexing task (needs a Tokio runtime).
    pub(crate) fn start(store: Arc<dyn Store>, embedder: Embedder, batching: Batching) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let stats = Arc::new(IndexStats::default());
        tokio::spawn(run(store, embedder, batching, rx, stats.clone()));
        Self { tx, stats }
    }

    /// Queues one message; returns at once.
    pub(crate) fn queue(&self, entry: MemoryEntry) {
        self.stats.pending.fetch_add(1, Ordering::Relaxed);
        if self.tx.send(Item::Entry(Box::new(entry))).is_err() {
            self.stats.pending.fetch_sub(1, Ordering::Relaxed);
            tracing::warn!("the recall indexer has stopped; a message was not indexed");
        }
    }

    /// Sends everything queued before this call now (one attempt, whatever the
    /// pause after a failure) and waits until it is stored or has failed.
    pub(crate) async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Item::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }

    /// The counters.
    pub(crate) fn stats(&self) -> &IndexStats {
        &self.stats
    }
}

/// The task: gather, embed, store, repeat; ends when every queue handle is gone.
async fn run(
    store: Arc<dyn Store>,
    embedder: Embedder,
    batching: Batching,
    mut rx: mpsc::UnboundedReceiver<Item>,
    stats: Arc<IndexStats>,
) {
    let mut backlog: VecDeque<MemoryEntry> = VecDeque::new();
    let mut flushes: Vec<oneshot::Sender<()>> = Vec::new();
    let mut retry_at: Option<Instant> = None;
    let mut backoff = MIN_BACKOFF;
    let mut closed = false;
    while !closed || !backlog.is_empty() {
        if backlog.is_empty() && flushes.is_empty() {
            match rx.recv().await {
                Some(item) => take(item, &mut backlog, &mut flushes, &stats),
                None => break,
            }
        }
        // Gather until the batch is full (unless pausing after a failure), a
        // flush asks, or the gather time (or the pause) is over.
        let gathered_by = Instant::now() + batching.delay;
        let deadline = retry_at.map_or(gathered_by, |r| r.max(gathered_by));
        while flushes.is_empty() && (retry_at.is_some() || backlog.len() < batching.size) {
            match tokio::time::timeout_at(deadline, rx.recv()).await {
                Ok(Some(item)) => take(item, &mut backlog, &mut flushes, &stats),
                Ok(None) => {
                    closed = true;
                    break;
                }
                Err(_) => break,
            }
        }
        while !backlog.is_empty() {
            let n = backlog.len().min(batching.size);
            let batch: Vec<MemoryEntry> = backlog.drain(..n).collect();
            stats.batches.fetch_add(1, Ordering::Relaxed);
            match index(store.as_ref(), &embedder, &batch).await {
                Ok(()) => {
                    stats.pending.fetch_sub(n as u64, Ordering::Relaxed);
                    stats.indexed.fetch_add(n as u64, Ordering::Relaxed);
                    stats.set_failing(None);
                    retry_at = None;
                    backoff = MIN_BACKOFF;
                }
                Err(why) => {
                    tracing::warn!(messages = n, "recall indexing failed: {why}");
                    stats.set_failing(Some(why));
                    for e in batch.into_iter().rev() {
                        backlog.push_front(e);
                    }
                    retry_at = Some(Instant::now() + backoff);
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    break;
                }
            }
        }
        for done in flushes.drain(..) {
            let _ = done.send(());
        }
        if closed && retry_at.is_some() {
            // Shutting down with embeddings failing: what is left is lost.
            let left = backlog.len() as u64;
            tracing::warn!(
                messages = left,
                "recall indexer stopped with unindexed messages"
            );
            stats.pending.fetch_sub(left, Ordering::Relaxed);
            stats.dropped.fetch_add(left, Ordering::Relaxed);
            break;
        }
    }
}

/// Files one queue item, dropping the oldest message when the backlog is full.
fn take(
    item: Item,
    backlog: &mut VecDeque<MemoryEntry>,
    flushes: &mut Vec<oneshot::Sender<()>>,
    stats: &IndexStats,
) {
    match item {
        Item::Entry(e) => {
            if backlog.len() >= MAX_BACKLOG {
                backlog.pop_front();
                stats.pending.fetch_sub(1, Ordering::Relaxed);
                stats.dropped.fetch_add(1, Ordering::Relaxed);
            }
            backlog.push_back(*e);
        }
        Item::Flush(done) => flushes.push(done),
    }
}

/// Embeds one batch and stores its vectors; the error says why, for the status.
async fn index(
    store: &dyn Store,
    embedder: &Embedder,
    batch: &[MemoryEntry],
) -> Result<(), String> {
    let texts: Vec<String> = batch.iter().map(|e| e.text.clone()).collect();
    let vectors = embedder
        .embed(&texts)
        .await
        .map_err(|e| e.into_hecate(embedder.provider(), embedder.model()).message)?;
    let rows: Vec<MemoryVector> = batch
        .iter()
        .cloned()
        .zip(vectors)
        .map(|(entry, embedding)| MemoryVector {
            entry,
            model: embedder.model().to_string(),
            embedding,
        })
        .collect();
    store
        .put_memory_vectors(&rows)
        .await
        .map(|_| ())
        .map_err(|e| e.message)
}
