//! Terminals the agent asks for (`terminal/*`): commands run on a PTY inside the
//! workspace with the agent's sanitized environment, output kept up to a byte
//! limit (truncated from the front on a UTF-8 boundary), killed on release and on
//! connection shutdown.
//!
//! portable-pty forks the command itself: it calls `setsid()` (a new session and
//! process group led by the command, with the PTY as controlling terminal), so
//! Hecate cannot add `PR_SET_PDEATHSIG` there. The group is owned by a
//! [`ProcessGroup`]: SIGKILLed as a whole on kill, release, connection shutdown
//! and drop (also after the command itself exited, for what it left in the
//! background), and registered with the process watchdog, which kills it if
//! Hecate dies. The kernel adds one more guard: when Hecate dies the PTY master
//! closes and the session's foreground group gets SIGHUP. What no guard covers: a
//! process that moves itself into another group or session (`setsid`, a shell's
//! job control) — only a cgroup could hold those.
//!
//! When the configuration asks for a sandbox (`terminal_sandbox.rs`), the PTY
//! runs bubblewrap with the command inside; bubblewrap leads the group and keeps
//! the PTY as controlling terminal, and its PID namespace ends everything the
//! command started once it dies. A sandbox that cannot be built refuses the
//! terminal; it is never run unconfined instead.

use crate::adapters::acp::services::terminal_sandbox::TerminalSandbox;
use crate::adapters::process::ProcessGroup;
use crate::adapters::sandbox::paths::confine_roots;
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, TerminalExitStatus, TerminalOutputResponse,
};
use agent_client_protocol::{Error as RpcError, ErrorCode};
use portable_pty::{ChildKiller, CommandBuilder, MasterPty, PtySize, native_pty_system};
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{OnceCell, watch};

/// Output kept when the agent names no limit.
pub const DEFAULT_OUTPUT_LIMIT: usize = 1024 * 1024;
const READER_GRACE: Duration = Duration::from_millis(500);

#[derive(Debug, Default)]
struct Output {
    data: Vec<u8>,
    limit: usize,
    truncated: bool,
}

impl Output {
    fn push(&mut self, bytes: &[u8]) {
        self.data.extend_from_slice(bytes);
        if self.data.len() > self.limit {
            let mut cut = self.data.len() - self.limit;
            while cut < self.data.len() && (self.data[cut] & 0xC0) == 0x80 {
                cut += 1;
            }
            self.data.drain(..cut);
            self.truncated = true;
        }
    }
}

/// How a terminal's command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Exit {
    code: Option<u32>,
    signal: Option<String>,
}

impl Exit {
    fn to_acp(&self) -> TerminalExitStatus {
        TerminalExitStatus::new()
            .exit_code(self.code)
            .signal(self.signal.clone())
    }
}

struct Terminal {
    output: Arc<Mutex<Output>>,
    exit: watch::Receiver<Option<Exit>>,
    group: Option<ProcessGroup>,
    killer: Mutex<Box<dyn ChildKiller + Send + Sync>>,
    _master: Mutex<Box<dyn MasterPty + Send>>,
}

impl Terminal {
    /// Kills the command's whole group, including what it left running in the
    /// background after it exited.
    fn kill(&self) {
        match &self.group {
            Some(group) => group.kill(),
            None => {
                if self.exit.borrow().is_none()
                    && let Ok(mut k) = self.killer.lock()
                {
                    let _ = k.kill();
                }
            }
        }
    }
}

fn not_found(id: &str) -> RpcError {
    RpcError::new(ErrorCode::INVALID_PARAMS, format!("unknown terminal {id}"))
        .data(serde_json::json!({ "terminalId": id, "reason": "unknown terminal" }))
}

fn internal(message: String) -> RpcError {
    RpcError::new(ErrorCode::INTERNAL_ERROR, message)
}

/// A connection's terminals, by id, and the sandbox they run in.
#[derive(Default)]
pub(crate) struct Terminals {
    map: Mutex<HashMap<String, Arc<Terminal>>>,
    sandbox: TerminalSandbox,
    /// The bubblewrap binary once a trial sandbox worked (a failed trial is
    /// tried again on the next terminal).
    bwrap: OnceCell<PathBuf>,
}

