//! One command of a task run: spawned in its own process group with exactly the
//! environment it is given, optionally inside bubblewrap, stopped at its time
//! limit or on cancel (the whole group is killed), stdout and stderr captured up
//! to a cap while the rest is counted and dropped.

use super::bwrap::{Jail, View, bwrap_path};
use super::error::SandboxError;
use super::repo::repo_dirs;
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

/// How a command is confined. The default is workspace-write: the machine
/// read-only, the workspace and a private `/tmp` writable, the workspace's
/// `.git` read-only, no network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Confinement {
    /// Cut the network (a new network namespace with loopback only).
    pub no_network: bool,
    /// Everything outside the workspace is read-only, and `/tmp` is private.
    pub read_only: bool,
    /// The workspace's `.git` (and the git directories a `.git` file names) are
    /// writable: for git itself, or when a task allows it.
    pub git_writable: bool,
}

impl Default for Confinement {
    fn default() -> Self {
        Self {
            no_network: true,
            read_only: true,
            git_writable: false,
        }
    }
}

impl Confinement {
    /// No confinement at all: the network kept, everything writable.
    pub fn none() -> Self {
        Self {
            no_network: false,
            read_only: false,
            git_writable: true,
        }
    }

    /// Whether bubblewrap is needed at all.
    pub fn is_needed(self) -> bool {
        self.no_network || self.read_only || !self.git_writable
    }

