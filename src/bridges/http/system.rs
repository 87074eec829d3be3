//! `GET /healthz` (liveness, outside the envelope and the token) and
//! `GET /hecate/v1/system/stats` (what an operator watches).

use super::HttpState;
use super::envelope::ApiError;
use crate::bridges::resources::{HealthDto, McpPoolDto, StatsDto, StatsResponse, StoreDto};
use axum::Json;
use axum::extract::State;

/// Liveness: the process is up and serving HTTP. Touches neither store nor providers.
#[utoipa::path(
    get,
    path = "/healthz",
    operation_id = "healthz",
    tag = "system",
    security(()),
    responses((status = 200, description = "The process is up", body = HealthDto))
)]
pub async fn healthz() -> Json<HealthDto> {
    Json(HealthDto {
        status: "ok".to_string(),
        time: crate::domain::time::now_rfc3339(),
        version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

/// Version, uptime, running turns, pending approvals, store and stream figures.
#[utoipa::path(
    get,
    path = "/hecate/v1/system/stats",
    operation_id = "system_stats",
    tag = "system",
    responses((status = 200, description = "Current figures", body = StatsResponse))
)]
pub async fn stats(State(state): State<HttpState>) -> Result<Json<StatsResponse>, ApiError> {
    let engine = &state.engine;
    let store = engine.store_health().await?;
    let pending = engine.pending_approval_count(&state.namespace).await?;
    let running = engine.running_turns() as u64;
    let pool = engine.mcp().pool_stats();
    let queue = engine.tasks().queue_depth().await?;
    let gateway = engine.gateway().totals();
    Ok(Json(StatsResponse {
        object: "system_stats".to_string(),
        data: StatsDto {
            version: env!("CARGO_PKG_VERSION").to_string(),
            uptime_ms: state.started.elapsed().as_millis() as u64,
            live_sessions: running,
            turns_running: running,
            agent_processes: engine.agents().processes().await as u64,
            pending_approvals: pending as u64,
            approval_mode: engine.config().approval_mode.as_str().to_string(),
            mcp_pool: McpPoolDto {
                configured: !engine.mcp().servers().is_empty(),
                entries: pool.entries as u64,
                in_use: pool.in_use as u64,
                idle: pool.idle as u64,
            },
            store: StoreDto {
                backend: store.backend.clone(),
                location: store.location,
                size_bytes: store.size_bytes,
                schema_version: store.schema_version,
            },
            sse_subscribers: state.hub.subscriber_count() as u64,
            queue_backend: store.backend.clone(),
            queue_depth: queue.waiting,
            queue_leased: queue.leased,
            queue_capacity: None,
            worker_count: engine.tasks().worker_count() as u64,
            task_runs_executing: engine.tasks().runs_executing() as u64,
            gateway,
        },
    }))
}
