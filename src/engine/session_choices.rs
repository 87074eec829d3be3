//! What editors chose for a session's options, kept in the store so a choice
//! outlives the process that took it: Hecate's own options of a session
//! (`thought_level`, `tools`, scope `hecate`) and an external agent's config
//! options and mode (scope `agent:ID`, so each agent of a session keeps its
//! own). A choice is stored before it takes effect; the external agent's are
//! read back whenever its agent is opened or a turn starts on it, and those
//! the agent no longer offers are dropped with a warning.

use super::Engine;
use crate::domain::capability::REASONING_EFFORTS;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::SessionId;
use crate::domain::task::ToolAccess;
use crate::domain::time::now_rfc3339;
use crate::runtimes::external::{Choices, OptionValue, StaleChoice};
use crate::store::{ChoiceKind, SessionChoice};
use serde_json::Value;

/// The scope of Hecate's own options of a session.
pub const HECATE_SCOPE: &str = "hecate";

/// The option id of Hecate's reasoning effort choice.
pub const THOUGHT_LEVEL: &str = "thought_level";

/// The option id of the tools Hecate's agent offers its model.
pub const TOOLS: &str = "tools";

/// The scope of external agent `adapter_id`'s options.
pub fn agent_scope(adapter_id: &str) -> String {
    format!("agent:{adapter_id}")
}

/// What an editor chose for Hecate's own options of a session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HecateChoices {
    /// The reasoning effort (`low`, `medium`, `high`); the model's own
    /// default when unset.
    pub thought_level: Option<String>,
    /// The tools Hecate's agent offers its model.
    pub tools: ToolAccess,
}

/// One of Hecate's own options set to a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HecateChoice {
    /// The reasoning effort (`None`: the model's own default).
    ThoughtLevel(Option<String>),
    /// The tools Hecate's agent offers.
    Tools(ToolAccess),
}

impl HecateChoices {
    /// The choices stored as `rows`; a value Hecate does not take (written by
    /// a newer build, say) is left out with a warning.
    fn from_rows(rows: &[SessionChoice]) -> Self {
        let mut out = Self::default();
        for row in rows.iter().filter(|r| r.kind == ChoiceKind::Option) {
            let value = row.value.as_str();
            match (row.name.as_str(), value) {
                (THOUGHT_LEVEL, Some(v)) if REASONING_EFFORTS.contains(&v) => {
                    out.thought_level = Some(v.to_string());
                }
                (TOOLS, Some(v)) if ToolAccess::parse(v).is_some() => {
                    out.tools = ToolAccess::parse(v).unwrap_or_default();
                }
                _ => tracing::warn!(
                    option = %row.name,
                    value = %row.value,
                    "a stored choice of Hecate's options is not one Hecate takes; dropped"
                ),
            }
        }
        out
    }
}

/// An external agent's choices as the runtime keeps them, from stored `rows`
/// (in the order they were set); a value of another shape is left out with a
/// warning.
fn agent_choices(rows: &[SessionChoice]) -> Choices {
    let mut out = Choices::default();
    for row in rows {
        match (row.kind, &row.value) {
            (ChoiceKind::Mode, Value::String(mode)) => out.mode = Some(mode.clone()),
            (ChoiceKind::Option, Value::String(v)) => {
                out.set_option(&row.name, OptionValue::Id(v.clone()))
            }
            (ChoiceKind::Option, Value::Bool(b)) => {
                out.set_option(&row.name, OptionValue::Bool(*b))
            }
            _ => tracing::warn!(
                option = %row.name,
                value = %row.value,
                "a stored choice of an agent's options has a value no option takes; dropped"
            ),
        }
    }
    out
}

/// A stored row for one choice of session `id` under `scope`.
fn row(id: &SessionId, scope: &str, kind: ChoiceKind, name: &str, value: Value) -> SessionChoice {
    SessionChoice {
        session_id: id.clone(),
        scope: scope.to_string(),
        kind,
        name: name.to_string(),
        value,
        chosen_at: now_rfc3339(),
    }
}

/// One choice of an external agent's options, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum AgentChoice<'a> {
    /// Its mode.
    Mode(&'a str),
    /// One of its config options.
    Option(&'a str, &'a OptionValue),
}

impl AgentChoice<'_> {
    fn key(&self) -> (ChoiceKind, &str) {
        match self {
            Self::Mode(_) => (ChoiceKind::Mode, ""),
            Self::Option(id, _) => (ChoiceKind::Option, id),
        }
    }

    fn value(&self) -> Value {
        match self {
            Self::Mode(m) => Value::String(m.to_string()),
            Self::Option(_, OptionValue::Id(v)) => Value::String(v.clone()),
            Self::Option(_, OptionValue::Bool(b)) => Value::Bool(*b),
        }
    }
}

/// What was stored for one choice before it was replaced, to put back when
/// the agent refuses the new one.
#[derive(Debug, Clone)]
pub(super) struct Replaced {
    scope: String,
    kind: ChoiceKind,
    name: String,
    before: Option<SessionChoice>,
}

