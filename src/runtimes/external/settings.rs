//! An agent session's settings: the modes and config options the agent offers
//! now, the choices an editor made (checked against those offers and the
//! operator's mode rule), and how an agent's own updates change them.

use crate::adapters::acp::OptionValue;
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::event::RuntimeEvent;
use crate::domain::ids::SessionId;
use crate::domain::mcp::McpServerConfig;
use crate::domain::workspace::ElicitationModes;
use serde_json::Value;

/// The modes and config options an agent session offers now, as the agent
/// listed them (options in the ACP `configOptions` JSON shape, category kept).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AgentSettings {
    /// The current mode, when the agent has modes.
    pub current_mode: Option<String>,
    /// The modes offered, as `(id, name)`.
    pub modes: Vec<(String, String)>,
    /// The config options (an array; `null` when the agent lists none).
    pub options: Value,
}

impl AgentSettings {
    /// Follows an agent's own `current_mode_update` or `config_option_update`.
    pub fn follow(&mut self, event: &RuntimeEvent) {
        match event {
            RuntimeEvent::ModeChanged { mode_id } => self.current_mode = Some(mode_id.clone()),
            RuntimeEvent::ConfigChanged { options } => self.options = options.clone(),
            _ => {}
        }
    }

    /// Records `mode` as current, in the mode list and in any option of
    /// category `mode` that offers it (agents list both, and answer a mode
    /// switch without the new option list).
    pub fn set_current_mode(&mut self, mode: &str) {
        if self.modes.iter().any(|(id, _)| id == mode) {
            self.current_mode = Some(mode.to_string());
        }
        for o in self.options.as_array_mut().into_iter().flatten() {
            if o["category"].as_str() == Some("mode")
                && select_values(&o["options"]).iter().any(|v| v == mode)
            {
                o["currentValue"] = Value::String(mode.to_string());
            }
        }
    }

    /// The option with id `id`, when offered.
    fn option(&self, id: &str) -> Option<&Value> {
        self.options
            .as_array()?
            .iter()
            .find(|o| o["id"].as_str() == Some(id))
    }

    /// The ids of the options offered.
    pub fn option_ids(&self) -> Vec<String> {
        self.options
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|o| o["id"].as_str().map(str::to_string))
            .collect()
    }

    /// Whether option `id` is the agent's mode selector (category `mode`).
    pub fn is_mode_option(&self, id: &str) -> bool {
        self.option(id)
            .is_some_and(|o| o["category"].as_str() == Some("mode"))
    }

    /// Checks that `value` is one the offered option `id` takes.
    pub fn check_value(&self, id: &str, value: &OptionValue) -> Result<(), SettingError> {
        let Some(option) = self.option(id) else {
            return Err(SettingError::UnknownOption {
                id: id.to_string(),
                available: self.option_ids(),
            });
        };
        match (option["type"].as_str(), value) {
            (Some("boolean"), OptionValue::Bool(_)) => Ok(()),
            (Some("select"), OptionValue::Id(v)) => {
                let values = select_values(&option["options"]);
                if values.iter().any(|x| x == v) {
                    Ok(())
                } else {
                    Err(SettingError::BadValue {
                        id: id.to_string(),
                        why: format!("{v:?} is not one of {values:?}"),
                    })
                }
            }
            (Some(kind @ ("boolean" | "select")), _) => Err(SettingError::BadValue {
                id: id.to_string(),
                why: format!(
                    "a {kind} option takes {}",
                    if kind == "boolean" {
                        "a boolean"
                    } else {
                        "a value id"
                    }
                ),
            }),
            // A kind newer than Hecate: the agent judges the value itself.
            _ => Ok(()),
        }
    }

    /// Checks that `mode` is offered.
    pub fn check_mode(&self, mode: &str) -> Result<(), SettingError> {
        if self.modes.iter().any(|(id, _)| id == mode) {
            return Ok(());
        }
        Err(SettingError::UnknownMode {
            mode: mode.to_string(),
            available: self.modes.iter().map(|(id, _)| id.clone()).collect(),
        })
    }
}

