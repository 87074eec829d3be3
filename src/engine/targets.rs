//! What can answer a session: every routable provider model and every available
//! external agent, as `model:PROVIDER/MODEL` and `agent:ADAPTER_ID` targets.

use super::Engine;
use crate::domain::error::{HecateError, Result};
use serde::Serialize;
use std::time::Duration;

/// A selectable answerer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    /// `model:PROVIDER/MODEL` or `agent:ADAPTER_ID`.
    pub id: String,
    /// Human label.
    pub name: String,
    /// A line describing it.
    pub description: String,
}

/// A parsed target id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetRef {
    /// A provider model.
    Model {
        /// Provider.
        provider: String,
        /// Model.
        model: String,
    },
    /// An external agent.
    Agent {
        /// Adapter id.
        adapter_id: String,
    },
}

impl TargetRef {
    /// Parses `model:PROVIDER/MODEL` or `agent:ID`.
    pub fn parse(s: &str) -> Result<Self> {
        if let Some(rest) = s.strip_prefix("model:")
            && let Some((provider, model)) = rest.split_once('/')
            && !provider.is_empty()
            && !model.is_empty()
        {
            return Ok(Self::Model {
                provider: provider.to_string(),
                model: model.to_string(),
            });
        }
        if let Some(id) = s.strip_prefix("agent:").filter(|i| !i.is_empty()) {
            return Ok(Self::Agent {
                adapter_id: id.to_string(),
            });
        }
        Err(HecateError::invalid(format!(
            "target {s:?} is not model:PROVIDER/MODEL or agent:ADAPTER_ID"
        )))
    }

    /// The target id string.
    pub fn id(&self) -> String {
        match self {
            Self::Model { provider, model } => format!("model:{provider}/{model}"),
            Self::Agent { adapter_id } => format!("agent:{adapter_id}"),
        }
    }
}

impl Engine {
    /// Every target available now: declared provider models (or, for providers that
    /// declare none, the models they list within `discovery_timeout`), then every
    /// catalog agent whose executable is found.
    pub async fn targets(&self, discovery_timeout: Duration) -> Vec<Target> {
        let mut out = Vec::new();
        let lists = futures::future::join_all(self.inner.model.providers().map(|p| async move {
            let cfg = p.config();
            let models = if cfg.models.is_empty() {
                tokio::time::timeout(discovery_timeout, p.list_models())
                    .await
                    .ok()
                    .and_then(|r| r.ok())
                    .unwrap_or_default()
            } else {
                cfg.models.clone()
            };
            (cfg.name.clone(), models)
        }))
        .await;
        for (provider, models) in lists {
            for model in models {
                out.push(Target {
                    id: format!("model:{provider}/{model}"),
                    name: format!("{model} ({provider})"),
                    description: format!("Direct chat with {model} through provider {provider}"),
                });
            }
        }
        if let Ok(adapters) = self.list_adapters().await {
            for a in adapters.into_iter().filter(|a| a.availability.available) {
                out.push(Target {
                    id: format!("agent:{}", a.id),
                    name: a.name.clone(),
                    description: format!("{} supervised by Hecate over ACP", a.name),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_target_forms() {
        assert_eq!(
            TargetRef::parse("model:fix/m/x").expect("model"),
            TargetRef::Model {
                provider: "fix".into(),
                model: "m/x".into()
            }
        );
        assert_eq!(
            TargetRef::parse("agent:codex").expect("agent").id(),
            "agent:codex"
        );
        assert!(TargetRef::parse("codex").is_err());
        assert!(TargetRef::parse("model:nomodel").is_err());
    }
}
