//! External-agent adapters: the catalog with each agent's availability (and the
//! manifests that did not load), one adapter's health and its probe (the same
//! end-to-end ACP handshake), the refresh of its managed launcher, the same
//! install started in the background and followed stage by stage, and the
//! supervised agent processes running now, each of which can be stopped.

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::ApiPath;
use super::path_params::{AdapterPath, SessionPath};
use crate::bridges::resources::agent::{
    AdapterDto, AdapterHealthResponse, AdapterListResponse, AdapterProbeDto, AdapterProbeResponse,
    AdapterResponse, ProbeDto,
};
use crate::bridges::resources::agent_ops::{
    AdapterManifestErrorDto, AgentProcessDto, AgentProcessListResponse, AgentProcessResponse,
    InstallJobDto, InstallJobResponse,
};
use crate::domain::HecateError;
use crate::domain::ids::SessionId;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;

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
        manifest_errors: state
            .engine
            .agents()
            .manifest_errors()
            .iter()
            .map(AdapterManifestErrorDto::from)
            .collect(),
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
        (status = 409, description = "An install of this adapter is already running (`conflict`)", body = ErrorEnvelope),
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

/// Starts installing the adapter's managed launcher (the same install as
/// `hecate adapters install` and `refresh-launcher`) in the background and
/// answers at once with the install, which `GET …/install` then follows stage by
/// stage until it succeeds or fails (with the fix).
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-adapters/{id}/install",
    operation_id = "start_agent_adapter_install",
    tag = "agent-adapters",
    params(AdapterPath),
    responses(
        (status = 202, description = "The install started; follow it with GET", body = InstallJobResponse),
        (status = 400, description = "The adapter has no managed package (`invalid_request`)", body = ErrorEnvelope),
        (status = 404, description = "No such adapter", body = ErrorEnvelope),
        (status = 409, description = "An install of this adapter is already running (`conflict`, `details.install_id`)", body = ErrorEnvelope)
    )
)]
pub async fn start_install(
    State(state): State<HttpState>,
    ApiPath(AdapterPath { id }): ApiPath<AdapterPath>,
) -> Result<(StatusCode, Json<InstallJobResponse>), ApiError> {
    let adapter = find(&state, &id).await?;
    let job = state.engine.agents().start_install(&id)?;
    Ok((
        StatusCode::ACCEPTED,
        Json(InstallJobResponse {
            object: "agent_adapter_install".to_string(),
            data: InstallJobDto::new(&job, Some(adapter)),
        }),
    ))
}

/// The newest install of the adapter started by this server: its stages so
/// far, and once ended whether it succeeded (with the new catalog row) or failed
/// (with the error and its fix).
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-adapters/{id}/install",
    operation_id = "get_agent_adapter_install",
    tag = "agent-adapters",
    params(AdapterPath),
    responses(
        (status = 200, description = "The install, running or ended", body = InstallJobResponse),
        (status = 404, description = "No such adapter, or no install of it since the server started", body = ErrorEnvelope)
    )
)]
pub async fn get_install(
    State(state): State<HttpState>,
    ApiPath(AdapterPath { id }): ApiPath<AdapterPath>,
) -> Result<Json<InstallJobResponse>, ApiError> {
    let adapter = find(&state, &id).await?;
    let job = state
        .engine
        .agents()
        .install_job(&id)
        .ok_or_else(|| HecateError::not_found("install of agent adapter", &id))?;
    Ok(Json(InstallJobResponse {
        object: "agent_adapter_install".to_string(),
        data: InstallJobDto::new(&job, Some(adapter)),
    }))
}

fn idle_limit_ms(state: &HttpState) -> Option<u64> {
    state
        .engine
        .agents()
        .process_idle_limit()
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The supervised agent processes this server runs now for the namespace's
/// sessions: the session, the adapter, the process id, the turns using it and
/// how long it has been idle.
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-adapters/processes",
    operation_id = "list_agent_processes",
    tag = "agent-adapters",
    responses((status = 200, description = "The live agent processes, oldest first", body = AgentProcessListResponse))
)]
pub async fn processes(State(state): State<HttpState>) -> Json<AgentProcessListResponse> {
    let limit = idle_limit_ms(&state);
    let live = state.engine.agents().live_processes(&state.namespace).await;
    Json(AgentProcessListResponse {
        object: "agent_processes".to_string(),
        data: live
            .iter()
            .map(|(p, title)| {
                AgentProcessDto::new(p, Some(title.clone()).filter(|t| !t.is_empty()), limit)
            })
            .collect(),
    })
}

/// Stops the agent process of a session (its whole process group; a running
/// turn is stopped first). The session and its history stay: its next prompt
/// starts a new process, which reattaches to the agent's session when it can.
#[utoipa::path(
    post,
    path = "/hecate/v1/agent-adapters/processes/{id}/kill",
    operation_id = "kill_agent_process",
    tag = "agent-adapters",
    params(SessionPath),
    responses(
        (status = 200, description = "The process as it was when stopped", body = AgentProcessResponse),
        (status = 404, description = "The session has no live agent process", body = ErrorEnvelope)
    )
)]
pub async fn kill_process(
    State(state): State<HttpState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
) -> Result<Json<AgentProcessResponse>, ApiError> {
    let limit = idle_limit_ms(&state);
    let (p, title) = state
        .engine
        .agents()
        .kill_process(&state.namespace, &SessionId::from(id))
        .await?;
    Ok(Json(AgentProcessResponse {
        object: "agent_process".to_string(),
        data: AgentProcessDto::new(&p, Some(title).filter(|t| !t.is_empty()), limit),
    }))
}
