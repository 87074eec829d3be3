//! Hecate as an MCP client, over HTTP: `POST /hecate/v1/mcp/probe` (bring one
//! server entry up outside the pool, list its tools, tear it down),
//! `GET /hecate/v1/system/mcp/cache` (the client pool's connections), the
//! upstream servers with their tools and policies (`GET /hecate/v1/mcp/servers`,
//! `PUT …/tools/{tool}/policy`) and the audit log of proxied calls
//! (`GET /hecate/v1/mcp/calls`).

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::ApiJson;
use super::extract::{ApiPath, ApiQuery};
use crate::bridges::resources::mcp::{
    McpCacheDto, McpCacheEntryDto, McpCacheResponse, McpCallDto, McpCallListResponse,
    McpCallsQuery, McpProbeDto, McpProbeResponse, McpProbeToolDto, McpServerDto,
    McpServerListResponse, McpServerState, McpServerToolDto, McpSignInDto, McpSignOutResponse,
    McpToolPolicyDto, McpToolPolicyRequest, McpToolPolicyResponse,
};
use crate::bridges::resources::page_size;
use crate::domain::HecateError;
use crate::domain::time::format_rfc3339;
use crate::engine::mcp::{PoolEntry, ServerState, SignIn, ToolPolicy, reach};
use axum::Json;
use axum::extract::State;
use serde::Deserialize;
use serde_json::Value;
use utoipa::IntoParams;

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
        .map(entry)
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

fn entry(e: PoolEntry) -> McpCacheEntryDto {
    McpCacheEntryDto {
        servers: e.servers,
        transport: e.transport.to_string(),
        target: e.target,
        in_use: e.in_use as u64,
        idle_ms: e.idle_ms,
        tool_count: e.tool_count.map(|n| n as u64),
        pid: e.pid,
    }
}

/// The configured upstream servers with their tools (blocked ones included,
/// with no exposed name), policies, resources, prompts and connections.
#[utoipa::path(
    get,
    path = "/hecate/v1/mcp/servers",
    operation_id = "list_mcp_servers",
    tag = "mcp",
    responses((status = 200, description = "The upstream servers, in configuration order", body = McpServerListResponse))
)]
pub async fn servers(State(state): State<HttpState>) -> Json<McpServerListResponse> {
    let data = state
        .engine
        .mcp()
        .overview()
        .await
        .into_iter()
        .map(|o| {
            let (transport, target) = reach(&o.server.spec);
            let (error, operator_action) = match o.error {
                Some(e) => (Some(e.message), Some(e.operator_action)),
                None => (None, None),
            };
            McpServerDto {
                name: o.server.name.clone(),
                transport: transport.to_string(),
                target,
                policy: o.server.policy.as_str().to_string(),
                state: server_state(o.state),
                error,
                operator_action,
                tools: o
                    .tools
                    .into_iter()
                    .map(|t| McpServerToolDto {
                        name: t.name,
                        exposed_name: t.exposed,
                        policy: t.policy.as_str().to_string(),
                        description: t.description,
                    })
                    .collect(),
                resource_count: o.resources as u64,
                prompt_count: o.prompts as u64,
                connections: o.connections.into_iter().map(entry).collect(),
                sign_in: o.sign_in.map(|s| s.map_or_else(unreadable, sign_in)),
            }
        })
        .collect();
    Json(McpServerListResponse {
        object: "mcp_servers".into(),
        data,
    })
}

/// A stored sign-in that could not be read, with why.
fn unreadable(e: HecateError) -> McpSignInDto {
    McpSignInDto {
        state: "unreadable".into(),
        issuer: None,
        refreshable: None,
        expires_at: None,
        error: Some(e.message),
    }
}

/// A stored sign-in as the API shows it: its state, issuer, whether it renews
/// itself and when its access token runs out.
fn sign_in(s: SignIn) -> McpSignInDto {
    match s {
        SignIn::Missing => McpSignInDto {
            state: "missing".into(),
            issuer: None,
            refreshable: None,
            expires_at: None,
            error: None,
        },
        SignIn::SignedIn {
            issuer,
            refreshable,
            expires_in,
        } => McpSignInDto {
            state: "signed_in".into(),
            issuer: Some(issuer).filter(|i| !i.is_empty()),
            refreshable: Some(refreshable),
            expires_at: expires_in.map(|secs| {
                format_rfc3339(time::OffsetDateTime::now_utc() + time::Duration::seconds(secs))
            }),
            error: None,
        },
        SignIn::Rejected { issuer } => McpSignInDto {
            state: "rejected".into(),
            issuer: Some(issuer).filter(|i| !i.is_empty()),
            refreshable: None,
            expires_at: None,
            error: None,
        },
    }
}

/// Path of an upstream server.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct McpServerPath {
    /// The server's alias.
    pub name: String,
}

