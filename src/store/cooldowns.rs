//! The contract for shared provider cooldowns: when one process learns that a
//! provider is rate limited or its circuit is open, it stores until when, and
//! every process on the store skips that provider until then (replicas share
//! what each learns instead of each finding out with a failed request).

use crate::domain::error::Result;
use async_trait::async_trait;

/// A provider the gateway skips until `until_ms`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderCooldown {
    /// The configured provider's name.
    pub provider: String,
    /// Why: `provider_rate_limited` or `circuit_open`.
    pub reason: String,
    /// When the cooldown ends, in milliseconds since the Unix epoch.
    pub until_ms: i64,
    /// The process that learnt it (its owner id).
    pub owner: String,
    /// When it was stored (RFC 3339).
    pub updated_at: String,
}

/// Stored provider cooldowns, one per provider, process-wide (providers are
/// configuration every namespace shares).
#[async_trait]
pub trait CooldownStore: Send + Sync {
    /// Stores the cooldown, replacing the provider's earlier one unless that
    /// one ends later.
    async fn put_cooldown(&self, cooldown: &ProviderCooldown) -> Result<()>;
    /// The cooldowns still running at `now_ms`, by provider.
    async fn list_cooldowns(&self, now_ms: i64) -> Result<Vec<ProviderCooldown>>;
}