/// The value ids of a select option's `options`, flat or grouped.
fn select_values(options: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for o in options.as_array().into_iter().flatten() {
        match o.get("options") {
            Some(group) => out.extend(select_values(group)),
            None => out.extend(o["value"].as_str().map(str::to_string)),
        }
    }
    out
}

/// Where and how to open a session's agent ahead of its first turn.
#[derive(Debug, Clone)]
pub struct OpenAgent<'a> {
    /// The Hecate session.
    pub session_id: &'a SessionId,
    /// The adapter to run.
    pub adapter_id: &'a str,
    /// The workspace (an existing directory).
    pub workspace: &'a str,
    /// The native session to reload, when the session has one.
    pub native_session_id: Option<&'a str>,
    /// MCP servers handed to the agent.
    pub mcp_servers: &'a [McpServerConfig],
    /// Whether the session already has turns (a fresh native session is then
    /// primed with the transcript on its first turn).
    pub earlier_turns: bool,
    /// The elicitation modes the editor driving the session answers: what a
    /// newly started agent is told it may ask.
    pub elicitation: ElicitationModes,
}

/// Which modes an editor may put an agent in. When Hecate pins the agent to a
/// mode that asks the client (the manifest's `initial_mode`) and the operator
/// has not chosen the adapter's mode (`[agents.modes]`), only that mode and the
/// manifest's `asking_modes` are open to the editor.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModeRule {
    /// The mode Hecate pins, unless the operator chose one.
    pub pinned: Option<String>,
    /// Other modes in which the agent still asks the client.
    pub asking: Vec<String>,
}

impl ModeRule {
    /// Whether an editor may choose `mode`.
    pub fn allows(&self, mode: &str) -> bool {
        match &self.pinned {
            None => true,
            Some(p) => p == mode || self.asking.iter().any(|a| a == mode),
        }
    }

    /// The modes the rule opens, when it restricts any.
    fn open(&self) -> Vec<String> {
        self.pinned
            .iter()
            .chain(self.asking.iter())
            .cloned()
            .collect()
    }

    /// Refuses `mode` unless the rule allows it.
    pub fn check(&self, mode: &str) -> Result<(), SettingError> {
        if self.allows(mode) {
            return Ok(());
        }
        Err(SettingError::ModeNotAllowed {
            mode: mode.to_string(),
            allowed: self.open(),
        })
    }
}

/// What an editor chose for one session's agent, re-applied on every attach.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Choices {
    /// The mode chosen with `session/set_mode`.
    pub mode: Option<String>,
    /// Option values chosen, in the order they were set (one per id).
    pub options: Vec<(String, OptionValue)>,
}

impl Choices {
    /// Records a value for option `id`, replacing an earlier one.
    pub fn set_option(&mut self, id: &str, value: OptionValue) {
        self.options.retain(|(k, _)| k != id);
        self.options.push((id.to_string(), value));
    }

    /// Whether nothing was chosen.
    pub fn is_empty(&self) -> bool {
        self.mode.is_none() && self.options.is_empty()
    }

    /// Splits the choices into those the agent still offers (as `settings`
    /// lists them) and the operator's `rule` still allows, and the stale
    /// ones with why each is no longer taken (an agent that changed its
    /// offers, a mode rule tightened since the choice).
    pub fn split_offered(
        &self,
        settings: &AgentSettings,
        rule: &ModeRule,
    ) -> (Choices, Vec<StaleChoice>) {
        let mut kept = Choices::default();
        let mut stale = Vec::new();
        if let Some(mode) = &self.mode {
            match settings.check_mode(mode).and_then(|()| rule.check(mode)) {
                Ok(()) => kept.mode = Some(mode.clone()),
                Err(why) => stale.push(StaleChoice { option: None, why }),
            }
        }
        for (id, value) in &self.options {
            let checked = settings.check_value(id, value).and_then(|()| match value {
                OptionValue::Id(mode) if settings.is_mode_option(id) => rule.check(mode),
                _ => Ok(()),
            });
            match checked {
                Ok(()) => kept.options.push((id.clone(), value.clone())),
                Err(why) => stale.push(StaleChoice {
                    option: Some(id.clone()),
                    why,
                }),
            }
        }
        (kept, stale)
    }
}

