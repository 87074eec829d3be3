//! The editor-owned workspace. When the client driving a session can read and write
//! files and run terminals itself (an editor over ACP), an external agent's fs and
//! terminal requests are forwarded to it through a [`WorkspaceDelegate`] instead of
//! being served by Hecate. A bridge implements the delegate; adapters only call it,
//! after confining paths to the session workspace. An agent's elicitations (forms
//! and sign-in links for the user) reach the editor the same way.

use futures::future::BoxFuture;
use serde_json::Value;
use std::path::PathBuf;

/// Which requests a delegate serves; the others Hecate serves itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DelegateCapabilities {
    /// `fs/read_text_file`.
    pub read_text_file: bool,
    /// `fs/write_text_file`.
    pub write_text_file: bool,
    /// `terminal/*`.
    pub terminal: bool,
    /// `elicitation/create`, per mode.
    pub elicitation: ElicitationModes,
}

impl DelegateCapabilities {
    /// Whether the delegate serves anything at all.
    pub fn any(self) -> bool {
        self.read_text_file || self.write_text_file || self.terminal || self.elicitation.any()
    }
}

/// The elicitation modes a client answers (ACP `elicitation` capability).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ElicitationModes {
    /// Forms the user fills in.
    pub form: bool,
    /// Links the user opens (sign-in pages).
    pub url: bool,
}

impl ElicitationModes {
    /// Whether any mode is answered.
    pub fn any(self) -> bool {
        self.form || self.url
    }

    /// Whether requests of `kind` are answered.
    pub fn takes(self, kind: ElicitationKind) -> bool {
        match kind {
            ElicitationKind::Form => self.form,
            ElicitationKind::Url => self.url,
        }
    }
}

/// The mode of one elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ElicitationKind {
    /// A form with a requested schema.
    Form,
    /// A URL the user opens.
    Url,
}

impl ElicitationKind {
    /// The wire name (`form` or `url`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Form => "form",
            Self::Url => "url",
        }
    }
}

/// An agent's `elicitation/create` as the delegate relays it: its mode and its
/// parameters unchanged, so nothing the agent sent is lost on the way.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitationRequest {
    /// Form or URL.
    pub kind: ElicitationKind,
    /// The request's parameters as the agent sent them (JSON).
    pub params: Value,
}

/// An error the delegate's owner answered (code, message and data kept, so the
/// agent sees what the editor said).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message} ({code})")]
pub struct DelegateError {
    /// JSON-RPC error code.
    pub code: i32,
    /// Message.
    pub message: String,
    /// Extra data, when any.
    pub data: Option<Value>,
}

/// What a delegate call returns.
pub type DelegateResult<T> = Result<T, DelegateError>;

/// A file read, with the line window the agent asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRead {
    /// Absolute path, already confined to the workspace.
    pub path: PathBuf,
    /// First line (1-based), when limited.
    pub line: Option<u32>,
    /// Number of lines, when limited.
    pub limit: Option<u32>,
}

/// A command the agent wants run in a terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalCommand {
    /// Program, or a whole shell line when `args` is empty.
    pub command: String,
    /// Arguments.
    pub args: Vec<String>,
    /// Extra environment the agent asked for.
    pub env: Vec<(String, String)>,
    /// Working directory, already confined to the workspace.
    pub cwd: PathBuf,
    /// Output kept, in bytes, when the agent set a limit.
    pub output_byte_limit: Option<u64>,
}

/// How a terminal's command ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalExit {
    /// Exit code, when it exited normally.
    pub exit_code: Option<u32>,
    /// Signal name, when a signal ended it.
    pub signal: Option<String>,
}

/// A terminal's output so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalOutput {
    /// The text.
    pub output: String,
    /// Whether older output was dropped.
    pub truncated: bool,
    /// The exit status, once the command ended.
    pub exit: Option<TerminalExit>,
}

/// Serves an agent's fs and terminal requests somewhere other than Hecate (the
/// editor). Every call is independent; terminal ids are the delegate's own.
pub trait WorkspaceDelegate: Send + Sync + std::fmt::Debug {
    /// What this delegate serves.
    fn capabilities(&self) -> DelegateCapabilities;
    /// Reads a text file.
    fn read_text_file(&self, read: FileRead) -> BoxFuture<'static, DelegateResult<String>>;
    /// Writes a text file.
    fn write_text_file(
        &self,
        path: PathBuf,
        content: String,
    ) -> BoxFuture<'static, DelegateResult<()>>;
    /// Starts a command; returns the terminal id.
    fn create_terminal(
        &self,
        command: TerminalCommand,
    ) -> BoxFuture<'static, DelegateResult<String>>;
    /// The output so far.
    fn terminal_output(&self, id: String) -> BoxFuture<'static, DelegateResult<TerminalOutput>>;
    /// Waits until the command exits.
    fn wait_for_terminal_exit(
        &self,
        id: String,
    ) -> BoxFuture<'static, DelegateResult<TerminalExit>>;
    /// Kills the command, keeping the terminal.
    fn kill_terminal(&self, id: String) -> BoxFuture<'static, DelegateResult<()>>;
    /// Kills the command if needed and forgets the terminal.
    fn release_terminal(&self, id: String) -> BoxFuture<'static, DelegateResult<()>>;
    /// Puts an elicitation to the user and answers the client's response (JSON);
    /// a delegate without elicitation answers method-not-found.
    fn elicit(&self, request: ElicitationRequest) -> BoxFuture<'static, DelegateResult<Value>> {
        let kind = request.kind.as_str();
        Box::pin(async move {
            Err(DelegateError {
                code: -32601,
                message: format!("the client does not answer {kind} elicitations"),
                data: None,
            })
        })
    }
    /// Tells the client that the URL elicitation `id` has completed (nothing to
    /// tell for a delegate without elicitation).
    fn complete_elicitation(&self, _id: String) {}
}
