//! External-agent adapters: the catalog with each agent's availability, one
//! adapter's health and its probe (the same end-to-end ACP handshake), and the
//! refresh of its managed launcher.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::ApiPath;
use super::path_params::AdapterPath;
use crate::bridges::resources::agent::{
    AdapterDto, AdapterHealthResponse, AdapterListResponse, AdapterProbeDto, AdapterProbeResponse,
    AdapterResponse, ProbeDto,
};
use crate::domain::HecateError;
use axum::Json;
use axum::extract::State;

/// The catalog row of `id`, or a 404 `not_found`.
async fn find(state: &HttpState, id: &str) -> Result<AdapterDto, ApiError> {
    state
        .engine
        .agents()
        .list()
        .await?
        .iter()
        .find(|a| a.id == id)
        .map(AdapterDto::from)
        .ok_or_else(|| HecateError::not_found("agent adapter", id).into())
}

/// Every catalog adapter with where it was found and at which version.
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-adapters",
    operation_id = "list_agent_adapters",
    tag = "agent-adapters",
    responses((status = 200, description = "The adapter catalog", body = AdapterListResponse))
)]
pub async fn list(State(state): State<HttpState>) -> Result<Json<AdapterListResponse>, ApiError> {
    let adapters = state.engine.agents().list().await?;
    Ok(Json(AdapterListResponse {
        object: "agent_adapters".to_string(),
        data: adapters.iter().map(AdapterDto::from).collect(),
    }))
}

/// Re-reads one adapter's availability, then spawns it in a scratch workspace
/// (initialize, session/new, shut down) and classifies the outcome. The verdict is
/// in the body: a failed probe is still a 200.
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-adapters/{id}/probe",
    operation_id = "probe_agent_adapter",
    tag = "agent-adapters",
    params(AdapterPath),
    responses(
        (status = 200, description = "The catalog row and the probe's verdict", body = AdapterProbeResponse),
        (status = 404, description = "No such adapter", body = ErrorEnvelope)
    )
)]
pub async fn probe(
    State(state): State<HttpState>,
    ApiPath(AdapterPath { id }): ApiPath<AdapterPath>,
) -> Result<Json<AdapterProbeResponse>, ApiError> {
    let adapter = find(&state, &id).await?;
    let report = state.engine.agents().probe(&id).await?;
    Ok(Json(AdapterProbeResponse {
        object: "agent_adapter_probe".to_string(),
        data: AdapterProbeDto {
            adapter,
            health: ProbeDto::from(&report),
        },
    }))
}

/// Probes one adapter end to end (spawn, `initialize`, `session/new` in a scratch
/// workspace, teardown; never a prompt) and classifies the outcome; the verdict is
/// in the body, so a failing adapter is still a 200.
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-adapters/{id}/health",
    operation_id = "agent_adapter_health",
    tag = "agent-adapters",
    params(AdapterPath),
    responses(
        (status = 200, description = "The probe's verdict: ready, not_installed, auth_required or error, with the stage", body = AdapterHealthResponse),
        (status = 404, description = "No such adapter", body = ErrorEnvelope)
    )
)]
pub async fn health(
    State(state): State<HttpState>,
    ApiPath(AdapterPath { id }): ApiPath<AdapterPath>,
) -> Result<Json<AdapterHealthResponse>, ApiError> {
    find(&state, &id).await?;
    let report = state.engine.agents().probe(&id).await?;
    Ok(Json(AdapterHealthResponse {
        object: "agent_adapter_health".to_string(),
        data: ProbeDto::from(&report),
    }))
}

/// Installs or refreshes the adapter's managed launcher (its pinned npm package
/// in Hecate's cache, staged and renamed into place) and returns the updated
/// catalog row. A failed install changes nothing and answers with the error and
/// the fix.
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-adapters/{id}/refresh-launcher",
    operation_id = "refresh_agent_adapter_launcher",
    tag = "agent-adapters",
    params(AdapterPath),
    responses(
        (status = 200, description = "The adapter's catalog row after the install", body = AdapterResponse),
        (status = 400, description = "The adapter has no managed package (`invalid_request`)", body = ErrorEnvelope),
        (status = 404, description = "No such adapter", body = ErrorEnvelope),
        (status = 500, description = "npm is missing, the registry is unreachable or the version does not exist (`gateway_error`, `details.reason`)", body = ErrorEnvelope)
    )
)]
pub async fn refresh_launcher(
    State(state): State<HttpState>,
    ApiPath(AdapterPath { id }): ApiPath<AdapterPath>,
) -> Result<Json<AdapterResponse>, ApiError> {
    find(&state, &id).await?;
    let row = state.engine.agents().install(&id).await?;
    Ok(Json(AdapterResponse {
        object: "agent_adapter".to_string(),
        data: AdapterDto::from(&row),
    }))
}
