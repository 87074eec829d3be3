//! Shared provider cooldowns in PostgreSQL (`provider_cooldowns`), one row per
//! provider, seen by every replica on the database.

use super::PostgresStore;
use crate::domain::error::Result;
use crate::store::cooldowns::{CooldownStore, ProviderCooldown};
use async_trait::async_trait;

#[async_trait]
impl CooldownStore for PostgresStore {
    async fn put_cooldown(&self, cooldown: &ProviderCooldown) -> Result<()> {
        let c = self.client().await?;
        let r = c
            .execute(
                "INSERT INTO provider_cooldowns (provider, reason, until_ms, owner, updated_at) \
                 VALUES ($1, $2, $3, $4, $5) \
                 ON CONFLICT (provider) DO UPDATE SET reason = EXCLUDED.reason, \
                 until_ms = EXCLUDED.until_ms, owner = EXCLUDED.owner, \
                 updated_at = EXCLUDED.updated_at \
                 WHERE EXCLUDED.until_ms >= provider_cooldowns.until_ms",
                &[
                    &cooldown.provider,
                    &cooldown.reason,
                    &cooldown.until_ms,
                    &cooldown.owner,
                    &cooldown.updated_at,
                ],
            )
            .await
            .map(|_| ())
            .map_err(Into::into);
        self.done(r)
    }

    async fn list_cooldowns(&self, now_ms: i64) -> Result<Vec<ProviderCooldown>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    "SELECT provider, reason, until_ms, owner, updated_at FROM provider_cooldowns \
                     WHERE until_ms > $1 ORDER BY provider",
                    &[&now_ms],
                )
                .await?;
            rows.iter()
                .map(|r| {
                    Ok(ProviderCooldown {
                        provider: r.try_get(0)?,
                        reason: r.try_get(1)?,
                        until_ms: r.try_get(2)?,
                        owner: r.try_get(3)?,
                        updated_at: r.try_get(4)?,
                    })
                })
                .collect()
        }
        .await;
        self.done(r)
    }
}
