//! What an operator sees of the client-hosted agents: the flow catalog as it
//! loaded (agents and the files that did not load), and each agent's chats.

use super::FlowCatalog;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::flow::FlowChat;
use crate::engine::Flows;

impl<'e> Flows<'e> {
    /// The agents' flows as they loaded at start, broken files included.
    pub fn catalog(self) -> &'e FlowCatalog {
        &self.engine.config().flows.catalog
    }

    /// The chats of agent `agent_id` in `namespace` (every caller's), most
    /// recently updated first; an agent no flow file names is
    /// `chat.agent_not_found`.
    pub async fn agent_chats(
        self,
        namespace: &str,
        agent_id: &str,
        limit: usize,
    ) -> Result<Vec<FlowChat>> {
        if matches!(self.catalog().get(agent_id), Ok(None)) {
            return Err(HecateError::new(
                ErrorType::ChatAgentNotFound,
                format!("no agent `{agent_id}` (no flows/{agent_id}.toml)"),
            )
            .with_detail("agentId", agent_id));
        }
        self.engine
            .store()
            .list_flow_chats(namespace, agent_id, limit)
            .await
    }
}
