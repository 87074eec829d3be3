//! System resources on the wire: liveness and the operator's stats.

use crate::engine::gateway::counters::GatewayTotals;
use serde::Serialize;
use utoipa::ToSchema;

/// `GET /healthz`: the process is up and serving HTTP.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct HealthDto {
    /// Always `ok`.
    pub status: String,
    /// Current time (RFC 3339, UTC).
    pub time: String,
    /// Hecate's version.
    pub version: String,
}

/// The shared pool of clients to upstream MCP servers.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct McpPoolDto {
    /// Whether upstream MCP servers are configured (the pool has something to hold).
    pub configured: bool,
    /// Cached clients.
    pub entries: u64,
    /// Sum of acquisitions currently held.
    pub in_use: u64,
    /// Entries nobody holds.
    pub idle: u64,
}

/// The store's identity and size.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StoreDto {
    /// Backend name (`sqlite`).
    pub backend: String,
    /// Database location (`:memory:` for the in-memory backend).
    pub location: String,
    /// Size in bytes.
    pub size_bytes: u64,
    /// Applied schema version.
    pub schema_version: i64,
}

/// `GET /hecate/v1/system/stats`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StatsDto {
    /// Hecate's version.
    pub version: String,
    /// Milliseconds since this server started.
    pub uptime_ms: u64,
    /// Sessions with a turn running in this process.
    pub live_sessions: u64,
    /// Turns running in this process.
    pub turns_running: u64,
    /// Supervised external-agent processes alive in this process (idle ones
    /// are stopped after `[agents] process_idle_ms`).
    pub agent_processes: u64,
    /// Approvals waiting for a decision in this namespace.
    pub pending_approvals: u64,
    /// How permission requests are answered by default: `prompt`, `auto` or `deny`.
    pub approval_mode: String,
    /// The MCP client pool.
    pub mcp_pool: McpPoolDto,
    /// The store.
    pub store: StoreDto,
    /// Open SSE streams on this server.
    pub sse_subscribers: u64,
    /// Where the task queue lives: the store's backend (`sqlite` or `postgres`),
    /// shared by every process on the store.
    pub queue_backend: String,
    /// Queued task runs waiting for a worker, across every process on the store.
    pub queue_depth: u64,
    /// Queued task runs a worker holds a live lease on, across every process.
    pub queue_leased: u64,
    /// The queue's capacity: absent, because it is a store table bounded only by
    /// the store.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub queue_capacity: Option<u64>,
    /// Task workers this process runs.
    pub worker_count: u64,
    /// Task runs this process's workers are executing.
    pub task_runs_executing: u64,
    /// What this process's model gateway (`/v1`) answered since it started.
    pub gateway: GatewayStatsDto,
}

/// The model gateway's totals since the process started: the engine's
/// snapshot is the wire shape.
pub type GatewayStatsDto = GatewayTotals;
