//! A kill -9 soak: `hecate chat` is SIGKILLed at seeded random points of 30
//! turns, alternating a model session and a fixture-agent session. After each
//! kill a new process starts over the same store; in the end no acknowledged
//! prompt is lost, nothing is left running or pending, both sessions continue, and
//! SQLite's integrity check passes.

use crate::support::common::{Home, ModelServer, git_workspace, session_id_from, text};
use serde_json::{Value, json};
use std::io::Read as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

const TURNS: usize = 30;
/// The latest a kill may land after the prompt was sent.
const KILL_WITHIN_MS: u64 = 900;

/// xorshift64: the kill points are random but the same every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const AGENT_SCRIPT: &str = r#"{"turns":[
 {"match":"turn","actions":[{"chunks":["one ","two ","three ","four ","five "],"delay_ms":90}]}
]}"#;

fn session(home: &Home, args: &[&str]) -> String {
    let out = home.run(args);
    assert!(out.status.success(), "{}", text(&out).1);
    session_id_from(&out.stderr)
}

fn show(home: &Home, id: &str) -> Value {
    home.json(&["sessions", "show", id, "--format", "json"])["data"].clone()
}

/// Whether any run or approval of the store is still open.
fn open_work(home: &Home, ids: &[&str]) -> Vec<String> {
    let mut open = Vec::new();
    for id in ids {
        let data = show(home, id);
        for run in data["runs"].as_array().into_iter().flatten() {
            let status = run["status"].as_str().unwrap_or("?");
            if matches!(status, "running" | "awaiting_approval" | "pending") {
                open.push(format!("{id}: run {} is {status}", run["id"]));
            }
        }
    }
    let approvals = home.json(&["approvals", "list", "--all", "--format", "json"]);
    for a in approvals["data"].as_array().into_iter().flatten() {
        if a["status"] == "pending" {
            open.push(format!("approval {} is pending", a["id"]));
        }
    }
    open
}

/// The session's lease owner and what `/proc` says of its pid (for failures).
fn lease_holder(home: &Home, id: &str) -> String {
    let db = rusqlite::Connection::open(home.data_dir().join("hecate.db")).expect("open db");
    let owner: Option<String> = db
        .query_row("SELECT owner_id FROM sessions WHERE id = ?1", [id], |r| {
            r.get(0)
        })
        .expect("session row");
    let Some(owner) = owner else {
        return "none".into();
    };
    let pid = owner.rsplit(':').nth(1).unwrap_or_default().to_string();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    format!("{owner}; /proc/{pid}/stat: {stat:?}; cmdline: {cmd:?}")
}

#[test]
fn sigkill_at_random_points_of_thirty_turns_loses_nothing_acknowledged() {
    let server = ModelServer::start(Some(json!([
        {"repeat": true, "chunks": ["a ", "b ", "c ", "d ", "e ", "f "], "chunk_delay_ms": 70}
    ])));
    let home = Home::with_openai(&server);
    home.add_scripted_agent(AGENT_SCRIPT, &[], "");
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let model = session(&home, &["chat", "--model", "fix/fixture-model", "turn 0"]);
    let agent = session(
        &home,
        &["chat", "--agent", "fixture", "--workspace", &w, "turn 0"],
    );
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut acknowledged: Vec<(String, String)> = Vec::new();
    let mut killed = 0;
    for i in 1..=TURNS {
        let id = if i % 2 == 0 { &model } else { &agent };
        let prompt = format!("turn {i}");
        let mut child = home
            .cmd(&["chat", "--session", id, &prompt])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn chat");
        let kill_at = Instant::now() + Duration::from_millis(rng.below(KILL_WITHIN_MS));
        let finished = loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                break Some(status);
            }
            if Instant::now() >= kill_at {
                break None;
            }
            std::thread::sleep(Duration::from_millis(5));
        };
        if finished.is_none() {
            child.kill().expect("SIGKILL");
            child.wait().expect("reap");
            killed += 1;
        }
        let mut printed = String::new();
        child
            .stdout
            .take()
            .expect("stdout")
            .read_to_string(&mut printed)
            .expect("read stdout");
        // Streamed text means the turn had started: its prompt was durable first.
        if !printed.is_empty() || finished.is_some_and(|s| s.success()) {
            acknowledged.push((id.clone(), prompt));
        }
        // The next process reconciles what the killed one left.
        let open = open_work(&home, &[&model, &agent]);
        assert!(open.is_empty(), "after turn {i}: {open:?}");
    }
    eprintln!(
        "{killed} of {TURNS} turns SIGKILLed; {} prompts acknowledged",
        acknowledged.len()
    );
    assert!(
        killed >= TURNS / 3,
        "only {killed} of {TURNS} turns were killed"
    );
    for (id, prompt) in &acknowledged {
        let data = show(&home, id);
        let found = data["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|m| m["role"] == "user" && m["content"] == prompt.as_str());
        assert!(found, "acknowledged prompt {prompt:?} of {id} was lost");
    }
    for id in [&model, &agent] {
        let out = home.run(&["chat", "--session", id, "turn final"]);
        assert!(
            out.status.success(),
            "{id} continues: {}\nlease: {}",
            text(&out).1,
            lease_holder(&home, id)
        );
        let data = show(&home, id);
        let seqs: Vec<i64> = data["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|m| m["sequence"].as_i64())
            .collect();
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "{id}: sequences stay ordered: {seqs:?}"
        );
    }
    let db = rusqlite::Connection::open(home.data_dir().join("hecate.db")).expect("open db");
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(check, "ok");
}
