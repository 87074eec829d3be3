//! Model capabilities on the wire: the effective record carried by sessions,
//! messages and `/v1/models`, and the bodies of
//! `/hecate/v1/model-capabilities/overrides` and `/probes`.

use crate::domain::capability::{CapabilityRecord, ModelCapabilities};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

/// The effective capabilities of a provider/model pair.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CapabilitiesDto {
    /// `unknown`, `none`, `basic` or `parallel`.
    pub tool_calling: String,
    /// Whether answers can be streamed.
    pub streaming: bool,
    /// Whether it reads images (absent: unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    /// Its context window in tokens (absent: unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_context_tokens: Option<u64>,
    /// The strongest source that said anything: `operator_override`, `probe`,
    /// `config`, `catalog` or `default`.
    pub source: String,
}

impl From<&ModelCapabilities> for CapabilitiesDto {
    fn from(c: &ModelCapabilities) -> Self {
        Self {
            tool_calling: c.tool_calling.as_str().to_string(),
            streaming: c.streaming,
            vision: c.vision,
            max_context_tokens: c.max_context_tokens,
            source: c.source.as_str().to_string(),
        }
    }
}

/// `PUT /hecate/v1/model-capabilities/overrides`: what the operator says of a model.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilityOverrideRequest {
    /// A configured provider's name.
    pub provider: String,
    /// The model as that provider names it.
    pub model: String,
    /// `none`, `basic` or `parallel`.
    pub tool_calling: String,
    /// Whether answers can be streamed.
    pub streaming: Option<bool>,
    /// Whether it reads images.
    pub vision: Option<bool>,
    /// Its context window in tokens.
    pub max_context_tokens: Option<u64>,
    /// Why (shown back).
    pub note: Option<String>,
}

/// `POST /hecate/v1/model-capabilities/probes`: the model to probe, or a result
/// the operator found by hand.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CapabilityProbeRequest {
    /// A configured provider's name.
    pub provider: String,
    /// The model as that provider names it.
    pub model: String,
    /// A result found by hand (`none`, `basic` or `parallel`); absent, Hecate
    /// asks the model to call a tool and records what it did.
    pub tool_calling: Option<String>,
    /// A note kept with the result.
    pub note: Option<String>,
}

/// `DELETE /hecate/v1/model-capabilities/overrides?provider=…&model=…`.
#[derive(Debug, Clone, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct CapabilityPairQuery {
    /// A configured provider's name.
    pub provider: String,
    /// The model as that provider names it.
    pub model: String,
}

/// A stored capability record with the effective record it leads to.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ModelCapabilityDto {
    /// The provider.
    pub provider: String,
    /// The model.
    pub model: String,
    /// `operator_override` or `probe`.
    pub source: String,
    /// `none`, `basic` or `parallel`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calling: Option<String>,
    /// Whether answers can be streamed, when said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Whether it reads images, when said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    /// Its context window, when said.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_context_tokens: Option<u64>,
    /// The operator's note, or what the probe saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// When it was stored.
    pub updated_at: String,
    /// Calls of the probe tool the model made (probes Hecate ran).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_calls_seen: Option<usize>,
    /// The effective capabilities now.
    pub effective: CapabilitiesDto,
}

impl ModelCapabilityDto {
    /// The record `r`, with `effective` the merged result.
    pub fn new(r: &CapabilityRecord, effective: &ModelCapabilities) -> Self {
        Self {
            provider: r.provider.clone(),
            model: r.model.clone(),
            source: r.source.as_str().to_string(),
            tool_calling: r.declared.tool_calling.map(|t| t.as_str().to_string()),
            streaming: r.declared.streaming,
            vision: r.declared.vision,
            max_context_tokens: r.declared.max_context_tokens,
            note: r.note.clone(),
            updated_at: r.updated_at.clone(),
            tool_calls_seen: None,
            effective: CapabilitiesDto::from(effective),
        }
    }
}

/// `{"object": "model_capability" | "model_capability_probe", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ModelCapabilityResponse {
    /// `model_capability` (an override) or `model_capability_probe`.
    pub object: String,
    /// The record.
    pub data: ModelCapabilityDto,
}

/// What remains of a pair once its override is deleted.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CapabilityOverrideDeletedDto {
    /// The provider.
    pub provider: String,
    /// The model.
    pub model: String,
    /// Always true.
    pub deleted: bool,
    /// The effective capabilities from the remaining sources.
    pub effective: CapabilitiesDto,
}

/// `{"object": "model_capability_override_deleted", "data": …}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CapabilityOverrideDeletedResponse {
    /// `model_capability_override_deleted`.
    pub object: String,
    /// What remains.
    pub data: CapabilityOverrideDeletedDto,
}
