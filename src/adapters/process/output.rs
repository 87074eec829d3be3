//! Running a short command to completion (git, npm, an agent's `--version`):
//! stdout and stderr collected, a time limit, and whatever is left of the
//! command's process group killed when it ends or times out, so a background
//! grandchild neither outlives the command nor keeps its pipes open.

use super::{ChildProcess, ExitInfo, Pipe, SpawnError, Spec, Stderr};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};

/// How long the pipes may stay open after the group was killed (a process that
/// left the group could hold them forever).
const PIPE_DRAIN: Duration = Duration::from_secs(1);

/// What a finished (or timed-out) command produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// How it ended; `None` when the time limit passed first.
    pub exit: Option<ExitInfo>,
    /// Everything it wrote to stdout.
    pub stdout: Vec<u8>,
    /// Everything it wrote to stderr.
    pub stderr: Vec<u8>,
}

impl Output {
    /// Whether it exited with code 0 within the limit.
    pub fn success(&self) -> bool {
        self.exit.is_some_and(|e| e.success())
    }
}

async fn read_all<R: AsyncRead + Unpin>(pipe: Option<R>) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(mut pipe) = pipe {
        let _ = pipe.read_to_end(&mut buf).await;
    }
    buf
}

/// Runs `spec` (stdin on `/dev/null`, stdout and stderr captured) for at most
/// `limit`, then SIGKILLs what is left of its process group.
pub async fn run(spec: Spec, limit: Duration) -> Result<Output, SpawnError> {
    let spec = spec
        .stdin(Pipe::Null)
        .stdout(Pipe::Piped)
        .stderr(Stderr::Piped);
    let (child, pipes) = ChildProcess::spawn(&spec)?;
    let stdout = tokio::spawn(read_all(pipes.stdout));
    let stderr = tokio::spawn(read_all(pipes.stderr));
    let exit = child.wait_exit_for(limit).await;
    child.kill_group();
    let collect = |task: tokio::task::JoinHandle<Vec<u8>>| async move {
        let abort = task.abort_handle();
        match tokio::time::timeout(PIPE_DRAIN, task).await {
            Ok(joined) => joined.unwrap_or_default(),
            Err(_) => {
                abort.abort();
                Vec::new()
            }
        }
    };
    Ok(Output {
        exit,
        stdout: collect(stdout).await,
        stderr: collect(stderr).await,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path_only() -> Vec<(String, String)> {
        vec![("PATH".to_string(), "/usr/bin:/bin".to_string())]
    }

    #[tokio::test]
    async fn a_finished_command_returns_its_output_even_with_a_background_child() {
        let spec = Spec::new("/bin/sh")
            .args(["-c", "sleep 1000 & echo out; echo err >&2; exit 3"])
            .env(&path_only());
        let out = run(spec, Duration::from_secs(20)).await.expect("run");
        assert_eq!(out.exit.and_then(|e| e.code), Some(3));
        assert_eq!(String::from_utf8_lossy(&out.stdout), "out\n");
        assert_eq!(String::from_utf8_lossy(&out.stderr), "err\n");
    }

    #[tokio::test]
    async fn a_hung_command_times_out() {
        let spec = Spec::new("/bin/sh")
            .args(["-c", "echo partial; exec sleep 1000"])
            .env(&path_only());
        let out = run(spec, Duration::from_millis(300)).await.expect("run");
        assert!(out.exit.is_none());
        assert!(!out.success());
        assert_eq!(String::from_utf8_lossy(&out.stdout), "partial\n");
    }
}
