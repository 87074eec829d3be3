//! Editors choosing an agent's settings: opening a session's agent ahead of its
//! first turn (so its modes and options can be offered), and setting a mode or
//! an option on the live agent, checked and remembered for later attaches.

use super::settings::{AgentSettings, Choices, ModeRule, OpenAgent, SettingError};
use super::{ExternalRuntime, InUse};
use crate::adapters::acp::OptionValue;
use crate::domain::error::HecateError;
use crate::domain::ids::SessionId;

impl ExternalRuntime {
    /// What editors chose for `session_id`'s agent `adapter_id` so far (the
    /// choices for another agent of the session do not carry over).
    pub(super) fn choices_of(&self, session_id: &SessionId, adapter_id: &str) -> Choices {
        self.choices
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(session_id)
            .filter(|(adapter, _)| adapter == adapter_id)
            .map(|(_, c)| c.clone())
            .unwrap_or_default()
    }

    /// Replaces what editors chose for `session_id`'s agent with `choices`
    /// for `adapter_id` (the engine's stored choices, read when a session is
    /// opened or a turn starts); the next attach applies them.
    pub fn restore_choices(&self, session_id: &SessionId, adapter_id: &str, choices: Choices) {
        self.choices
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(session_id.clone(), (adapter_id.to_string(), choices));
    }

    pub(super) fn remember(
        &self,
        session_id: &SessionId,
        adapter_id: &str,
        change: impl FnOnce(&mut Choices),
    ) {
        let mut all = self.choices.lock().unwrap_or_else(|p| p.into_inner());
        let entry = all
            .entry(session_id.clone())
            .or_insert_with(|| (adapter_id.to_string(), Choices::default()));
        if entry.0 != adapter_id {
            *entry = (adapter_id.to_string(), Choices::default());
        }
        change(&mut entry.1);
    }

    /// The modes an editor may choose for `adapter_id`'s agent.
    pub fn mode_rule(&self, adapter_id: &str) -> ModeRule {
        if self.modes.contains_key(adapter_id) {
            return ModeRule::default();
        }
        match self.catalog.get(adapter_id) {
            Some(m) => ModeRule {
                pinned: m.quirks.initial_mode.clone(),
                asking: m.quirks.asking_modes.clone(),
            },
            None => ModeRule::default(),
        }
    }

    /// Starts (or reuses) the session's agent process and native session, so
    /// its modes and options are known before the first turn; answers them.
    pub async fn open(&self, open: OpenAgent<'_>) -> Result<AgentSettings, HecateError> {
        let (live, _) = self.attach(open).await?;
        let settings = live.settings_mut().clone();
        Ok(settings)
    }

    /// The modes and options of the session's live agent, when one runs.
    pub async fn settings(&self, session_id: &SessionId) -> Option<AgentSettings> {
        let live = self.live.lock().await.get(session_id).cloned()?;
        let settings = live.settings_mut().clone();
        Some(settings)
    }

    /// The session's live agent, held while a setting changes; refused while a
    /// turn runs on it.
    async fn idle_agent(&self, session_id: &SessionId) -> Result<InUse, SettingError> {
        let live = self.live.lock().await;
        let agent = live.get(session_id).ok_or(SettingError::NotRunning)?;
        if !agent.conn.is_alive() {
            return Err(SettingError::NotRunning);
        }
        if agent.usage_mut().turns > 0 {
            return Err(SettingError::Busy);
        }
        Ok(InUse::take(agent.clone()))
    }

    /// Checks, without changing anything, that config option `id` of the
    /// session's idle agent may be set to `value` (offered, a value it takes,
    /// and for its mode selector a mode the rule allows); answers the agent's
    /// adapter.
    pub async fn check_option(
        &self,
        session_id: &SessionId,
        id: &str,
        value: &OptionValue,
    ) -> Result<String, HecateError> {
        let live = self.idle_agent(session_id).await?;
        let current = live.settings_mut().clone();
        current.check_value(id, value)?;
        if current.is_mode_option(id)
            && let OptionValue::Id(mode) = value
        {
            self.mode_rule(&live.adapter_id).check(mode)?;
        }
        Ok(live.adapter_id.clone())
    }

    /// Checks, without changing anything, that the session's idle agent may
    /// be switched to `mode` (offered, and allowed by the mode rule); answers
    /// the agent's adapter.
    pub async fn check_mode(
        &self,
        session_id: &SessionId,
        mode: &str,
    ) -> Result<String, HecateError> {
        let live = self.idle_agent(session_id).await?;
        live.settings_mut().check_mode(mode)?;
        self.mode_rule(&live.adapter_id).check(mode)?;
        Ok(live.adapter_id.clone())
    }

    /// Sets config option `id` on the session's agent (checked against what it
    /// offers and, for its mode selector, the mode rule); remembered for later
    /// attaches. Answers the settings afterwards.
    pub async fn set_option(
        &self,
        session_id: &SessionId,
        id: &str,
        value: OptionValue,
    ) -> Result<AgentSettings, HecateError> {
        let live = self.idle_agent(session_id).await?;
        let current = live.settings_mut().clone();
        current.check_value(id, &value)?;
        if current.is_mode_option(id)
            && let OptionValue::Id(mode) = &value
        {
            self.mode_rule(&live.adapter_id).check(mode)?;
        }
        let options = live
            .conn
            .set_config_option(&live.native_id, id, &value)
            .await
            .map_err(|e| e.into_hecate(&live.adapter_id))?;
        let mode = current.is_mode_option(id).then_some(&value);
        let mut settings = live.settings_mut();
        settings.options = options;
        if let Some(OptionValue::Id(m)) = mode {
            settings.set_current_mode(m);
        }
        let answer = settings.clone();
        drop(settings);
        self.remember(session_id, &live.adapter_id, |c| c.set_option(id, value));
        Ok(answer)
    }

    /// Switches the session's agent to `mode` (offered, and allowed by the mode
    /// rule); remembered for later attaches. Answers the settings afterwards.
    pub async fn set_mode(
        &self,
        session_id: &SessionId,
        mode: &str,
    ) -> Result<AgentSettings, HecateError> {
        let live = self.idle_agent(session_id).await?;
        live.settings_mut().check_mode(mode)?;
        self.mode_rule(&live.adapter_id).check(mode)?;
        live.conn
            .set_mode(&live.native_id, mode)
            .await
            .map_err(|e| e.into_hecate(&live.adapter_id))?;
        self.remember(session_id, &live.adapter_id, |c| {
            c.mode = Some(mode.to_string())
        });
        let mut settings = live.settings_mut();
        settings.set_current_mode(mode);
        Ok(settings.clone())
    }
}
