//! The engine's side of signing in to external agents from an editor: a
//! namespaced method id (`agent:ADAPTER_ID:METHOD_ID`) checked and handed to
//! the runtime's `authenticate`, and `logout` passed to the running agents.

use super::Agents;
use crate::domain::error::{HecateError, Result};
use crate::domain::sign_in::split_method_id;

impl Agents<'_> {
    /// Signs in with namespaced method `id` on a running agent of its adapter:
    /// `auth_method_unknown` for an id that names no registered agent,
    /// `agent_not_running` when no process of that agent runs.
    pub async fn authenticate(self, id: &str) -> Result<()> {
        let unknown = |why: &str| {
            HecateError::invalid(format!("unknown sign-in method {id:?}: {why}"))
                .with_detail("reason", "auth_method_unknown")
                .with_detail("method_id", id)
        };
        let Some((adapter_id, method)) = split_method_id(id) else {
            return Err(unknown(
                "agent methods are named agent:ADAPTER_ID:METHOD_ID, Hecate's own hecate-setup",
            ));
        };
        let Some(rt) = &self.engine.inner.external else {
            return Err(unknown("external agents are not enabled in this process"));
        };
        if !rt.has_adapter(adapter_id) {
            return Err(unknown(&format!("no agent {adapter_id} is registered")));
        }
        rt.authenticate(adapter_id, method).await
    }

    /// Signs out of every running agent that offers `logout`; answers their adapters.
    pub async fn logout(self) -> Result<Vec<String>> {
        match &self.engine.inner.external {
            Some(rt) => rt.logout().await,
            None => Err(
                HecateError::invalid("external agents are not enabled in this process")
                    .with_detail("reason", "agent_not_running"),
            ),
        }
    }
}
