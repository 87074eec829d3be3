//! Model capabilities: what a provider/model pair can do (tool calling,
//! streaming, vision, context size) and where each answer comes from. Several
//! sources may speak about one model; the effective record takes each field from
//! the strongest source that sets it: an operator override, then a probe result,
//! then the config's declaration, then the built-in catalog, then the defaults.

use serde::{Deserialize, Serialize};

/// Whether a model calls tools, and how many at once.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolCalling {
    /// Nobody said.
    #[default]
    Unknown,
    /// It does not call tools.
    None,
    /// It calls one tool per answer.
    Basic,
    /// It calls several tools in one answer.
    Parallel,
}

impl ToolCalling {
    /// Parses `unknown`, `none`, `basic` or `parallel`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "unknown" => Some(Self::Unknown),
            "none" => Some(Self::None),
            "basic" => Some(Self::Basic),
            "parallel" => Some(Self::Parallel),
            _ => None,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Unknown => "unknown",
            Self::None => "none",
            Self::Basic => "basic",
            Self::Parallel => "parallel",
        }
    }
}

/// Where a capability record (or its strongest field) comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapabilitySource {
    /// `PUT /hecate/v1/model-capabilities/overrides`.
    OperatorOverride,
    /// `POST /hecate/v1/model-capabilities/probes`.
    Probe,
    /// `[providers.NAME.capabilities."MODEL"]` in the config.
    Config,
    /// Hecate's built-in table of well-known model families.
    Catalog,
    /// Nothing said anything: tools unknown, streaming on.
    Default,
}

impl CapabilitySource {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OperatorOverride => "operator_override",
            Self::Probe => "probe",
            Self::Config => "config",
            Self::Catalog => "catalog",
            Self::Default => "default",
        }
    }

    /// Parses a wire name.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::OperatorOverride,
            Self::Probe,
            Self::Config,
            Self::Catalog,
            Self::Default,
        ]
        .into_iter()
        .find(|x| x.as_str() == s)
    }
}

/// What one source says about a model; a field it leaves unset falls through
/// to the next source.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityDeclaration {
    /// Tool calling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calling: Option<ToolCalling>,
    /// Whether answers can be streamed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streaming: Option<bool>,
    /// Whether it reads images.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    /// Its context window in tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_context_tokens: Option<u64>,
}

/// The effective capabilities of a provider/model pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelCapabilities {
    /// Tool calling.
    pub tool_calling: ToolCalling,
    /// Whether answers can be streamed.
    pub streaming: bool,
    /// Whether it reads images (absent: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vision: Option<bool>,
    /// Its context window in tokens (absent: unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_context_tokens: Option<u64>,
    /// The strongest source that said anything.
    pub source: CapabilitySource,
}

impl ModelCapabilities {
    /// Merges `layers`, strongest first: each field from the first layer that
    /// sets it, `source` the first layer that set any field.
    pub fn merge(layers: &[(CapabilitySource, &CapabilityDeclaration)]) -> Self {
        let mut out = Self {
            tool_calling: ToolCalling::Unknown,
            streaming: true,
            vision: None,
            max_context_tokens: None,
            source: CapabilitySource::Default,
        };
        for (source, d) in layers.iter().rev() {
            let mut said = false;
            if let Some(t) = d.tool_calling {
                (out.tool_calling, said) = (t, true);
            }
            if let Some(s) = d.streaming {
                (out.streaming, said) = (s, true);
            }
            if let Some(v) = d.vision {
                (out.vision, said) = (Some(v), true);
            }
            if let Some(m) = d.max_context_tokens {
                (out.max_context_tokens, said) = (Some(m), true);
            }
            if said {
                out.source = *source;
            }
        }
        out
    }

    /// Whether tools must not be offered to this model (it is marked `none`).
    pub fn refuses_tools(&self) -> bool {
        self.tool_calling == ToolCalling::None
    }
}

/// A stored capability record: an operator's override or a probe's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CapabilityRecord {
    /// The provider's name.
    pub provider: String,
    /// The model as the provider names it.
    pub model: String,
    /// `operator_override` or `probe`.
    pub source: CapabilitySource,
    /// What it says.
    pub declared: CapabilityDeclaration,
    /// The operator's note, or what the probe saw.
    pub note: Option<String>,
    /// When it was written (RFC 3339).
    pub updated_at: String,
}

