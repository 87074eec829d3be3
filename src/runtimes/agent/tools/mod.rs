//! Running one built-in tool call inside the run's workspace: file tools through
//! the workspace confinement and the sandbox's file operations, command tools
//! through the sandbox's confined runner. Every failure is an error result the
//! model sees, never a failure of the run.

mod commands;
mod files;
mod http;
pub mod http_policy;
mod plan;

use super::catalog::BuiltIn;
use crate::adapters::sandbox::{CommandOutcome, Confinement, FileChange, SandboxError};
use crate::domain::message::ToolCall;
use crate::domain::plan::PlanEntry;
pub use http_policy::HttpPolicy;
use serde::de::DeserializeOwned;
use std::path::PathBuf;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The most text of one tool result the model is given.
pub const RESULT_CAP_BYTES: usize = 64 * 1024;

/// Where and how tools run: the run's workspace and its sandbox policy.
#[derive(Debug, Clone)]
pub struct ToolEnv {
    /// The run's canonical workspace.
    pub workspace: PathBuf,
    /// The directory every path must stay under.
    pub allowed_root: PathBuf,
    /// How commands are confined.
    pub confinement: Confinement,
    /// The environment commands get.
    pub env: Vec<(String, String)>,
    /// Time limit of one command (and of one HTTP request).
    pub timeout: Duration,
    /// Which URLs `http_request` may reach.
    pub http: HttpPolicy,
}

/// Why a tool call could not be done; the message is the result the model sees.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// The model named a tool that is not in the catalog.
    #[error(
        "unknown tool {0:?}; the tools are read_file, list_dir, file_write, file_edit, shell_exec, git_exec, http_request, update_plan and the mcp__ tools listed with this request"
    )]
    UnknownTool(String),
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
    pub change: FileChange,
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

/// Parses a call's arguments into the tool's argument type.
fn args<T: DeserializeOwned>(tool: BuiltIn, call: &ToolCall) -> Result<T, ToolError> {
    let raw = if call.arguments.trim().is_empty() {
        "{}"
    } else {
        call.arguments.as_str()
    };
    serde_json::from_str(raw).map_err(|e| ToolError::BadArguments {
        tool: tool.name(),
        message: e.to_string(),
    })
}

/// Why `call` is refused before any approval is asked, when it is: a `git_exec`
/// whose git would run another program (or leave the workspace's repository),
/// a file tool writing into `.git`. A grant of the tool's name never covers
/// these, since they never reach the gate.
pub fn refusal(env: &ToolEnv, call: &ToolCall) -> Option<ToolError> {
    let tool = BuiltIn::parse(&call.name)?;
    let checked =
        match tool {
            BuiltIn::GitExec => args(tool, call)
                .and_then(|a: commands::GitArgs| commands::git_run(env, &a).map(drop)),
            BuiltIn::FileWrite => args(tool, call)
                .and_then(|a: files::WriteArgs| files::refuse_git_data(env, &a.path)),
            BuiltIn::FileEdit => {
                args(tool, call).and_then(|a: files::EditArgs| files::refuse_git_data(env, &a.path))
            }
            _ => Ok(()),
        };
    match checked {
        // Malformed arguments are reported when the call runs, as before.
        Err(ToolError::BadArguments { .. }) => None,
        Err(e) => Some(e),
        Ok(()) => None,
    }
}

/// Runs one tool call to its end (or `cancel`).
pub async fn run(env: &ToolEnv, call: &ToolCall, cancel: &CancellationToken) -> ToolOutcome {
    let Some(tool) = BuiltIn::parse(&call.name) else {
        return ToolOutcome::error(ToolError::UnknownTool(call.name.clone()));
    };
    let done = match tool {
        BuiltIn::ReadFile => args(tool, call).and_then(|a| files::read_file(env, a)),
        BuiltIn::ListDir => args(tool, call).and_then(|a| files::list_dir(env, a)),
        BuiltIn::FileWrite => args(tool, call).and_then(|a| files::file_write(env, a)),
        BuiltIn::FileEdit => args(tool, call).and_then(|a| files::file_edit(env, a)),
        BuiltIn::ShellExec => match args(tool, call) {
            Ok(a) => commands::shell_exec(env, a, cancel).await,
            Err(e) => Err(e),
        },
        BuiltIn::GitExec => match args(tool, call) {
            Ok(a) => commands::git_exec(env, a, cancel).await,
            Err(e) => Err(e),
        },
        BuiltIn::HttpRequest => match args(tool, call) {
            Ok(a) => http::http_request(env, a, cancel).await,
            Err(e) => Err(e),
        },
        BuiltIn::UpdatePlan => args(tool, call).and_then(plan::update_plan),
    };
    done.unwrap_or_else(ToolOutcome::error)
}
