//! The audit log of proxied upstream MCP tool calls, and the tool policies an
//! operator set.

use super::{OpResult, PostgresStore, big, limit};
use crate::domain::error::Result;
use crate::store::rows::audit::{self as decode, AUDIT_COLUMNS};
use crate::store::{AuditStore, McpCallRecord, McpToolPolicy};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;

#[async_trait]
impl AuditStore for PostgresStore {
    async fn record_mcp_calls(&self, records: &[McpCallRecord]) -> Result<()> {
        let mut c = self.client().await?;
        let r: OpResult<()> = async {
            let tx = c.transaction().await?;
            let stmt = tx
                .prepare_cached(&format!(
                    "INSERT INTO mcp_calls ({AUDIT_COLUMNS}) VALUES \
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
                "SELECT {AUDIT_COLUMNS} FROM mcp_calls WHERE namespace = $1 \
                 ORDER BY started_at DESC, id DESC LIMIT $2"
            );
            let rows = c.query(sql.as_str(), &[&namespace, &limit(n)]).await?;
            rows.iter()
                .map(decode::record)
                .collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }

    async fn set_mcp_tool_policy(&self, p: &McpToolPolicy) -> Result<()> {
        let c = self.client().await?;
        let r = c
            .execute(
                "INSERT INTO mcp_tool_policies (namespace, server, tool, policy, updated_at) \
                 VALUES ($1, $2, $3, $4, $5) ON CONFLICT (namespace, server, tool) \
                 DO UPDATE SET policy = excluded.policy, updated_at = excluded.updated_at",
                &[&p.namespace, &p.server, &p.tool, &p.policy, &p.updated_at],
            )
            .await
            .map(|_| ())
            .map_err(Into::into);
        self.done(r)
    }

    async fn list_mcp_tool_policies(&self, namespace: &str) -> Result<Vec<McpToolPolicy>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    "SELECT namespace, server, tool, policy, updated_at FROM mcp_tool_policies \
                     WHERE namespace = $1 ORDER BY server, tool",
                    &[&namespace],
                )
                .await?;
            Ok(rows
                .iter()
                .map(|r| McpToolPolicy {
                    namespace: r.get(0),
                    server: r.get(1),
                    tool: r.get(2),
                    policy: r.get(3),
                    updated_at: r.get(4),
                })
                .collect())
        }
        .await;
        self.done(r)
    }
}
