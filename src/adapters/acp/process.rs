//! The agent's OS process: spawned with a cleared environment, in the workspace,
//! in its own process group; stderr kept as a bounded tail; the whole group
//! terminated on shutdown and killed on drop so no grandchild outlives it.

use crate::adapters::acp::error::AcpError;
use std::collections::VecDeque;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

const STDERR_MAX_LINES: usize = 200;
const STDERR_MAX_BYTES: usize = 64 * 1024;
const STDERR_MAX_LINE: usize = 8 * 1024;
const STDERR_DRAIN: Duration = Duration::from_millis(100);
const EXIT_AFTER_STDIN_CLOSE: Duration = Duration::from_secs(1);
const EXIT_AFTER_SIGTERM: Duration = Duration::from_secs(2);

/// How the process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    /// Exit code, when it exited normally.
    pub code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
}

/// The pipes the ACP transport uses.
#[derive(Debug)]
pub struct ChildPipes {
    /// The agent's stdin (frames to the agent).
    pub stdin: ChildStdin,
    /// The agent's stdout (frames from the agent).
    pub stdout: ChildStdout,
}

#[derive(Debug, Default)]
struct Ring {
    lines: VecDeque<String>,
    bytes: usize,
}

impl Ring {
    fn push(&mut self, mut line: String) {
        if line.len() > STDERR_MAX_LINE {
            let mut cut = STDERR_MAX_LINE;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > STDERR_MAX_LINES || self.bytes > STDERR_MAX_BYTES {
            match self.lines.pop_front() {
                Some(old) => self.bytes -= old.len(),
                None => break,
            }
        }
    }
}

/// A supervised agent process (the leader of its own process group).
#[derive(Debug)]
pub struct AgentProcess {
    pid: i32,
    exit: watch::Receiver<Option<ExitInfo>>,
    stderr: Arc<Mutex<Ring>>,
    stderr_done: watch::Receiver<bool>,
    close_stdin: CancellationToken,
    group_gone: AtomicBool,
}

impl AgentProcess {
    /// Spawns `program args` in `workspace` with exactly `env`, in a new process
    /// group, with stdin/stdout piped for ACP and stderr drained into a tail.
    pub fn spawn(
        program: &Path,
        args: &[String],
        workspace: &Path,
        env: &[(String, String)],
    ) -> Result<(AgentProcess, ChildPipes), AcpError> {
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .current_dir(workspace)
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let spawn_err = |message: String| AcpError::Spawn {
            program: program.display().to_string(),
            message,
        };
        let mut child = cmd.spawn().map_err(|e| spawn_err(e.to_string()))?;
        let pid = child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .ok_or_else(|| spawn_err("the process has no pid".into()))?;
        let (stdin, stdout, stderr) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), Some(e)) => (i, o, e),
                _ => return Err(spawn_err("the process pipes are missing".into())),
            };
        let (exit_tx, exit) = watch::channel(None);
        tokio::spawn(async move {
            let info = match child.wait().await {
                Ok(status) => {
                    use std::os::unix::process::ExitStatusExt;
                    ExitInfo {
                        code: status.code(),
                        signal: status.signal(),
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "waiting for the agent process failed");
                    ExitInfo {
                        code: None,
                        signal: None,
                    }
                }
            };
            let _ = exit_tx.send(Some(info));
        });
        let ring = Arc::new(Mutex::new(Ring::default()));
        let (done_tx, stderr_done) = watch::channel(false);
        tokio::spawn(drain_stderr(stderr, ring.clone(), done_tx));
        let process = AgentProcess {
            pid,
            exit,
            stderr: ring,
            stderr_done,
            close_stdin: CancellationToken::new(),
            group_gone: AtomicBool::new(false),
        };
        Ok((process, ChildPipes { stdin, stdout }))
    }

    /// The process id (also the process group id).
    pub fn pid(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// Cancelled when stdin must be closed; the transport's writer watches it.
    pub fn stdin_closer(&self) -> CancellationToken {
        self.close_stdin.clone()
    }

    /// How the process ended, if it has.
    pub fn exit_status(&self) -> Option<ExitInfo> {
        *self.exit.borrow()
    }

    /// Whether the process is still running.
    pub fn is_alive(&self) -> bool {
        self.exit_status().is_none()
    }

    /// Waits until the process ends.
    pub async fn wait_exit(&self) -> ExitInfo {
        let mut rx = self.exit.clone();
        match rx.wait_for(Option::is_some).await {
            Ok(v) => v.unwrap_or(ExitInfo {
                code: None,
                signal: None,
            }),
            Err(_) => ExitInfo {
                code: None,
                signal: None,
            },
        }
    }

    /// Waits up to `limit` for the process to end.
    pub async fn wait_exit_for(&self, limit: Duration) -> Option<ExitInfo> {
        tokio::time::timeout(limit, self.wait_exit()).await.ok()
    }

    /// The last lines the agent wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        match self.stderr.lock() {
            Ok(ring) => ring.lines.iter().cloned().collect::<Vec<_>>().join("\n"),
            Err(_) => String::new(),
        }
    }

    /// The stderr tail after giving the reader a moment to drain what a dying
    /// process wrote last.
    pub async fn stderr_tail_drained(&self) -> String {
        let mut done = self.stderr_done.clone();
        let _ = tokio::time::timeout(STDERR_DRAIN, done.wait_for(|d| *d)).await;
        self.stderr_tail()
    }

    /// An [`AcpError::Exited`] for a process that has ended (or is ending), with
    /// its drained stderr tail.
    pub async fn exited_error(&self) -> AcpError {
        let info = self.wait_exit_for(STDERR_DRAIN).await;
        AcpError::Exited {
            code: info.and_then(|i| i.code),
            stderr_tail: self.stderr_tail_drained().await,
        }
    }

    fn signal_group(&self, signal: i32) -> bool {
        // SAFETY: kill(2) takes plain integers and has no memory-safety
        // preconditions; -pid addresses the process group this process leads
        // (created by `process_group(0)` at spawn).
        let rc = unsafe { libc::kill(-self.pid, signal) };
        rc == 0
    }

    fn group_alive(&self) -> bool {
        if self.group_gone.load(Ordering::Acquire) {
            return false;
        }
        let alive = self.signal_group(0);
        if !alive {
            self.group_gone.store(true, Ordering::Release);
        }
        alive
    }

    /// Ends the whole group: close stdin, wait ~1 s, SIGTERM the group, wait ~2 s,
    /// SIGKILL what is left. Grandchildren die with it even when the agent
    /// itself exited on stdin EOF.
    pub async fn terminate_group(&self) {
        self.close_stdin.cancel();
        let _ = self.wait_exit_for(EXIT_AFTER_STDIN_CLOSE).await;
        if self.group_alive() {
            self.signal_group(libc::SIGTERM);
            let deadline = tokio::time::Instant::now() + EXIT_AFTER_SIGTERM;
            while self.group_alive() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
        if self.group_alive() {
            self.signal_group(libc::SIGKILL);
            let _ = self.wait_exit_for(EXIT_AFTER_SIGTERM).await;
        }
        self.group_gone.store(true, Ordering::Release);
    }
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        self.close_stdin.cancel();
        if !self.group_gone.load(Ordering::Acquire) {
            self.signal_group(libc::SIGKILL);
        }
    }
}

