//! The command tools: `shell_exec` and `git_exec`, run in the workspace by the
//! sandbox's confined runner with the task's time limit. A non-zero exit is an
//! error result carrying the exit code and output.

use super::{ToolEnv, ToolError, ToolOutcome, cap};
use crate::adapters::sandbox::{self, CommandRun};
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

/// Arguments of `shell_exec`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ShellArgs {
    command: String,
}

/// Arguments of `git_exec`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct GitArgs {
    args: String,
}

async fn run(
    env: &ToolEnv,
    program: &str,
    args: Vec<String>,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    let cmd = CommandRun {
        program: program.to_string(),
        args,
        workspace: env.workspace.clone(),
        env: env.env.clone(),
        confinement: env.confinement,
        timeout: env.timeout,
    };
    let out = sandbox::run(&cmd, cancel).await?;
    let code = out.exit.and_then(|e| e.code);
    let ok = out.exit.is_some_and(|e| e.success()) && !out.timed_out && !out.cancelled;
    let status = if out.timed_out {
        format!("timed out after {} ms", env.timeout.as_millis())
    } else {
        match code {
            Some(c) => format!("exit code {c}"),
            None => "killed by a signal".to_string(),
        }
    };
    let content = cap(format!(
        "{status}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    ));
    Ok(ToolOutcome {
        content,
        is_error: !ok,
        patch: None,
        plan: None,
        cancelled: out.cancelled,
        command: Some(out),
    })
}

pub(super) async fn shell_exec(
    env: &ToolEnv,
    a: ShellArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    if a.command.trim().is_empty() {
        return Err(ToolError::Refused("command is empty".into()));
    }
    run(env, "/bin/sh", vec!["-c".into(), a.command], cancel).await
}

pub(super) async fn git_exec(
    env: &ToolEnv,
    a: GitArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    let args = shell_words::split(&a.args)
        .map_err(|e| ToolError::Refused(format!("args cannot be split: {e}")))?;
    if args.is_empty() {
        return Err(ToolError::Refused("args is empty".into()));
    }
    run(env, "git", args, cancel).await
}
