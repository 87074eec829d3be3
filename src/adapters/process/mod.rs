//! Every child process Hecate starts goes through this module: an explicit
//! sanitized environment (never Hecate's own), its own process group, a
//! parent-death signal on Linux, a bounded stderr tail, and the whole group
//! killed when the handle is dropped, so no child or grandchild outlives its
//! session. A watchdog process covers the case where Hecate itself is killed.
//! A leaf module: it uses nothing else of the crate.

pub mod env;
mod foreground;
mod group;
mod output;
mod spawner;
mod tail;
pub mod watchdog;

pub use foreground::run_in_foreground;
pub use group::ProcessGroup;
pub use output::{Output, run};
pub use tail::{StderrTail, TailLimits};

/// Whether process `pid` is running: it exists and is neither a zombie (an exited
/// process nobody reaped yet, which lingers where PID 1 does not reap) nor dead.
pub fn pid_is_running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state follows the parenthesised command name, which may hold spaces.
        Ok(stat) => !stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with(['Z', 'X'])),
        Err(_) if std::path::Path::new("/proc/self").exists() => false,
        // No procfs: ask the kernel (EPERM still means the process exists).
        Err(_) => {
            let Ok(pid) = libc::pid_t::try_from(pid) else {
                return false;
            };
            // SAFETY: signal 0 only checks that the process exists; nothing is sent.
            let found = unsafe { libc::kill(pid, 0) } == 0;
            found || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
        }
    }
}

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;
use tokio::process::{ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// How long a process gets to exit after its stdin closes in [`ChildProcess::terminate_group`].
const EXIT_AFTER_STDIN_CLOSE: Duration = Duration::from_secs(1);
/// How long its group gets after SIGTERM before SIGKILL.
const EXIT_AFTER_SIGTERM: Duration = Duration::from_secs(2);
/// How long a dying process's last stderr lines get to arrive in the tail.
const STDERR_DRAIN: Duration = Duration::from_millis(100);

/// A child could not be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{program}: {message}")]
pub struct SpawnError {
    /// What was started.
    pub program: String,
    /// The OS error, or what was missing.
    pub message: String,
}

/// Where a child's stdin or stdout goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipe {
    /// `/dev/null`.
    Null,
    /// A pipe handed back in [`ChildPipes`].
    Piped,
}

/// Where a child's stderr goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stderr {
    /// `/dev/null`.
    Null,
    /// A pipe handed back in [`ChildPipes`].
    Piped,
    /// Drained into the process's [`StderrTail`] with these limits.
    Tail(TailLimits),
}

/// What to start: program, arguments, exactly which environment, where, and
/// what to do with its stdio.
#[derive(Debug, Clone)]
pub struct Spec {
    program: PathBuf,
    args: Vec<OsString>,
    env: Vec<(String, String)>,
    cwd: Option<PathBuf>,
    stdin: Pipe,
    stdout: Pipe,
    stderr: Stderr,
}

impl Spec {
    /// `program` with no arguments, an empty environment, the caller's working
    /// directory, stdin on `/dev/null` and stdout and stderr piped.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Spec {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            cwd: None,
            stdin: Pipe::Null,
            stdout: Pipe::Piped,
            stderr: Stderr::Piped,
        }
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The child's whole environment (build it with [`env::sanitized_env`]).
    pub fn env(mut self, env: &[(String, String)]) -> Self {
        self.env = env.to_vec();
        self
    }

    /// The child's working directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// Where stdin goes.
    pub fn stdin(mut self, pipe: Pipe) -> Self {
        self.stdin = pipe;
        self
    }

    /// Where stdout goes.
    pub fn stdout(mut self, pipe: Pipe) -> Self {
        self.stdout = pipe;
        self
    }

    /// Where stderr goes.
    pub fn stderr(mut self, stderr: Stderr) -> Self {
        self.stderr = stderr;
        self
    }

    /// The program, for messages.
    pub fn program_label(&self) -> String {
        self.program.display().to_string()
    }
}

fn stdio(pipe: Pipe) -> std::process::Stdio {
    match pipe {
        Pipe::Null => std::process::Stdio::null(),
        Pipe::Piped => std::process::Stdio::piped(),
    }
}

/// How a process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExitInfo {
    /// Exit code, when it exited normally.
    pub code: Option<i32>,
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
}

impl ExitInfo {
    const UNKNOWN: ExitInfo = ExitInfo {
        code: None,
        signal: None,
    };

    /// Whether it exited with code 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal) {
            (Some(code), _) => write!(f, "exit code {code}"),
            (None, Some(signal)) => write!(f, "killed by signal {signal}"),
            (None, None) => f.write_str("unknown exit status"),
        }
    }
}

