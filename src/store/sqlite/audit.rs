//! The audit log of proxied upstream MCP tool calls.

use super::SqliteStore;
use crate::domain::error::Result;
use crate::store::{AuditStore, McpCallRecord};
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

impl AuditStore for SqliteStore {
    fn record_mcp_calls(&self, records: &[McpCallRecord]) -> Result<()> {
        self.with(|c| {
            let tx = c.transaction()?;
            {
                let mut stmt = tx.prepare_cached(&format!(
                    "INSERT INTO mcp_calls ({COLUMNS}) VALUES \
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
    }

    fn list_mcp_calls(&self, namespace: &str, limit: usize) -> Result<Vec<McpCallRecord>> {
        self.with(|c| {
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_newest_first_per_namespace() {
        let store = SqliteStore::open_in_memory().expect("store");
        let rec = |id: &str, ns: &str, at: &str| McpCallRecord {
            id: id.into(),
            namespace: ns.into(),
            server: "fs".into(),
            tool: "read".into(),
            exposed_name: "fs__read".into(),
            client: "test (stdio)".into(),
            policy: "auto".into(),
            decision: "allowed".into(),
            approval_id: None,
            outcome: "ok".into(),
            error_type: None,
            error_message: None,
            argument_keys: vec!["path".into()],
            argument_bytes: 12,
            started_at: at.into(),
            duration_ms: 3,
        };
        store
            .record_mcp_calls(&[rec("a", "default", "2026-01-01T00:00:00Z")])
            .expect("a");
        store
            .record_mcp_calls(&[
                rec("b", "default", "2026-01-02T00:00:00Z"),
                rec("c", "other", "2026-01-03T00:00:00Z"),
            ])
            .expect("b and c");
        let got = store.list_mcp_calls("default", 10).expect("list");
        assert_eq!(
            got.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["b", "a"]
        );
        assert_eq!(got[0].argument_keys, ["path"]);
    }
}
