//! The writer of the proxied-call audit log: records are journalled and queued
//! by the call path and stored in batches by one task (`batch_writer`), so a
//! call's answer never waits for the store. The engine flushes before listing
//! records and at shutdown.

use crate::domain::error::Result;
use crate::engine::batch_writer::{BatchSink, BatchWriter};
use crate::store::{McpCallRecord, Store};
use async_trait::async_trait;
use std::sync::Arc;

/// The queue in front of the audit log's writer task.
pub(crate) type AuditWriter = BatchWriter<McpCallRecord>;

/// The journal kind of MCP call records.
pub(crate) const JOURNAL_KIND: &str = "mcp_calls";

/// Stores audit records in the store's `mcp_calls`.
pub(crate) struct AuditSink(pub Arc<dyn Store>);

#[async_trait]
impl BatchSink<McpCallRecord> for AuditSink {
    async fn store(&self, batch: &[McpCallRecord]) -> Result<()> {
        self.0.record_mcp_calls(batch).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::batch_writer::WriterSettings;
    use crate::store::{AuditStore, SqliteStore};
    use std::time::Duration;

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
        let writer = AuditWriter::start(
            Arc::new(AuditSink(store.clone())),
            WriterSettings {
                what: "MCP call records",
                gather: Duration::from_millis(20),
                journal: None,
            },
        );
        for i in 0..1000 {
            writer.record(record(&format!("{i:04}")));
        }
        writer.flush().await;
        let stored = store.list_mcp_calls("default", 5000).await.expect("list");
        assert_eq!(stored.len(), 1000);
        assert_eq!(stored[0].id, "0999", "newest first");
    }

    #[tokio::test]
    async fn a_record_stored_twice_is_kept_once() {
        let store = SqliteStore::open_in_memory().expect("store");
        let batch = [record("0001"), record("0002")];
        store.record_mcp_calls(&batch).await.expect("first");
        store.record_mcp_calls(&batch).await.expect("replayed");
        assert_eq!(
            store
                .list_mcp_calls("default", 10)
                .await
                .expect("list")
                .len(),
            2
        );
    }
}
