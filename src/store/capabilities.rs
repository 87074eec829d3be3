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
    /// Deletes the record `key` names; answers whether there was one.
    async fn delete_capability(&self, key: CapabilityKey<'_>) -> Result<bool>;
    /// Every stored record, by provider, model and source.
    async fn list_capabilities(&self) -> Result<Vec<CapabilityRecord>>;
}

/// The (provider, model, source) that names one stored capability record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapabilityKey<'a> {
    /// Provider name.
    pub provider: &'a str,
    /// Model name at that provider.
    pub model: &'a str,
    /// Where the record came from.
    pub source: CapabilitySource,
}
