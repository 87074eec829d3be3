//! Signing in to an agent and out of it: `authenticate` with one of the
//! methods it offered in `initialize` (type `agent`), and `logout` when it
//! advertises `auth.logout`.

use crate::adapters::acp::client::AgentConnection;
use crate::adapters::acp::error::{AcpError, Stage};
use agent_client_protocol::v1::schema::{AuthenticateRequest, LogoutRequest};
use std::sync::atomic::Ordering;

impl AgentConnection {
    /// Calls `authenticate` with `method_id`, which must be one of the agent's
    /// own `agent` methods (`InvalidRequest` otherwise: a terminal method is
    /// run by the client, never passed to `authenticate`).
    pub async fn authenticate(&self, method_id: &str) -> Result<(), AcpError> {
        let offered = self
            .agent_info()
            .auth_methods
            .iter()
            .any(|m| m.id == method_id && !m.terminal);
        if !offered {
            return Err(AcpError::InvalidRequest(format!(
                "the agent offers no sign-in method {method_id:?} to authenticate with"
            )));
        }
        let req = AuthenticateRequest::new(method_id.to_string());
        // Signing in may wait on the user (a browser login): the prompt's
        // idle limit bounds it, not the short request limit.
        let limit = self
            .options
            .prompt_idle_timeout
            .unwrap_or(self.options.request_timeout);
        self.request(Stage::Authenticate, req, limit).await?;
        self.signed_in.store(true, Ordering::Relaxed);
        Ok(())
    }

    /// Whether an `authenticate` succeeded on this process. A process that
    /// refused to open a session and was never signed in through it holds no
    /// credentials; a login made elsewhere (a terminal) reaches a new process.
    pub fn signed_in_here(&self) -> bool {
        self.signed_in.load(Ordering::Relaxed)
    }

    /// Calls `logout`; `Unsupported` unless the agent advertised `auth.logout`.
    pub async fn logout(&self) -> Result<(), AcpError> {
        if !self.agent_info().logout {
            return Err(AcpError::Unsupported("logout".into()));
        }
        self.request(
            Stage::Logout,
            LogoutRequest::new(),
            self.options.request_timeout,
        )
        .await?;
        self.signed_in.store(false, Ordering::Relaxed);
        Ok(())
    }
}
