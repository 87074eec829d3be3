//! Sign-ins of OAuth-protected upstream MCP servers, as the engine keeps them:
//! the adapter's token vault backed by the store (so every process and every
//! replica on PostgreSQL uses, and refreshes, the same tokens), `login` and
//! `logout` by configured name with the client `[mcp_servers.NAME.oauth]`
//! configures, and each server's sign-in state.

use super::types::{ServerSpec, client_error};
use crate::adapters::mcp::oauth::{
    LoginOptions, LoginOutcome, OAuthClientSettings, OAuthError, OAuthSettings, SignIn, TokenVault,
    VaultEntry, login, sign_in,
};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::time::now_rfc3339;
use crate::engine::Mcp;
use crate::store::{McpTokenRecord, Store};
use async_trait::async_trait;
use std::sync::Arc;
use std::time::Duration;

/// How long one process may hold the refresh lock of a server's tokens.
const REFRESH_LOCK: Duration = Duration::from_secs(30);

/// How long a refresh waits for another process's refresh to finish.
const REFRESH_WAIT: Duration = Duration::from_secs(10);

/// The adapter's token vault over the store.
pub(crate) struct StoreVault {
    store: Arc<dyn Store>,
}

fn vault_error(e: HecateError) -> OAuthError {
    OAuthError::Vault(e.message)
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[async_trait]
impl TokenVault for StoreVault {
    async fn load(&self, server: &str) -> std::result::Result<Option<VaultEntry>, OAuthError> {
        Ok(self
            .store
            .load_mcp_token(server)
            .await
            .map_err(vault_error)?
            .map(|r| VaultEntry {
                server: r.server,
                issuer: r.issuer,
                client_id: r.client_id,
                credentials: r.credentials,
            }))
    }

    async fn save(&self, entry: VaultEntry) -> std::result::Result<(), OAuthError> {
        self.store
            .save_mcp_token(&McpTokenRecord {
                server: entry.server,
                issuer: entry.issuer,
                client_id: entry.client_id,
                credentials: entry.credentials,
                updated_at: now_rfc3339(),
            })
            .await
            .map_err(vault_error)
    }

    async fn clear(&self, server: &str) -> std::result::Result<u64, OAuthError> {
        self.store
            .delete_mcp_tokens(server)
            .await
            .map_err(vault_error)
    }

    async fn lock_refresh(
        &self,
        server: &str,
        owner: &str,
    ) -> std::result::Result<bool, OAuthError> {
        let deadline = tokio::time::Instant::now() + REFRESH_WAIT;
        loop {
            let now = now_ms();
            let taken = self
                .store
                .lock_mcp_token_refresh(server, owner, now, now + REFRESH_LOCK.as_millis() as i64)
                .await
                .map_err(vault_error)?;
            if taken || tokio::time::Instant::now() >= deadline {
                return Ok(taken);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    async fn unlock_refresh(&self, server: &str, owner: &str) {
        if let Err(e) = self.store.unlock_mcp_token_refresh(server, owner).await {
            tracing::warn!(server, error = %e.message, "could not release an OAuth refresh lock");
        }
    }
}

fn oauth_error(server: &str, e: OAuthError) -> HecateError {
    match e {
        OAuthError::AuthRequired { reason, .. } => client_error(
            server,
            &crate::adapters::mcp::McpClientError::AuthRequired {
                server: server.to_string(),
                reason,
            },
        ),
        OAuthError::Vault(m) => HecateError::store(m),
        e @ OAuthError::NoClient { .. } => HecateError::invalid(e.to_string())
            .with_detail("server", server)
            .with_detail("field", format!("mcp_servers.{server}.oauth.client_id"))
            .with_operator_action(format!(
                "Register a client for Hecate at the authorization server and set `client_id` \
                 (and `client_secret_env` for a confidential client) under [mcp_servers.{server}.oauth]; \
                 or set `client_metadata_url` if the server supports client ID metadata documents."
            )),
        OAuthError::SecretMissing { ref var, .. } => {
            HecateError::invalid(e.to_string())
                .with_detail("server", server)
                .with_detail("field", format!("mcp_servers.{server}.oauth.client_secret_env"))
                .with_operator_action(format!(
                    "Set the environment variable {var} to the client secret, then run `hecate mcp login {server}` again."
                ))
        }
        e @ OAuthError::RedirectPort { .. } => HecateError::invalid(e.to_string())
            .with_detail("server", server)
            .with_detail("field", format!("mcp_servers.{server}.oauth.redirect_port"))
            .with_operator_action(
                "Stop what listens on that port, or register another redirect URI and change `redirect_port`.",
            ),
        other => HecateError::gateway(other.to_string())
            .with_detail("server", server)
            .with_operator_action(format!(
                "Check that the server's authorization server is reachable, then run `hecate mcp login {server}` again."
            )),
    }
}

impl<'e> Mcp<'e> {
    fn vault(self) -> Arc<dyn TokenVault> {
        Arc::new(StoreVault {
            store: self.engine.inner.store.clone(),
        })
    }

    /// Tells the pool which configured HTTP servers sign in through OAuth (every
    /// one that sends no `Authorization` header of its own), where their tokens
    /// are and which client each one's refresh authenticates as.
    pub(super) fn configure_sign_ins(self) {
        let servers = self.servers();
        let names = servers
            .iter()
            .filter_map(|s| match &s.spec {
                ServerSpec::Http { url, .. } => Some((url.clone(), s.name.clone())),
                ServerSpec::Stdio { .. } => None,
            })
            .collect();
        let clients = servers
            .iter()
            .filter(|s| s.oauth != OAuthClientSettings::default())
            .map(|s| (s.name.clone(), s.oauth.clone()))
            .collect();
        self.engine.mcp_hub().pool.set_oauth(OAuthSettings {
            vault: self.vault(),
            names,
            clients,
        });
    }

    /// The endpoint and the configured OAuth client of the HTTP server `server`.
    fn http_server(self, server: &str) -> Result<(String, OAuthClientSettings)> {
        let s = self.mcp_server(server)?;
        match &s.spec {
            ServerSpec::Http { url, .. } => Ok((url.clone(), s.oauth.clone())),
            ServerSpec::Stdio { .. } => Err(HecateError::invalid(format!(
                "upstream MCP server {server:?} runs on stdio: only HTTP servers take an OAuth sign-in"
            ))),
        }
    }

    /// Signs in to the configured HTTP server `server` as its configured
    /// client: `show` gets the authorization URL to print or open; the tokens
    /// are stored once the loopback redirect came back within `timeout`.
    /// `scopes`, when not empty, replace the configured ones.
    pub async fn login(
        self,
        server: &str,
        scopes: Vec<String>,
        timeout: Duration,
        show: impl FnOnce(&str),
    ) -> Result<LoginOutcome> {
        let (url, client) = self.http_server(server)?;
        let opts = LoginOptions {
            server: server.to_string(),
            url,
            scopes: if scopes.is_empty() {
                client.scopes.clone()
            } else {
                scopes
            },
            timeout,
            client,
        };
        let outcome = login(&opts, self.vault(), show)
            .await
            .map_err(|e| oauth_error(server, e))?;
        self.forget_sign_in_failures(server);
        Ok(outcome)
    }

    /// Forgets the stored sign-in of `server`; answers whether there was one.
    /// It holds the refresh lock while it clears, so a refresh under way (in
    /// any process) finishes first instead of writing its tokens back after.
    pub async fn logout(self, server: &str) -> Result<bool> {
        self.mcp_server(server)?;
        let vault = self.vault();
        let owner = format!("logout-{}", uuid::Uuid::new_v4());
        let locked = vault
            .lock_refresh(server, &owner)
            .await
            .map_err(|e| oauth_error(server, e))?;
        if !locked {
            return Err(HecateError::new(
                ErrorType::Conflict,
                format!("the sign-in of {server:?} is being refreshed and the refresh did not finish in time"),
            )
            .with_operator_action(format!("Retry `hecate mcp logout {server}`.")));
        }
        let cleared = vault.clear(server).await;
        vault.unlock_refresh(server, &owner).await;
        let n = cleared.map_err(|e| oauth_error(server, e))?;
        self.forget_sign_in_failures(server);
        Ok(n > 0)
    }

    /// The stored sign-in state of `server`, read without network calls.
    pub async fn sign_in(self, server: &str) -> Result<SignIn> {
        sign_in(self.vault().as_ref(), server)
            .await
            .map_err(|e| oauth_error(server, e))
    }

    /// The refusal of `server`'s last connect, listing or call for want of a
    /// sign-in (type `auth_required`), unless something succeeded since.
    pub fn sign_in_refusal(self, server: &str) -> Option<HecateError> {
        self.engine.mcp_hub().sign_in_needed(server)
    }

    fn forget_sign_in_failures(self, server: &str) {
        let hub = self.engine.mcp_hub();
        hub.failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(server);
        hub.sign_ins_needed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(server);
        hub.forget_tools(&[server.to_string()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_hecate_cannot_get_is_an_invalid_request_naming_the_fix() {
        let e = oauth_error(
            "gh",
            OAuthError::NoClient {
                server: "gh".into(),
                issuer: "https://as.example".into(),
                detail: "no client_id is configured".into(),
            },
        );
        assert_eq!(e.error_type, ErrorType::InvalidRequest);
        assert!(e.operator_action.contains("client_id"), "{e:?}");
        assert!(
            e.operator_action.contains("[mcp_servers.gh.oauth]"),
            "{e:?}"
        );
        let e = oauth_error(
            "gh",
            OAuthError::SecretMissing {
                server: "gh".into(),
                var: "GH_SECRET".into(),
            },
        );
        assert_eq!(e.error_type, ErrorType::InvalidRequest);
        assert!(e.operator_action.contains("GH_SECRET"), "{e:?}");
    }
}