impl Terminals {
    /// No terminals yet; each will run in `sandbox`.
    pub(crate) fn new(sandbox: TerminalSandbox) -> Self {
        Self {
            map: Mutex::default(),
            sandbox,
            bwrap: OnceCell::new(),
        }
    }

    /// Whether terminals run under bubblewrap (then Hecate serves them itself,
    /// never an editor, whose terminals it cannot confine).
    pub(crate) fn confined(&self) -> bool {
        self.sandbox.is_on()
    }

    /// The bubblewrap binary when terminals are confined, after a trial sandbox
    /// worked; the ACP error names the fix when it cannot.
    async fn bwrap(&self) -> Result<Option<PathBuf>, RpcError> {
        if !self.sandbox.is_on() {
            return Ok(None);
        }
        let bwrap = self
            .bwrap
            .get_or_try_init(|| self.sandbox.check())
            .await
            .map_err(|e| {
                tracing::error!("refusing an agent terminal: {e}");
                RpcError::new(ErrorCode::INTERNAL_ERROR, e.to_string()).data(serde_json::json!({
                    "reason": "terminal_sandbox_unavailable",
                    "setting": e.setting,
                    "cause": e.cause.to_string(),
                    "fix": e.fix(),
                }))
            })?;
        Ok(Some(bwrap.clone()))
    }

    fn get(&self, id: &str) -> Result<Arc<Terminal>, RpcError> {
        self.map
            .lock()
            .ok()
            .and_then(|m| m.get(id).cloned())
            .ok_or_else(|| not_found(id))
    }