/// The pipes asked for with [`Pipe::Piped`] / [`Stderr::Piped`].
#[derive(Debug)]
pub struct ChildPipes {
    /// The child's stdin.
    pub stdin: Option<ChildStdin>,
    /// The child's stdout.
    pub stdout: Option<ChildStdout>,
    /// The child's stderr.
    pub stderr: Option<ChildStderr>,
}

/// A supervised child: leader of its own process group, reaped in the
/// background, its group SIGKILLed when this handle is dropped.
#[derive(Debug)]
pub struct ChildProcess {
    group: ProcessGroup,
    exit: watch::Receiver<Option<ExitInfo>>,
    tail: StderrTail,
    stderr_done: watch::Receiver<bool>,
    close_stdin: CancellationToken,
}

impl ChildProcess {
    /// Starts `spec` with exactly its environment, in a new process group, with
    /// the parent-death signal armed (Linux) and the group registered with the
    /// watchdog; returns the process and the pipes it asked for.
    pub fn spawn(spec: &Spec) -> Result<(ChildProcess, ChildPipes), SpawnError> {
        let fail = |message: String| SpawnError {
            program: spec.program_label(),
            message,
        };
        let mut cmd = tokio::process::Command::new(&spec.program);
        cmd.args(&spec.args)
            .env_clear()
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .process_group(0)
            .stdin(stdio(spec.stdin))
            .stdout(stdio(spec.stdout))
            .stderr(match spec.stderr {
                Stderr::Null => std::process::Stdio::null(),
                Stderr::Piped | Stderr::Tail(_) => std::process::Stdio::piped(),
            })
            .kill_on_drop(true);
        if let Some(dir) = &spec.cwd {
            cmd.current_dir(dir);
        }
        group::die_with_parent(&mut cmd);
        let mut child = spawner::spawn(cmd).map_err(|e| fail(e.to_string()))?;
        let group = child
            .id()
            .and_then(ProcessGroup::adopt)
            .ok_or_else(|| fail("the process has no pid".into()))?;
        let mut pipes = ChildPipes {
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
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
                    tracing::warn!(error = %e, "waiting for a child process failed");
                    ExitInfo::UNKNOWN
                }
            };
            let _ = exit_tx.send(Some(info));
        });
        let (done_tx, stderr_done) = watch::channel(false);
        let tail = match spec.stderr {
            Stderr::Tail(limits) => {
                let tail = StderrTail::new(limits);
                match pipes.stderr.take() {
                    Some(stderr) => {
                        tokio::spawn(tail::drain(
                            stderr,
                            tail.clone(),
                            spec.program_label(),
                            done_tx,
                        ));
                    }
                    None => {
                        let _ = done_tx.send(true);
                    }
                }
                tail
            }
            Stderr::Null | Stderr::Piped => {
                let _ = done_tx.send(true);
                StderrTail::default()
            }
        };
        let process = ChildProcess {
            group,
            exit,
            tail,
            stderr_done,
            close_stdin: CancellationToken::new(),
        };
        Ok((process, pipes))
    }

    /// The process id (also the process group id).
    pub fn pid(&self) -> u32 {
        self.group.id()
    }

    /// Cancelled when stdin must be closed; a transport writing stdin watches it.
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
            Ok(v) => v.unwrap_or(ExitInfo::UNKNOWN),
            Err(_) => ExitInfo::UNKNOWN,
        }
    }

    /// Waits up to `limit` for the process to end.
    pub async fn wait_exit_for(&self, limit: Duration) -> Option<ExitInfo> {
        tokio::time::timeout(limit, self.wait_exit()).await.ok()
    }

    /// A handle on the stderr tail (empty unless spawned with [`Stderr::Tail`]).
    pub fn stderr_tail(&self) -> StderrTail {
        self.tail.clone()
    }

    /// The stderr tail text after giving the reader a moment to drain what a
    /// dying process wrote last.
    pub async fn stderr_tail_drained(&self) -> String {
        let mut done = self.stderr_done.clone();
        let _ = tokio::time::timeout(STDERR_DRAIN, done.wait_for(|d| *d)).await;
        self.tail.text()
    }

    /// Whether any process of the group is still running (grandchildren count).
    pub fn group_alive(&self) -> bool {
        self.group.is_alive()
    }

    /// SIGKILLs the whole group now.
    pub fn kill_group(&self) {
        self.group.kill();
    }

    /// Ends the whole group gently: close stdin, wait ~1 s, SIGTERM the group,
    /// wait ~2 s, SIGKILL what is left. Grandchildren die with it even when the
    /// leader itself exited on stdin EOF.
    pub async fn terminate_group(&self) {
        self.close_stdin.cancel();
        let _ = self.wait_exit_for(EXIT_AFTER_STDIN_CLOSE).await;
        if self.group.is_alive() {
            self.group.signal(libc::SIGTERM);
            let deadline = tokio::time::Instant::now() + EXIT_AFTER_SIGTERM;
            while self.group.is_alive() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(25)).await;
            }
        }
        if self.group.is_alive() {
            self.group.kill();
            let _ = self.wait_exit_for(EXIT_AFTER_SIGTERM).await;
        }
        self.group.mark_gone();
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        self.close_stdin.cancel();
        // The group handle SIGKILLs the group when it drops right after this.
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::time::Instant;
    use tokio::io::AsyncBufReadExt;

    /// Spawns `spec`, whose first stdout line is the pid of a process it started
    /// in the background; the child and that pid.
    async fn spawn_reporting_pid(spec: &Spec) -> (ChildProcess, u32) {
        let (child, pipes) = ChildProcess::spawn(spec).expect("spawn");
        let mut line = String::new();
        tokio::io::BufReader::new(pipes.stdout.expect("stdout"))
            .read_line(&mut line)
            .await
            .expect("pid line");
        (child, line.trim().parse().expect("pid"))
    }

    /// Waits up to ten seconds for `pid` to be gone; whether it is.
    pub(super) async fn wait_gone(pid: u32) -> bool {
        let deadline = Instant::now() + Duration::from_secs(10);
        while pid_is_running(pid) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        !pid_is_running(pid)
    }

    fn path_only() -> Vec<(String, String)> {
        vec![("PATH".to_string(), "/usr/bin:/bin".to_string())]
    }

    #[tokio::test]
    async fn the_child_environment_is_exactly_the_sanitized_allowlist() {
        let base: HashMap<String, String> = [
            ("PATH", "/usr/bin:/bin"),
            ("HOME", "/home/u"),
            ("LANG", "C.UTF-8"),
            ("OPENAI_API_KEY", "sk-secret"),
            ("HECATE_TOKEN", "secret"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let env = env::sanitized_env(&base, &[], &[]);
        let out = run(Spec::new("/usr/bin/env").env(&env), Duration::from_secs(10))
            .await
            .expect("run env");
        assert!(out.exit.is_some_and(|e| e.success()));
        let mut seen: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_string)
            .collect();
        seen.sort();
        assert_eq!(
            seen,
            vec!["HOME=/home/u", "LANG=C.UTF-8", "PATH=/usr/bin:/bin"],
            "nothing of the test's own environment leaks in"
        );
    }

    #[tokio::test]
    async fn dropping_the_handle_kills_a_grandchild_in_the_group() {
        let spec = Spec::new("/bin/sh")
            .args(["-c", "sleep 1000 & echo $!; wait"])
            .env(&path_only())
            .stdout(Pipe::Piped)
            .stderr(Stderr::Null);
        let (child, grandchild) = spawn_reporting_pid(&spec).await;
        assert!(pid_is_running(grandchild));
        drop(child);
        assert!(
            wait_gone(grandchild).await,
            "grandchild {grandchild} lives on"
        );
    }

    #[tokio::test]
    async fn terminate_reaches_a_grandchild_after_the_leader_exited() {
        let spec = Spec::new("/bin/sh")
            .args(["-c", "sleep 1000 & echo $!"])
            .env(&path_only())
            .stdout(Pipe::Piped)
            .stderr(Stderr::Null);
        let (child, grandchild) = spawn_reporting_pid(&spec).await;
        assert_eq!(child.wait_exit().await.code, Some(0));
        assert!(child.group_alive(), "the grandchild keeps the group alive");
        child.terminate_group().await;
        assert!(wait_gone(grandchild).await);
        assert!(!child.group_alive());
    }

    #[tokio::test]
    async fn an_early_exit_keeps_its_code_and_stderr_tail() {
        let spec = Spec::new("/bin/sh")
            .args(["-c", "echo oops >&2; exit 7"])
            .env(&path_only())
            .stdout(Pipe::Null)
            .stderr(Stderr::Tail(TailLimits::AGENT));
        let (child, _pipes) = ChildProcess::spawn(&spec).expect("spawn");
        assert_eq!(child.wait_exit().await.code, Some(7));
        assert!(!child.is_alive());
        assert!(child.stderr_tail_drained().await.contains("oops"));
    }

    #[tokio::test]
    async fn a_missing_program_is_a_spawn_error_naming_it() {
        let err =
            ChildProcess::spawn(&Spec::new("/nonexistent/hecate-test-program")).expect_err("fails");
        assert!(err.program.contains("hecate-test-program"), "{err}");
    }
}
