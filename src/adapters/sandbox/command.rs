//! One command of a task run: spawned in its own process group with exactly the
//! environment it is given, optionally inside bubblewrap, stopped at its time
//! limit or on cancel (the whole group is killed), stdout and stderr captured up
//! to a cap while the rest is counted and dropped.

use super::SandboxError;
use super::bwrap::{Jail, View, bwrap_path};
use crate::adapters::process::{ChildProcess, ExitInfo, Pipe, Spec, Stderr};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio_util::sync::CancellationToken;

/// How much of each output stream is kept.
pub const OUTPUT_CAP_BYTES: usize = 1024 * 1024;

/// How long the pipes may stay open after the group was killed.
const PIPE_DRAIN: Duration = Duration::from_secs(1);

/// How a command is confined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Confinement {
    /// Cut the network (a new network namespace with loopback only).
    pub no_network: bool,
    /// Everything outside the workspace is read-only.
    pub read_only: bool,
}

impl Confinement {
    /// Whether bubblewrap is needed at all.
    pub fn is_needed(self) -> bool {
        self.no_network || self.read_only
    }
}

/// A command to run.
#[derive(Debug, Clone)]
pub struct CommandRun {
    /// The program.
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The directory it runs in (and the one place it may write when confined
    /// read-only).
    pub workspace: PathBuf,
    /// Its whole environment.
    pub env: Vec<(String, String)>,
    /// How it is confined.
    pub confinement: Confinement,
    /// Its time limit.
    pub timeout: Duration,
}

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandOutcome {
    /// Its exit; `None` when it was stopped (time limit or cancel).
    pub exit: Option<ExitInfo>,
    /// True when the time limit stopped it.
    pub timed_out: bool,
    /// True when a cancel stopped it.
    pub cancelled: bool,
    /// Captured stdout (at most the cap).
    pub stdout: Vec<u8>,
    /// Bytes stdout produced in all.
    pub stdout_bytes: u64,
    /// Captured stderr (at most the cap).
    pub stderr: Vec<u8>,
    /// Bytes stderr produced in all.
    pub stderr_bytes: u64,
}

/// The bubblewrap arguments that confine a task command to `workspace`: the
/// whole filesystem writable or read-only, the workspace writable, the network
/// kept or cut.
fn bwrap_args(confinement: Confinement, workspace: &Path) -> Vec<OsString> {
    let view = if confinement.read_only {
        View::ReadOnly
    } else {
        View::Writable
    };
    Jail::new(view)
        .writable(workspace)
        .chdir(workspace)
        .network(!confinement.no_network)
        .args()
}

/// Reads `pipe` to its end, keeping at most `cap` bytes and counting the rest.
async fn read_capped<R: AsyncRead + Unpin>(pipe: Option<R>, cap: usize) -> (Vec<u8>, u64) {
    let mut kept = Vec::new();
    let mut total = 0u64;
    let Some(mut pipe) = pipe else {
        return (kept, total);
    };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                total += n as u64;
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
    (kept, total)
}

/// Runs `cmd` to its end, its time limit or `cancel`, whichever comes first;
/// whatever is left of its process group is killed in every case.
pub async fn run(
    cmd: &CommandRun,
    cancel: &CancellationToken,
) -> Result<CommandOutcome, SandboxError> {
    let (program, args) = if cmd.confinement.is_needed() {
        let bwrap = bwrap_path().ok_or(SandboxError::BwrapMissing)?;
        let mut args = bwrap_args(cmd.confinement, &cmd.workspace);
        args.push(cmd.program.clone().into());
        args.extend(cmd.args.iter().map(OsString::from));
        (bwrap, args)
    } else {
        (
            PathBuf::from(&cmd.program),
            cmd.args.iter().map(OsString::from).collect(),
        )
    };
    let spec = Spec::new(program)
        .args(args)
        .env(&cmd.env)
        .cwd(&cmd.workspace)
        .stdin(Pipe::Null)
        .stdout(Pipe::Piped)
        .stderr(Stderr::Piped);
    let (child, pipes) = ChildProcess::spawn(&spec).map_err(|e| SandboxError::Spawn {
        program: cmd.program.clone(),
        message: e.message,
    })?;
    let stdout = tokio::spawn(read_capped(pipes.stdout, OUTPUT_CAP_BYTES));
    let stderr = tokio::spawn(read_capped(pipes.stderr, OUTPUT_CAP_BYTES));
    let (exit, timed_out, cancelled) = tokio::select! {
        exit = child.wait_exit_for(cmd.timeout) => {
            let timed_out = exit.is_none();
            (exit, timed_out, false)
        }
        _ = cancel.cancelled() => (None, false, true),
    };
    child.kill_group();
    let collect = |task: tokio::task::JoinHandle<(Vec<u8>, u64)>| async move {
        let abort = task.abort_handle();
        match tokio::time::timeout(PIPE_DRAIN, task).await {
            Ok(joined) => joined.unwrap_or_default(),
            Err(_) => {
                abort.abort();
                (Vec::new(), 0)
            }
        }
    };
    let (stdout, stdout_bytes) = collect(stdout).await;
    let (stderr, stderr_bytes) = collect(stderr).await;
    Ok(CommandOutcome {
        exit,
        timed_out,
        cancelled,
        stdout,
        stdout_bytes,
        stderr,
        stderr_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str, dir: &Path, confinement: Confinement, timeout: Duration) -> CommandRun {
        CommandRun {
            program: "/bin/sh".into(),
            args: vec!["-c".into(), script.into()],
            workspace: dir.to_path_buf(),
            env: vec![("PATH".into(), "/usr/bin:/bin".into())],
            confinement,
            timeout,
        }
    }

    #[tokio::test]
    async fn output_is_capped_and_counted() {
        let dir = tempfile::tempdir().expect("dir");
        let cmd = sh(
            "head -c 3000000 /dev/zero; echo err >&2; exit 4",
            dir.path(),
            Confinement::default(),
            Duration::from_secs(30),
        );
        let out = run(&cmd, &CancellationToken::new()).await.expect("runs");
        assert_eq!(out.exit.and_then(|e| e.code), Some(4));
        assert_eq!(out.stdout.len(), OUTPUT_CAP_BYTES);
        assert_eq!(out.stdout_bytes, 3_000_000);
        assert_eq!(out.stderr, b"err\n");
    }

    #[tokio::test]
    async fn the_time_limit_kills_the_group() {
        let dir = tempfile::tempdir().expect("dir");
        let cmd = sh(
            "sleep 1000 & echo started; wait",
            dir.path(),
            Confinement::default(),
            Duration::from_millis(300),
        );
        let out = run(&cmd, &CancellationToken::new()).await.expect("runs");
        assert!(out.timed_out);
        assert_eq!(out.exit, None);
        assert_eq!(out.stdout, b"started\n");
    }

    #[tokio::test]
    async fn confinement_cuts_the_network_and_makes_the_rest_read_only() {
        let dir = tempfile::tempdir().expect("dir");
        let no_net = Confinement {
            no_network: true,
            read_only: true,
        };
        if bwrap_path().is_none() {
            // The test command installs bubblewrap; a machine without it proves
            // the refusal instead.
            let cmd = sh("true", dir.path(), no_net, Duration::from_secs(5));
            assert_eq!(
                run(&cmd, &CancellationToken::new())
                    .await
                    .expect_err("refused"),
                SandboxError::BwrapMissing
            );
            return;
        }
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listens");
        let port = listener.local_addr().expect("addr").port();
        let outside = tempfile::tempdir().expect("outside");
        let script = format!(
            "echo in > inside.txt && cat inside.txt; \
             (echo x > {}/escape.txt) 2>/dev/null || echo write-refused; \
             (echo > /dev/tcp/127.0.0.1/{port}) 2>/dev/null && echo connected || echo no-network",
            outside.path().display()
        );
        let mut cmd = sh(&script, dir.path(), no_net, Duration::from_secs(30));
        cmd.program = "/bin/bash".into();
        let out = run(&cmd, &CancellationToken::new()).await.expect("runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(text, "in\nwrite-refused\nno-network\n");
        assert!(!outside.path().join("escape.txt").exists());
        assert!(dir.path().join("inside.txt").exists());
        // Unconfined, the same command reaches the listener.
        cmd.confinement = Confinement::default();
        let out = run(&cmd, &CancellationToken::new()).await.expect("runs");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("connected"),
            "the check itself works"
        );
    }
}