/// Forgets the stored OAuth sign-in of an upstream server, as `hecate mcp
/// logout NAME` does: its next call needs `hecate mcp login NAME` again.
#[utoipa::path(
    delete,
    path = "/hecate/v1/mcp/servers/{name}/sign-in",
    operation_id = "sign_out_mcp_server",
    tag = "mcp",
    params(McpServerPath),
    responses(
        (status = 200, description = "The sign-in is forgotten (or there was none)", body = McpSignOutResponse),
        (status = 403, description = "The caller is not an admin", body = ErrorEnvelope),
        (status = 404, description = "No such server", body = ErrorEnvelope),
        (status = 409, description = "A refresh of the sign-in did not finish in time", body = ErrorEnvelope)
    )
)]
pub async fn sign_out(
    State(state): State<HttpState>,
    ApiPath(McpServerPath { name }): ApiPath<McpServerPath>,
) -> Result<Json<McpSignOutResponse>, ApiError> {
    let removed = state.engine.mcp().logout(&name).await?;
    Ok(Json(McpSignOutResponse {
        object: "mcp_sign_out".into(),
        server: name,
        removed,
    }))
}

fn server_state(s: ServerState) -> McpServerState {
    match s {
        ServerState::Ok => McpServerState::Ok,
        ServerState::AuthRequired => McpServerState::AuthRequired,
        ServerState::Failed => McpServerState::Failed,
    }
}

/// Path of a tool of an upstream server.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub struct McpToolPath {
    /// The server's alias.
    pub name: String,
    /// The tool's own name upstream.
    pub tool: String,
}

/// Sets one upstream tool's policy for this namespace: stored (it outlives a
/// restart and overrides the config's) and applied at once, so a tool set to
/// `block` leaves every MCP client's list (they are told it changed).
#[utoipa::path(
    put,
    path = "/hecate/v1/mcp/servers/{name}/tools/{tool}/policy",
    operation_id = "set_mcp_tool_policy",
    tag = "mcp",
    params(McpToolPath),
    request_body = McpToolPolicyRequest,
    responses(
        (status = 200, description = "The policy as stored", body = McpToolPolicyResponse),
        (status = 400, description = "An unknown policy", body = ErrorEnvelope),
        (status = 404, description = "No such server, or the server lists no such tool", body = ErrorEnvelope),
        (status = 424, description = "`auth_required`: the server wants a sign-in (`hecate mcp login NAME`)", body = ErrorEnvelope),
        (status = 502, description = "The server could not be listed", body = ErrorEnvelope)
    )
)]
pub async fn set_tool_policy(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<McpToolPath>,
    ApiJson(body): ApiJson<McpToolPolicyRequest>,
) -> Result<Json<McpToolPolicyResponse>, ApiError> {
    let policy = ToolPolicy::parse(&body.policy).ok_or_else(|| {
        HecateError::invalid(format!(
            "policy must be auto, require_approval or block, got {:?}",
            body.policy
        ))
        .with_detail("field", "policy")
    })?;
    let p = state
        .engine
        .mcp()
        .set_tool_policy(&state.namespace, &path.name, &path.tool, policy)
        .await?;
    Ok(Json(McpToolPolicyResponse {
        object: "mcp_tool_policy".into(),
        data: McpToolPolicyDto {
            server: p.server,
            tool: p.tool,
            policy: p.policy,
            updated_at: p.updated_at,
        },
    }))
}

/// The audit log of proxied upstream tool calls in this namespace, newest
/// first: who called what, what the policy decided and how it ended.
#[utoipa::path(
    get,
    path = "/hecate/v1/mcp/calls",
    operation_id = "list_mcp_calls",
    tag = "mcp",
    params(McpCallsQuery),
    responses(
        (status = 200, description = "The newest calls", body = McpCallListResponse),
        (status = 400, description = "A limit out of range", body = ErrorEnvelope)
    )
)]
pub async fn calls(
    State(state): State<HttpState>,
    ApiQuery(q): ApiQuery<McpCallsQuery>,
) -> Result<Json<McpCallListResponse>, ApiError> {
    let limit = page_size(q.limit, 100)?;
    let data = state
        .engine
        .mcp()
        .list_calls(&state.namespace, limit)
        .await?
        .into_iter()
        .map(|r| McpCallDto {
            id: r.id,
            namespace: r.namespace,
            server: r.server,
            tool: r.tool,
            exposed_name: r.exposed_name,
            client: r.client,
            policy: r.policy,
            decision: r.decision,
            approval_id: r.approval_id,
            outcome: r.outcome,
            error_type: r.error_type,
            error_message: r.error_message,
            argument_keys: r.argument_keys,
            argument_bytes: r.argument_bytes,
            started_at: r.started_at,
            duration_ms: r.duration_ms,
        })
        .collect();
    Ok(Json(McpCallListResponse {
        object: "mcp_calls".into(),
        data,
    }))
}
