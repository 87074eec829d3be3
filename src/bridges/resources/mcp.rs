//! Hecate as an MCP client on the wire: a probe of one server entry and the
//! client pool's snapshot.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// One tool a probed server lists, un-namespaced.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpProbeToolDto {
    /// The upstream's own name.
    pub name: String,
    /// Its description, when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Its input schema, verbatim.
    #[schema(value_type = Object)]
    pub input_schema: Value,
}

/// What a probe found.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpProbeDto {
    /// The server's name (`probe` unless the entry named one).
    pub name: String,
    /// The server's `serverInfo`.
    #[schema(value_type = Object)]
    pub server: Value,
    /// Its tools.
    pub tools: Vec<McpProbeToolDto>,
}

/// `POST /hecate/v1/mcp/probe`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpProbeResponse {
    /// Always `mcp_probe`.
    pub object: String,
    /// The result.
    pub data: McpProbeDto,
}

/// One cached connection of the pool.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpCacheEntryDto {
    /// Server names it was acquired under.
    pub servers: Vec<String>,
    /// `stdio` or `http`.
    pub transport: String,
    /// The program or URL (credentials redacted).
    pub target: String,
    /// Leases held now.
    pub in_use: u64,
    /// Milliseconds since it was last released (absent while in use).
    pub idle_ms: Option<u64>,
    /// Tools its last listing found.
    pub tool_count: Option<u64>,
    /// The child's process id (stdio).
    pub pid: Option<u32>,
}

/// The shared MCP client cache.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpCacheDto {
    /// When the snapshot was taken (RFC 3339).
    pub checked_at: String,
    /// Always true here: the pool is built into every engine.
    pub configured: bool,
    /// Cached connections.
    pub entries: u64,
    /// Sum of leases held (an entry used by two runs counts twice).
    pub in_use: u64,
    /// Entries nobody holds.
    pub idle: u64,
    /// The connections, most recently used first.
    pub connections: Vec<McpCacheEntryDto>,
}

/// `GET /hecate/v1/system/mcp/cache`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpCacheResponse {
    /// Always `mcp_cache_stats`.
    pub object: String,
    /// The snapshot.
    pub data: McpCacheDto,
}
