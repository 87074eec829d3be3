//! Signing in to external agents through Hecate. An agent that answers
//! `session/new` with `auth_required` is kept running (parked, per adapter),
//! and the error names the methods it offers; `authenticate` then goes to that
//! process (or to a live agent of the adapter), and the next attach in the same
//! workspace takes the parked process instead of starting another. `logout` goes
//! to every running agent that offers it.

use super::ExternalRuntime;
use crate::adapters::acp::{AcpError, AgentConnection};
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::sign_in::{SignInMethod, method_id};
use std::sync::Arc;

/// The stable reason of a sign-in request for an agent with no process.
pub const AGENT_NOT_RUNNING: &str = "agent_not_running";

/// The stable reason of a sign-in method id no running agent offers.
pub const AUTH_METHOD_UNKNOWN: &str = "auth_method_unknown";

/// The methods `conn`'s agent `adapter_id` offers to `authenticate`, namespaced
/// (terminal methods are left out: the client would run them itself).
fn methods(adapter_id: &str, conn: &AgentConnection) -> Vec<SignInMethod> {
    conn.agent_info()
        .auth_methods
        .iter()
        .filter(|m| !m.terminal)
        .map(|m| SignInMethod {
            id: method_id(adapter_id, &m.id),
            name: m.name.clone(),
            description: m.description.clone(),
        })
        .collect()
}

/// An `invalid_request` for a sign-in request with the stable `reason`.
fn refused(reason: &str, message: String) -> HecateError {
    HecateError::invalid(message).with_detail("reason", reason)
}

impl ExternalRuntime {
    /// Maps a refused `session/new`: an `auth_required` answer parks the
    /// process (for `authenticate`) and its error lists the agent's methods
    /// under `auth_methods`; anything else is the plain error.
    pub(super) async fn refused_session(
        &self,
        adapter_id: &str,
        workspace: &str,
        conn: Arc<AgentConnection>,
        e: AcpError,
    ) -> HecateError {
        if !matches!(e, AcpError::AuthRequired { .. }) {
            return e.into_hecate(adapter_id);
        }
        let offered = methods(adapter_id, &conn);
        let err = e.into_hecate(adapter_id).with_detail(
            "auth_methods",
            serde_json::to_value(&offered).unwrap_or_default(),
        );
        tracing::info!(
            adapter_id,
            methods = offered.len(),
            "the agent asks to sign in; kept for authenticate"
        );
        self.parked
            .lock()
            .await
            .insert(adapter_id.to_string(), (conn, workspace.to_string()));
        err
    }

    /// The parked process of `adapter_id` when it runs in `workspace` and is
    /// still alive (taken out of the parking).
    pub(super) async fn take_parked(
        &self,
        adapter_id: &str,
        workspace: &str,
    ) -> Option<Arc<AgentConnection>> {
        let mut parked = self.parked.lock().await;
        let fits = parked
            .get(adapter_id)
            .is_some_and(|(conn, ws)| ws == workspace && conn.is_alive());
        fits.then(|| parked.remove(adapter_id).map(|(conn, _)| conn))
            .flatten()
    }

    /// The running processes of `adapter_id` (the parked one first, then live
    /// agents of the adapter).
    async fn running(&self, adapter_id: &str) -> Vec<Arc<AgentConnection>> {
        let mut out: Vec<_> = self
            .parked
            .lock()
            .await
            .get(adapter_id)
            .filter(|(conn, _)| conn.is_alive())
            .map(|(conn, _)| conn.clone())
            .into_iter()
            .collect();
        out.extend(
            self.live
                .lock()
                .await
                .values()
                .filter(|l| l.adapter_id == adapter_id && l.conn.is_alive())
                .map(|l| l.conn.clone()),
        );
        out
    }

    /// Calls `authenticate` with `method` on a running process of `adapter_id`:
    /// `agent_not_running` when none runs, `auth_method_unknown` when it does
    /// not offer the method.
    pub async fn authenticate(&self, adapter_id: &str, method: &str) -> Result<(), HecateError> {
        let Some(conn) = self.running(adapter_id).await.into_iter().next() else {
            return Err(refused(
                AGENT_NOT_RUNNING,
                format!(
                    "no {adapter_id} agent is running to sign in to; open a thread on \
                     agent:{adapter_id} first (its sign-in methods come with the \
                     auth_required answer)"
                ),
            )
            .with_detail("adapter_id", adapter_id));
        };
        let offered = methods(adapter_id, &conn);
        if !offered
            .iter()
            .any(|m| m.id == method_id(adapter_id, method))
        {
            let available: Vec<String> = offered.into_iter().map(|m| m.id).collect();
            return Err(refused(
                AUTH_METHOD_UNKNOWN,
                format!("{adapter_id} offers no sign-in method {method:?}"),
            )
            .with_detail("method_id", method_id(adapter_id, method))
            .with_detail("available", available));
        }
        conn.authenticate(method)
            .await
            .map_err(|e| e.into_hecate(adapter_id))
    }

    /// Calls `logout` on every running agent that offers it; answers the
    /// adapters signed out, or `agent_not_running` when none offers it.
    pub async fn logout(&self) -> Result<Vec<String>, HecateError> {
        let mut conns: Vec<(String, Arc<AgentConnection>)> = self
            .parked
            .lock()
            .await
            .iter()
            .map(|(a, (conn, _))| (a.clone(), conn.clone()))
            .collect();
        conns.extend(
            self.live
                .lock()
                .await
                .values()
                .map(|l| (l.adapter_id.clone(), l.conn.clone())),
        );
        conns.retain(|(_, c)| c.is_alive() && c.agent_info().logout);
        if conns.is_empty() {
            return Err(HecateError::new(
                ErrorType::InvalidRequest,
                "no running agent offers logout",
            )
            .with_detail("reason", AGENT_NOT_RUNNING));
        }
        let mut out = Vec::new();
        for (adapter_id, conn) in conns {
            conn.logout()
                .await
                .map_err(|e| e.into_hecate(&adapter_id))?;
            if !out.contains(&adapter_id) {
                out.push(adapter_id);
            }
        }
        Ok(out)
    }

    /// Stops every parked process.
    pub(super) async fn drop_parked(&self) {
        let all: Vec<_> = self.parked.lock().await.drain().collect();
        for (_, (conn, _)) in all {
            conn.shutdown().await;
        }
    }
}
