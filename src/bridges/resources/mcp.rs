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

/// One tool of an upstream server.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpServerToolDto {
    /// Its own name upstream.
    pub name: String,
    /// The name MCP clients call it by; absent while it is blocked (hidden).
    pub exposed_name: Option<String>,
    /// `auto`, `require_approval` or `block`.
    pub policy: String,
    /// Its description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// How an upstream MCP server stands now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum McpServerState {
    /// Its tools were listed and its last call was not refused for a sign-in.
    Ok,
    /// Its last connect, listing or call was refused for want of a sign-in
    /// (missing, expired beyond refresh, or revoked): `operator_action` names
    /// `hecate mcp login NAME`.
    AuthRequired,
    /// Its tools could not be listed for another reason (`error` says why).
    Failed,
}

/// An upstream MCP server (`[mcp_servers.NAME]`) and what it offers now.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpServerDto {
    /// Its alias (the prefix of its tools' names).
    pub name: String,
    /// `stdio` or `http`.
    pub transport: String,
    /// The program or the URL, credentials redacted (arguments, env and headers
    /// are not shown).
    pub target: String,
    /// The server-wide policy.
    pub policy: String,
    /// `ok`, `auth_required` (a sign-in is needed) or `failed`.
    pub state: McpServerState,
    /// Why it is not `ok`: the listing's failure, or the refused sign-in.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The fix when it is not `ok` (for `auth_required`, `hecate mcp login NAME`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator_action: Option<String>,
    /// Its tools, blocked ones included.
    pub tools: Vec<McpServerToolDto>,
    /// Resources it lists (0 when the server is blocked).
    pub resource_count: u64,
    /// Prompts it lists (0 when the server is blocked).
    pub prompt_count: u64,
    /// Its pooled connections.
    pub connections: Vec<McpCacheEntryDto>,
    /// Its stored OAuth sign-in, for an HTTP server that sends no
    /// `Authorization` header of its own; never its tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sign_in: Option<McpSignInDto>,
}

/// The stored OAuth sign-in of an upstream MCP server, tokens left out.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpSignInDto {
    /// `signed_in`, `missing` (none stored), `rejected` (revoked, or its
    /// refresh failed: `hecate mcp login NAME` again) or `unreadable` (what is
    /// stored could not be read: sign out, then log in again).
    pub state: String,
    /// The authorization server that issued the tokens.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// Whether a refresh token is kept, so the access token is renewed when
    /// it runs out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refreshable: Option<bool>,
    /// When the access token expires (RFC 3339), when the server said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// Why an `unreadable` sign-in could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// `DELETE /hecate/v1/mcp/servers/{name}/sign-in`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpSignOutResponse {
    /// Always `mcp_sign_out`.
    pub object: String,
    /// The server's alias.
    pub server: String,
    /// Whether a stored sign-in was forgotten (false when there was none).
    pub removed: bool,
}

/// `GET /hecate/v1/mcp/servers`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpServerListResponse {
    /// Always `mcp_servers`.
    pub object: String,
    /// The servers, in configuration order.
    pub data: Vec<McpServerDto>,
}

/// Body of `PUT /hecate/v1/mcp/servers/{name}/tools/{tool}/policy`.
#[derive(Debug, Clone, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct McpToolPolicyRequest {
    /// `auto`, `require_approval` or `block`.
    pub policy: String,
}

/// A tool policy an operator set.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpToolPolicyDto {
    /// The server's alias.
    pub server: String,
    /// The tool's own name.
    pub tool: String,
    /// `auto`, `require_approval` or `block`.
    pub policy: String,
    /// When it was set.
    pub updated_at: String,
}

/// `PUT …/policy`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpToolPolicyResponse {
    /// Always `mcp_tool_policy`.
    pub object: String,
    /// The policy as stored.
    pub data: McpToolPolicyDto,
}

/// One proxied upstream tool call of the audit log: who called what, what the
/// policy decided and how it ended (argument values are never kept).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpCallDto {
    /// Record id.
    pub id: String,
    /// Namespace of the caller.
    pub namespace: String,
    /// Upstream server alias.
    pub server: String,
    /// The tool's own name upstream.
    pub tool: String,
    /// The name the caller used (`NAME__tool`).
    pub exposed_name: String,
    /// The calling client (its `clientInfo.name` and transport).
    pub client: String,
    /// `auto`, `require_approval` or `block`.
    pub policy: String,
    /// `allowed`, `approved`, `rejected`, `blocked` or `cancelled`.
    pub decision: String,
    /// The approval that decided it.
    pub approval_id: Option<String>,
    /// `ok`, `tool_error`, `failed`, `cancelled` or `not_called`.
    pub outcome: String,
    /// Stable error type, when it failed.
    pub error_type: Option<String>,
    /// Error message, when it failed.
    pub error_message: Option<String>,
    /// Top-level argument names.
    pub argument_keys: Vec<String>,
    /// Size of the JSON arguments in bytes.
    pub argument_bytes: u64,
    /// When the call arrived.
    pub started_at: String,
    /// How long it took, gate included.
    pub duration_ms: i64,
}

/// `GET /hecate/v1/mcp/calls`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpCallListResponse {
    /// Always `mcp_calls`.
    pub object: String,
    /// The newest calls first.
    pub data: Vec<McpCallDto>,
}

/// Query of `GET /hecate/v1/mcp/calls`.
#[derive(Debug, Clone, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct McpCallsQuery {
    /// At most this many (1–1000, default 100).
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<u32>,
}
