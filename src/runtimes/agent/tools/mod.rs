//! Running one built-in tool call inside the run's workspace: file tools through
//! the workspace confinement and the sandbox's file operations, command tools
//! through the sandbox's confined runner. Every failure is an error result the
//! model sees, never a failure of the run.

mod commands;
mod contract;
mod files;
mod http;
pub mod http_policy;
mod plan;

use super::catalog::BuiltIn;
use crate::domain::message::ToolCall;
pub use contract::{Patch, RESULT_CAP_BYTES, ToolEnv, ToolError, ToolOutcome, cap};
pub use http_policy::HttpPolicy;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;

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

/// The refusal of a call to `tool` when the run's access does not offer it.
fn withheld(env: &ToolEnv, tool: BuiltIn) -> Option<ToolError> {
    (!tool.offered(env.access)).then_some(ToolError::Withheld {
        tool: tool.name(),
        access: env.access,
    })
}

/// Why `call` is refused before any approval is asked, when it is: a built-in
/// the run's tool access does not offer, a `git_exec` whose git would run
/// another program (or leave the workspace's repository), a file tool writing
/// into `.git`. A grant of the tool's name never covers these, since they
/// never reach the gate.
pub fn refusal(env: &ToolEnv, call: &ToolCall) -> Option<ToolError> {
    let tool = BuiltIn::parse(&call.name)?;
    if let Some(e) = withheld(env, tool) {
        return Some(e);
    }
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
    if let Some(e) = withheld(env, tool) {
        return ToolOutcome::error(e);
    }
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
