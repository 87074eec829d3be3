//! Cooldowns shared between the processes on one store: what this process
//! learns (a 429, an open circuit) is stored at once, and what the others
//! stored is read every `[gateway] cooldown_sync_ms` and adopted, so replicas
//! skip a throttled or failing provider without each paying a failed request.

use crate::domain::time::now_rfc3339;
use crate::engine::Gateway;
use crate::store::ProviderCooldown;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// Milliseconds since the Unix epoch of `t` (0 before it).
fn epoch_ms(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl<'e> Gateway<'e> {
    /// Shares provider cooldowns through the store until `shutdown`: stores
    /// each one this process learns as it learns it, and adopts the others'
    /// every sync period. A store that fails is logged and retried next time.
    pub fn start_cooldown_sync(self, shutdown: CancellationToken) -> JoinHandle<()> {
        let engine = self.engine.clone();
        let every = self.engine.inner.gateway.routing.cooldown_sync;
        tokio::spawn(async move {
            loop {
                engine.gateway().share_cooldowns().await;
                tokio::select! {
                    () = shutdown.cancelled() => break,
                    () = engine.inner.gateway.health.learnt_one() => {}
                    () = tokio::time::sleep(every) => {}
                }
            }
        })
    }

    /// One round: store what was learnt here, adopt what is stored.
    async fn share_cooldowns(self) {
        let health = &self.engine.inner.gateway.health;
        let owner = &self.engine.inner.config.owner_id;
        for learnt in health.take_learnt() {
            let cooldown = ProviderCooldown {
                provider: learnt.provider.clone(),
                reason: learnt.reason.to_string(),
                until_ms: epoch_ms(learnt.until),
                owner: owner.clone(),
                updated_at: now_rfc3339(),
            };
            if let Err(e) = self.engine.store().put_cooldown(&cooldown).await {
                tracing::warn!(provider = %learnt.provider, error = %e, "could not share a provider cooldown");
            }
        }
        let now = epoch_ms(SystemTime::now());
        match self.engine.store().list_cooldowns(now).await {
            Ok(stored) => {
                for c in stored.iter().filter(|c| &c.owner != owner) {
                    let remaining = Duration::from_millis((c.until_ms - now).max(0) as u64);
                    health.adopt(&c.provider, &c.reason, remaining);
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not read the shared provider cooldowns"),
        }
    }
}