    /// The confinement in words, for approval prompts and results, e.g.
    /// `workspace and private /tmp writable, .git read-only, no network`.
    pub fn describe(self) -> String {
        let files = if self.read_only {
            "workspace and private /tmp writable"
        } else {
            "the whole filesystem writable"
        };
        let git = if self.git_writable {
            ".git writable"
        } else {
            ".git read-only"
        };
        let net = if self.no_network {
            "no network"
        } else {
            "network on"
        };
        format!("{files}, {git}, {net}")
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

/// The sandbox that confines a task command to `workspace` (and the
/// `additional` directories, writable beside it), and the `.git` it seals when
/// the workspace has none (removed again after the run).
fn jail(
    confinement: Confinement,
    workspace: &Path,
    additional: &[PathBuf],
) -> (Jail, Option<PathBuf>) {
    let view = if confinement.read_only {
        View::ReadOnly
    } else {
        View::Writable
    };
    let mut jail = Jail::new(view)
        .writable(workspace)
        .chdir(workspace)
        .network(!confinement.no_network);
    if confinement.read_only {
        jail = jail.private_tmp();
    }
    let repo = repo_dirs(workspace);
    let mut sealed = None;
    if confinement.git_writable {
        for dir in repo.linked.iter().filter(|d| !d.starts_with(workspace)) {
            jail = jail.also_writable(dir);
        }
    } else if repo.exists && !is_empty_dir(&repo.entry) {
        jail = jail.read_only(&repo.entry);
        for dir in &repo.linked {
            jail = jail.read_only(dir);
        }
    } else {
        jail = jail.sealed(&repo.entry);
        sealed = Some(repo.entry);
    }
    for dir in additional {
        jail = jail.also_writable(dir);
        // Their git data stays read-only like the workspace's: hooks and
        // configuration there run code on the next git command.
        let repo = repo_dirs(dir);
        if !confinement.git_writable && repo.exists {
            jail = jail.read_only(&repo.entry);
            for linked in &repo.linked {
                jail = jail.read_only(linked);
            }
        }
    }
    (jail, sealed)
}

/// Whether `path` is an empty directory (another run's sealed mount point, or
/// no repository at all): it is sealed again rather than bound, since it may go.
fn is_empty_dir(path: &Path) -> bool {
    std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

/// A run's hold on a sealed `.git` mount point: a shared lock on the workspace
/// directory itself, so that no run, in this process or another on the same
/// workspace, removes the mount point while another still needs it.
struct SealHold {
    lock: std::fs::File,
    path: PathBuf,
}

impl SealHold {
    /// Takes a shared hold on `path`'s directory and makes the mount point.
    fn take(path: PathBuf) -> Option<Self> {
        let lock = std::fs::File::open(path.parent()?).ok()?;
        lock.lock_shared().ok()?;
        let _ = std::fs::create_dir(&path);
        Some(Self { lock, path })
    }

    /// Lets the hold go, and removes the empty mount point when no other run
    /// holds it.
    fn release(self) {
        let _ = self.lock.unlock();
        if self.lock.try_lock().is_ok() {
            if is_empty_dir(&self.path) {
                let _ = std::fs::remove_dir(&self.path);
            }
            let _ = self.lock.unlock();
        }
    }
}

/// The environment of a confined command: temporary files go to its private
/// `/tmp` when the rest of the machine is read-only.
fn confined_env(cmd: &CommandRun) -> Vec<(String, String)> {
    let mut env = cmd.env.clone();
    if cmd.confinement.read_only {
        env.retain(|(k, _)| !matches!(k.as_str(), "TMPDIR" | "TMP" | "TEMP"));
        env.push(("TMPDIR".into(), "/tmp".into()));
    }
    env
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
    run_with_roots(cmd, &[], cancel).await
}

/// [`run`] for a session that was granted `additional` directories (canonical)
/// beside its workspace: a confined command may write them too, their `.git`
/// read-only unless the confinement makes git writable. Unconfined, the command
/// still starts in the workspace.
pub async fn run_with_roots(
    cmd: &CommandRun,
    additional: &[PathBuf],
    cancel: &CancellationToken,
) -> Result<CommandOutcome, SandboxError> {
    let (program, args, sealed) = if cmd.confinement.is_needed() {
        let bwrap = bwrap_path().ok_or(SandboxError::BwrapMissing)?;
        let (jail, sealed) = jail(cmd.confinement, &cmd.workspace, additional);
        let mut args = jail.args();
        args.push(cmd.program.clone().into());
        args.extend(cmd.args.iter().map(OsString::from));
        (bwrap, args, sealed)
    } else {
        (
            PathBuf::from(&cmd.program),
            cmd.args.iter().map(OsString::from).collect(),
            None,
        )
    };
    let hold = sealed.and_then(SealHold::take);
    let outcome = run_spawned(cmd, program, args, cancel).await;
    if let Some(hold) = hold {
        hold.release();
    }
    outcome
}

/// Spawns the (possibly wrapped) command and waits for its end.
async fn run_spawned(
    cmd: &CommandRun,
    program: PathBuf,
    args: Vec<OsString>,
    cancel: &CancellationToken,
) -> Result<CommandOutcome, SandboxError> {
    let spec = Spec::new(program)
        .args(args)
        .env(&confined_env(cmd))
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
            Confinement::none(),
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
            Confinement::none(),
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
        let no_net = Confinement::default();
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
        cmd.confinement = Confinement::none();
        let out = run(&cmd, &CancellationToken::new()).await.expect("runs");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("connected"),
            "the check itself works"
        );
    }

    #[tokio::test]
    async fn the_default_keeps_git_data_read_only_and_tmp_private() {
        if bwrap_path().is_none() {
            return; // the refusal without bubblewrap is the test above
        }
        let dir = tempfile::tempdir().expect("dir");
        let ws = dir.path().canonicalize().expect("canon");
        std::fs::create_dir_all(ws.join(".git/hooks")).expect("git dir");
        let script = "echo code > src.txt && echo ok-src; \
             (echo evil > .git/hooks/post-commit) 2>/dev/null || echo hooks-refused; \
             (echo '[core]' >> .git/config) 2>/dev/null || echo config-refused; \
             mkdir -p target && echo built > target/out && echo ok-target; \
             echo t > /tmp/scratch && cat /tmp/scratch; echo \"$TMPDIR\"";
        let mut cmd = sh(script, &ws, Confinement::default(), Duration::from_secs(30));
        cmd.env.push(("TMPDIR".into(), "/var/somewhere".into()));
        let out = run(&cmd, &CancellationToken::new()).await.expect("runs");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "ok-src\nhooks-refused\nconfig-refused\nok-target\nt\n/tmp\n"
        );
        assert!(!ws.join(".git/hooks/post-commit").exists());
        assert!(!ws.join(".git/config").exists());
        // A task that allows it may write there.
        let mut cmd = sh(
            "echo allowed > .git/hooks/post-commit",
            &ws,
            Confinement {
                git_writable: true,
                ..Confinement::default()
            },
            Duration::from_secs(30),
        );
        cmd.env.clear();
        let out = run(&cmd, &CancellationToken::new()).await.expect("runs");
        assert_eq!(out.exit.and_then(|e| e.code), Some(0), "{out:?}");
        assert!(ws.join(".git/hooks/post-commit").exists());
    }

    #[tokio::test]
    async fn a_workspace_without_git_data_cannot_grow_any_and_is_left_as_it_was() {
        if bwrap_path().is_none() {
            return;
        }
        let dir = tempfile::tempdir().expect("dir");
        let ws = dir.path().canonicalize().expect("canon");
        let script = "(mkdir -p .git/hooks && echo x > .git/config) 2>/dev/null || echo sealed; \
             git init -q . 2>/dev/null || echo init-refused";
        let cmd = sh(script, &ws, Confinement::default(), Duration::from_secs(30));
        let out = run(&cmd, &CancellationToken::new()).await.expect("runs");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "sealed\ninit-refused\n"
        );
        assert!(!ws.join(".git").exists(), "the mount point is removed");
    }
}
