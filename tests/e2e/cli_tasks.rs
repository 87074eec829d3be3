//! `hecate tasks …` against the real binary: a task created, started and run to
//! its end in the CLI's own process (`start --wait`), its events and output read
//! back, an approval listed and given by `hecate approvals` in a second process
//! while the first waits, and bad input refused with the invalid-input exit code.

use crate::support::common::Home;
use serde_json::Value;
use std::process::Stdio;

fn ungated() -> Home {
    let mut home = Home::empty();
    home.env
        .push(("HECATE_TASK_APPROVAL_POLICIES".into(), String::new()));
    home
}

fn stdout(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn a_task_runs_to_its_end_in_the_cli_and_its_output_reads_back() {
    let home = ungated();
    let created = home.create_shell_task("echo from-cli");
    assert!(created.status.success(), "{created:?}");
    let task = stdout(&created).trim().to_string();
    assert!(task.starts_with("task_"), "{task}");
    let ran = home.run(&["tasks", "start", &task, "--wait", "--format", "json"]);
    assert!(ran.status.success(), "{ran:?}");
    let events: Vec<Value> = stdout(&ran)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one envelope a line"))
        .collect();
    let types: Vec<&str> = events.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types.first(), Some(&"run.created"));
    assert_eq!(types.last(), Some(&"run.finished"), "{types:?}");
    let run = events[0]["run_id"].as_str().expect("run id").to_string();
    let out = home.run(&["tasks", "patches", &task, &run]);
    assert!(stdout(&out).contains("from-cli"), "{}", stdout(&out));
    let shown = home.run(&["tasks", "show", &task, "--format", "json"]);
    let v: Value = serde_json::from_slice(&shown.stdout).expect("json");
    assert_eq!(v["data"]["runs"][0]["status"], "completed");
    let after = home.run(&["tasks", "events", &task, &run, "--after", "3"]);
    assert!(!stdout(&after).contains("run.created"));
    assert!(stdout(&after).contains("run.finished"));
    let bad = home.run(&["tasks", "create", "--kind", "python", "--shell", "x"]);
    assert_eq!(bad.status.code(), Some(2), "invalid input exit code");
    assert!(String::from_utf8_lossy(&bad.stderr).contains("execution_kind"));
    let missing = home.run(&["tasks", "show", "task_nope"]);
    assert_eq!(missing.status.code(), Some(3), "not found exit code");
}

#[test]
fn a_waiting_start_runs_once_another_process_approves() {
    let home = Home::empty();
    let created = home.create_shell_task("echo approved-run");
    let task = stdout(&created).trim().to_string();
    let waiting = home
        .cmd(&["tasks", "start", &task, "--wait"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start --wait");
    // Find the pending approval from another process, then approve it there.
    let mut approval = None;
    for _ in 0..100 {
        let shown = home.run(&["tasks", "show", &task, "--format", "json"]);
        let v: Value = serde_json::from_slice(&shown.stdout).unwrap_or_default();
        if let Some(id) = v["data"]["approvals"][0]["id"].as_str() {
            approval = Some(id.to_string());
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let approval = approval.expect("a pending approval");
    // The task's gate is listed with every other approval and resolved there too.
    let listed = home.run(&["approvals", "list"]);
    let text = stdout(&listed);
    assert!(
        text.contains(&approval) && text.contains("shell_command"),
        "{text}"
    );
    let json = home.json(&["approvals", "list", "--format", "json"]);
    let gates = json["task_approvals"].as_array().expect("task_approvals");
    assert!(
        gates
            .iter()
            .any(|g| g["id"] == approval.as_str() && g["kind"] == "shell_command"),
        "{json}"
    );
    let ok = home.run(&["approvals", "resolve", &approval, "--decision", "approve"]);
    assert!(ok.status.success(), "{ok:?}");
    let twice = home.run(&["tasks", "approve", &task, &approval, "--note", "again"]);
    assert_eq!(
        twice.status.code(),
        Some(4),
        "a resolved gate is a conflict"
    );
    let out = waiting.wait_with_output().expect("waits");
    assert!(out.status.success(), "{out:?}");
    let text = stdout(&out);
    assert!(
        text.contains("approval.resolved") && text.contains("run.finished"),
        "{text}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("hecate tasks approve"));
}
