//! Hecate as an MCP client, over HTTP: `POST /hecate/v1/mcp/probe` (bring one
//! server entry up outside the pool, list its tools, tear it down) and
//! `GET /hecate/v1/system/mcp/cache` (the client pool's connections).

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::ApiJson;
use crate::bridges::resources::mcp::{
    McpCacheDto, McpCacheEntryDto, McpCacheResponse, McpProbeDto, McpProbeResponse, McpProbeToolDto,
};
use axum::Json;
use axum::extract::State;
use serde_json::Value;

/// Probes one MCP server entry (the shape of a task's `mcp_servers` item).
#[utoipa::path(
    post,
    path = "/hecate/v1/mcp/probe",
    operation_id = "probe_mcp_server",
    tag = "mcp",
    request_body(content = Object, description = "One MCP server entry: name (default probe), command/args/env or url/headers"),
    responses(
        (status = 200, description = "The server's tools, un-namespaced", body = McpProbeResponse),
        (status = 400, description = "Invalid entry, or the server failed at `stage` (resolve, start, tools_list)", body = ErrorEnvelope)
    )
)]
pub async fn probe(
    State(state): State<HttpState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<McpProbeResponse>, ApiError> {
    let (name, report) = state.engine.mcp().probe_entry(&body).await?;
    let tools = report
        .tools
        .iter()
        .map(|t| McpProbeToolDto {
            name: t["name"].as_str().unwrap_or_default().to_string(),
            description: t["description"].as_str().map(str::to_string),
            input_schema: t.get("inputSchema").cloned().unwrap_or(Value::Null),
        })
        .collect();
    Ok(Json(McpProbeResponse {
        object: "mcp_probe".into(),
        data: McpProbeDto {
            name,
            server: report.server,
            tools,
        },
    }))
}

/// The shared MCP client cache: counts and one row per cached connection.
#[utoipa::path(
    get,
    path = "/hecate/v1/system/mcp/cache",
    operation_id = "mcp_cache_stats",
    tag = "mcp",
    responses((status = 200, description = "The pool's snapshot", body = McpCacheResponse))
)]
pub async fn cache(State(state): State<HttpState>) -> Json<McpCacheResponse> {
    let stats = state.engine.mcp().pool_stats();
    let connections = state
        .engine
        .mcp()
        .pool_entries()
        .into_iter()
        .map(|e| McpCacheEntryDto {
            servers: e.servers,
            transport: e.transport.to_string(),
            target: e.target,
            in_use: e.in_use as u64,
            idle_ms: e.idle_ms,
            tool_count: e.tool_count.map(|n| n as u64),
            pid: e.pid,
        })
        .collect();
    Json(McpCacheResponse {
        object: "mcp_cache_stats".into(),
        data: McpCacheDto {
            checked_at: crate::domain::time::now_rfc3339(),
            configured: true,
            entries: stats.entries as u64,
            in_use: stats.in_use as u64,
            idle: stats.idle as u64,
            connections,
        },
    })
}
