//! Runs made again and tasks deleted from MCP: `retry_task_run` and
//! `resume_task_run` start a new run from an ended one and wait for it like
//! `start_task`, the new run names its source (and the event log says how and
//! why), an active run can be neither retried, resumed nor deleted under
//! (`conflict`), and `delete_task` removes the task, which is then unknown.

use super::{create_shell, tool_error, ungated};
use crate::support::mcp::McpProc;
use serde_json::{Value, json};

/// The `run.resumed_from_event` event of a run.
fn resumed_from(mcp: &mut McpProc, task: &str, run: &Value) -> Value {
    let events = mcp.call_ok("list_task_events", json!({"task_id": task, "run_id": run}));
    events["structuredContent"]["events"]
        .as_array()
        .and_then(|e| e.iter().find(|e| e["type"] == "run.resumed_from_event"))
        .map(|e| e["data"].clone())
        .unwrap_or_else(|| panic!("no run.resumed_from_event: {events}"))
}

#[test]
fn a_failed_run_is_retried_and_resumed_and_the_task_deleted() {
    let home = ungated();
    let mut mcp = McpProc::start(&home, json!({}));
    let task = create_shell(&mut mcp, "echo attempt; exit 3");
    let first = mcp.call_ok("start_task", json!({"task_id": task, "wait": true}));
    let first = first["structuredContent"]["run"].clone();
    assert_eq!(first["status"], "failed", "{first}");

    let retried = mcp.call_ok(
        "retry_task_run",
        json!({"task_id": task, "run_id": first["id"], "reason": "flaky", "wait": true}),
    );
    let state = &retried["structuredContent"];
    assert_eq!(state["run"]["number"], 2, "{state}");
    assert_eq!(state["run"]["resumed_from_run_id"], first["id"]);
    assert_eq!(state["run"]["status"], "failed", "it ran again: {state}");
    assert_eq!(state["steps"][0]["exit_code"], 3);
    let second = state["run"]["id"].clone();
    let how = resumed_from(&mut mcp, &task, &second);
    assert_eq!(how["mode"], "retry", "{how}");
    assert_eq!(how["reason"], "flaky");
    assert_eq!(how["source_run_id"], first["id"]);

    let resumed = mcp.call_ok(
        "resume_task_run",
        json!({"task_id": task, "run_id": second, "wait": true}),
    );
    let state = &resumed["structuredContent"];
    assert_eq!(state["run"]["number"], 3, "{state}");
    assert_eq!(state["run"]["resumed_from_run_id"], second);
    assert_eq!(state["run"]["status"], "failed");
    let third = state["run"]["id"].clone();
    assert_eq!(resumed_from(&mut mcp, &task, &third)["mode"], "resume");

    // A run still active is neither retried nor resumed, and keeps its task.
    let queued = mcp.call_ok("start_task", json!({"task_id": task}));
    let queued = queued["structuredContent"]["run"]["id"].clone();
    for tool in ["retry_task_run", "resume_task_run"] {
        let e = tool_error(&mcp.call(tool, json!({"task_id": task, "run_id": queued})));
        assert_eq!(e["type"], "conflict", "{tool}: {e}");
    }
    let e = tool_error(&mcp.call("delete_task", json!({"task_id": task})));
    assert_eq!(e["type"], "conflict", "{e}");
    mcp.call_ok(
        "cancel_task_run",
        json!({"task_id": task, "run_id": queued}),
    );

    let deleted = mcp.call_ok("delete_task", json!({"task_id": task}));
    assert_eq!(
        deleted["structuredContent"],
        json!({"id": task, "deleted": true}),
        "the HTTP API's delete answer"
    );
    for tool in ["get_task", "delete_task"] {
        let e = tool_error(&mcp.call(tool, json!({"task_id": task})));
        assert_eq!(e["type"], "not_found", "{tool}: {e}");
    }
}