async fn drain_stderr(stderr: ChildStderr, ring: Arc<Mutex<Ring>>, done: watch::Sender<bool>) {
    let mut reader = BufReader::new(stderr);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                let line = String::from_utf8_lossy(&buf)
                    .trim_end_matches(['\n', '\r'])
                    .to_string();
                tracing::debug!(target: "hecate::agent_stderr", "{line}");
                if let Ok(mut r) = ring.lock() {
                    r.push(line);
                }
            }
        }
    }
    let _ = done.send(true);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_the_tail_within_bounds() {
        let mut r = Ring::default();
        for i in 0..500 {
            r.push(format!("line {i}"));
        }
        assert_eq!(r.lines.len(), STDERR_MAX_LINES);
        assert_eq!(r.lines.back().map(String::as_str), Some("line 499"));
        let mut big = Ring::default();
        for _ in 0..20 {
            big.push("x".repeat(STDERR_MAX_LINE * 2));
        }
        assert!(big.bytes <= STDERR_MAX_BYTES);
        assert!(big.lines.iter().all(|l| l.len() <= STDERR_MAX_LINE));
    }

    #[tokio::test]
    async fn early_exit_is_reported_with_stderr() {
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let dir = std::env::temp_dir();
        let (p, _pipes) = AgentProcess::spawn(
            Path::new("/bin/sh"),
            &["-c".into(), "echo oops >&2; exit 7".into()],
            &dir,
            &env,
        )
        .expect("spawn");
        let info = p.wait_exit().await;
        assert_eq!(info.code, Some(7));
        match p.exited_error().await {
            AcpError::Exited { code, stderr_tail } => {
                assert_eq!(code, Some(7));
                assert!(stderr_tail.contains("oops"), "{stderr_tail}");
            }
            other => panic!("unexpected {other:?}"),
        }
        p.terminate_group().await;
    }
}
