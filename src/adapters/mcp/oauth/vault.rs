//! The OAuth client's vocabulary: its typed failures, the token vault it keeps
//! sign-ins in (backed by the store through the engine) and a stored sign-in's
//! state.

use async_trait::async_trait;

/// Something the OAuth client could not do, with the server it was for.
#[derive(Debug, Clone, thiserror::Error)]
pub enum OAuthError {
    /// The server must be signed in to (again): no tokens, or they expired and
    /// could not be refreshed, or they were revoked.
    #[error(
        "upstream MCP server {server:?} needs a sign-in (auth_required): {reason}; run `hecate mcp login {server}`"
    )]
    AuthRequired {
        /// The configured server name.
        server: String,
        /// What happened, without any token.
        reason: String,
    },
    /// Discovery, registration or the token exchange failed.
    #[error("OAuth sign-in to {server:?} failed: {message}")]
    Flow {
        /// The configured server name.
        server: String,
        /// What failed, without any token.
        message: String,
    },
    /// The loopback redirect could not be served or never came.
    #[error("OAuth sign-in to {server:?}: {message}")]
    Redirect {
        /// The configured server name.
        server: String,
        /// What went wrong.
        message: String,
    },
    /// The token vault (the store) failed.
    #[error("the OAuth token store failed: {0}")]
    Vault(String),
    /// The client cannot be identified to the authorization server: no
    /// `client_id` is configured and neither a client ID metadata document nor
    /// dynamic registration is possible.
    #[error(
        "cannot sign in to {server:?}: {detail} (authorization server {issuer}); configure a client_id, a client ID metadata document or use a server with dynamic client registration"
    )]
    NoClient {
        /// The configured server name.
        server: String,
        /// The authorization server's issuer.
        issuer: String,
        /// What the configuration and the server lack.
        detail: String,
    },
    /// The variable `client_secret_env` names is unset or empty.
    #[error(
        "the OAuth client secret of {server:?} is read from the environment variable {var}, which is not set"
    )]
    SecretMissing {
        /// The configured server name.
        server: String,
        /// The variable's name.
        var: String,
    },
    /// `redirect_port` is taken or cannot be bound.
    #[error(
        "OAuth sign-in to {server:?}: cannot listen on 127.0.0.1:{port} for the redirect: {message}"
    )]
    RedirectPort {
        /// The configured server name.
        server: String,
        /// The configured port.
        port: u16,
        /// Why it could not be bound.
        message: String,
    },
}

/// The fix of a missing, expired or revoked sign-in of `server`, as every
/// surface names it (the error's `operator_action`, `hecate doctor`, the server
/// listing).
pub fn login_fix(server: &str) -> String {
    format!("Run `hecate mcp login {server}` and finish the sign-in in a browser.")
}

/// Where sign-ins are kept: one serialized credential set per (server, issuer),
/// shared by every process that opens the same store.
#[async_trait]
pub trait TokenVault: Send + Sync {
    /// The newest credentials of `server` as `(issuer, client_id, json)`.
    async fn load(&self, server: &str) -> Result<Option<VaultEntry>, OAuthError>;
    /// Stores the credentials of (`server`, `issuer`).
    async fn save(&self, entry: VaultEntry) -> Result<(), OAuthError>;
    /// Forgets every sign-in of `server`; answers how many there were.
    async fn clear(&self, server: &str) -> Result<u64, OAuthError>;
    /// Takes the cross-process refresh lock of `server` (waiting a bounded time);
    /// answers whether it was taken.
    async fn lock_refresh(&self, server: &str, owner: &str) -> Result<bool, OAuthError>;
    /// Releases the refresh lock of `server` held by `owner`.
    async fn unlock_refresh(&self, server: &str, owner: &str);
}

/// One stored sign-in. `credentials` holds tokens: it is never logged.
#[derive(Clone)]
pub struct VaultEntry {
    /// The configured server name.
    pub server: String,
    /// The authorization server's issuer (empty when unknown).
    pub issuer: String,
    /// The client id the tokens belong to.
    pub client_id: String,
    /// rmcp's serialized `StoredCredentials`.
    pub credentials: String,
}

impl std::fmt::Debug for VaultEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VaultEntry")
            .field("server", &self.server)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .finish_non_exhaustive()
    }
}

/// Whether a sign-in is stored for a server, and whether it can still be used
/// without the user: `signed_in` holds a token (it may be refreshed), else the
/// server needs `hecate mcp login`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SignIn {
    /// No sign-in is stored.
    Missing,
    /// A token is stored, issued by `issuer`.
    SignedIn {
        /// The issuer.
        issuer: String,
        /// Whether a refresh token is kept with it.
        refreshable: bool,
        /// Seconds until the access token expires (negative once it has), when known.
        expires_in: Option<i64>,
    },
    /// The stored sign-in was rejected (revoked or its refresh failed).
    Rejected {
        /// The issuer.
        issuer: String,
    },
}

/// What the vault says about `server`'s sign-in, read without any network call.
pub async fn sign_in(vault: &dyn TokenVault, server: &str) -> Result<SignIn, OAuthError> {
    read_sign_in(vault.load(server).await?)
}

/// The credentials `entry` holds. A failure says where the parser stopped but
/// not what it read there: its own message may quote a token.
pub(super) fn parse_credentials(
    entry: &VaultEntry,
) -> Result<rmcp::transport::StoredCredentials, String> {
    serde_json::from_str(&entry.credentials).map_err(|e| {
        format!(
            "the stored credentials of {:?} are not readable ({:?} error at line {}, column {})",
            entry.server,
            e.classify(),
            e.line(),
            e.column()
        )
    })
}

/// The sign-in state of one stored entry (`Missing` for none).
pub fn read_sign_in(entry: Option<VaultEntry>) -> Result<SignIn, OAuthError> {
    let Some(entry) = entry else {
        return Ok(SignIn::Missing);
    };
    let stored = parse_credentials(&entry).map_err(OAuthError::Vault)?;
    let Some(tokens) = stored.token_response.as_ref() else {
        return Ok(SignIn::Rejected {
            issuer: entry.issuer,
        });
    };
    use oauth2::TokenResponse;
    let expires_in = match (tokens.expires_in(), stored.token_received_at) {
        (Some(d), Some(at)) => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0);
            Some(at as i64 + d.as_secs() as i64 - now as i64)
        }
        _ => None,
    };
    Ok(SignIn::SignedIn {
        issuer: entry.issuer,
        refreshable: tokens.refresh_token().is_some(),
        expires_in,
    })
}
