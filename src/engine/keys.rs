//! Named API keys: created with a scope and an optional lifetime (the token is
//! answered once and only its hash stored), listed, revoked, and checked on
//! every request that presents one. Keys live in the store, so a key the CLI or
//! another replica creates or revokes takes effect on the next request.

use super::Engine;
use crate::domain::api_key::{self, ApiKey, Identity, KeyScope, KeyState};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::ApiKeyId;
use crate::domain::time::{format_rfc3339, now_millis, now_rfc3339, parse_millis};
use crate::store::StoredKey;
use std::sync::Arc;
use std::time::Duration;
use subtle::ConstantTimeEq;
use time::OffsetDateTime;

/// How stale a key's `last_used_at` may get before a request writes it again.
const TOUCH_EVERY_MS: i64 = 60_000;

/// Longest name a key may have.
const MAX_NAME_LEN: usize = 64;

/// A key just created, with the token its holder presents (shown only now).
#[derive(Debug, Clone)]
pub struct IssuedKey {
    /// The stored key.
    pub key: ApiKey,
    /// The whole token, `ID.SECRET`.
    pub token: String,
}

/// Why a presented key does not open the hub.
#[derive(Debug, thiserror::Error)]
pub enum KeyRefusal {
    /// No key has the token's id, or the secret does not match.
    #[error("the API key is not valid here")]
    Unknown,
    /// The key was revoked.
    #[error("the API key {name:?} was revoked at {at}")]
    Revoked {
        /// Key name.
        name: String,
        /// When it was revoked.
        at: String,
    },
    /// The key's lifetime ended.
    #[error("the API key {name:?} expired at {at}")]
    Expired {
        /// Key name.
        name: String,
        /// When it expired.
        at: String,
    },
    /// The store could not be read.
    #[error(transparent)]
    Store(#[from] HecateError),
}

/// The keys' operations, from [`Engine::keys`].
#[derive(Clone, Copy)]
pub struct Keys<'e> {
    engine: &'e Engine,
}

impl Engine {
    /// Named API keys: create, list, revoke, authenticate.
    pub fn keys(&self) -> Keys<'_> {
        Keys { engine: self }
    }
}

impl Keys<'_> {
    /// Creates a key named `name` with `scope`, expiring after `expires_in`
    /// when given, recorded as made by `created_by`.
    pub async fn create(
        &self,
        name: &str,
        scope: KeyScope,
        expires_in: Option<Duration>,
        created_by: &str,
    ) -> Result<IssuedKey> {
        let name = name.trim();
        if name.is_empty()
            || name.len() > MAX_NAME_LEN
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.@".contains(&b))
        {
            return Err(HecateError::invalid(format!(
                "key name {name:?} must be 1 to {MAX_NAME_LEN} letters, digits, '-', '_', '.' or '@'"
            ))
            .with_detail("field", "name"));
        }
        let expires_at = match expires_in {
            None => None,
            Some(d) if d.is_zero() => {
                return Err(HecateError::invalid("expires_in must be longer than zero")
                    .with_detail("field", "expires_in"));
            }
            Some(d) => {
                let at = time::Duration::try_from(d)
                    .ok()
                    .and_then(|d| OffsetDateTime::now_utc().checked_add(d))
                    .ok_or_else(|| {
                        HecateError::invalid("expires_in is too long")
                            .with_detail("field", "expires_in")
                    })?;
                Some(format_rfc3339(at))
            }
        };
        let id = ApiKeyId::generate();
        let token = api_key::new_token(&id);
        let key = ApiKey {
            id,
            name: name.to_string(),
            scope,
            created_by: created_by.to_string(),
            created_at: now_rfc3339(),
            expires_at,
            revoked_at: None,
            last_used_at: None,
        };
        self.engine
            .store()
            .insert_key(&StoredKey {
                key: key.clone(),
                token_hash: api_key::token_hash(&token),
            })
            .await?;
        tracing::info!(key = %key.name, id = %key.id, role = %key.scope.role, by = created_by, "API key created");
        Ok(IssuedKey { key, token })
    }

    /// Every key, newest first, revoked and expired ones included.
    pub async fn list(&self) -> Result<Vec<ApiKey>> {
        self.engine.store().list_keys().await
    }

    /// The key named or identified by `id_or_name` (a live key for a name).
    pub async fn find(&self, id_or_name: &str) -> Result<ApiKey> {
        let keys = self.list().await?;
        keys.iter()
            .find(|k| k.id.as_str() == id_or_name)
            .or_else(|| {
                keys.iter()
                    .find(|k| k.name == id_or_name && k.revoked_at.is_none())
            })
            .cloned()
            .ok_or_else(|| HecateError::not_found("API key", id_or_name))
    }

    /// Revokes the key named or identified by `id_or_name`; revoking a revoked
    /// key answers it unchanged.
    pub async fn revoke(&self, id_or_name: &str) -> Result<ApiKey> {
        let key = self.find(id_or_name).await?;
        let revoked = self
            .engine
            .store()
            .revoke_key(&key.id, &now_rfc3339())
            .await?
            .ok_or_else(|| HecateError::not_found("API key", id_or_name))?;
        tracing::info!(key = %revoked.name, id = %revoked.id, "API key revoked");
        Ok(revoked)
    }

    /// The identity a presented key token acts as, or why it does not open the hub.
    pub async fn authenticate(&self, token: &str) -> std::result::Result<Identity, KeyRefusal> {
        let Some((id, _)) = api_key::split_token(token) else {
            return Err(KeyRefusal::Unknown);
        };
        let Some(stored) = self.engine.store().get_key(&id).await? else {
            return Err(KeyRefusal::Unknown);
        };
        let presented = api_key::token_hash(token);
        if !bool::from(presented.as_bytes().ct_eq(stored.token_hash.as_bytes())) {
            return Err(KeyRefusal::Unknown);
        }
        let key = stored.key;
        let now = now_millis();
        match key.state(now) {
            KeyState::Revoked => {
                return Err(KeyRefusal::Revoked {
                    at: key.revoked_at.clone().unwrap_or_default(),
                    name: key.name,
                });
            }
            KeyState::Expired => {
                return Err(KeyRefusal::Expired {
                    at: key.expires_at.clone().unwrap_or_default(),
                    name: key.name,
                });
            }
            KeyState::Active => {}
        }
        let stale = key
            .last_used_at
            .as_deref()
            .and_then(parse_millis)
            .is_none_or(|at| now - at >= TOUCH_EVERY_MS);
        if stale && let Err(e) = self.engine.store().touch_key(&key.id, &now_rfc3339()).await {
            tracing::warn!(key = %key.name, error = %e, "could not record the API key's use");
        }
        Ok(Identity::Key(Arc::new(key)))
    }
}
