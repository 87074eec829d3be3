//! The watchdog: a tiny helper process that kills Hecate's process groups when
//! Hecate dies without cleaning up (SIGKILL, OOM killer, a panic with
//! `panic = abort`). `PR_SET_PDEATHSIG` reaches only a direct child; an agent's
//! grandchild is reparented to PID 1 and would live on.
//!
//! At the first supervised spawn, Hecate re-executes its own binary with the
//! hidden argument [`HELPER_ARG`] (a fork without exec is unsound once tokio
//! threads exist). The helper runs in its own process group (a Ctrl-C meant for
//! Hecate does not reach it), with `/` as its working directory, an empty
//! environment and stdout on `/dev/null` (stdout is protocol frames in
//! `hecate acp` and `hecate mcp`). Hecate holds the only write end of the pipe on
//! the helper's stdin (close-on-exec, so no other child inherits it) and writes
//! `+PGID` when a group starts and `-PGID` when it ends. When the pipe reaches
//! end of file, whatever the reason, Hecate is gone: the helper SIGKILLs every
//! group still registered and exits. A read error is treated the same way, so
//! the helper never lingers without a job. If the helper dies while Hecate runs,
//! the next write fails and Hecate starts a new one with every live group.
//!
//! `PR_SET_CHILD_SUBREAPER` would not help (orphans go to the subreaper, which
//! here is Hecate itself, the process that died); cgroups would contain even
//! processes that leave the group with `setsid()`, but need a delegated cgroup
//! subtree that Hecate cannot count on. A grandchild that moves itself into a
//! new process group or session escapes this watchdog too.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The hidden first argument that makes the `hecate` binary run [`run_helper`].
pub const HELPER_ARG: &str = "__process-watchdog";

/// How often Hecate (re)starts a helper before giving up on the watchdog.
const MAX_STARTS: u32 = 4;

#[derive(Debug, Default)]
struct Client {
    program: Option<PathBuf>,
    helper: Option<(Child, ChildStdin)>,
    groups: HashSet<i32>,
    starts: u32,
}

fn client() -> MutexGuard<'static, Client> {
    static CLIENT: OnceLock<Mutex<Client>> = OnceLock::new();
    CLIENT
        .get_or_init(|| Mutex::new(Client::default()))
        .lock()
        .unwrap_or_else(|p| p.into_inner())
}

/// Lets this process start the watchdog from `program`, an executable that runs
/// [`run_helper`] when its first argument is [`HELPER_ARG`]. Without this call
/// (the library in tests, other embedders) no watchdog runs, and the parent-death
/// signal and drop are the only guards.
pub fn enable(program: PathBuf) {
    client().program = Some(program);
}

/// Registers a live process group (starting the helper on first use).
pub(super) fn register(pgid: i32) {
    let mut c = client();
    if c.program.is_none() {
        return;
    }
    c.groups.insert(pgid);
    c.send(&format!("+{pgid}\n"));
}

/// Forgets a process group that ended or was killed.
pub(super) fn unregister(pgid: i32) {
    let mut c = client();
    if c.groups.remove(&pgid) {
        c.send(&format!("-{pgid}\n"));
    }
}

impl Client {
    fn send(&mut self, line: &str) {
        if let Some((_, stdin)) = &mut self.helper
            && stdin.write_all(line.as_bytes()).is_ok()
        {
            return;
        }
        // No helper yet, or it died: start one and hand it every live group.
        self.stop_helper();
        let Some((child, mut stdin)) = self.start_helper() else {
            return;
        };
        let all: String = self.groups.iter().map(|g| format!("+{g}\n")).collect();
        match stdin.write_all(all.as_bytes()) {
            Ok(()) => self.helper = Some((child, stdin)),
            Err(e) => {
                tracing::warn!(error = %e, "the process watchdog did not take its groups");
                self.helper = Some((child, stdin));
                self.stop_helper();
            }
        }
    }

