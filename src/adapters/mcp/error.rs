//! Typed failures of the MCP client pool: configuration and secrets, spawning,
//! the handshake (with the upstream's stderr tail), timeouts, a closed transport,
//! and errors the upstream answered.

use crate::adapters::process::SpawnError;

/// Something went wrong reaching or talking to an upstream MCP server.
#[derive(Debug, Clone, thiserror::Error)]
pub enum McpClientError {
    /// The transport definition is unusable (empty command, bad URL or header).
    #[error("invalid MCP server definition: {0}")]
    Config(String),
    /// A `$VAR` secret reference names a variable that is unset or empty.
    #[error("secret reference ${name} is not set in Hecate's environment")]
    Secret {
        /// The variable name (never its value).
        name: String,
    },
    /// The process could not be started.
    #[error("cannot start {0}")]
    Spawn(#[from] SpawnError),
    /// The MCP handshake failed or the process died before it finished.
    #[error("MCP initialize failed: {message}{}", tail_suffix(stderr_tail))]
    Initialize {
        /// What failed.
        message: String,
        /// The last lines the upstream wrote to stderr.
        stderr_tail: String,
    },
    /// The upstream did not answer in time.
    #[error("the upstream did not answer {what} within {millis} ms")]
    Timeout {
        /// The request that timed out.
        what: String,
        /// The limit.
        millis: u128,
    },
    /// The connection to the upstream is gone (process exited, socket closed).
    #[error(
        "the connection to the upstream closed: {message}{}",
        tail_suffix(stderr_tail)
    )]
    Closed {
        /// What the transport reported.
        message: String,
        /// The last lines the upstream wrote to stderr, when it is a process.
        stderr_tail: String,
    },
    /// The upstream answered with a JSON-RPC error.
    #[error("the upstream answered error {code}: {message}")]
    Protocol {
        /// The JSON-RPC error code.
        code: i32,
        /// The error message.
        message: String,
    },
    /// The caller cancelled the request.
    #[error("the request was cancelled")]
    Cancelled,
    /// The upstream wants an OAuth sign-in that is missing, expired or revoked.
    #[error(
        "the upstream needs a sign-in (auth_required): {reason}; run `hecate mcp login {server}`"
    )]
    AuthRequired {
        /// The configured server name.
        server: String,
        /// What happened, without any token.
        reason: String,
    },
}

fn tail_suffix(tail: &str) -> String {
    if tail.trim().is_empty() {
        String::new()
    } else {
        format!("; stderr: {}", tail.trim())
    }
}

impl McpClientError {
    /// Whether the failure means the connection is unusable and its pool entry
    /// must be evicted.
    pub fn is_fatal_to_connection(&self) -> bool {
        matches!(
            self,
            Self::Closed { .. }
                | Self::Timeout { .. }
                | Self::Initialize { .. }
                | Self::AuthRequired { .. }
        )
    }

    /// Whether bringing the upstream up again may succeed (no configuration error).
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::Initialize { .. } | Self::Timeout { .. } | Self::Closed { .. }
        )
    }
}
