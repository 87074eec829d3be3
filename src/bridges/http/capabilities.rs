//! Model capabilities for operators: `PUT` and `DELETE
//! /hecate/v1/model-capabilities/overrides` (an operator's word on what a
//! provider/model pair can do, stored so replicas share it) and `POST
//! /hecate/v1/model-capabilities/probes` (Hecate asks the model to call a tool
//! and records whether it did, or records a result found by hand).

use super::HttpState;
use super::envelope::{ApiError, ErrorEnvelope};
use super::extract::{ApiJson, ApiQuery};
use crate::bridges::resources::capability::{
    CapabilitiesDto, CapabilityOverrideDeletedDto, CapabilityOverrideDeletedResponse,
    CapabilityOverrideRequest, CapabilityPairQuery, CapabilityProbeRequest, ModelCapabilityDto,
    ModelCapabilityResponse,
};
use crate::domain::capability::{CapabilityDeclaration, ToolCalling};
use crate::engine::gateway::CapabilityOverride;
use axum::Json;
use axum::extract::State;

/// `tool_calling` as a request gives it: `none`, `basic` or `parallel`.
fn tool_calling(raw: &str) -> Result<ToolCalling, ApiError> {
    match ToolCalling::parse(raw) {
        Some(t) if t != ToolCalling::Unknown => Ok(t),
        _ => Err(ApiError::invalid(format!(
            "tool_calling must be none, basic or parallel, got {raw:?}"
        ))
        .with_detail("field", "tool_calling")),
    }
}

/// Stores an operator override for a provider/model pair; it wins over probe
/// results, the config, the catalog and the defaults.
#[utoipa::path(
    put,
    path = "/hecate/v1/model-capabilities/overrides",
    operation_id = "put_model_capability_override",
    tag = "providers",
    request_body = CapabilityOverrideRequest,
    responses(
        (status = 200, description = "The stored override and the effective capabilities", body = ModelCapabilityResponse),
        (status = 400, description = "A field is missing or invalid", body = ErrorEnvelope),
        (status = 404, description = "No configured provider has that name", body = ErrorEnvelope)
    )
)]
pub async fn put_override(
    State(state): State<HttpState>,
    ApiJson(req): ApiJson<CapabilityOverrideRequest>,
) -> Result<Json<ModelCapabilityResponse>, ApiError> {
    let declared = CapabilityDeclaration {
        tool_calling: Some(tool_calling(&req.tool_calling)?),
        streaming: req.streaming,
        vision: req.vision,
        max_context_tokens: req.max_context_tokens,
    };
    let record = state
        .engine
        .gateway()
        .put_capability_override(CapabilityOverride {
            provider: req.provider,
            model: req.model,
            declared,
            note: req.note,
        })
        .await?;
    let effective = state
        .engine
        .gateway()
        .capabilities(&record.provider, &record.model)
        .await;
    Ok(Json(ModelCapabilityResponse {
        object: "model_capability".into(),
        data: ModelCapabilityDto::new(&record, &effective),
    }))
}

/// Removes the operator override of a pair; the next source speaks again.
#[utoipa::path(
    delete,
    path = "/hecate/v1/model-capabilities/overrides",
    operation_id = "delete_model_capability_override",
    tag = "providers",
    params(CapabilityPairQuery),
    responses(
        (status = 200, description = "Deleted, with the effective capabilities left", body = CapabilityOverrideDeletedResponse),
        (status = 400, description = "provider or model missing", body = ErrorEnvelope),
        (status = 404, description = "No such provider, or no override for the pair", body = ErrorEnvelope)
    )
)]
pub async fn delete_override(
    State(state): State<HttpState>,
    ApiQuery(q): ApiQuery<CapabilityPairQuery>,
) -> Result<Json<CapabilityOverrideDeletedResponse>, ApiError> {
    state
        .engine
        .gateway()
        .delete_capability_override(&q.provider, &q.model)
        .await?;
    let effective = state
        .engine
        .gateway()
        .capabilities(&q.provider, &q.model)
        .await;
    Ok(Json(CapabilityOverrideDeletedResponse {
        object: "model_capability_override_deleted".into(),
        data: CapabilityOverrideDeletedDto {
            provider: q.provider,
            model: q.model,
            deleted: true,
            effective: CapabilitiesDto::from(&effective),
        },
    }))
}

/// Probes a model for tool calling: Hecate asks it, through its provider, to
/// call a probe tool twice in one answer and records `parallel`, `basic` or
/// `none`. With `tool_calling` in the body the result is recorded as given.
#[utoipa::path(
    post,
    path = "/hecate/v1/model-capabilities/probes",
    operation_id = "probe_model_capabilities",
    tag = "providers",
    request_body = CapabilityProbeRequest,
    responses(
        (status = 200, description = "The stored probe result and the effective capabilities", body = ModelCapabilityResponse),
        (status = 400, description = "A field is missing or invalid", body = ErrorEnvelope),
        (status = 404, description = "No configured provider has that name", body = ErrorEnvelope),
        (status = 500, description = "The model could not be reached; nothing was recorded", body = ErrorEnvelope)
    )
)]
pub async fn probe(
    State(state): State<HttpState>,
    ApiJson(req): ApiJson<CapabilityProbeRequest>,
) -> Result<Json<ModelCapabilityResponse>, ApiError> {
    let manual = req.tool_calling.as_deref().map(tool_calling).transpose()?;
    let report = state
        .engine
        .gateway()
        .probe_capabilities(&req.provider, &req.model, manual, req.note)
        .await?;
    let mut data = ModelCapabilityDto::new(&report.record, &report.effective);
    data.tool_calls_seen = report.tool_calls_seen;
    Ok(Json(ModelCapabilityResponse {
        object: "model_capability_probe".into(),
        data,
    }))
}
