//! MCP servers a client hands to a session (e.g. an editor's `session/new`), in the
//! engine's own terms; adapters translate them to their protocol.

use serde::{Deserialize, Serialize};

/// One MCP server a session should be able to use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "transport", rename_all = "snake_case")]
pub enum McpServerConfig {
    /// A local server started as a child process.
    Stdio {
        /// Server name.
        name: String,
        /// Executable.
        command: String,
        /// Arguments.
        #[serde(default)]
        args: Vec<String>,
        /// Environment.
        #[serde(default)]
        env: Vec<(String, String)>,
    },
    /// A Streamable HTTP server.
    Http {
        /// Server name.
        name: String,
        /// URL.
        url: String,
        /// Headers.
        #[serde(default)]
        headers: Vec<(String, String)>,
    },
    /// A legacy SSE server.
    Sse {
        /// Server name.
        name: String,
        /// URL.
        url: String,
        /// Headers.
        #[serde(default)]
        headers: Vec<(String, String)>,
    },
}

impl McpServerConfig {
    /// The server's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Stdio { name, .. } | Self::Http { name, .. } | Self::Sse { name, .. } => name,
        }
    }
}
