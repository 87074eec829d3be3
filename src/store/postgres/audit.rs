//! The audit log of proxied upstream MCP tool calls.

use super::{OpResult, PostgresStore, big, limit};
use crate::domain::error::Result;
use crate::store::{AuditStore, McpCallRecord};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tokio_postgres::Row;

const COLUMNS: &str = "id, namespace, server, tool, exposed_name, client, policy, decision, \
     approval_id, outcome, error_type, error_message, argument_keys_json, argument_bytes, \
     started_at, duration_ms";

fn row_to_record(r: &Row) -> OpResult<McpCallRecord> {
    let keys: String = r.try_get(12)?;
    Ok(McpCallRecord {
        id: r.try_get(0)?,
        namespace: r.try_get(1)?,
        server: r.try_get(2)?,
        tool: r.try_get(3)?,
        exposed_name: r.try_get(4)?,
        client: r.try_get(5)?,
        policy: r.try_get(6)?,
        decision: r.try_get(7)?,
        approval_id: r.try_get(8)?,
        outcome: r.try_get(9)?,
        error_type: r.try_get(10)?,
        error_message: r.try_get(11)?,
        argument_keys: serde_json::from_str(&keys).unwrap_or_default(),
        argument_bytes: r.try_get::<_, i64>(13)?.max(0) as u64,
        started_at: r.try_get(14)?,
        duration_ms: r.try_get(15)?,
    })
}

#[async_trait]
impl AuditStore for PostgresStore {
    async fn record_mcp_calls(&self, records: &[McpCallRecord]) -> Result<()> {
        let mut c = self.client().await?;
        let r: OpResult<()> = async {
            let tx = c.transaction().await?;
            let stmt = tx
                .prepare_cached(&format!(
                    "INSERT INTO mcp_calls ({COLUMNS}) VALUES \
                     ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16) \
                     ON CONFLICT (id) DO NOTHING"
                ))
                .await?;
            for rec in records {
                let keys = serde_json::to_string(&rec.argument_keys)?;
                tx.execute(
                    &stmt,
                    &[
                        &rec.id,
                        &rec.namespace,
                        &rec.server,
                        &rec.tool,
                        &rec.exposed_name,
                        &rec.client,
                        &rec.policy,
                        &rec.decision,
                        &rec.approval_id,
                        &rec.outcome,
                        &rec.error_type,
                        &rec.error_message,
                        &keys,
                        &big(rec.argument_bytes),
                        &rec.started_at,
                        &rec.duration_ms,
                    ],
                )
                .await?;
            }
            tx.commit().await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn list_mcp_calls(&self, namespace: &str, n: usize) -> Result<Vec<McpCallRecord>> {
        let c = self.client().await?;
        let r = async {
            let sql = format!(
                "SELECT {COLUMNS} FROM mcp_calls WHERE namespace = $1 \
                 ORDER BY started_at DESC, id DESC LIMIT $2"
            );
            let rows = c.query(sql.as_str(), &[&namespace, &limit(n)]).await?;
            rows.iter().map(row_to_record).collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }
}
