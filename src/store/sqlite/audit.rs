//! The audit log of proxied upstream MCP tool calls.

use super::SqliteStore;
use crate::domain::error::Result;
use crate::store::{AuditStore, McpCallRecord};
use async_trait::async_trait;
use rusqlite::{Row, params};

const COLUMNS: &str = "id, namespace, server, tool, exposed_name, client, policy, decision, \
     approval_id, outcome, error_type, error_message, argument_keys_json, argument_bytes, \
     started_at, duration_ms";

fn row_to_record(r: &Row<'_>) -> rusqlite::Result<McpCallRecord> {
    let keys: String = r.get(12)?;
    Ok(McpCallRecord {
        id: r.get(0)?,
        namespace: r.get(1)?,
        server: r.get(2)?,
        tool: r.get(3)?,
        exposed_name: r.get(4)?,
        client: r.get(5)?,
        policy: r.get(6)?,
        decision: r.get(7)?,
        approval_id: r.get(8)?,
        outcome: r.get(9)?,
        error_type: r.get(10)?,
        error_message: r.get(11)?,
        argument_keys: serde_json::from_str(&keys).unwrap_or_default(),
        argument_bytes: r.get::<_, i64>(13)?.max(0) as u64,
        started_at: r.get(14)?,
        duration_ms: r.get(15)?,
    })
}

#[async_trait]
impl AuditStore for SqliteStore {
    async fn record_mcp_calls(&self, records: &[McpCallRecord]) -> Result<()> {
        let records = records.to_vec();
        self.write(move |c| {
            let tx = c.transaction()?;
            {
                let mut stmt = tx.prepare_cached(&format!(
                    "INSERT OR IGNORE INTO mcp_calls ({COLUMNS}) VALUES \
                     (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)"
                ))?;
                for rec in records {
                    let keys = serde_json::to_string(&rec.argument_keys)?;
                    stmt.execute(params![
                        rec.id,
                        rec.namespace,
                        rec.server,
                        rec.tool,
                        rec.exposed_name,
                        rec.client,
                        rec.policy,
                        rec.decision,
                        rec.approval_id,
                        rec.outcome,
                        rec.error_type,
                        rec.error_message,
                        keys,
                        rec.argument_bytes as i64,
                        rec.started_at,
                        rec.duration_ms,
                    ])?;
                }
            }
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn list_mcp_calls(&self, namespace: &str, limit: usize) -> Result<Vec<McpCallRecord>> {
        let namespace = namespace.to_owned();
        self.read(move |c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {COLUMNS} FROM mcp_calls WHERE namespace = ?1 \
                 ORDER BY started_at DESC, id DESC LIMIT ?2"
            ))?;
            let rows = stmt.query_map(
                params![namespace, limit.min(i64::MAX as usize) as i64],
                row_to_record,
            )?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await
    }
}
