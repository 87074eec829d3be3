//! The writer of the proxied-call audit log: records are queued by the call path
//! and written in batches (one transaction each) by a single task, so a call's
//! answer never waits for the store. A flush waits until everything queued before
//! it is stored; the engine flushes before listing records and at shutdown.

use crate::store::{McpCallRecord, Store};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Largest number of records written in one transaction.
const MAX_BATCH: usize = 512;

/// Pause after each write so that calls arriving meanwhile share the next
/// transaction; also the longest a record waits in the queue when calls are busy.
const GATHER: Duration = Duration::from_millis(20);

enum Item {
    Record(Box<McpCallRecord>),
    Flush(oneshot::Sender<()>),
}

/// The queue in front of the audit log's writer task.
#[derive(Clone)]
pub(crate) struct AuditWriter {
    tx: mpsc::UnboundedSender<Item>,
}

impl AuditWriter {
    /// Starts the writer task over `store` (needs a Tokio runtime).
    pub(crate) fn start(store: Arc<dyn Store>) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(write_batches(store, rx));
        Self { tx }
    }

    /// Queues one record; it is stored within one batch write.
    pub(crate) fn record(&self, record: McpCallRecord) {
        if self.tx.send(Item::Record(Box::new(record))).is_err() {
            tracing::warn!("the MCP audit writer has stopped; a call record was not stored");
        }
    }

    /// Waits until every record queued before this call is stored (or failed).
    pub(crate) async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.tx.send(Item::Flush(done)).is_ok() {
            let _ = wait.await;
        }
    }
}

async fn write_batches(store: Arc<dyn Store>, mut rx: mpsc::UnboundedReceiver<Item>) {
    let mut items = Vec::with_capacity(MAX_BATCH);
    while rx.recv_many(&mut items, MAX_BATCH).await > 0 {
        let mut records = Vec::new();
        let mut flushes = Vec::new();
        for item in items.drain(..) {
            match item {
                Item::Record(r) => records.push(*r),
                Item::Flush(done) => flushes.push(done),
            }
        }
        let wrote = !records.is_empty();
        if wrote {
            let count = records.len();
            if let Err(e) = store.record_mcp_calls(&records).await {
                tracing::warn!(error = %e, count, "could not write MCP call audit records");
            }
        }
        for done in flushes {
            let _ = done.send(());
        }
        if wrote {
            tokio::time::sleep(GATHER).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{AuditStore, SqliteStore};

    fn record(id: &str) -> McpCallRecord {
        McpCallRecord {
            id: id.into(),
            namespace: "default".into(),
            server: "fx".into(),
            tool: "echo".into(),
            exposed_name: "fx__echo".into(),
            client: "test (stdio)".into(),
            policy: "auto".into(),
            decision: "allowed".into(),
            approval_id: None,
            outcome: "ok".into(),
            error_type: None,
            error_message: None,
            argument_keys: vec![],
            argument_bytes: 0,
            started_at: format!("2026-01-01T00:00:00.{id}Z"),
            duration_ms: 1,
        }
    }

    #[tokio::test]
    async fn a_flush_waits_for_every_record_queued_before_it() {
        let store = Arc::new(SqliteStore::open_in_memory().expect("store"));
        let writer = AuditWriter::start(store.clone());
        for i in 0..1000 {
            writer.record(record(&format!("{i:04}")));
        }
        writer.flush().await;
        let stored = store.list_mcp_calls("default", 5000).await.expect("list");
        assert_eq!(stored.len(), 1000);
        assert_eq!(stored[0].id, "0999", "newest first");
    }
}
