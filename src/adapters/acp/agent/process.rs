//! The agent's OS process: a supervised child (`crate::adapters::process`) in
//! the workspace, stdin and stdout piped for ACP, stderr kept as a bounded tail,
//! and the [`AcpError::Exited`] that explains its end.

use crate::adapters::acp::error::AcpError;
use crate::adapters::process::{ChildProcess, Pipe, SpawnError, Spec, Stderr, TailLimits};
use std::path::Path;
use std::time::Duration;
use tokio::process::{ChildStdin, ChildStdout};

pub use crate::adapters::process::ExitInfo;

/// How long a dying agent gets to report its exit before the error is built.
const EXIT_DRAIN: Duration = Duration::from_millis(100);

/// A supervised agent process: the leader of its own group, the whole group
/// killed on drop.
pub type AgentProcess = ChildProcess;

/// The pipes the ACP transport uses.
#[derive(Debug)]
pub struct AgentPipes {
    /// The agent's stdin (frames to the agent).
    pub stdin: ChildStdin,
    /// The agent's stdout (frames from the agent).
    pub stdout: ChildStdout,
}

/// Spawns `program args` in `workspace` with exactly `env`, in a new process
/// group, with stdin/stdout piped for ACP and stderr drained into a tail.
pub fn spawn_agent(
    program: &Path,
    args: &[String],
    workspace: &Path,
    env: &[(String, String)],
) -> Result<(AgentProcess, AgentPipes), AcpError> {
    let spec = Spec::new(program)
        .args(args)
        .env(env)
        .cwd(workspace)
        .stdin(Pipe::Piped)
        .stdout(Pipe::Piped)
        .stderr(Stderr::Tail(TailLimits::AGENT));
    let (process, pipes) = ChildProcess::spawn(&spec)?;
    match (pipes.stdin, pipes.stdout) {
        (Some(stdin), Some(stdout)) => Ok((process, AgentPipes { stdin, stdout })),
        _ => Err(AcpError::Spawn(SpawnError {
            program: spec.program_label(),
            message: "the process pipes are missing".into(),
        })),
    }
}

/// An [`AcpError::Exited`] for a process that has ended (or is ending), with its
/// drained stderr tail.
pub async fn exited_error(process: &AgentProcess) -> AcpError {
    let info = process.wait_exit_for(EXIT_DRAIN).await;
    AcpError::Exited {
        code: info.and_then(|i| i.code),
        stderr_tail: process.stderr_tail_drained().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn early_exit_is_reported_with_stderr() {
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let dir = std::env::temp_dir();
        let (p, _pipes) = spawn_agent(
            Path::new("/bin/sh"),
            &["-c".into(), "echo oops >&2; exit 7".into()],
            &dir,
            &env,
        )
        .expect("spawn");
        let info = p.wait_exit().await;
        assert_eq!(info.code, Some(7));
        match exited_error(&p).await {
            AcpError::Exited { code, stderr_tail } => {
                assert_eq!(code, Some(7));
                assert!(stderr_tail.contains("oops"), "{stderr_tail}");
            }
            other => panic!("unexpected {other:?}"),
        }
        p.terminate_group().await;
    }

    #[tokio::test]
    async fn a_missing_agent_is_a_spawn_error() {
        let err = spawn_agent(
            Path::new("/nonexistent/agent"),
            &[],
            &std::env::temp_dir(),
            &[],
        )
        .err();
        assert!(
            matches!(&err, Some(AcpError::Spawn(e)) if e.program == "/nonexistent/agent"),
            "{err:?}"
        );
    }
}
