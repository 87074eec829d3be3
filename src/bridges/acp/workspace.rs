//! The editor as the workspace: a [`WorkspaceDelegate`] that sends an external
//! agent's (already confined) fs and terminal requests to the ACP client as
//! `fs/*` and `terminal/*` requests in the editor's session, and its elicitations
//! as `elicitation/create` (the agent's own parameters, in the editor's session).
//! Each call awaits the editor's answer in the calling task, never in the
//! dispatch loop.

use crate::domain::workspace::{
    DelegateCapabilities, DelegateError, DelegateResult, ElicitationRequest, FileRead,
    TerminalCommand, TerminalExit, TerminalOutput, WorkspaceDelegate,
};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CompleteElicitationNotification, CreateElicitationRequest, CreateTerminalRequest, EnvVariable,
    KillTerminalRequest, ReadTextFileRequest, ReleaseTerminalRequest, SessionId,
    TerminalExitStatus, TerminalOutputRequest, WaitForTerminalExitRequest, WriteTextFileRequest,
};
use agent_client_protocol::{Client, Error, ErrorCode, JsonRpcRequest};
use futures::future::BoxFuture;
use std::path::PathBuf;

/// Serves fs/terminal for one editor session through its connection.
#[derive(Clone)]
pub struct EditorWorkspace {
    cx: ConnectionTo<Client>,
    session_id: SessionId,
    caps: DelegateCapabilities,
}

impl std::fmt::Debug for EditorWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditorWorkspace")
            .field("session_id", &self.session_id)
            .field("caps", &self.caps)
            .finish_non_exhaustive()
    }
}

fn delegate_error(e: Error) -> DelegateError {
    DelegateError {
        code: e.code.value(),
        message: e.message,
        data: e.data,
    }
}

fn exit(s: TerminalExitStatus) -> TerminalExit {
    TerminalExit {
        exit_code: s.exit_code,
        signal: s.signal,
    }
}

impl EditorWorkspace {
    /// A delegate for the editor session `session_id`, serving what `caps` says.
    pub fn new(
        cx: ConnectionTo<Client>,
        session_id: SessionId,
        caps: DelegateCapabilities,
    ) -> Self {
        Self {
            cx,
            session_id,
            caps,
        }
    }

    /// Sends `req` to the editor and maps its answer.
    fn call<Req, T>(
        &self,
        req: Req,
        map: impl FnOnce(Req::Response) -> T + Send + 'static,
    ) -> BoxFuture<'static, DelegateResult<T>>
    where
        Req: JsonRpcRequest + Send + 'static,
        Req::Response: Send,
        T: Send + 'static,
    {
        let cx = self.cx.clone();
        Box::pin(async move {
            cx.send_request(req)
                .block_task()
                .await
                .map(map)
                .map_err(delegate_error)
        })
    }
}

impl WorkspaceDelegate for EditorWorkspace {
    fn capabilities(&self) -> DelegateCapabilities {
        self.caps
    }

    fn read_text_file(&self, read: FileRead) -> BoxFuture<'static, DelegateResult<String>> {
        let req = ReadTextFileRequest::new(self.session_id.clone(), read.path)
            .line(read.line)
            .limit(read.limit);
        self.call(req, |r| r.content)
    }

    fn write_text_file(
        &self,
        path: PathBuf,
        content: String,
    ) -> BoxFuture<'static, DelegateResult<()>> {
        let req = WriteTextFileRequest::new(self.session_id.clone(), path, content);
        self.call(req, |_| ())
    }

    fn create_terminal(&self, c: TerminalCommand) -> BoxFuture<'static, DelegateResult<String>> {
        let env = c
            .env
            .into_iter()
            .map(|(k, v)| EnvVariable::new(k, v))
            .collect();
        let req = CreateTerminalRequest::new(self.session_id.clone(), c.command)
            .args(c.args)
            .env(env)
            .cwd(c.cwd)
            .output_byte_limit(c.output_byte_limit);
        self.call(req, |r| r.terminal_id.0.to_string())
    }

    fn terminal_output(&self, id: String) -> BoxFuture<'static, DelegateResult<TerminalOutput>> {
        let req = TerminalOutputRequest::new(self.session_id.clone(), id);
        self.call(req, |r| TerminalOutput {
            output: r.output,
            truncated: r.truncated,
            exit: r.exit_status.map(exit),
        })
    }

    fn wait_for_terminal_exit(
        &self,
        id: String,
    ) -> BoxFuture<'static, DelegateResult<TerminalExit>> {
        let req = WaitForTerminalExitRequest::new(self.session_id.clone(), id);
        self.call(req, |r| exit(r.exit_status))
    }

    fn kill_terminal(&self, id: String) -> BoxFuture<'static, DelegateResult<()>> {
        let req = KillTerminalRequest::new(self.session_id.clone(), id);
        self.call(req, |_| ())
    }

    fn release_terminal(&self, id: String) -> BoxFuture<'static, DelegateResult<()>> {
        let req = ReleaseTerminalRequest::new(self.session_id.clone(), id);
        self.call(req, |_| ())
    }

    fn elicit(
        &self,
        request: ElicitationRequest,
    ) -> BoxFuture<'static, DelegateResult<serde_json::Value>> {
        let mut params = request.params;
        params["sessionId"] = serde_json::json!(self.session_id.0.as_ref());
        let req = match serde_json::from_value::<CreateElicitationRequest>(params) {
            Ok(r) => r,
            Err(e) => {
                return Box::pin(async move {
                    Err(DelegateError {
                        code: ErrorCode::INVALID_PARAMS.value(),
                        message: format!("the elicitation could not be relayed: {e}"),
                        data: None,
                    })
                });
            }
        };
        self.call(req, |r| serde_json::to_value(r).unwrap_or_default())
    }

    fn complete_elicitation(&self, id: String) {
        if let Err(e) = self
            .cx
            .send_notification(CompleteElicitationNotification::new(id))
        {
            tracing::debug!(error = %e.message, "could not tell the editor an elicitation completed");
        }
    }
}