/// Built-in knowledge of well-known model families, by model-name prefix
/// (longest prefix wins): tool calling and vision.
const CATALOG: &[(&str, ToolCalling, bool)] = &[
    ("gpt-4o", ToolCalling::Parallel, true),
    ("gpt-4.1", ToolCalling::Parallel, true),
    ("gpt-5", ToolCalling::Parallel, true),
    ("o3", ToolCalling::Parallel, true),
    ("o4-mini", ToolCalling::Parallel, true),
    ("claude-3-5", ToolCalling::Parallel, true),
    ("claude-3-7", ToolCalling::Parallel, true),
    ("claude-haiku-4", ToolCalling::Parallel, true),
    ("claude-sonnet-4", ToolCalling::Parallel, true),
    ("claude-opus-4", ToolCalling::Parallel, true),
];

/// The reasoning efforts a model may be asked for (editors' `thought_level`).
pub const REASONING_EFFORTS: [&str; 3] = ["low", "medium", "high"];

/// Model families known to take a reasoning effort, by model-name prefix.
const REASONING_CATALOG: &[&str] = &[
    "o1",
    "o3",
    "o4-mini",
    "gpt-5",
    "gpt-oss",
    "claude-3-7",
    "claude-sonnet-4",
    "claude-opus-4",
    "claude-haiku-4-5",
];

/// Whether the built-in catalog knows `model` to take a reasoning effort (a
/// `vendor/` prefix is looked through).
pub fn catalog_reasoning(model: &str) -> bool {
    let bare = model.rsplit('/').next().unwrap_or(model);
    REASONING_CATALOG.iter().any(|p| bare.starts_with(p))
}

/// What the built-in catalog says about `model` (a `vendor/` prefix, as
/// OpenRouter names models, is looked through).
pub fn catalog(model: &str) -> Option<CapabilityDeclaration> {
    let bare = model.rsplit('/').next().unwrap_or(model);
    CATALOG
        .iter()
        .filter(|(prefix, _, _)| bare.starts_with(prefix))
        .max_by_key(|(prefix, _, _)| prefix.len())
        .map(|&(_, tools, vision)| CapabilityDeclaration {
            tool_calling: Some(tools),
            vision: Some(vision),
            ..Default::default()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decl(tools: Option<ToolCalling>, ctx: Option<u64>) -> CapabilityDeclaration {
        CapabilityDeclaration {
            tool_calling: tools,
            max_context_tokens: ctx,
            ..Default::default()
        }
    }

    #[test]
    fn each_field_comes_from_the_strongest_source_that_sets_it() {
        let over = decl(Some(ToolCalling::None), None);
        let conf = decl(Some(ToolCalling::Basic), Some(8192));
        let m = ModelCapabilities::merge(&[
            (CapabilitySource::OperatorOverride, &over),
            (CapabilitySource::Config, &conf),
        ]);
        assert_eq!(m.tool_calling, ToolCalling::None);
        assert_eq!(m.max_context_tokens, Some(8192));
        assert!(m.streaming);
        assert_eq!(m.source, CapabilitySource::OperatorOverride);
        assert!(m.refuses_tools());
        let empty = CapabilityDeclaration::default();
        let m = ModelCapabilities::merge(&[(CapabilitySource::Probe, &empty)]);
        assert_eq!(
            (m.tool_calling, m.source),
            (ToolCalling::Unknown, CapabilitySource::Default)
        );
        assert!(!m.refuses_tools());
    }

    #[test]
    fn the_catalog_knows_families_by_prefix_and_looks_through_vendors() {
        assert_eq!(
            catalog("gpt-4o-mini").and_then(|d| d.tool_calling),
            Some(ToolCalling::Parallel)
        );
        assert!(catalog("openai/gpt-4.1-mini").is_some());
        assert!(catalog("qwen2.5-coder").is_none());
        assert!(catalog_reasoning("openai/o3-mini") && catalog_reasoning("claude-opus-4-1"));
        assert!(!catalog_reasoning("gpt-4o"));
        for t in ["unknown", "none", "basic", "parallel"] {
            assert_eq!(ToolCalling::parse(t).map(ToolCalling::as_str), Some(t));
        }
        assert_eq!(
            CapabilitySource::parse("operator_override"),
            Some(CapabilitySource::OperatorOverride)
        );
    }
}
