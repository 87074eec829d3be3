//! Records the engine stores after it has answered (gateway traces and MCP call
//! records), the process's journal that keeps them across a crash until they
//! are stored, and the replay, at start, of the journals stopped processes left.

use super::batch_writer::{BatchSink, BatchWriter, WriterSettings};
use super::mcp::audit::{self, AuditSink, AuditWriter};
use crate::domain::error::{HecateError, Result};
use crate::domain::gateway_conversation::GatewayTrace;
use crate::store::Store;
use crate::store::journal::{Journal, OrphanJournal};
use async_trait::async_trait;
use serde::de::DeserializeOwned;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// The journal kind of gateway traces.
const TRACE_KIND: &str = "traces";

/// Records replayed from a journal per transaction.
const REPLAY_BATCH: usize = 512;

/// Where deferred records are journalled and how they are batched.
#[derive(Debug, Clone)]
pub struct DeferredSettings {
    /// The directory holding each process's journal (`<data dir>/journal`);
    /// none: records are not journalled (an in-memory store loses them anyway).
    pub journal_dir: Option<PathBuf>,
    /// The pause after each stored batch (`[store] write_gather_ms`).
    pub gather: Duration,
}

impl Default for DeferredSettings {
    fn default() -> Self {
        Self {
            journal_dir: None,
            gather: Duration::from_millis(20),
        }
    }
}

/// Stores gateway traces in the store's `gateway_traces`.
struct TraceSink(Arc<dyn Store>);

#[async_trait]
impl BatchSink<GatewayTrace> for TraceSink {
    async fn store(&self, batch: &[GatewayTrace]) -> Result<()> {
        self.0.record_traces(batch).await
    }
}

/// The writers of records stored after the answer, over one journal.
pub(crate) struct DeferredWrites {
    journal: Option<Arc<Journal>>,
    /// Gateway traces of requests that recorded no chat exchange.
    pub(crate) traces: BatchWriter<GatewayTrace>,
    /// MCP call records.
    pub(crate) audit: AuditWriter,
}

impl DeferredWrites {
    /// Replays the journals of stopped processes into `store`, then opens this
    /// process's journal (as `owner`) and starts the writers.
    pub(crate) async fn start(
        store: &Arc<dyn Store>,
        settings: &DeferredSettings,
        owner: &str,
    ) -> Self {
        let trace_sink = TraceSink(store.clone());
        let audit_sink = AuditSink(store.clone());
        let journal = match &settings.journal_dir {
            Some(root) => {
                match OrphanJournal::find(root) {
                    Ok(orphans) => {
                        for orphan in orphans {
                            replay(orphan, &trace_sink, &audit_sink).await;
                        }
                    }
                    Err(e) => {
                        tracing::warn!(dir = %root.display(), error = %e, "cannot look for journals to replay")
                    }
                }
                match Journal::open(root, owner) {
                    Ok(j) => Some(j),
                    Err(e) => {
                        tracing::warn!(dir = %root.display(), error = %e, "no journal: records stored after the answer are lost if this process dies first");
                        None
                    }
                }
            }
            None => None,
        };
        let log = |kind: &'static str| {
            journal.as_ref().and_then(|j| {
                j.log(kind)
                    .map_err(|e| tracing::warn!(kind, error = %e, "cannot open a journal log"))
                    .ok()
            })
        };
        let traces = BatchWriter::start(
            Arc::new(trace_sink),
            WriterSettings {
                what: "gateway traces",
                gather: settings.gather,
                journal: log(TRACE_KIND),
            },
        );
        let audit = BatchWriter::start(
            Arc::new(audit_sink),
            WriterSettings {
                what: "MCP call records",
                gather: settings.gather,
                journal: log(audit::JOURNAL_KIND),
            },
        );
        Self {
            journal,
            traces,
            audit,
        }
    }

    /// Waits until every record queued so far is stored (or failed).
    pub(crate) async fn flush(&self) {
        tokio::join!(self.traces.flush(), self.audit.flush());
    }

    /// Flushes, then removes this process's journal when nothing in it waits.
    pub(crate) async fn close(&self) {
        self.flush().await;
        if let Some(j) = &self.journal {
            j.remove_if_empty();
        }
    }
}

/// Stores what a stopped process journalled, then removes its journal; what
/// cannot be stored now stays for the next start.
async fn replay(orphan: OrphanJournal, traces: &TraceSink, calls: &AuditSink) {
    let dir = orphan.dir().display().to_string();
    let t = replay_kind(&orphan, TRACE_KIND, traces).await;
    let c = replay_kind(&orphan, audit::JOURNAL_KIND, calls).await;
    match (t, c) {
        (Ok(traces), Ok(calls)) => {
            if traces + calls > 0 {
                tracing::warn!(%dir, traces, calls, "stored the records a stopped process had journalled");
            }
            orphan.close();
        }
        (t, c) => {
            let (t, c) = (
                t.err().map(|e| e.to_string()),
                c.err().map(|e| e.to_string()),
            );
            tracing::warn!(%dir, traces = ?t, calls = ?c, "a stopped process's journal is kept for the next start");
        }
    }
}

/// Why a journal could not be replayed.
#[derive(Debug, thiserror::Error)]
enum ReplayError {
    #[error("reading the journal: {0}")]
    Journal(#[from] std::io::Error),
    #[error("storing its records: {0}")]
    Store(#[from] HecateError),
}

async fn replay_kind<T: DeserializeOwned>(
    orphan: &OrphanJournal,
    kind: &str,
    sink: &dyn BatchSink<T>,
) -> std::result::Result<usize, ReplayError> {
    let records: Vec<T> = orphan.records(kind)?;
    for chunk in records.chunks(REPLAY_BATCH) {
        sink.store(chunk).await?;
    }
    orphan.discard(kind)?;
    Ok(records.len())
}
