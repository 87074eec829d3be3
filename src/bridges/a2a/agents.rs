//! Which agents this server exposes over A2A and how they are named: Hecate's
//! own agent on the default model (`hecate`) or on a provider model
//! (`hecate:PROVIDER/MODEL`), and each ready external agent of the catalog
//! (`agent:ID`, or its bare id). A name is one path segment of the agent's URL,
//! percent-encoded.

use super::error::A2aError;
use crate::domain::session::RuntimeKind;
use crate::engine::targets::TargetRef;
use crate::engine::{CreateSession, Engine};
use percent_encoding::{AsciiSet, CONTROLS, utf8_percent_encode};
use std::time::Duration;

/// How long listing the agents waits for a provider's model list.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(2);

/// The characters escaped in an agent's path segment.
const SEGMENT: &AsciiSet = &CONTROLS
    .add(b' ')
    .add(b'/')
    .add(b'%')
    .add(b'?')
    .add(b'#')
    .add(b'"')
    .add(b'<')
    .add(b'>');

/// An agent served over A2A.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExposedAgent {
    /// Its canonical name (`hecate`, `hecate:PROVIDER/MODEL`, `agent:ID`).
    pub name: String,
    /// The name shown on its card.
    pub title: String,
    /// What it does, for its card.
    pub description: String,
    /// Which Hecate target answers it.
    pub target: TargetRef,
}

impl ExposedAgent {
    /// Whether it is an external agent supervised over ACP.
    pub fn is_external(&self) -> bool {
        matches!(self.target, TargetRef::External { .. })
    }

    /// The session a new conversation with it starts, working in `workspace`.
    pub fn new_session(&self, context_id: &str, workspace: String) -> CreateSession {
        let title = Some(format!("A2A {} {context_id}", self.name));
        let workspace = Some(workspace);
        match &self.target {
            TargetRef::External { adapter_id } => CreateSession {
                title,
                runtime_kind: Some(RuntimeKind::ExternalAgent),
                adapter_id: Some(adapter_id.clone()),
                workspace,
                ..CreateSession::default()
            },
            other => {
                let (provider, model) = match other {
                    TargetRef::Hecate {
                        model: Some((p, m)),
                    } => (Some(p.clone()), Some(m.clone())),
                    _ => (None, None),
                };
                CreateSession {
                    title,
                    runtime_kind: Some(RuntimeKind::Agent),
                    provider,
                    model,
                    workspace,
                    ..CreateSession::default()
                }
            }
        }
    }
}

/// The URL path segment of an agent name.
pub fn path_segment(name: &str) -> String {
    utf8_percent_encode(name, SEGMENT).to_string()
}

/// Reads an agent name from a URL: a target id, or a bare catalog id.
pub fn parse_name(name: &str) -> Result<TargetRef, A2aError> {
    let target = match TargetRef::parse(name) {
        Ok(t) => t,
        Err(_) if !name.is_empty() && !name.contains(':') && !name.contains('/') => {
            TargetRef::External {
                adapter_id: name.to_string(),
            }
        }
        Err(_) => return Err(unknown(name)),
    };
    if matches!(target, TargetRef::Model { .. }) {
        return Err(A2aError::AgentNotFound(format!(
            "{name:?} is a model, not an agent; use hecate:PROVIDER/MODEL for Hecate's agent on it"
        )));
    }
    Ok(target)
}

/// The agent a URL names, checked against what this server can run now.
pub async fn resolve(engine: &Engine, name: &str) -> Result<ExposedAgent, A2aError> {
    let target = parse_name(name)?;
    match &target {
        TargetRef::Hecate { model: None } => {
            let Some(model) = engine.default_agent_model() else {
                return Err(A2aError::AgentNotFound(
                    "the default agent needs a default model ([tasks] default_model or \
                     [gateway] default_model); name an agent such as hecate:PROVIDER/MODEL"
                        .into(),
                ));
            };
            Ok(hecate_agent(target.clone(), model))
        }
        TargetRef::Hecate {
            model: Some((provider, model)),
        } => {
            engine
                .gateway()
                .route_model(Some(provider), model)
                .await
                .map_err(|e| {
                    A2aError::AgentNotFound(format!("{}: {}", unknown(name), e.message))
                })?;
            Ok(hecate_agent(target.clone(), &format!("{provider}/{model}")))
        }
        TargetRef::External { adapter_id } => {
            let ready = engine
                .agents()
                .list()
                .await
                .map_err(A2aError::from)?
                .into_iter()
                .find(|a| &a.id == adapter_id && a.availability.available);
            let Some(adapter) = ready else {
                return Err(unknown(name));
            };
            Ok(ExposedAgent {
                name: target.id(),
                title: adapter.name.clone(),
                description: format!("{} supervised by Hecate over ACP", adapter.name),
                target: target.clone(),
            })
        }
        TargetRef::Model { .. } => Err(unknown(name)),
    }
}

/// Every agent served now: Hecate's agent on the default model and on each
/// model, then each ready external agent.
pub async fn list(engine: &Engine) -> Vec<ExposedAgent> {
    engine
        .targets(DISCOVERY_TIMEOUT)
        .await
        .into_iter()
        .filter_map(|t| {
            let target = TargetRef::parse(&t.id).ok()?;
            (!matches!(target, TargetRef::Model { .. })).then_some(ExposedAgent {
                name: t.id,
                title: t.name,
                description: t.description,
                target,
            })
        })
        .collect()
}

/// Hecate's own agent on `model`.
fn hecate_agent(target: TargetRef, model: &str) -> ExposedAgent {
    ExposedAgent {
        name: target.id(),
        title: format!("Hecate agent on {model}"),
        description: format!(
            "Hecate's own agent (reads, edits and runs commands in its workspace) on {model}"
        ),
        target,
    }
}

/// The error for a name that matches no served agent.
fn unknown(name: &str) -> A2aError {
    A2aError::AgentNotFound(format!(
        "no A2A agent named {name:?}; GET /a2a lists the agents this server exposes"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_target_ids_or_bare_catalog_ids() {
        assert_eq!(
            parse_name("hecate").expect("default"),
            TargetRef::Hecate { model: None }
        );
        assert_eq!(
            parse_name("codex").expect("bare id"),
            TargetRef::External {
                adapter_id: "codex".into()
            }
        );
        let model = parse_name("model:fix/m").expect_err("a model is no agent");
        assert_eq!(model.code(), -32600);
        assert!(parse_name("a/b").is_err());
    }

    #[test]
    fn a_segment_escapes_the_slash_of_a_model() {
        assert_eq!(path_segment("hecate:fix/gpt-4o"), "hecate:fix%2Fgpt-4o");
        assert_eq!(path_segment("agent:codex"), "agent:codex");
    }

    #[test]
    fn sessions_follow_the_agent_kind() {
        let external = ExposedAgent {
            name: "agent:x".into(),
            title: "X".into(),
            description: String::new(),
            target: TargetRef::External {
                adapter_id: "x".into(),
            },
        };
        let s = external.new_session("c1", "/w".into());
        assert_eq!(s.runtime_kind, Some(RuntimeKind::ExternalAgent));
        assert_eq!(s.adapter_id.as_deref(), Some("x"));
        let on_model = ExposedAgent {
            target: TargetRef::Hecate {
                model: Some(("fix".into(), "m".into())),
            },
            ..external
        };
        let s = on_model.new_session("c1", "/w".into());
        assert_eq!(s.runtime_kind, Some(RuntimeKind::Agent));
        assert_eq!(
            (s.provider.as_deref(), s.model.as_deref()),
            (Some("fix"), Some("m"))
        );
    }
}
