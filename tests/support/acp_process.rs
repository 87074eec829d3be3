//! The `hecate acp` process under test: spawning it in its own process group
//! with its stdout lines recorded, the SDK transport over its pipes, a line-level
//! client for wire tests, and process-table helpers that prove no agent outlives it.

use super::common::Home;
use agent_client_protocol::Lines;
use futures::{Sink, Stream};
use serde_json::Value;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// Upper bound for any single step (never a timing assertion: only a hang guard).
pub const STEP: Duration = Duration::from_secs(60);

/// A running `hecate acp`, in its own process group (killed on drop), with its
/// stdout lines and stderr recorded.
pub struct Hecate {
    child: Child,
    pid: u32,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<String>>,
}

impl Drop for Hecate {
    fn drop(&mut self) {
        kill_group(self.pid);
        let _ = self.child.start_kill();
    }
}

/// The SDK transport over hecate's pipes, recording stdout lines.
pub type Transport = Lines<
    std::pin::Pin<Box<dyn Sink<String, Error = std::io::Error> + Send>>,
    std::pin::Pin<Box<dyn Stream<Item = std::io::Result<String>> + Send>>,
>;

impl Hecate {
    /// Spawns `hecate <pre_args> acp <args>` with `home`'s environment plus `env`.
    pub fn spawn_raw(
        home: &Home,
        pre_args: &[&str],
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (Self, ChildStdin, ChildStdout) {
        let mut all: Vec<&str> = pre_args.to_vec();
        all.push("acp");
        all.extend_from_slice(args);
        let mut cmd = home.cmd(&all);
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut cmd = tokio::process::Command::from(cmd);
        cmd.process_group(0).kill_on_drop(true);
        let mut child = cmd.spawn().expect("spawn hecate acp");
        let pid = child.id().expect("pid");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let stderr_pipe = child.stderr.take().expect("stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut lines = BufReader::new(stderr_pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut s = sink.lock().expect("stderr");
                s.push_str(&line);
                s.push('\n');
            }
        });
        let h = Self {
            child,
            pid,
            stdout: Arc::new(Mutex::new(Vec::new())),
            stderr,
        };
        (h, stdin, stdout)
    }

    /// Spawns `hecate acp <args>` and returns the SDK transport over its pipes.
    pub fn spawn(home: &Home, args: &[&str]) -> (Self, Transport) {
        Self::spawn_with(home, &[], args, &[])
    }

    /// Like [`Hecate::spawn`] with global flags before `acp` and extra environment.
    pub fn spawn_with(
        home: &Home,
        pre_args: &[&str],
        args: &[&str],
        env: &[(&str, &str)],
    ) -> (Self, Transport) {
        let (h, stdin, stdout) = Self::spawn_raw(home, pre_args, args, env);
        let t = transport(stdin, stdout, h.stdout.clone());
        (h, t)
    }

    /// The process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Every stdout line so far.
    pub fn stdout_lines(&self) -> Vec<String> {
        self.stdout.lock().expect("stdout").clone()
    }

    /// Everything written to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr").clone()
    }

    /// Waits for the process to exit and returns its exit code.
    pub async fn exit_code(&mut self) -> Option<i32> {
        let status = tokio::time::timeout(STEP, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("hecate acp did not exit; stderr:\n{}", self.stderr()))
            .expect("wait");
        status.code()
    }
}

/// The SDK transport over a child's pipes; every stdout line is also pushed to `record`.
pub fn transport(
    stdin: ChildStdin,
    stdout: ChildStdout,
    record: Arc<Mutex<Vec<String>>>,
) -> Transport {
    let incoming = BufReader::new(stdout).lines();
    let incoming = futures::stream::unfold(incoming, move |mut lines| {
        let record = record.clone();
        async move {
            match lines.next_line().await {
                Ok(Some(l)) => {
                    record.lock().expect("stdout").push(l.clone());
                    Some((Ok(l), lines))
                }
                Ok(None) => None,
                Err(e) => Some((Err(e), lines)),
            }
        }
    });
    let outgoing = futures::sink::unfold(stdin, async |mut w, line: String| {
        w.write_all(format!("{line}\n").as_bytes()).await?;
        w.flush().await?;
        Ok::<_, std::io::Error>(w)
    });
    Lines::new(Box::pin(outgoing), Box::pin(incoming))
}

/// Kills a whole process group (best effort).
pub fn kill_group(pgid: u32) {
    // SAFETY: kill(2) has no memory-safety preconditions.
    unsafe {
        libc::kill(-(pgid as i32), libc::SIGKILL);
    }
}

/// `(pid, ppid, pgid)` of every process.
fn processes() -> Vec<(u32, u32, u32)> {
    let mut out = Vec::new();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // "pid (comm) state ppid pgrp ..."; comm may contain spaces and parens.
        let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 2
            && f[0] != "Z"
            && let (Ok(ppid), Ok(pgid)) = (f[1].parse(), f[2].parse())
        {
            out.push((pid, ppid, pgid));
        }
    }
    out
}

/// Every live process in the process groups led by children of `parent`.
pub fn descendants_groups(parent: u32) -> Vec<u32> {
    let all = processes();
    let groups: Vec<u32> = all
        .iter()
        .filter(|(_, ppid, _)| *ppid == parent)
        .map(|(pid, _, _)| *pid)
        .collect();
    all.iter()
        .filter(|(_, _, pgid)| groups.contains(pgid))
        .map(|(pid, _, _)| *pid)
        .collect()
}

/// Waits until none of `pids` is alive (zombies count as gone).
pub async fn wait_gone(pids: &[u32]) {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let live: Vec<u32> = processes()
            .iter()
            .map(|(p, _, _)| *p)
            .filter(|p| pids.contains(p))
            .collect();
        if live.is_empty() {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "processes {live:?} outlived hecate"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A line-level client for wire tests: write raw lines, read parsed frames.
pub struct Wire {
    stdin: Option<ChildStdin>,
    lines: tokio::io::Lines<BufReader<ChildStdout>>,
    /// Every line read.
    pub seen: Vec<String>,
}

impl Wire {
    /// Wraps hecate's pipes.
    pub fn new(stdin: ChildStdin, stdout: ChildStdout) -> Self {
        Self {
            stdin: Some(stdin),
            lines: BufReader::new(stdout).lines(),
            seen: Vec::new(),
        }
    }

    /// Writes one line (a newline is added).
    pub async fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin
            .write_all(format!("{line}\n").as_bytes())
            .await
            .expect("write");
        stdin.flush().await.expect("flush");
    }

    /// Writes one JSON value as a line.
    pub async fn send_json(&mut self, v: Value) {
        self.send(&v.to_string()).await;
    }

    /// Reads the next frame (every stdout line must be a JSON object).
    pub async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(STEP, self.lines.next_line())
            .await
            .expect("a frame in time")
            .expect("read")
            .expect("stdout open");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        self.seen.push(line);
        v
    }

    /// Reads frames until the response with `id`, answering nothing; returns it
    /// and the notifications before it.
    pub async fn response(&mut self, id: Value) -> (Value, Vec<Value>) {
        let mut notes = Vec::new();
        loop {
            let v = self.recv().await;
            if v.get("method").is_none() && v["id"] == id {
                return (v, notes);
            }
            notes.push(v);
        }
    }

    /// Closes stdin (EOF for hecate).
    pub fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Remaining stdout lines until EOF.
    pub async fn rest(&mut self) -> Vec<String> {
        let mut out = Vec::new();
        while let Ok(Ok(Some(l))) = tokio::time::timeout(STEP, self.lines.next_line()).await {
            out.push(l);
        }
        out
    }
}
