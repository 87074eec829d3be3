//! Child processes: running one to completion under a hang guard, and whether a
//! pid is still alive.

use std::io::{Read as _, Write as _};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `cmd` with `input` on stdin to completion, killing it (and failing)
/// after `limit`.
pub fn run_within(mut cmd: Command, input: &[u8], limit: Duration) -> Output {
    let program = cmd.get_program().to_string_lossy().into_owned();
    let child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn {program}: {e}"));
    finish_within(child, input, limit)
}

/// Writes `input` to a spawned child's stdin (if piped), then collects its
/// output, killing it (and failing) after `limit`. Stdout and stderr must be
/// piped.
pub fn finish_within(mut child: Child, input: &[u8], limit: Duration) -> Output {
    if let Some(mut stdin) = child.stdin.take() {
        // The process may never read: a closed pipe is fine.
        let _ = stdin.write_all(input);
    }
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let status = child.wait().expect("wait");
            let stderr = err_reader.join().unwrap_or_default();
            panic!(
                "process {} did not finish within {limit:?} ({status}); stderr:\n{}",
                child.id(),
                String::from_utf8_lossy(&stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    }
}

/// Whether a process with `pid` runs (zombies and dead ones count as gone): the
/// library's own check, so the tests judge liveness the way Hecate does.
pub fn process_alive(pid: impl Into<i64>) -> bool {
    u32::try_from(pid.into()).is_ok_and(hecate::adapters::process::pid_is_running)
}

/// The command line of `pid`, arguments joined by spaces (empty when it is gone).
pub fn cmdline(pid: u32) -> String {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|b| String::from_utf8_lossy(&b).replace('\0', " "))
        .unwrap_or_default()
}

/// Every process id in `/proc`.
pub fn all_pids() -> Vec<u32> {
    std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The live processes whose command line contains `needle`.
pub fn pids_running(needle: &str) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|p| process_alive(*p) && cmdline(*p).contains(needle))
        .collect()
}

/// Whether every process whose command line contains `needle` is gone within
/// `bound` (a hang guard, polled).
pub async fn all_gone(needle: &str, bound: Duration) -> bool {
    let deadline = Instant::now() + bound;
    loop {
        if pids_running(needle).is_empty() {
            return true;
        }
        if Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
