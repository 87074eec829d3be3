//! An upstream server's OS process: a sanitized environment, its own process
//! group, stderr kept as a bounded tail (attached to start-up errors), and the
//! whole group killed when the process handle is dropped.

use super::error::McpClientError;
use std::collections::VecDeque;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

const TAIL_LINES: usize = 50;
const TAIL_LINE_BYTES: usize = 2048;

/// The last lines a process wrote to stderr.
#[derive(Debug, Clone, Default)]
pub struct StderrTail(Arc<Mutex<VecDeque<String>>>);

impl StderrTail {
    fn push(&self, mut line: String) {
        if line.len() > TAIL_LINE_BYTES {
            let mut cut = TAIL_LINE_BYTES;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
        }
        let mut lines = self.0.lock().unwrap_or_else(|p| p.into_inner());
        lines.push_back(line);
        while lines.len() > TAIL_LINES {
            lines.pop_front();
        }
    }

    /// The tail joined by newlines.
    pub fn text(&self) -> String {
        let lines = self.0.lock().unwrap_or_else(|p| p.into_inner());
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// A running upstream process (leader of its own process group).
#[derive(Debug)]
pub struct UpstreamProcess {
    pid: i32,
    tail: StderrTail,
    exited: tokio::sync::watch::Receiver<bool>,
}

impl UpstreamProcess {
    /// Spawns `command args` with exactly `env`, in a new process group, returning
    /// the process and its stdio pipes (stdin, stdout).
    pub fn spawn(
        command: &str,
        args: &[String],
        env: &[(String, String)],
        cwd: Option<&PathBuf>,
    ) -> Result<(Self, ChildStdin, ChildStdout), McpClientError> {
        let mut cmd = tokio::process::Command::new(command);
        cmd.args(args)
            .env_clear()
            .envs(env.iter().map(|(k, v)| (k, v)))
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = cwd {
            cmd.current_dir(dir);
        }
        let spawn_err = |message: String| McpClientError::Spawn {
            program: command.to_string(),
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
        let tail = StderrTail::default();
        tokio::spawn(drain(stderr, tail.clone(), command.to_string()));
        let (tx, exited) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            let _ = child.wait().await;
            let _ = tx.send(true);
        });
        Ok((Self { pid, tail, exited }, stdin, stdout))
    }

    /// The process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid.unsigned_abs()
    }

    /// The stderr tail so far.
    pub fn stderr_tail(&self) -> StderrTail {
        self.tail.clone()
    }

    /// Whether the process has exited.
    pub fn has_exited(&self) -> bool {
        *self.exited.borrow()
    }

    /// Kills the whole process group now.
    pub fn kill_group(&self) {
        // SAFETY: kill(2) takes plain integers and has no memory-safety
        // preconditions; -pid addresses the group this process leads
        // (created by `process_group(0)` at spawn).
        unsafe {
            libc::kill(-self.pid, libc::SIGKILL);
        }
    }
}

impl Drop for UpstreamProcess {
    fn drop(&mut self) {
        self.kill_group();
    }
}

async fn drain(stderr: ChildStderr, tail: StderrTail, program: String) {
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
                tracing::debug!(target: "hecate::mcp_upstream_stderr", program, "{line}");
                tail.push(line);
            }
        }
    }
}
