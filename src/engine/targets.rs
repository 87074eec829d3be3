//! What can answer a session: every routable provider model, Hecate's own agent
//! on each of them (and on the hub's default model), and every available external
//! agent (an ACP adapter or a remote A2A agent), as `model:PROVIDER/MODEL`,
//! `hecate:PROVIDER/MODEL` / `hecate` and `agent:ADAPTER_ID` targets.

use super::Engine;
use crate::domain::error::{HecateError, Result};
use serde::Serialize;
use std::time::Duration;

/// A selectable answerer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Target {
    /// `model:PROVIDER/MODEL`, `hecate:PROVIDER/MODEL`, `hecate` or `agent:ADAPTER_ID`.
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
    /// An external coding agent Hecate supervises over ACP (`agent:ID`).
    External {
        /// Adapter id.
        adapter_id: String,
    },
    /// Hecate's own agent (an `agent_loop` task) on a provider model; `None`
    /// runs it on the hub's default model.
    Hecate {
        /// `(provider, model)`, or `None` for the default model.
        model: Option<(String, String)>,
    },
}

impl TargetRef {
    /// Parses `model:PROVIDER/MODEL`, `agent:ID`, `hecate:PROVIDER/MODEL` or `hecate`.
    pub fn parse(s: &str) -> Result<Self> {
        if s == "hecate" {
            return Ok(Self::Hecate { model: None });
        }
        if let Some(rest) = s.strip_prefix("hecate:")
            && let Some((provider, model)) = rest.split_once('/')
            && !provider.is_empty()
            && !model.is_empty()
        {
            return Ok(Self::Hecate {
                model: Some((provider.to_string(), model.to_string())),
            });
        }
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
            return Ok(Self::External {
                adapter_id: id.to_string(),
            });
        }
        Err(HecateError::invalid(format!(
            "target {s:?} is not model:PROVIDER/MODEL, agent:ADAPTER_ID, \
             hecate:PROVIDER/MODEL or hecate"
        ))
        .with_detail("target", s))
    }

    /// The target id string.
    pub fn id(&self) -> String {
        match self {
            Self::Model { provider, model } => format!("model:{provider}/{model}"),
            Self::External { adapter_id } => format!("agent:{adapter_id}"),
            Self::Hecate { model: None } => "hecate".to_string(),
            Self::Hecate {
                model: Some((provider, model)),
            } => format!("hecate:{provider}/{model}"),
        }
    }
}

impl Engine {
    /// The model Hecate's own agent runs on when a session names none: the
    /// task runtime's default (`[tasks] default_model`, else `[gateway]
    /// default_model`), when one is set.
    pub fn default_agent_model(&self) -> Option<&str> {
        Some(self.inner.config.tasks.default_model.trim()).filter(|m| !m.is_empty())
    }

    /// Every target available now: declared provider models (or, for providers that
    /// declare none, the models they list within `discovery_timeout`), then
    /// Hecate's own agent on the default model and on each of those models, then
    /// every catalog agent whose executable is found.
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
        let mut agents = Vec::new();
        if let Some(m) = self.default_agent_model() {
            agents.push(Target {
                id: "hecate".into(),
                name: "Hecate agent".into(),
                description: format!(
                    "Hecate's own agent (tools, edits, commands in the workspace) on the default model {m}"
                ),
            });
        }
        for (provider, models) in lists {
            for model in models {
                out.push(Target {
                    id: format!("model:{provider}/{model}"),
                    name: format!("{model} ({provider})"),
                    description: format!("Direct chat with {model} through provider {provider}"),
                });
                agents.push(Target {
                    id: format!("hecate:{provider}/{model}"),
                    name: format!("Hecate agent on {model} ({provider})"),
                    description: format!(
                        "Hecate's own agent (tools, edits, commands in the workspace) on {model} through provider {provider}"
                    ),
                });
            }
        }
        out.extend(agents);
        if let Ok(adapters) = self.agents().list().await {
            for a in adapters.into_iter().filter(|a| a.availability.available) {
                out.push(Target {
                    id: format!("agent:{}", a.id),
                    name: a.name.clone(),
                    description: if a.driver_kind == "a2a" {
                        format!("{}, a remote agent reached over A2A", a.name)
                    } else {
                        format!("{} supervised by Hecate over ACP", a.name)
                    },
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
    fn parses_every_target_form() {
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
        assert_eq!(
            TargetRef::parse("hecate:fix/m").expect("hecate on a model"),
            TargetRef::Hecate {
                model: Some(("fix".into(), "m".into()))
            }
        );
        assert_eq!(TargetRef::parse("hecate").expect("default").id(), "hecate");
        assert_eq!(
            TargetRef::parse("hecate:fix/m").expect("id").id(),
            "hecate:fix/m"
        );
        let bad = TargetRef::parse("hecate:nomodel").expect_err("no provider");
        assert!(bad.message.contains("hecate:PROVIDER/MODEL"), "{bad:?}");
    }
}