impl Engine {
    /// What an editor chose for Hecate's own options of session `id` of
    /// `namespace` (`not_found` outside it).
    pub async fn hecate_choices(&self, namespace: &str, id: &SessionId) -> Result<HecateChoices> {
        self.store().get_session(namespace, id).await?;
        self.stored_hecate_choices(id).await
    }

    /// [`Engine::hecate_choices`] of a session the caller already found.
    pub(super) async fn stored_hecate_choices(&self, id: &SessionId) -> Result<HecateChoices> {
        let rows = self.store().list_session_choices(id, HECATE_SCOPE).await?;
        Ok(HecateChoices::from_rows(&rows))
    }

    /// Stores `choice` for Hecate's own options of session `id` of
    /// `namespace`; the default (the model's own effort, every tool) is stored
    /// as no row. An effort that is not one of [`REASONING_EFFORTS`] is
    /// `invalid_request`; a store failure is the error, and then nothing was
    /// chosen.
    pub async fn choose_for_hecate(
        &self,
        namespace: &str,
        id: &SessionId,
        choice: HecateChoice,
    ) -> Result<()> {
        if let HecateChoice::ThoughtLevel(Some(level)) = &choice
            && !REASONING_EFFORTS.contains(&level.as_str())
        {
            return Err(HecateError::new(
                ErrorType::InvalidRequest,
                format!("thought_level takes one of {REASONING_EFFORTS:?}, not {level:?}"),
            )
            .with_detail("reason", "config_value_invalid")
            .with_detail("config_id", THOUGHT_LEVEL));
        }
        self.store().get_session(namespace, id).await?;
        let (name, value) = match choice {
            HecateChoice::ThoughtLevel(level) => (THOUGHT_LEVEL, level),
            HecateChoice::Tools(ToolAccess::All) => (TOOLS, None),
            HecateChoice::Tools(access) => (TOOLS, Some(access.as_str().to_string())),
        };
        match value {
            Some(v) => {
                self.store()
                    .put_session_choice(&row(
                        id,
                        HECATE_SCOPE,
                        ChoiceKind::Option,
                        name,
                        Value::String(v),
                    ))
                    .await
            }
            None => self
                .store()
                .delete_session_choice(id, HECATE_SCOPE, ChoiceKind::Option, name)
                .await
                .map(drop),
        }
    }

    /// The stored choices of external agent `adapter_id` of session `id`.
    pub(super) async fn stored_agent_choices(
        &self,
        id: &SessionId,
        adapter_id: &str,
    ) -> Result<Choices> {
        let rows = self
            .store()
            .list_session_choices(id, &agent_scope(adapter_id))
            .await?;
        Ok(agent_choices(&rows))
    }

    /// Stores `choice` for agent `adapter_id` of session `id` (placed last, as
    /// the latest choice); answers what it replaced, for [`Engine::put_back`].
    pub(super) async fn keep_agent_choice(
        &self,
        id: &SessionId,
        adapter_id: &str,
        choice: &AgentChoice<'_>,
    ) -> Result<Replaced> {
        let scope = agent_scope(adapter_id);
        let (kind, name) = choice.key();
        let before = self
            .store()
            .list_session_choices(id, &scope)
            .await?
            .into_iter()
            .find(|r| r.kind == kind && r.name == name);
        self.store()
            .put_session_choice(&row(id, &scope, kind, name, choice.value()))
            .await?;
        Ok(Replaced {
            scope,
            kind,
            name: name.to_string(),
            before,
        })
    }

    /// Puts back what a choice replaced (the agent refused it); a failure is
    /// logged, since the agent's refusal is what the caller reports, and a
    /// stored choice the agent refuses is dropped when it is applied again.
    pub(super) async fn put_back(&self, id: &SessionId, replaced: Replaced) {
        let done = match replaced.before {
            Some(before) => self.store().put_session_choice(&before).await,
            None => self
                .store()
                .delete_session_choice(id, &replaced.scope, replaced.kind, &replaced.name)
                .await
                .map(drop),
        };
        if let Err(e) = done {
            tracing::warn!(error = %e, scope = %replaced.scope, option = %replaced.name, "could not put back the choice the agent refused");
        }
    }

