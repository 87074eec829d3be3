//! The engine's side of an editor choosing an external agent's settings:
//! opening a session's agent before its first turn so its modes and options can
//! be offered, and setting them. The checks (offered values, the mode rule, a
//! running turn) are the runtime's; this only finds the session's agent.

use super::Agents;
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
        rt.open(OpenAgent {
            session_id: id,
            adapter_id,
            workspace: &workspace,
            native_session_id: session.native_session_id.as_deref().filter(|_| same_agent),
            mcp_servers,
            earlier_turns: session.turns_used > 0,
            elicitation,
        })
        .await
    }

    /// The modes and options of session `id`'s running agent, when one runs.
    pub async fn settings(self, id: &SessionId) -> Option<AgentSettings> {
        self.engine.inner.external.as_ref()?.settings(id).await
    }

    /// Sets config option `option` of session `id`'s running agent to `value`.
    pub async fn set_option(
        self,
        id: &SessionId,
        option: &str,
        value: OptionValue,
    ) -> Result<AgentSettings> {
        let rt = self.runtime()?;
        rt.set_option(id, option, value).await
    }

    /// Switches session `id`'s running agent to `mode`.
    pub async fn set_mode(self, id: &SessionId, mode: &str) -> Result<AgentSettings> {
        let rt = self.runtime()?;
        rt.set_mode(id, mode).await
    }
}
