//! What a thread offers the editor as session modes and config options: Hecate's
//! own `target` choice, beside the target's options — for an external agent
//! exactly what the agent advertises (category kept) and its modes; for a model
//! or Hecate's agent a `model` option over the models the router can reach, and
//! for a model that takes a reasoning effort a `thought_level` option; for
//! Hecate's agent a `tools` option too.

use crate::domain::capability::REASONING_EFFORTS;
use crate::domain::task::{TOOL_ACCESSES, ToolAccess};
use crate::engine::AgentSettings;
use crate::engine::targets::{Target, TargetRef};
use agent_client_protocol::v1::schema::{
    SessionConfigOption, SessionConfigOptionCategory, SessionConfigSelectOption, SessionMode,
    SessionModeState,
};

/// The config option id through which editors pick the target.
pub const TARGET_OPTION: &str = "target";

/// The config option id through which editors pick the model of a model
/// target or of Hecate's agent.
pub const MODEL_OPTION: &str = "model";

/// The config option id through which editors pick a model target's reasoning
/// effort.
pub const THOUGHT_OPTION: &str = "thought_level";

/// The `thought_level` value that sends no effort (the model's own default).
pub const THOUGHT_DEFAULT: &str = "default";

/// The config option id through which editors pick the tools Hecate's agent
/// offers its model (`all`, `read_only`, `none`).
pub const TOOLS_OPTION: &str = "tools";

/// Everything a thread offers the editor now.
#[derive(Debug, Clone)]
pub struct Offer {
    /// The session modes.
    pub modes: SessionModeState,
    /// The config options, `target` first.
    pub options: Vec<SessionConfigOption>,
}

/// The targets as session modes (what a thread without agent modes offers).
fn target_modes(targets: &[Target], current: &TargetRef) -> SessionModeState {
    let mut available: Vec<SessionMode> = targets
        .iter()
        .map(|t| SessionMode::new(t.id.clone(), t.name.clone()).description(t.description.clone()))
        .collect();
    let current_id = current.id();
    if !targets.iter().any(|t| t.id == current_id) {
        available.push(SessionMode::new(current_id.clone(), current_id.clone()));
    }
    SessionModeState::new(current_id, available)
}

/// The `target` option.
fn target_option(targets: &[Target], current: &TargetRef) -> SessionConfigOption {
    let mut choices: Vec<SessionConfigSelectOption> = targets
        .iter()
        .map(|t| SessionConfigSelectOption::new(t.id.clone(), t.name.clone()))
        .collect();
    if !targets.iter().any(|t| t.id == current.id()) {
        choices.push(SessionConfigSelectOption::new(current.id(), current.id()));
    }
    SessionConfigOption::select(TARGET_OPTION, "Answered by", current.id(), choices)
}

/// The `provider/model` pairs offered under `prefix` (`model:` or `hecate:`).
fn models_under<'t>(targets: &'t [Target], prefix: &str) -> Vec<(&'t str, &'t str)> {
    targets
        .iter()
        .filter_map(|t| Some((t.id.strip_prefix(prefix)?, t.name.as_str())))
        .filter(|(m, _)| m.contains('/'))
        .collect()
}

/// The `model` option of a model target or Hecate's agent: every model the
/// router reaches for that kind of target, values `provider/model`.
fn model_option(targets: &[Target], current: &TargetRef) -> Option<SessionConfigOption> {
    let (prefix, chosen) = match current {
        TargetRef::Model { provider, model } => ("model:", format!("{provider}/{model}")),
        TargetRef::Hecate {
            model: Some((provider, model)),
        } => ("hecate:", format!("{provider}/{model}")),
        TargetRef::Hecate { model: None } | TargetRef::External { .. } => return None,
    };
    let mut choices: Vec<SessionConfigSelectOption> = models_under(targets, prefix)
        .into_iter()
        .map(|(m, name)| SessionConfigSelectOption::new(m.to_string(), name.to_string()))
        .collect();
    if !choices.iter().any(|c| c.value.0.as_ref() == chosen) {
        choices.push(SessionConfigSelectOption::new(
            chosen.clone(),
            chosen.clone(),
        ));
    }
    Some(
        SessionConfigOption::select(MODEL_OPTION, "Model", chosen, choices)
            .category(SessionConfigOptionCategory::Model),
    )
}

/// The `thought_level` option (category `thought_level`) with `current` chosen:
/// the model's default, or one of the efforts it may be asked for.
pub fn thought_option(current: Option<&str>) -> SessionConfigOption {
    let mut choices = vec![SessionConfigSelectOption::new(
        THOUGHT_DEFAULT,
        "Model default",
    )];
    choices.extend(REASONING_EFFORTS.iter().map(|e| {
        let mut name = e.to_string();
        name[..1].make_ascii_uppercase();
        SessionConfigSelectOption::new(*e, name)
    }));
    SessionConfigOption::select(
        THOUGHT_OPTION,
        "Thought level",
        current.unwrap_or(THOUGHT_DEFAULT).to_string(),
        choices,
    )
    .category(SessionConfigOptionCategory::ThoughtLevel)
}

/// The `tools` option of Hecate's agent with `current` chosen.
pub fn tools_option(current: ToolAccess) -> SessionConfigOption {
    let choices = TOOL_ACCESSES
        .iter()
        .map(|a| {
            let name = match a {
                ToolAccess::All => "All tools",
                ToolAccess::ReadOnly => "Read-only (read, list, plan)",
                ToolAccess::None => "No tools",
            };
            SessionConfigSelectOption::new(a.as_str(), name)
        })
        .collect::<Vec<_>>();
    SessionConfigOption::select(TOOLS_OPTION, "Tools", current.as_str(), choices)
}

