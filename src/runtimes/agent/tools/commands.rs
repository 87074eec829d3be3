//! The command tools: `shell_exec` and `git_exec`, run in the workspace by the
//! sandbox's confined runner with the task's time limit (a confined
//! `shell_exec` may also write the session's additional directories). A non-zero exit is an
//! error result carrying the exit code and output. A `git_exec` call whose git
//! would run another program is refused before any approval is asked.

use super::{ToolEnv, ToolError, ToolOutcome, cap};
use crate::adapters::sandbox::{
    self, CommandOutcome, CommandRun, Confinement, GitRun, prepare_git,
};
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
    cmd: CommandRun,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    let out = sandbox::run(&cmd, cancel).await?;
    Ok(outcome(env, out))
}

/// The result of a command that ran to its end (or was stopped).
fn outcome(env: &ToolEnv, out: CommandOutcome) -> ToolOutcome {
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
    ToolOutcome {
        content,
        is_error: !ok,
        patch: None,
        plan: None,
        cancelled: out.cancelled,
        command: Some(out),
    }
}

pub(super) async fn shell_exec(
    env: &ToolEnv,
    a: ShellArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    if a.command.trim().is_empty() {
        return Err(ToolError::Refused("command is empty".into()));
    }
    let cmd = CommandRun {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), a.command],
        workspace: env.workspace.clone(),
        env: env.env.clone(),
        confinement: env.confinement,
        timeout: env.timeout,
    };
    let out = sandbox::run_with_roots(&cmd, &env.additional, cancel).await?;
    Ok(outcome(env, out))
}

/// The git run a `git_exec` call asks for, or why it is refused: git that would
/// run another program is shell, and needs `shell_exec` and its approval.
pub(super) fn git_run(env: &ToolEnv, a: &GitArgs) -> Result<GitRun, ToolError> {
    let args = shell_words::split(&a.args)
        .map_err(|e| ToolError::Refused(format!("args cannot be split: {e}")))?;
    if args.is_empty() {
        return Err(ToolError::Refused("args is empty".into()));
    }
    prepare_git(
        &env.workspace,
        &args,
        &env.env,
        env.confinement.git_writable,
    )
    .map_err(|e| ToolError::Refused(e.to_string()))
}

pub(super) async fn git_exec(
    env: &ToolEnv,
    a: GitArgs,
    cancel: &CancellationToken,
) -> Result<ToolOutcome, ToolError> {
    let git = git_run(env, &a)?;
    let cmd = CommandRun {
        program: "git".into(),
        args: git.args,
        workspace: env.workspace.clone(),
        env: git.env,
        // Git writes its own data; its hooks stay off unless the task allows.
        confinement: Confinement {
            git_writable: true,
            ..env.confinement
        },
        timeout: env.timeout,
    };
    run(env, cmd, cancel).await
}
