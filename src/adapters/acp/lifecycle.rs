//! The session lifecycle requests beyond `session/new` and `session/load`:
//! `session/resume` (reattach without a replay), `session/close` (the agent
//! frees the session) and `session/delete` (the agent forgets it). Each is sent
//! only when the agent advertised it in `initialize`.

use crate::adapters::acp::client::{AgentConnection, NativeSession};
use crate::adapters::acp::convert::mcp_server;
use crate::adapters::acp::error::{AcpError, Stage};
use crate::domain::mcp::McpServerConfig;
use agent_client_protocol::v1::schema::{
    CloseSessionRequest, DeleteSessionRequest, ResumeSessionRequest,
};
use std::path::Path;

impl AgentConnection {
    /// Reattaches to a native session saved earlier without the agent replaying
    /// its history. Fails with `Unsupported` when the agent does not advertise
    /// `session/resume`.
    pub async fn resume_session(
        &self,
        native_id: &str,
        cwd: &Path,
        mcp_servers: &[McpServerConfig],
    ) -> Result<NativeSession, AcpError> {
        if !self.agent_info().resume_session {
            return Err(AcpError::Unsupported("session/resume".into()));
        }
        let req = ResumeSessionRequest::new(native_id.to_string(), cwd)
            .mcp_servers(mcp_servers.iter().map(mcp_server).collect())
            .additional_directories(self.additional_directories());
        let r = self
            .request(Stage::ResumeSession, req, self.options.load_session_timeout)
            .await?;
        Ok(NativeSession::new(
            native_id.to_string(),
            r.modes.as_ref(),
            r.config_options.as_ref(),
        ))
    }

    /// Asks the agent to end a native session (cancelling its work and freeing
    /// what it holds), bounded by the cancel grace. Fails with `Unsupported`
    /// when the agent does not advertise `session/close`.
    pub async fn close_session(&self, native_id: &str) -> Result<(), AcpError> {
        if !self.agent_info().close_session {
            return Err(AcpError::Unsupported("session/close".into()));
        }
        let req = CloseSessionRequest::new(native_id.to_string());
        self.request(Stage::CloseSession, req, self.options.cancel_grace)
            .await
            .map(|_| ())
    }

    /// Asks the agent to delete a native session from its own store. Fails with
    /// `Unsupported` when the agent does not advertise `session/delete`.
    pub async fn delete_session(&self, native_id: &str) -> Result<(), AcpError> {
        if !self.agent_info().delete_session {
            return Err(AcpError::Unsupported("session/delete".into()));
        }
        let req = DeleteSessionRequest::new(native_id.to_string());
        self.request(Stage::DeleteSession, req, self.options.request_timeout)
            .await
            .map(|_| ())
    }
}
