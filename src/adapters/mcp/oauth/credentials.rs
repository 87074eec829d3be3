//! rmcp's `CredentialStore` over a [`TokenVault`]: every load reads the vault
//! (so a refresh another replica stored is used at once), every save writes it,
//! and a refresh holds the vault's cross-process lock for its load, exchange and save.

use super::vault::{OAuthError, TokenVault, VaultEntry, parse_credentials};
use async_trait::async_trait;
use rmcp::transport::auth::{
    AuthError, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use std::sync::Arc;

/// The credentials of one configured server, kept in a [`TokenVault`].
#[derive(Clone)]
pub struct VaultCredentials {
    server: String,
    vault: Arc<dyn TokenVault>,
    owner: String,
}

impl VaultCredentials {
    /// The credentials of `server` in `vault`.
    pub fn new(server: &str, vault: Arc<dyn TokenVault>) -> Self {
        Self {
            server: server.to_string(),
            vault,
            owner: format!("{}-{}", std::process::id(), uuid::Uuid::new_v4().simple()),
        }
    }
}

fn store_error(e: OAuthError) -> AuthError {
    AuthError::CredentialStoreError(e.to_string())
}

/// Releases the vault's refresh lock when the refresh is over.
struct Unlock {
    server: String,
    owner: String,
    vault: Arc<dyn TokenVault>,
}

impl Drop for Unlock {
    fn drop(&mut self) {
        let (server, owner, vault) = (
            std::mem::take(&mut self.server),
            std::mem::take(&mut self.owner),
            self.vault.clone(),
        );
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move { vault.unlock_refresh(&server, &owner).await });
        }
    }
}

#[async_trait]
impl CredentialStore for VaultCredentials {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        let Some(entry) = self.vault.load(&self.server).await.map_err(store_error)? else {
            return Ok(None);
        };
        parse_credentials(&entry)
            .map(Some)
            .map_err(AuthError::CredentialStoreError)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let entry = VaultEntry {
            server: self.server.clone(),
            issuer: credentials.issuer.clone().unwrap_or_default(),
            client_id: credentials.client_id.clone(),
            credentials: serde_json::to_string(&credentials)
                .map_err(|e| AuthError::CredentialStoreError(e.to_string()))?,
        };
        self.vault.save(entry).await.map_err(store_error)
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.vault
            .clear(&self.server)
            .await
            .map(|_| ())
            .map_err(store_error)
    }

    async fn on_refresh_token_rejected(
        &self,
        credentials: &StoredCredentials,
    ) -> Result<(), AuthError> {
        // The tokens are dead: keep the registration, drop them, so every
        // replica (and `doctor`) sees that a sign-in is needed. A newer sign-in
        // saved meanwhile is left alone.
        let current = self.load().await?;
        let same = match (&current, &credentials.token_response) {
            (Some(c), Some(rejected)) => c.token_response.as_ref().is_some_and(|t| {
                use oauth2::TokenResponse;
                t.access_token().secret() == rejected.access_token().secret()
            }),
            _ => false,
        };
        if same {
            let dead = StoredCredentials::new(
                credentials.client_id.clone(),
                None,
                credentials.granted_scopes.clone(),
                None,
            )
            .with_issuer(credentials.issuer.clone());
            self.save(dead).await?;
        }
        Ok(())
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        if self
            .vault
            .lock_refresh(&self.server, &self.owner)
            .await
            .map_err(store_error)?
        {
            Ok(Some(CredentialRefreshGuard::new(Unlock {
                server: self.server.clone(),
                owner: self.owner.clone(),
                vault: self.vault.clone(),
            })))
        } else {
            Err(AuthError::CredentialStoreError(format!(
                "another process is refreshing the sign-in of {:?}; retry",
                self.server
            )))
        }
    }
}