/// A choice made earlier that is no longer taken, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaleChoice {
    /// The option id; `None` for the mode.
    pub option: Option<String>,
    /// Why it is no longer taken.
    pub why: SettingError,
}

/// Why a setting was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingError {
    /// The agent offers no option with this id.
    #[error("the agent has no config option {id:?} (it offers {available:?})")]
    UnknownOption {
        /// The id asked for.
        id: String,
        /// The ids offered.
        available: Vec<String>,
    },
    /// The option does not take this value.
    #[error("config option {id:?} does not take this value: {why}")]
    BadValue {
        /// The option.
        id: String,
        /// What is wrong.
        why: String,
    },
    /// The agent offers no such mode.
    #[error("the agent has no mode {mode:?} (it offers {available:?})")]
    UnknownMode {
        /// The mode asked for.
        mode: String,
        /// The modes offered.
        available: Vec<String>,
    },
    /// The mode would let the agent act without asking the editor.
    #[error(
        "mode {mode:?} would let the agent act without asking the editor; the operator allows only {allowed:?} (set [agents.modes] in the config to choose another)"
    )]
    ModeNotAllowed {
        /// The mode asked for.
        mode: String,
        /// The modes the editor may choose.
        allowed: Vec<String>,
    },
    /// A turn is running on the agent.
    #[error("a turn is running on this session's agent; change its settings after the turn")]
    Busy,
    /// No agent process serves the session.
    #[error("no agent process serves this session")]
    NotRunning,
}

impl SettingError {
    /// The stable reason given in the error's details.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::UnknownOption { .. } => "config_option_unknown",
            Self::BadValue { .. } => "config_value_invalid",
            Self::UnknownMode { .. } => "mode_unknown",
            Self::ModeNotAllowed { .. } => "mode_not_allowed",
            Self::Busy => "session_busy",
            Self::NotRunning => "agent_not_running",
        }
    }
}