    /// Starts the requested command (inside the sandbox when one is
    /// configured, with the workspace and the `additional` directories
    /// writable); its working directory may be in either. Returns the new
    /// terminal's id.
    pub(crate) async fn create(
        &self,
        req: &CreateTerminalRequest,
        workspace: &Path,
        additional: &[PathBuf],
        base_env: &[(String, String)],
    ) -> Result<String, RpcError> {
        let bwrap = self.bwrap().await?;
        let cwd = match &req.cwd {
            Some(c) => {
                confine_roots(workspace, additional, c)
                    .map_err(|r| {
                        RpcError::new(
                            ErrorCode::INVALID_PARAMS,
                            format!("terminal cwd {} rejected: {}", r.path, r.reason),
                        )
                        .data(serde_json::json!({ "path": r.path, "reason": r.reason }))
                    })?
                    .real
            }
            None => workspace.to_path_buf(),
        };
        if !cwd.is_dir() {
            return Err(RpcError::new(
                ErrorCode::INVALID_PARAMS,
                format!("terminal cwd {} is not a directory", cwd.display()),
            ));
        }
        let mut env: Vec<(String, String)> = base_env.to_vec();
        for var in &req.env {
            env.retain(|(k, _)| *k != var.name);
            env.push((var.name.clone(), var.value.clone()));
        }
        let argv: Vec<OsString> =
            if req.args.is_empty() && req.command.contains(char::is_whitespace) {
                vec!["sh".into(), "-c".into(), req.command.clone().into()]
            } else {
                std::iter::once(OsString::from(&req.command))
                    .chain(req.args.iter().map(OsString::from))
                    .collect()
            };
        let argv = match &bwrap {
            Some(bwrap) => {
                let home = env
                    .iter()
                    .find(|(k, _)| k == "HOME")
                    .map(|(_, v)| Path::new(v));
                let jail = self.sandbox.jail(workspace, additional, &cwd, home);
                std::iter::once(bwrap.clone().into_os_string())
                    .chain(jail.args())
                    .chain(argv)
                    .collect()
            }
            None => argv,
        };
        let mut cmd = CommandBuilder::from_argv(argv);
        cmd.env_clear();
        for (k, v) in &env {
            cmd.env(k, v);
        }
        cmd.cwd(&cwd);
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 40,
                cols: 200,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| internal(format!("openpty failed: {e}")))?;
        let mut child = pair
            .slave
            .spawn_command(cmd)
            .map_err(|e| internal(format!("cannot start {}: {e}", req.command)))?;
        drop(pair.slave);
        let reader = pair
            .master
            .try_clone_reader()
            .map_err(|e| internal(format!("pty reader: {e}")))?;
        let limit = req
            .output_byte_limit
            .and_then(|l| usize::try_from(l).ok())
            .unwrap_or(DEFAULT_OUTPUT_LIMIT);
        let output = Arc::new(Mutex::new(Output {
            limit,
            ..Output::default()
        }));
        let (reader_done_tx, reader_done_rx) = std::sync::mpsc::channel::<()>();
        let out = output.clone();
        std::thread::spawn(move || read_pty(reader, out, reader_done_tx));
        let (exit_tx, exit_rx) = watch::channel(None);
        // The PTY child called setsid(): its pid is its process group id.
        let group = child.process_id().and_then(ProcessGroup::adopt);
        let killer = child.clone_killer();
        std::thread::spawn(move || {
            let exit = match child.wait() {
                Ok(s) => match s.signal() {
                    Some(sig) => Exit {
                        code: None,
                        signal: Some(sig.to_string()),
                    },
                    None => Exit {
                        code: Some(s.exit_code()),
                        signal: None,
                    },
                },
                Err(_) => Exit {
                    code: None,
                    signal: None,
                },
            };
            // Let the reader collect what the command wrote last.
            let _ = reader_done_rx.recv_timeout(READER_GRACE);
            let _ = exit_tx.send(Some(exit));
        });
        let id = format!("term_{}", uuid::Uuid::new_v4().simple());
        let terminal = Arc::new(Terminal {
            output,
            exit: exit_rx,
            group,
            killer: Mutex::new(killer),
            _master: Mutex::new(pair.master),
        });
        if let Ok(mut m) = self.map.lock() {
            m.insert(id.clone(), terminal);
        }
        Ok(id)
    }

    /// The output so far, whether it was truncated, and the exit status once exited.
    pub(crate) fn output(&self, id: &str) -> Result<TerminalOutputResponse, RpcError> {
        let t = self.get(id)?;
        let (text, truncated) = match t.output.lock() {
            Ok(o) => (String::from_utf8_lossy(&o.data).into_owned(), o.truncated),
            Err(_) => (String::new(), false),
        };
        let exit = t.exit.borrow().clone();
        Ok(TerminalOutputResponse::new(text, truncated).exit_status(exit.map(|e| e.to_acp())))
    }

    /// Waits until the command exits.
    pub(crate) async fn wait_for_exit(&self, id: &str) -> Result<TerminalExitStatus, RpcError> {
        let t = self.get(id)?;
        let mut rx = t.exit.clone();
        let exit = rx
            .wait_for(Option::is_some)
            .await
            .map(|v| v.clone())
            .ok()
            .flatten()
            .unwrap_or(Exit {
                code: None,
                signal: None,
            });
        Ok(exit.to_acp())
    }

    /// Kills the command; the terminal stays readable.
    pub(crate) fn kill(&self, id: &str) -> Result<(), RpcError> {
        self.get(id)?.kill();
        Ok(())
    }

    /// Kills the command if it still runs and forgets the terminal.
    pub(crate) fn release(&self, id: &str) -> Result<(), RpcError> {
        let t = self
            .map
            .lock()
            .ok()
            .and_then(|mut m| m.remove(id))
            .ok_or_else(|| not_found(id))?;
        t.kill();
        Ok(())
    }

    /// Kills every terminal (connection shutdown).
    pub(crate) fn kill_all(&self) {
        let all: Vec<Arc<Terminal>> = match self.map.lock() {
            Ok(mut m) => m.drain().map(|(_, t)| t).collect(),
            Err(_) => return,
        };
        for t in all {
            t.kill();
        }
    }
}

impl Drop for Terminals {
    fn drop(&mut self) {
        self.kill_all();
    }
}