    fn start_helper(&mut self) -> Option<(Child, ChildStdin)> {
        if self.starts >= MAX_STARTS {
            if self.starts == MAX_STARTS {
                self.starts += 1;
                tracing::warn!(
                    "the process watchdog keeps dying; children may outlive a killed Hecate"
                );
            }
            return None;
        }
        self.starts += 1;
        let program = self.program.as_ref()?;
        let spawned = Command::new(program)
            .arg0("hecate")
            .arg(HELPER_ARG)
            .env_clear()
            .current_dir("/")
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn();
        match spawned {
            Ok(mut child) => match child.stdin.take() {
                Some(stdin) => Some((child, stdin)),
                None => {
                    let _ = child.kill();
                    let _ = child.wait();
                    None
                }
            },
            Err(e) => {
                tracing::warn!(error = %e, "cannot start the process watchdog");
                None
            }
        }
    }

    fn stop_helper(&mut self) {
        if let Some((mut child, stdin)) = self.helper.take() {
            drop(stdin);
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The watchdog's loop: reads `+PGID` / `-PGID` lines from `input` until end of
/// file or an error, then SIGKILLs every group still registered. Returns how
/// many groups it signalled. Malformed lines are ignored.
pub fn watch(input: impl Read) -> usize {
    let mut groups: HashSet<i32> = HashSet::new();
    for line in BufReader::new(input).split(b'\n') {
        let Ok(line) = line else { break };
        let Ok(text) = std::str::from_utf8(&line) else {
            continue;
        };
        let (op, id) = text.trim().split_at_checked(1).unwrap_or(("", ""));
        let Some(pgid) = id.parse::<i32>().ok().filter(|p| *p > 1) else {
            continue;
        };
        match op {
            "+" => {
                groups.insert(pgid);
            }
            "-" => {
                groups.remove(&pgid);
            }
            _ => {}
        }
    }
    for pgid in &groups {
        // SAFETY: kill(2) takes plain integers; `-pgid` (> 1) names one process
        // group Hecate registered and never unregistered.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
    groups.len()
}

/// The helper process's whole life: watch stdin, kill what is left, exit 0.
/// Writes nothing to stdout.
pub fn run_helper() -> i32 {
    watch(std::io::stdin().lock());
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::process::pid_is_running;
    use crate::adapters::process::tests::wait_gone;
    use crate::adapters::process::{ChildProcess, Pipe, Spec, Stderr};
    use tokio::io::AsyncBufReadExt;

    /// A group whose leader waits on a background `sleep`; returns the leader and
    /// the sleep's pid.
    async fn group_with_grandchild() -> (ChildProcess, u32) {
        let spec = Spec::new("/bin/sh")
            .args(["-c", "sleep 1000 & echo $!; wait"])
            .env(&[("PATH".to_string(), "/usr/bin:/bin".to_string())])
            .stdout(Pipe::Piped)
            .stderr(Stderr::Null);
        let (child, pipes) = ChildProcess::spawn(&spec).expect("spawn");
        let stdout = pipes.stdout.expect("stdout");
        let mut line = String::new();
        tokio::io::BufReader::new(stdout)
            .read_line(&mut line)
            .await
            .expect("read pid");
        let pid = line.trim().parse().expect("pid");
        (child, pid)
    }

    #[tokio::test]
    async fn end_of_input_kills_every_registered_group_and_spares_the_rest() {
        let (kept, kept_grandchild) = group_with_grandchild().await;
        let (doomed, doomed_grandchild) = group_with_grandchild().await;
        let input = format!(
            "+{d}\n+{k}\nnonsense\n+1\n-{k}\n",
            d = doomed.pid(),
            k = kept.pid()
        );
        assert_eq!(watch(input.as_bytes()), 1);
        assert!(
            wait_gone(doomed_grandchild).await,
            "registered group killed"
        );
        assert!(pid_is_running(kept_grandchild), "unregistered group spared");
        drop(kept);
        assert!(wait_gone(kept_grandchild).await);
    }
}