/// The agent's own options as the editor sees them (an option that would
/// shadow `target` is left out).
pub fn agent_options(settings: &AgentSettings) -> Vec<SessionConfigOption> {
    let listed: Vec<SessionConfigOption> =
        serde_json::from_value(settings.options.clone()).unwrap_or_default();
    listed
        .into_iter()
        .filter(|o| o.id.0.as_ref() != TARGET_OPTION)
        .collect()
}

/// The agent's modes, when it has any.
fn agent_modes(settings: &AgentSettings) -> Option<SessionModeState> {
    let current = settings.current_mode.clone()?;
    if settings.modes.is_empty() {
        return None;
    }
    let modes = settings
        .modes
        .iter()
        .map(|(id, name)| SessionMode::new(id.clone(), name.clone()))
        .collect();
    Some(SessionModeState::new(current, modes))
}

/// What a thread on `current` offers, given the targets on offer and (for an
/// external agent that runs) the agent's settings.
pub fn offer(targets: &[Target], current: &TargetRef, agent: Option<&AgentSettings>) -> Offer {
    let mut options = vec![target_option(targets, current)];
    options.extend(model_option(targets, current));
    let mut modes = None;
    if let (TargetRef::External { .. }, Some(settings)) = (current, agent) {
        options.extend(agent_options(settings));
        modes = agent_modes(settings);
    }
    Offer {
        modes: modes.unwrap_or_else(|| target_modes(targets, current)),
        options,
    }
}

/// The category of the agent's option `id`, when it lists one.
pub fn category_of(settings: &AgentSettings, id: &str) -> Option<SessionConfigOptionCategory> {
    agent_options(settings)
        .into_iter()
        .find(|o| o.id.0.as_ref() == id)
        .and_then(|o| o.category)
}

/// The id of the agent's model selector (category `model`), when it has one.
pub fn agent_model_option(settings: &AgentSettings) -> Option<String> {
    agent_options(settings)
        .into_iter()
        .find(|o| o.category == Some(SessionConfigOptionCategory::Model))
        .map(|o| o.id.0.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn targets() -> Vec<Target> {
        ["model:p/a", "model:p/b", "hecate:p/a", "agent:x"]
            .iter()
            .map(|id| Target {
                id: id.to_string(),
                name: id.to_string(),
                description: String::new(),
            })
            .collect()
    }

    #[test]
    fn a_model_thread_offers_its_models_beside_the_target() {
        let current = TargetRef::parse("model:p/b").expect("target");
        let o = offer(&targets(), &current, None);
        let v = serde_json::to_value(&o.options).expect("json");
        assert_eq!(v[0]["id"], "target");
        assert_eq!(v[1]["id"], "model");
        assert_eq!(v[1]["category"], "model");
        assert_eq!(v[1]["currentValue"], "p/b");
        assert_eq!(v[1]["options"].as_array().map(Vec::len), Some(2));
        assert_eq!(o.modes.current_mode_id.0.as_ref(), "model:p/b");
    }

    #[test]
    fn the_thought_level_starts_at_the_models_default() {
        let v = serde_json::to_value(thought_option(None)).expect("json");
        assert_eq!(v["category"], "thought_level");
        assert_eq!(v["currentValue"], "default");
        let names: Vec<&str> = v["options"]
            .as_array()
            .expect("choices")
            .iter()
            .filter_map(|o| o["name"].as_str())
            .collect();
        assert_eq!(names, ["Model default", "Low", "Medium", "High"]);
        let high = serde_json::to_value(thought_option(Some("high"))).expect("json");
        assert_eq!(high["currentValue"], "high");
    }

    #[test]
    fn the_tools_option_lists_every_access_with_the_current_one_chosen() {
        let v = serde_json::to_value(tools_option(ToolAccess::ReadOnly)).expect("json");
        assert_eq!((&v["id"], &v["type"]), (&json!("tools"), &json!("select")));
        assert_eq!(v["currentValue"], "read_only");
        let values: Vec<&str> = v["options"]
            .as_array()
            .expect("choices")
            .iter()
            .filter_map(|o| o["value"].as_str())
            .collect();
        assert_eq!(values, ["all", "read_only", "none"]);
    }

    #[test]
    fn an_agent_thread_offers_the_agents_options_and_modes() {
        let current = TargetRef::parse("agent:x").expect("target");
        let settings = AgentSettings {
            current_mode: Some("ask".into()),
            modes: vec![("ask".into(), "Ask".into()), ("auto".into(), "Auto".into())],
            options: json!([
                {"id": "effort", "name": "Effort", "type": "select", "category": "thought_level",
                 "currentValue": "low", "options": [{"value": "low", "name": "Low"}]},
                {"id": "target", "name": "Shadow", "type": "boolean", "currentValue": true},
                {"id": "m", "name": "Model", "type": "select", "category": "model",
                 "currentValue": "z", "options": [{"value": "z", "name": "Z"}]}
            ]),
        };
        let o = offer(&targets(), &current, Some(&settings));
        let ids: Vec<&str> = o.options.iter().map(|x| x.id.0.as_ref()).collect();
        assert_eq!(ids, vec!["target", "effort", "m"]);
        assert_eq!(
            o.options[1].category,
            Some(SessionConfigOptionCategory::ThoughtLevel)
        );
        assert_eq!(o.modes.current_mode_id.0.as_ref(), "ask");
        assert_eq!(agent_model_option(&settings).as_deref(), Some("m"));
        let without = offer(&targets(), &current, None);
        assert_eq!(without.modes.current_mode_id.0.as_ref(), "agent:x");
    }
}