impl From<SettingError> for HecateError {
    fn from(e: SettingError) -> Self {
        let kind = match e {
            SettingError::Busy => ErrorType::AgentSessionBusy,
            _ => ErrorType::InvalidRequest,
        };
        let mut err = HecateError::new(kind, e.to_string()).with_detail("reason", e.reason());
        match &e {
            SettingError::UnknownOption { id, available } => {
                err = err
                    .with_detail("config_id", id.as_str())
                    .with_detail("available", available.clone());
            }
            SettingError::BadValue { id, .. } => err = err.with_detail("config_id", id.as_str()),
            SettingError::UnknownMode { mode, available } => {
                err = err
                    .with_detail("mode", mode.as_str())
                    .with_detail("available", available.clone());
            }
            SettingError::ModeNotAllowed { mode, allowed } => {
                err = err
                    .with_detail("mode", mode.as_str())
                    .with_detail("allowed", allowed.clone());
            }
            SettingError::Busy | SettingError::NotRunning => {}
        }
        err
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn settings() -> AgentSettings {
        AgentSettings {
            current_mode: Some("ask".into()),
            modes: vec![("ask".into(), "Ask".into()), ("auto".into(), "Auto".into())],
            options: json!([
                {"id": "model", "name": "Model", "type": "select", "category": "model", "currentValue": "a",
                 "options": [{"value": "a", "name": "A"}, {"group": "g", "name": "G", "options": [{"value": "b", "name": "B"}]}]},
                {"id": "fast", "name": "Fast", "type": "boolean", "currentValue": false},
                {"id": "mode", "name": "Mode", "type": "select", "category": "mode", "currentValue": "ask",
                 "options": [{"value": "ask", "name": "Ask"}]}
            ]),
        }
    }

    #[test]
    fn values_are_checked_against_what_the_agent_offers() {
        let s = settings();
        assert!(s.check_value("model", &OptionValue::Id("b".into())).is_ok());
        assert!(s.check_value("fast", &OptionValue::Bool(true)).is_ok());
        let bad = s.check_value("model", &OptionValue::Id("c".into()));
        assert!(matches!(bad, Err(SettingError::BadValue { .. })), "{bad:?}");
        let bad = s.check_value("fast", &OptionValue::Id("yes".into()));
        assert!(matches!(bad, Err(SettingError::BadValue { .. })), "{bad:?}");
        let unknown = s.check_value("colour", &OptionValue::Bool(true));
        assert_eq!(
            unknown.map_err(|e| e.reason()),
            Err("config_option_unknown")
        );
        assert!(s.is_mode_option("mode") && !s.is_mode_option("model"));
        assert!(s.check_mode("auto").is_ok() && s.check_mode("yolo").is_err());
    }

    #[test]
    fn choices_the_agent_no_longer_offers_or_the_rule_forbids_are_stale() {
        let mut c = Choices {
            mode: Some("auto".into()),
            options: Vec::new(),
        };
        c.set_option("model", OptionValue::Id("b".into()));
        c.set_option("gone", OptionValue::Bool(true));
        c.set_option("model", OptionValue::Id("b".into()));
        c.set_option("mode", OptionValue::Id("ask".into()));
        let (kept, stale) = c.split_offered(&settings(), &ModeRule::default());
        assert_eq!(kept.mode.as_deref(), Some("auto"));
        assert_eq!(
            kept.options,
            vec![
                ("model".into(), OptionValue::Id("b".into())),
                ("mode".into(), OptionValue::Id("ask".into()))
            ]
        );
        assert_eq!(stale.len(), 1);
        assert_eq!(stale[0].option.as_deref(), Some("gone"));
        assert_eq!(stale[0].why.reason(), "config_option_unknown");
        let pinned = ModeRule {
            pinned: Some("plan".into()),
            asking: Vec::new(),
        };
        let (kept, stale) = c.split_offered(&settings(), &pinned);
        assert_eq!(kept.mode, None, "a mode the rule now forbids");
        let reasons: Vec<&str> = stale.iter().map(|s| s.why.reason()).collect();
        assert_eq!(
            reasons,
            [
                "mode_not_allowed",
                "config_option_unknown",
                "mode_not_allowed"
            ]
        );
        assert!(Choices::default().is_empty() && !kept.is_empty());
    }

    #[test]
    fn a_pinned_mode_keeps_the_editor_to_asking_modes() {
        let free = ModeRule::default();
        assert!(free.allows("auto"));
        let pinned = ModeRule {
            pinned: Some("ask".into()),
            asking: vec!["plan".into()],
        };
        assert!(pinned.allows("ask") && pinned.allows("plan"));
        let refused = pinned.check("auto").expect_err("skips approval");
        assert_eq!(refused.reason(), "mode_not_allowed");
        let e = HecateError::from(refused);
        assert_eq!(e.error_type, ErrorType::InvalidRequest);
    }

    #[test]
    fn agent_updates_are_followed_and_choices_keep_one_value_per_option() {
        let mut s = settings();
        s.follow(&RuntimeEvent::ModeChanged {
            mode_id: "auto".into(),
        });
        s.follow(&RuntimeEvent::ConfigChanged { options: json!([]) });
        assert_eq!(s.current_mode.as_deref(), Some("auto"));
        let mut listed = settings();
        listed.set_current_mode("auto");
        assert_eq!(listed.current_mode.as_deref(), Some("auto"));
        assert_eq!(
            listed.options[2]["currentValue"], "ask",
            "not offered there"
        );
        listed.set_current_mode("ask");
        assert_eq!(listed.options[2]["currentValue"], "ask");
        assert_eq!(listed.current_mode.as_deref(), Some("ask"));
        assert!(s.option_ids().is_empty());
        let mut c = Choices::default();
        c.set_option("model", OptionValue::Id("a".into()));
        c.set_option("fast", OptionValue::Bool(true));
        c.set_option("model", OptionValue::Id("b".into()));
        assert_eq!(
            c.options,
            vec![
                ("fast".into(), OptionValue::Bool(true)),
                ("model".into(), OptionValue::Id("b".into()))
            ]
        );
    }
}
