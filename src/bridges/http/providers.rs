//! Provider readiness for operators: `GET /hecate/v1/providers/presets`,
//! `GET /hecate/v1/providers/status` and
//! `GET /hecate/v1/settings/providers/local-discovery`.

use super::HttpState;
use crate::engine::gateway::catalog::providers::{
    LocalDiscovery, ProviderPreset, ProviderStatus, presets,
};
use axum::Json;
use axum::extract::State;
use serde::Serialize;
use serde_json::{Value, json};

fn listing<T: Serialize>(object: &str, data: Vec<T>) -> Json<Value> {
    Json(json!({"object": object, "data": data}))
}

/// The providers Hecate knows how to reach, with the variables that configure them.
#[utoipa::path(
    get,
    path = "/hecate/v1/providers/presets",
    operation_id = "provider_presets",
    tag = "providers",
    responses((status = 200, description = "`provider_presets`: id, name, kind (cloud/local), protocol, base_url, api_key_env, default_model, env_snippet", body = Object))
)]
pub async fn list_presets() -> Json<Value> {
    listing::<ProviderPreset>("provider_presets", presets())
}

/// Each configured provider's readiness, probed now: credentials, models,
/// health and routing checks, and whether the router may use it.
#[utoipa::path(
    get,
    path = "/hecate/v1/providers/status",
    operation_id = "provider_status",
    tag = "providers",
    responses((status = 200, description = "`provider_status`: one row per configured provider with readiness_checks and health (circuit, cooldown, failures in a row, average answer time)", body = Object))
)]
pub async fn status(State(state): State<HttpState>) -> Json<Value> {
    listing::<ProviderStatus>(
        "provider_status",
        state.engine.gateway().provider_status().await,
    )
}

/// Advisory discovery of local model servers (Ollama, LM Studio, llama.cpp,
/// vLLM) on their default loopback ports; creates nothing.
#[utoipa::path(
    get,
    path = "/hecate/v1/settings/providers/local-discovery",
    operation_id = "local_provider_discovery",
    tag = "providers",
    responses((status = 200, description = "`local_provider_discovery`: running / installed / not_detected per local preset", body = Object))
)]
pub async fn local_discovery(State(state): State<HttpState>) -> Json<Value> {
    listing::<LocalDiscovery>(
        "local_provider_discovery",
        state.engine.gateway().discover_local_providers().await,
    )
}
