//! The contract for the OAuth sign-ins of upstream MCP servers: one row per
//! (server, issuer) holding the client registration and the tokens as the
//! OAuth client serialized them, process-wide, so every replica on a PostgreSQL
//! store uses and refreshes the same tokens. A short refresh lock on the rows
//! keeps two replicas from spending one rotating refresh token at once.

use crate::domain::error::Result;
use async_trait::async_trait;

/// One stored sign-in. `credentials` holds secrets: it is never logged or shown.
#[derive(Clone, PartialEq, Eq)]
pub struct McpTokenRecord {
    /// The configured server name (`[mcp_servers.NAME]`).
    pub server: String,
    /// The authorization server's issuer (empty when it published none).
    pub issuer: String,
    /// The OAuth client id the tokens were issued to.
    pub client_id: String,
    /// The client's serialized credentials (registration, tokens, scopes), as JSON.
    pub credentials: String,
    /// When the row was last written (RFC 3339).
    pub updated_at: String,
}

impl std::fmt::Debug for McpTokenRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTokenRecord")
            .field("server", &self.server)
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("credentials", &"[redacted]")
            .field("updated_at", &self.updated_at)
            .finish()
    }
}

/// Stored OAuth sign-ins of upstream MCP servers.
#[async_trait]
pub trait McpTokenStore: Send + Sync {
    /// The most recently written sign-in of `server`, if any.
    async fn load_mcp_token(&self, server: &str) -> Result<Option<McpTokenRecord>>;
    /// Inserts or replaces the sign-in of (`server`, `issuer`).
    async fn save_mcp_token(&self, record: &McpTokenRecord) -> Result<()>;
    /// Deletes every sign-in of `server`; answers how many rows went.
    async fn delete_mcp_tokens(&self, server: &str) -> Result<u64>;
    /// Takes the refresh lock of `server`'s rows for `owner` until `until_ms`
    /// (Unix milliseconds) unless another owner holds it past `now_ms`; answers
    /// whether it was taken (also when the server has no row).
    async fn lock_mcp_token_refresh(
        &self,
        server: &str,
        owner: &str,
        now_ms: i64,
        until_ms: i64,
    ) -> Result<bool>;
    /// Releases the refresh lock of `server` if `owner` holds it.
    async fn unlock_mcp_token_refresh(&self, server: &str, owner: &str) -> Result<()>;
}
