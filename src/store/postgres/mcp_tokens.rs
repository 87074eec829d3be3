//! OAuth sign-ins of upstream MCP servers in PostgreSQL (`mcp_oauth_tokens`),
//! shared by every replica: a refresh by one is what the others load next.

use super::{OpResult, PostgresStore};
use crate::domain::error::Result;
use crate::store::mcp_tokens::{McpTokenRecord, McpTokenStore};
use async_trait::async_trait;
use tokio_postgres::Row;

const COLUMNS: &str = "server, issuer, client_id, credentials, updated_at";

fn decode(r: &Row) -> OpResult<McpTokenRecord> {
    Ok(McpTokenRecord {
        server: r.try_get(0)?,
        issuer: r.try_get(1)?,
        client_id: r.try_get(2)?,
        credentials: r.try_get(3)?,
        updated_at: r.try_get(4)?,
    })
}

#[async_trait]
impl McpTokenStore for PostgresStore {
    async fn load_mcp_token(&self, server: &str) -> Result<Option<McpTokenRecord>> {
        let c = self.client().await?;
        let r = async {
            let row = c
                .query_opt(
                    &format!(
                        "SELECT {COLUMNS} FROM mcp_oauth_tokens WHERE server = $1 \
                         ORDER BY updated_at DESC, issuer LIMIT 1"
                    ),
                    &[&server],
                )
                .await?;
            row.as_ref().map(decode).transpose()
        }
        .await;
        self.done(r)
    }

    async fn save_mcp_token(&self, record: &McpTokenRecord) -> Result<()> {
        let c = self.client().await?;
        let r: OpResult<()> = async {
            c.execute(
                &format!(
                    "INSERT INTO mcp_oauth_tokens ({COLUMNS}) VALUES ($1,$2,$3,$4,$5) \
                     ON CONFLICT (server, issuer) DO UPDATE SET client_id = EXCLUDED.client_id, \
                     credentials = EXCLUDED.credentials, updated_at = EXCLUDED.updated_at"
                ),
                &[
                    &record.server,
                    &record.issuer,
                    &record.client_id,
                    &record.credentials,
                    &record.updated_at,
                ],
            )
            .await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn delete_mcp_tokens(&self, server: &str) -> Result<u64> {
        let c = self.client().await?;
        let r: OpResult<u64> = async {
            Ok(
                c.execute("DELETE FROM mcp_oauth_tokens WHERE server = $1", &[&server])
                    .await?,
            )
        }
        .await;
        self.done(r)
    }

    async fn lock_mcp_token_refresh(
        &self,
        server: &str,
        owner: &str,
        now_ms: i64,
        until_ms: i64,
    ) -> Result<bool> {
        let c = self.client().await?;
        let r: OpResult<bool> = async {
            let rows: i64 = c
                .query_one(
                    "SELECT COUNT(*) FROM mcp_oauth_tokens WHERE server = $1",
                    &[&server],
                )
                .await?
                .try_get(0)?;
            if rows == 0 {
                return Ok(true);
            }
            let taken = c
                .execute(
                    "UPDATE mcp_oauth_tokens SET refresh_owner = $2, refresh_until_ms = $4 \
                     WHERE server = $1 AND (refresh_owner IS NULL OR refresh_owner = $2 \
                     OR refresh_until_ms IS NULL OR refresh_until_ms < $3)",
                    &[&server, &owner, &now_ms, &until_ms],
                )
                .await?;
            Ok(taken > 0)
        }
        .await;
        self.done(r)
    }

    async fn unlock_mcp_token_refresh(&self, server: &str, owner: &str) -> Result<()> {
        let c = self.client().await?;
        let r: OpResult<()> = async {
            c.execute(
                "UPDATE mcp_oauth_tokens SET refresh_owner = NULL, refresh_until_ms = NULL \
                 WHERE server = $1 AND refresh_owner = $2",
                &[&server, &owner],
            )
            .await?;
            Ok(())
        }
        .await;
        self.done(r)
    }
}