fn read_pty(
    mut reader: Box<dyn Read + Send>,
    output: Arc<Mutex<Output>>,
    done: std::sync::mpsc::Sender<()>,
) {
    let mut buf = [0u8; 8192];
    loop {
        match reader.read(&mut buf) {
            // EOF, or EIO once the last slave fd closes (normal on Linux).
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if let Ok(mut o) = output.lock() {
                    o.push(&buf[..n]);
                }
            }
        }
    }
    let _ = done.send(());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_truncates_from_the_front_on_char_boundaries() {
        let mut o = Output {
            limit: 5,
            ..Output::default()
        };
        o.push("ab".as_bytes());
        assert!(!o.truncated);
        o.push("cdéf".as_bytes());
        assert!(o.truncated);
        assert!(o.data.len() <= 5);
        let s = String::from_utf8(o.data.clone()).expect("valid utf-8");
        assert!(s.ends_with("éf"), "{s}");
        o.push("€€".as_bytes());
        let s = String::from_utf8(o.data.clone()).expect("valid utf-8");
        assert_eq!(s, "€");
    }

    fn alive(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            !s.rsplit_once(") ")
                .is_some_and(|(_, rest)| rest.starts_with('Z'))
        })
    }

    #[tokio::test]
    async fn a_confined_terminal_is_killed_as_a_group_through_bubblewrap() {
        use crate::adapters::acp::services::terminal_sandbox::SandboxMode;
        let dir = tempfile::tempdir().expect("workspace");
        let ws = std::fs::canonicalize(dir.path()).expect("canonical");
        let sandbox = TerminalSandbox {
            mode: SandboxMode::WorkspaceOnly,
            network: false,
            bwrap: None,
        };
        if sandbox.check().await.is_err() {
            // The test command installs bubblewrap; without it the refusal is
            // what there is to see.
            let terminals = Terminals::new(sandbox);
            let req = CreateTerminalRequest::new("sess", "true");
            let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
            assert!(terminals.create(&req, &ws, &[], &env).await.is_err());
            return;
        }
        let terminals = Terminals::new(sandbox);
        let mut req = CreateTerminalRequest::new("sess", "sh");
        req.args = vec!["-c".into(), "sleep 1000 & echo started; wait".into()];
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let id = terminals
            .create(&req, &ws, &[], &env)
            .await
            .expect("create");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !terminals
            .output(&id)
            .expect("output")
            .output
            .contains("started")
        {
            assert!(std::time::Instant::now() < deadline, "never started");
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let pgid = terminals
            .get(&id)
            .expect("terminal")
            .group
            .as_ref()
            .expect("group")
            .id() as i32;
        terminals.kill(&id).expect("kill");
        let exit = terminals.wait_for_exit(&id).await.expect("exit");
        assert!(exit.signal.is_some(), "killed: {exit:?}");
        // SAFETY: kill(2) with signal 0 sends nothing; it asks whether the group
        // this test started still has a process.
        let group_alive = || unsafe { libc::kill(-pgid, 0) } == 0;
        while group_alive() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(
            !group_alive(),
            "the sleep inside the sandbox outlived the kill"
        );
        terminals.release(&id).expect("release");
    }

    #[tokio::test]
    async fn releasing_a_finished_terminal_kills_what_it_left_in_the_background() {
        let ws = tempfile::tempdir().expect("workspace");
        let terminals = Terminals::default();
        let mut req = CreateTerminalRequest::new("sess", "sh");
        // Ignoring SIGHUP, the background sleep survives its shell's exit.
        req.args = vec!["-c".into(), "trap '' HUP; sleep 1000 & echo $!".into()];
        let env = vec![("PATH".to_string(), "/usr/bin:/bin".to_string())];
        let id = terminals
            .create(&req, ws.path(), &[], &env)
            .await
            .expect("create");
        terminals.wait_for_exit(&id).await.expect("exit");
        let out = terminals.output(&id).expect("output").output;
        let pid: u32 = out.trim().parse().expect("the background pid");
        assert!(alive(pid), "sleep {pid} runs after its shell exited");
        terminals.release(&id).expect("release");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while alive(pid) && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        let survived = alive(pid);
        if survived {
            // SAFETY: kill(2) has no memory-safety preconditions; `pid` is the
            // sleep this test started.
            unsafe {
                libc::kill(pid as i32, libc::SIGKILL);
            }
        }
        assert!(!survived, "sleep {pid} outlived its released terminal");
    }
}
