//! The engine's side of an editor choosing an external agent's settings:
//! opening a session's agent before its first turn so its modes and options can
//! be offered, and setting them. The checks (offered values, the mode rule, a
//! running turn) are the runtime's; this finds the session's agent and keeps
//! the choices in the store (`session_choices`), so they are applied again
//! when the agent starts in another process.
//!
//! A choice is taken in this order: the runtime checks it against the idle
//! agent (nothing changes yet); it is stored (a store failure is the answer,
//! and neither the agent nor the runtime's memory changed); the agent is asked
//! (a refusal puts back what was stored before and is the answer); only then
//! does the runtime remember it and its settings follow.

use super::Agents;
use super::session_choices::AgentChoice;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::SessionId;
use crate::domain::mcp::McpServerConfig;
use crate::domain::session::RuntimeKind;
use crate::domain::workspace::ElicitationModes;
use crate::runtimes::external::{AgentSettings, ExternalRuntime, OpenAgent, OptionValue};

fn not_enabled() -> HecateError {
    HecateError::new(
        ErrorType::AdapterNotFound,
        "external agents are not enabled in this process",
    )
}

impl<'e> Agents<'e> {
    /// The external-agent runtime, or `not_enabled` when this process has none.
    fn runtime(self) -> Result<&'e std::sync::Arc<ExternalRuntime>> {
        self.engine.inner.external.as_ref().ok_or_else(not_enabled)
    }

    /// Starts `adapter_id`'s agent for session `id` in `workspace` (reloading
    /// the session's native session when it last ran on that adapter), telling
    /// it the `elicitation` modes the editor answers, and answers the modes and
    /// options it offers.
    pub async fn open_settings(
        self,
        namespace: &str,
        id: &SessionId,
        (adapter_id, workspace): (&str, &str),
        mcp_servers: &[McpServerConfig],
        elicitation: ElicitationModes,
    ) -> Result<AgentSettings> {
        if self.is_remote(adapter_id) {
            // A remote A2A agent has no modes or options to offer.
            return Ok(AgentSettings::default());
        }
        let rt = self.runtime()?;
        self.check_adapter(adapter_id)?;
        let session = self.engine.get_session(namespace, id).await?;
        let same_agent = session.runtime_kind == RuntimeKind::ExternalAgent
            && session.adapter_id.as_deref() == Some(adapter_id);
        let workspace = crate::engine::workspace::canonical_workspace(workspace)?;
        self.restore_choices(id, adapter_id).await;
        let settings = rt
            .open(OpenAgent {
                session_id: id,
                adapter_id,
                workspace: &workspace,
                native_session_id: session.native_session_id.as_deref().filter(|_| same_agent),
                mcp_servers,
                earlier_turns: session.turns_used > 0,
                elicitation,
            })
            .await?;
        self.drop_stale(id, adapter_id, &settings).await;
        Ok(settings)
    }

    /// Hands the runtime the stored choices of session `id`'s agent
    /// `adapter_id`, which it applies whenever that agent (re)starts; when the
    /// store cannot be read, the runtime keeps what this process remembers.
    pub(super) async fn restore_choices(self, id: &SessionId, adapter_id: &str) {
        let Some(rt) = self.engine.inner.external.as_ref() else {
            return;
        };
        match self.engine.stored_agent_choices(id, adapter_id).await {
            Ok(choices) => rt.restore_choices(id, adapter_id, choices),
            Err(e) => {
                tracing::warn!(error = %e, adapter_id, "the stored choices of the agent's options could not be read")
            }
        }
    }

    /// Deletes the stored choices of `adapter_id`'s agent that its `settings`
    /// no longer offer (or the operator's mode rule no longer allows).
    async fn drop_stale(self, id: &SessionId, adapter_id: &str, settings: &AgentSettings) {
        let (Some(rt), Ok(stored)) = (
            self.engine.inner.external.as_ref(),
            self.engine.stored_agent_choices(id, adapter_id).await,
        ) else {
            return;
        };
        let (_, stale) = stored.split_offered(settings, &rt.mode_rule(adapter_id));
        if !stale.is_empty() {
            self.engine.drop_stale_choices(id, adapter_id, &stale).await;
        }
    }

    /// The modes and options of session `id`'s running agent, when one runs.
    pub async fn settings(self, id: &SessionId) -> Option<AgentSettings> {
        self.engine.inner.external.as_ref()?.settings(id).await
    }

    /// Sets config option `option` of session `id`'s running agent to
    /// `value`, stored before the agent is asked (see the module's order).
    pub async fn set_option(
        self,
        id: &SessionId,
        option: &str,
        value: OptionValue,
    ) -> Result<AgentSettings> {
        let rt = self.runtime()?;
        let adapter_id = rt.check_option(id, option, &value).await?;
        let replaced = self
            .engine
            .keep_agent_choice(id, &adapter_id, &AgentChoice::Option(option, &value))
            .await?;
        match rt.set_option(id, option, value).await {
            Ok(settings) => Ok(settings),
            Err(e) => {
                self.engine.put_back(id, replaced).await;
                Err(e)
            }
        }
    }

    /// Switches session `id`'s running agent to `mode`, stored before the
    /// agent is asked (see the module's order).
    pub async fn set_mode(self, id: &SessionId, mode: &str) -> Result<AgentSettings> {
        let rt = self.runtime()?;
        let adapter_id = rt.check_mode(id, mode).await?;
        let replaced = self
            .engine
            .keep_agent_choice(id, &adapter_id, &AgentChoice::Mode(mode))
            .await?;
        match rt.set_mode(id, mode).await {
            Ok(settings) => Ok(settings),
            Err(e) => {
                self.engine.put_back(id, replaced).await;
                Err(e)
            }
        }
    }
}
