//! Invariant 5 when Hecate cannot clean up: a `hecate` that is SIGKILLed leaves
//! neither its agent nor the agent's grandchild behind (nor an upstream MCP server
//! and its grandchild), and the version check behind `hecate adapters list` leaves
//! nothing running when the adapter's command hangs with a background child.

use crate::support::child::{all_pids, cmdline, pids_running, process_alive};
use crate::support::common::{Home, fixture_chat_args, git_workspace};
use crate::support::mcp::{McpProc, fixture_upstream, records, wait_gone};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

/// How long the processes get to disappear after Hecate is gone.
const GONE_BOUND: Duration = Duration::from_secs(10);
/// How long start-up (agent spawned, grandchild running) may take.
const START_BOUND: Duration = Duration::from_secs(60);

const HANG_SCRIPT: &str =
    r#"{"turns":[{"match":"hang","actions":[{"text":"hanging "},{"hang":true}]}]}"#;

/// SIGKILLs the listed pids when dropped, so a failing test leaves nothing behind.
struct Reaper(Vec<u32>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for pid in &self.0 {
            sigkill(*pid);
        }
    }
}

fn sigkill(pid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .stderr(Stdio::null())
        .status();
}

/// The parent pid of `pid`, from `/proc/<pid>/stat`.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

/// The live `sleep` children of `parent`.
fn sleeping_children(parent: u32) -> Vec<u32> {
    all_pids()
        .into_iter()
        .filter(|p| parent_of(*p) == Some(parent) && process_alive(*p))
        .filter(|p| cmdline(*p).starts_with("sleep "))
        .collect()
}

fn wait_until<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + START_BOUND;
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(Instant::now() < deadline, "{what} never happened");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn sigkill_of_hecate_leaves_no_child_or_grandchild() {
    let home = Home::empty();
    let state = home.add_scripted_agent(HANG_SCRIPT, &["--spawn-grandchild"], "");
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let mut hecate = home
        .cmd(&fixture_chat_args(&w, &["hang around"]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn hecate chat");
    let mut reaper = Reaper(vec![hecate.id()]);
    let agent = wait_until("the agent starting", || {
        pids_running(&state).into_iter().next()
    });
    reaper.0.push(agent);
    let grandchild = wait_until("the grandchild starting", || {
        sleeping_children(agent).into_iter().next()
    });
    reaper.0.push(grandchild);
    wait_until("the turn hanging", || {
        let list = home.json(&["sessions", "list", "--format", "json"]);
        (list["data"][0]["status"] == "running").then_some(())
    });

    sigkill(hecate.id());
    let _ = hecate.wait();
    assert_outlives_nothing("agent", agent);
    assert_outlives_nothing("grandchild", grandchild);
}

/// Asserts that the process `pid` (a `what`) is gone within [`GONE_BOUND`] of
/// Hecate's death.
fn assert_outlives_nothing(what: &str, pid: u32) {
    assert!(wait_gone(pid, GONE_BOUND), "{what} {pid} outlived hecate");
}

fn record_pid(path: &std::path::Path, event: &str) -> u32 {
    wait_until(event, || {
        records(path)
            .into_iter()
            .find(|r| r["event"] == event)
            .and_then(|r: Value| r["pid"].as_u64())
            .and_then(|p| u32::try_from(p).ok())
    })
}

/// `hecate mcp` in `home` with the upstream `gc` (a fixture server that spawns
/// a grandchild and records its events to the answered file), after one call
/// through it.
fn mcp_with_a_grandchild_upstream(home: &Home) -> (McpProc, PathBuf) {
    let rec = home.path("gc.jsonl");
    let args = ["--spawn-grandchild", "--record", &rec.display().to_string()];
    home.write_config(&fixture_upstream("gc", &args, ""));
    let mut mcp = McpProc::start(home, json!({}));
    mcp.call_ok("gc__echo", json!({"message": "up"}));
    (mcp, rec)
}

#[test]
fn sigkill_of_hecate_mcp_leaves_no_upstream_server_or_grandchild() {
    let home = Home::empty();
    let (mcp, rec) = mcp_with_a_grandchild_upstream(&home);
    let server = record_pid(&rec, "start");
    let grandchild = record_pid(&rec, "grandchild");
    let _reaper = Reaper(vec![server, grandchild]);
    assert!(process_alive(server) && process_alive(grandchild));

    sigkill(mcp.pid());
    assert_outlives_nothing("upstream", server);
    assert_outlives_nothing("grandchild", grandchild);
}

#[test]
fn the_version_check_of_adapters_list_leaves_no_background_process_behind() {
    let home = Home::empty();
    let pid_file = home.path("background.pid");
    let script = format!(
        "sleep 1000 & echo $! > {}; echo hangs 1.2.3; exec sleep 999",
        pid_file.display()
    );
    let dir = home.path("adapters");
    std::fs::create_dir_all(&dir).expect("adapters dir");
    let manifest = format!(
        "id = \"hangs\"\nname = \"Hangs on --version\"\ncommand = \"/bin/sh\"\nargs = []\n\
         version_args = {}\n",
        serde_json::to_string(&["-c", script.as_str()]).expect("args")
    );
    std::fs::write(dir.join("hangs.toml"), manifest).expect("manifest");

    let mut list = home
        .cmd(&["adapters", "list"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn hecate adapters list");
    let mut reaper = Reaper(vec![list.id()]);
    let status = wait_until("adapters list finishing", || list.try_wait().ok().flatten());
    assert!(status.success(), "{status:?}");
    let background: u32 = wait_until("the background pid file", || {
        std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|s| s.trim().parse().ok())
    });
    reaper.0.push(background);
    assert!(
        wait_gone(background, GONE_BOUND),
        "the version check's background sleep {background} outlived the listing"
    );
}
