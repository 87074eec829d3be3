//! The contract for stored model capabilities: operator overrides and probe
//! results, one record per (provider, model, source), shared by every process
//! on the store (replicas see each other's writes).

use crate::domain::capability::{CapabilityRecord, CapabilitySource};
use crate::domain::error::Result;
use async_trait::async_trait;

/// Stored capability records.
#[async_trait]
pub trait CapabilityStore: Send + Sync {
    /// Inserts the record, or replaces the one of the same provider, model and
    /// source.
    async fn put_capability(&self, record: &CapabilityRecord) -> Result<()>;
    /// Deletes the record of `provider`/`model` from `source`; answers whether
    /// there was one.
    async fn delete_capability(
        &self,
        provider: &str,
        model: &str,
        source: CapabilitySource,
    ) -> Result<bool>;
    /// Every stored record, by provider, model and source.
    async fn list_capabilities(&self) -> Result<Vec<CapabilityRecord>>;
}
