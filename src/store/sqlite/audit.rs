//! The audit log of proxied upstream MCP tool calls, and the tool policies an
//! operator set.

use super::SqliteStore;
use super::reads::all;
use crate::domain::error::Result;
use crate::store::rows::audit::{self as decode, AUDIT_COLUMNS};
use crate::store::{AuditStore, McpCallRecord, McpToolPolicy};
use async_trait::async_trait;
use rusqlite::params;

#[async_trait]
impl AuditStore for SqliteStore {
    async fn record_mcp_calls(&self, records: &[McpCallRecord]) -> Result<()> {
        let records = records.to_vec();
        self.write(move |c| {
            let tx = c.transaction()?;
            {
                let mut stmt = tx.prepare_cached(&format!(
                    "INSERT OR IGNORE INTO mcp_calls ({AUDIT_COLUMNS}) VALUES \
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
                "SELECT {AUDIT_COLUMNS} FROM mcp_calls WHERE namespace = ?1 \
                 ORDER BY started_at DESC, id DESC LIMIT ?2"
            ))?;
            let rows = stmt.query_map(
                params![namespace, limit.min(i64::MAX as usize) as i64],
                |r| decode::record(r),
            )?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await
    }

    async fn set_mcp_tool_policy(&self, p: &McpToolPolicy) -> Result<()> {
        let p = p.clone();
        self.write(move |c| {
            c.execute(
                "INSERT INTO mcp_tool_policies (namespace, server, tool, policy, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (namespace, server, tool) \
                 DO UPDATE SET policy = excluded.policy, updated_at = excluded.updated_at",
                params![p.namespace, p.server, p.tool, p.policy, p.updated_at],
            )?;
            Ok(())
        })
        .await
    }

    async fn list_mcp_tool_policies(&self, namespace: &str) -> Result<Vec<McpToolPolicy>> {
        let ns = namespace.to_owned();
        self.read(move |c| {
            all(
                c,
                "SELECT namespace, server, tool, policy, updated_at FROM mcp_tool_policies \
                 WHERE namespace = ?1 ORDER BY server, tool",
                params![ns],
                |r| {
                    Ok(McpToolPolicy {
                        namespace: r.get(0)?,
                        server: r.get(1)?,
                        tool: r.get(2)?,
                        policy: r.get(3)?,
                        updated_at: r.get(4)?,
                    })
                },
            )
        })
        .await
    }
}
