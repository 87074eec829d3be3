//! The contract for named API keys: stored with the SHA-256 of their token,
//! process-wide (a key's namespaces are part of its scope), so every replica on
//! a PostgreSQL store honours a key another replica or the CLI created or revoked.

use crate::domain::api_key::ApiKey;
use crate::domain::error::Result;
use crate::domain::ids::ApiKeyId;
use async_trait::async_trait;

/// A stored key with the hash its token is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredKey {
    /// The key.
    pub key: ApiKey,
    /// SHA-256 of the whole token, in hex.
    pub token_hash: String,
}

/// Stored API keys.
#[async_trait]
pub trait KeyStore: Send + Sync {
    /// Stores a new key; `conflict` when a key not revoked has its name.
    async fn insert_key(&self, key: &StoredKey) -> Result<()>;
    /// The key with this id, revoked and expired ones included.
    async fn get_key(&self, id: &ApiKeyId) -> Result<Option<StoredKey>>;
    /// Every key, newest first, revoked ones included.
    async fn list_keys(&self) -> Result<Vec<ApiKey>>;
    /// Marks the key revoked at `at` unless it already is; answers the key as
    /// stored afterwards, `None` when no key has this id.
    async fn revoke_key(&self, id: &ApiKeyId, at: &str) -> Result<Option<ApiKey>>;
    /// Records that the key was used at `at`.
    async fn touch_key(&self, id: &ApiKeyId, at: &str) -> Result<()>;
}
