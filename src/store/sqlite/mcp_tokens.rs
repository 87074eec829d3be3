//! OAuth sign-ins of upstream MCP servers in SQLite (`mcp_oauth_tokens`).

use super::SqliteStore;
use crate::domain::error::Result;
use crate::store::mcp_tokens::{McpTokenRecord, McpTokenStore};
use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

const COLUMNS: &str = "server, issuer, client_id, credentials, updated_at";

fn decode(r: &rusqlite::Row<'_>) -> rusqlite::Result<McpTokenRecord> {
    Ok(McpTokenRecord {
        server: r.get(0)?,
        issuer: r.get(1)?,
        client_id: r.get(2)?,
        credentials: r.get(3)?,
        updated_at: r.get(4)?,
    })
}

#[async_trait]
impl McpTokenStore for SqliteStore {
    async fn load_mcp_token(&self, server: &str) -> Result<Option<McpTokenRecord>> {
        let server = server.to_owned();
        self.read(move |c| {
            Ok(c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM mcp_oauth_tokens WHERE server = ?1 \
                     ORDER BY updated_at DESC, issuer LIMIT 1"
            ))?
            .query_row([server], decode)
            .optional()?)
        })
        .await
    }

    async fn save_mcp_token(&self, record: &McpTokenRecord) -> Result<()> {
        let r = record.clone();
        self.write(move |c| {
            c.prepare_cached(&format!(
                "INSERT INTO mcp_oauth_tokens ({COLUMNS}) VALUES (?1,?2,?3,?4,?5) \
                 ON CONFLICT (server, issuer) DO UPDATE SET client_id = excluded.client_id, \
                 credentials = excluded.credentials, updated_at = excluded.updated_at"
            ))?
            .execute(params![
                r.server,
                r.issuer,
                r.client_id,
                r.credentials,
                r.updated_at
            ])?;
            Ok(())
        })
        .await
    }

    async fn delete_mcp_tokens(&self, server: &str) -> Result<u64> {
        let server = server.to_owned();
        self.write(move |c| {
            let n = c
                .prepare_cached("DELETE FROM mcp_oauth_tokens WHERE server = ?1")?
                .execute([server])?;
            Ok(n as u64)
        })
        .await
    }

    async fn lock_mcp_token_refresh(
        &self,
        server: &str,
        owner: &str,
        now_ms: i64,
        until_ms: i64,
    ) -> Result<bool> {
        let (server, owner) = (server.to_owned(), owner.to_owned());
        self.write(move |c| {
            let rows: i64 = c
                .prepare_cached("SELECT COUNT(*) FROM mcp_oauth_tokens WHERE server = ?1")?
                .query_row([&server], |r| r.get(0))?;
            if rows == 0 {
                return Ok(true);
            }
            let taken = c
                .prepare_cached(
                    "UPDATE mcp_oauth_tokens SET refresh_owner = ?2, refresh_until_ms = ?4 \
                     WHERE server = ?1 AND (refresh_owner IS NULL OR refresh_owner = ?2 \
                     OR refresh_until_ms IS NULL OR refresh_until_ms < ?3)",
                )?
                .execute(params![server, owner, now_ms, until_ms])?;
            Ok(taken > 0)
        })
        .await
    }

    async fn unlock_mcp_token_refresh(&self, server: &str, owner: &str) -> Result<()> {
        let (server, owner) = (server.to_owned(), owner.to_owned());
        self.write(move |c| {
            c.prepare_cached(
                "UPDATE mcp_oauth_tokens SET refresh_owner = NULL, refresh_until_ms = NULL \
                 WHERE server = ?1 AND refresh_owner = ?2",
            )?
            .execute(params![server, owner])?;
            Ok(())
        })
        .await
    }
}
