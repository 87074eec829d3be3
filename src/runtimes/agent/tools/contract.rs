//! What every built-in tool works with and answers: the run's workspace and
//! sandbox policy, the outcome of a call, and why a call could not be done.

use super::http_policy::HttpPolicy;
use crate::adapters::sandbox::{CommandOutcome, Confinement, SandboxError, SandboxFileChange};
use crate::domain::plan::PlanEntry;
use crate::domain::task::ToolAccess;
use std::path::PathBuf;
use std::time::Duration;

/// The most text of one tool result the model is given.
pub const RESULT_CAP_BYTES: usize = 64 * 1024;

/// Where and how tools run: the run's workspace and its sandbox policy.
#[derive(Debug, Clone)]
pub struct ToolEnv {
    /// The run's canonical workspace.
    pub workspace: PathBuf,
    /// The directory every path must stay under.
    pub allowed_root: PathBuf,
    /// The directories the session was granted beside the workspace
    /// (canonical): file tools take absolute paths in them, and confined
    /// commands may write them.
    pub additional: Vec<PathBuf>,
    /// How commands are confined.
    pub confinement: Confinement,
    /// The environment commands get.
    pub env: Vec<(String, String)>,
    /// Time limit of one command (and of one HTTP request).
    pub timeout: Duration,
    /// Which URLs `http_request` may reach.
    pub http: HttpPolicy,
    /// Which built-in tools the run offers; a call to another is refused.
    pub access: ToolAccess,
}

/// Why a tool call could not be done; the message is the result the model sees.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The model named a tool that is not in the catalog.
    #[error(
        "unknown tool {0:?}; the tools are read_file, list_dir, file_write, file_edit, shell_exec, git_exec, http_request, update_plan and the mcp__ tools listed with this request"
    )]
    UnknownTool(String),
    /// The model called a built-in tool the run does not offer.
    #[error(
        "tool {tool} is not available in this session (its tools option is {}); it was not called",
        access.as_str()
    )]
    Withheld {
        /// The tool.
        tool: &'static str,
        /// The run's tool access.
        access: ToolAccess,
    },
    /// The arguments are not what the tool takes.
    #[error("malformed arguments for {tool}: {message}")]
    BadArguments {
        /// The tool.
        tool: &'static str,
        /// What is wrong.
        message: String,
    },
    /// The request cannot be done (path outside the workspace, missing file,
    /// a string that is not unique, ...).
    #[error("{0}")]
    Refused(String),
    /// The sandbox failed to do it.
    #[error(transparent)]
    Sandbox(#[from] SandboxError),
}

/// A file change a tool made or proposed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patch {
    /// The change.
    pub change: SandboxFileChange,
    /// True when it was only proposed (not written).
    pub proposed: bool,
}

/// What one tool call did.
#[derive(Debug)]
pub struct ToolOutcome {
    /// The result text the model sees.
    pub content: String,
    /// Whether the result is an error.
    pub is_error: bool,
    /// The file change, for file tools that changed (or proposed) one.
    pub patch: Option<Patch>,
    /// The command's outcome, for command tools.
    pub command: Option<CommandOutcome>,
    /// The plan `update_plan` shared.
    pub plan: Option<Vec<PlanEntry>>,
    /// Stopped by a cancel.
    pub cancelled: bool,
}

impl ToolOutcome {
    /// A successful plain-text result.
    pub fn text(content: String) -> Self {
        Self {
            content: cap(content),
            is_error: false,
            patch: None,
            command: None,
            plan: None,
            cancelled: false,
        }
    }

    /// An error result.
    pub fn error(e: ToolError) -> Self {
        Self {
            is_error: true,
            ..Self::text(e.to_string())
        }
    }
}

/// Cuts `text` to the result cap at a character boundary, saying so.
pub fn cap(mut text: String) -> String {
    if text.len() > RESULT_CAP_BYTES {
        let mut end = RESULT_CAP_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("\n[truncated]");
    }
    text
}