    /// Deletes the stored choices of agent `adapter_id` of session `id` that
    /// it no longer takes, each with a warning; a store failure is logged
    /// (they are dropped again the next time they are applied).
    pub(super) async fn drop_stale_choices(
        &self,
        id: &SessionId,
        adapter_id: &str,
        stale: &[StaleChoice],
    ) {
        let scope = agent_scope(adapter_id);
        for s in stale {
            let (kind, name) = match &s.option {
                Some(option) => (ChoiceKind::Option, option.as_str()),
                None => (ChoiceKind::Mode, ""),
            };
            tracing::warn!(adapter_id, option = ?s.option, reason = s.why.reason(), error = %s.why, "a stored choice is no longer taken by the agent; dropped");
            if let Err(e) = self
                .store()
                .delete_session_choice(id, &scope, kind, name)
                .await
            {
                tracing::warn!(error = %e, adapter_id, "could not delete a stale choice");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stored(scope: &str, kind: ChoiceKind, name: &str, value: Value) -> SessionChoice {
        row(&SessionId::from("s"), scope, kind, name, value)
    }

    #[test]
    fn hecates_choices_read_back_and_unknown_values_are_left_out() {
        let rows = [
            stored(
                HECATE_SCOPE,
                ChoiceKind::Option,
                THOUGHT_LEVEL,
                json!("high"),
            ),
            stored(HECATE_SCOPE, ChoiceKind::Option, TOOLS, json!("read_only")),
        ];
        assert_eq!(
            HecateChoices::from_rows(&rows),
            HecateChoices {
                thought_level: Some("high".into()),
                tools: ToolAccess::ReadOnly,
            }
        );
        let odd = [
            stored(
                HECATE_SCOPE,
                ChoiceKind::Option,
                THOUGHT_LEVEL,
                json!("extreme"),
            ),
            stored(HECATE_SCOPE, ChoiceKind::Option, TOOLS, json!(true)),
            stored(HECATE_SCOPE, ChoiceKind::Option, "colour", json!("red")),
        ];
        assert_eq!(HecateChoices::from_rows(&odd), HecateChoices::default());
    }

    #[tokio::test]
    async fn hecates_choices_are_stored_per_session_behind_its_namespace() {
        let engine = Engine::in_memory(crate::engine::Runtimes::default())
            .await
            .expect("engine");
        let sid = SessionId::from("s1");
        let session = crate::domain::session::Session::new_idle(
            "ns",
            sid.clone(),
            "t",
            crate::domain::session::RuntimeKind::Agent,
        );
        engine
            .store()
            .create_session(&session)
            .await
            .expect("session");
        let high = HecateChoice::ThoughtLevel(Some("high".into()));
        engine
            .choose_for_hecate("ns", &sid, high.clone())
            .await
            .expect("stored");
        engine
            .choose_for_hecate("ns", &sid, HecateChoice::Tools(ToolAccess::None))
            .await
            .expect("stored");
        let chosen = engine.hecate_choices("ns", &sid).await.expect("read");
        assert_eq!(chosen.thought_level.as_deref(), Some("high"));
        assert_eq!(chosen.tools, ToolAccess::None);

        let other = engine.hecate_choices("elsewhere", &sid).await;
        assert_eq!(
            other.map_err(|e| e.error_type),
            Err(ErrorType::NotFound),
            "another namespace's session"
        );
        let refused = engine.choose_for_hecate("elsewhere", &sid, high).await;
        assert_eq!(refused.map_err(|e| e.error_type), Err(ErrorType::NotFound));
        let bad = engine
            .choose_for_hecate("ns", &sid, HecateChoice::ThoughtLevel(Some("max".into())))
            .await
            .expect_err("not an effort");
        assert_eq!(bad.details["reason"], "config_value_invalid");

        for back in [
            HecateChoice::ThoughtLevel(None),
            HecateChoice::Tools(ToolAccess::All),
        ] {
            engine
                .choose_for_hecate("ns", &sid, back)
                .await
                .expect("back to the default");
        }
        assert_eq!(
            engine.hecate_choices("ns", &sid).await.expect("read"),
            HecateChoices::default()
        );
        let rows = engine
            .store()
            .list_session_choices(&sid, HECATE_SCOPE)
            .await
            .expect("rows");
        assert!(rows.is_empty(), "a default is no row: {rows:?}");
    }

    #[test]
    fn an_agents_choices_keep_their_order_kind_and_value_shape() {
        let scope = agent_scope("fixture");
        assert_eq!(scope, "agent:fixture");
        let rows = [
            stored(&scope, ChoiceKind::Option, "model", json!("large")),
            stored(&scope, ChoiceKind::Mode, "", json!("auto")),
            stored(&scope, ChoiceKind::Option, "fast", json!(true)),
            stored(&scope, ChoiceKind::Option, "odd", json!(3)),
        ];
        let c = agent_choices(&rows);
        assert_eq!(c.mode.as_deref(), Some("auto"));
        assert_eq!(
            c.options,
            vec![
                ("model".into(), OptionValue::Id("large".into())),
                ("fast".into(), OptionValue::Bool(true)),
            ]
        );
        let fast = OptionValue::Bool(false);
        let choice = AgentChoice::Option("fast", &fast);
        assert_eq!(
            (choice.key(), choice.value()),
            ((ChoiceKind::Option, "fast"), json!(false))
        );
        let mode = AgentChoice::Mode("ask");
        assert_eq!(
            (mode.key(), mode.value()),
            ((ChoiceKind::Mode, ""), json!("ask"))
        );
    }
}
