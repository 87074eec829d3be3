//! Shared provider cooldowns in SQLite (`provider_cooldowns`), one row per
//! provider.

use super::SqliteStore;
use super::reads::all;
use crate::domain::error::Result;
use crate::store::cooldowns::{CooldownStore, ProviderCooldown};
use async_trait::async_trait;
use rusqlite::params;

#[async_trait]
impl CooldownStore for SqliteStore {
    async fn put_cooldown(&self, cooldown: &ProviderCooldown) -> Result<()> {
        let c = cooldown.clone();
        self.write(move |conn| {
            conn.prepare_cached(
                "INSERT INTO provider_cooldowns (provider, reason, until_ms, owner, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT (provider) DO UPDATE SET reason = excluded.reason, \
                 until_ms = excluded.until_ms, owner = excluded.owner, \
                 updated_at = excluded.updated_at \
                 WHERE excluded.until_ms >= provider_cooldowns.until_ms",
            )?
            .execute(params![
                c.provider,
                c.reason,
                c.until_ms,
                c.owner,
                c.updated_at
            ])?;
            Ok(())
        })
        .await
    }

    async fn list_cooldowns(&self, now_ms: i64) -> Result<Vec<ProviderCooldown>> {
        self.read(move |conn| {
            all(
                conn,
                "SELECT provider, reason, until_ms, owner, updated_at FROM provider_cooldowns \
                 WHERE until_ms > ?1 ORDER BY provider",
                [now_ms],
                |r| {
                    Ok(ProviderCooldown {
                        provider: r.get(0)?,
                        reason: r.get(1)?,
                        until_ms: r.get(2)?,
                        owner: r.get(3)?,
                        updated_at: r.get(4)?,
                    })
                },
            )
        })
        .await
    }
}
