//! The task runtime from MCP: a stdio client of `hecate mcp` (no `hecate
//! serve` anywhere) creates a shell task, runs it end to end with `start_task`
//! `wait` (a worker started in the `hecate mcp` process for the call, the step
//! confined with bubblewrap), gets the run's events as progress notifications
//! and its final state, pages its events by cursor, answers an approval gate
//! through `resolve_task_approval`, cancels a queued run, and gets tool errors
//! with stable types for bad input and unknown ids. Approval gates put to the
//! client by elicitation are in `mcp_tasks/approvals.rs`, retry, resume and
//! delete in `runs.rs`, patches in `patches.rs`, and `/mcp` of `hecate serve`
//! in `serve.rs`.

mod approvals;
mod patches;
mod runs;
mod serve;

use crate::support::common::Home;
use crate::support::mcp::{McpProc, first_text};
use serde_json::{Value, json};

/// The task tools this face adds.
const TASK_TOOLS: [&str; 15] = [
    "create_task",
    "list_tasks",
    "get_task",
    "delete_task",
    "start_task",
    "get_task_run",
    "follow_task_run",
    "list_task_events",
    "retry_task_run",
    "resume_task_run",
    "resolve_task_approval",
    "cancel_task_run",
    "list_task_patches",
    "apply_task_patch",
    "revert_task_patch",
];

/// A home whose tasks run without approval gates.
fn ungated() -> Home {
    let mut home = Home::empty();
    home.env
        .push(("HECATE_TASK_APPROVAL_POLICIES".into(), String::new()));
    home
}

fn create_shell(mcp: &mut McpProc, command: &str) -> String {
    let created = mcp.call_ok(
        "create_task",
        json!({"execution_kind": "shell", "shell_command": command}),
    );
    let task = &created["structuredContent"]["task"];
    assert_eq!(task["execution_kind"], "shell", "{created}");
    assert_eq!(task["sandbox_network"], false);
    task["id"].as_str().expect("task id").to_string()
}

/// The structured error of a tool error result.
fn tool_error(r: &Value) -> Value {
    assert_eq!(r["result"]["isError"], true, "a tool error: {r}");
    let body: Value = serde_json::from_str(&first_text(&r["result"])).expect("error JSON");
    body["error"].clone()
}

/// Progress notifications for `token`, in order.
fn progress(mcp: &McpProc, token: &str) -> Vec<Value> {
    mcp.notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .filter(|n| n["params"]["progressToken"] == token)
        .map(|n| n["params"].clone())
        .collect()
}

fn messages(params: &[Value]) -> Vec<String> {
    params
        .iter()
        .map(|p| p["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn a_stdio_client_runs_a_shell_task_end_to_end_with_progress_and_reads_its_events() {
    let home = ungated();
    let mut mcp = McpProc::start(&home, json!({}));

    let list = mcp.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    for name in TASK_TOOLS {
        let t = tools
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("{name} is listed"));
        assert_eq!(t["inputSchema"]["type"], "object", "{name}");
        assert_eq!(t["outputSchema"]["type"], "object", "{name}");
    }
    let create_schema = &tools
        .iter()
        .find(|t| t["name"] == "create_task")
        .expect("create")["inputSchema"];
    assert!(
        create_schema["properties"]["shell_command"].is_object(),
        "create_task takes the HTTP create fields: {create_schema}"
    );

    let task = create_shell(&mut mcp, "echo hello from a task; echo careful >&2");
    let r = mcp.request(
        "tools/call",
        json!({"name": "start_task", "_meta": {"progressToken": "run-1"},
               "arguments": {"task_id": task, "wait": true}}),
    );
    let result = &r["result"];
    assert_ne!(result["isError"], true, "{r}");
    let state = &result["structuredContent"];
    assert_eq!(state["run"]["status"], "completed", "{state}");
    assert_eq!(state["run"]["task_id"], json!(task));
    assert_eq!(state["steps"][0]["kind"], "shell");
    assert_eq!(state["steps"][0]["status"], "completed");
    assert_eq!(state["steps"][0]["exit_code"], 0);
    let artifacts = state["artifacts"].as_array().expect("artifacts");
    let stdout = artifacts
        .iter()
        .find(|a| a["kind"] == "stdout")
        .expect("stdout artifact");
    assert_eq!(stdout["preview"], "hello from a task\n");
    assert_eq!(stdout["preview_truncated"], false);
    assert!(artifacts.iter().any(|a| a["kind"] == "stderr"));
    let run_id = state["run"]["id"].as_str().expect("run id").to_string();

    // Every event of the run reached the client as progress, in order.
    let seen = progress(&mcp, "run-1");
    let values: Vec<f64> = seen.iter().filter_map(|p| p["progress"].as_f64()).collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress increases: {values:?}"
    );
    let msgs = messages(&seen);
    for wanted in [
        "run.started",
        "step.started",
        "step.finished",
        "run.finished",
    ] {
        assert!(
            msgs.iter().any(|m| m.starts_with(wanted)),
            "{wanted} in {msgs:?}"
        );
    }
    assert!(
        msgs.last().is_some_and(|m| m.starts_with("run.finished")),
        "the run's end is the last progress: {msgs:?}"
    );

    // The same events, read by cursor.
    let all = mcp.call_ok(
        "list_task_events",
        json!({"task_id": task, "run_id": run_id}),
    );
    let events = all["structuredContent"]["events"]
        .as_array()
        .expect("events")
        .clone();
    let types: Vec<&str> = events
        .iter()
        .map(|e| e["type"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(types.len(), msgs.len(), "{types:?} vs {msgs:?}");
    assert!(types.iter().zip(&msgs).all(|(t, m)| m.starts_with(t)));
    assert_eq!(
        all["structuredContent"]["next_after_sequence"],
        events.last().expect("last")["sequence"]
    );
    let cursor = events[1]["sequence"].clone();
    let rest = mcp.call_ok(
        "list_task_events",
        json!({"task_id": task, "after_sequence": cursor, "limit": 2}),
    );
    let page = rest["structuredContent"]["events"]
        .as_array()
        .expect("page");
    assert_eq!(page.len(), 2);
    assert_eq!(page[0]["sequence"], events[2]["sequence"]);
    assert_eq!(
        rest["structuredContent"]["next_after_sequence"],
        events[3]["sequence"]
    );

    let got = mcp.call_ok("get_task", json!({"task_id": task}));
    let got = &got["structuredContent"];
    assert_eq!(got["task"]["latest_run_id"], json!(run_id));
    assert_eq!(got["runs"].as_array().map(Vec::len), Some(1));
    assert_eq!(got["latest_run"]["run"]["status"], "completed");
    let listed = mcp.call_ok("list_tasks", json!({}));
    assert_eq!(listed["structuredContent"]["tasks"][0]["id"], json!(task));

    // Without `wait`, the call returns the queued run; the worker of the
    // earlier call is gone, so it stays queued until it is cancelled.
    let queued = mcp.call_ok("start_task", json!({"task_id": task}));
    let second = &queued["structuredContent"]["run"];
    assert_eq!(second["status"], "queued", "{queued}");
    assert_eq!(second["number"], 2);
    let cancelled = mcp.call_ok(
        "cancel_task_run",
        json!({"task_id": task, "run_id": second["id"]}),
    );
    assert_eq!(
        cancelled["structuredContent"]["run"]["status"], "cancelled",
        "{cancelled}"
    );
}

#[test]
fn an_approval_gate_is_answered_through_resolve_task_approval() {
    // The default policy gates shell commands.
    let home = Home::empty();
    let mut mcp = McpProc::start(&home, json!({}));
    let task = create_shell(&mut mcp, "echo approved output");
    let started = mcp.call_ok("start_task", json!({"task_id": task, "wait": true}));
    let state = &started["structuredContent"];
    assert_eq!(state["run"]["status"], "awaiting_approval", "{state}");
    let approval = &state["approvals"][0];
    assert_eq!(approval["kind"], "shell_command");
    assert_eq!(approval["status"], "pending");
    let approval_id = approval["id"].as_str().expect("approval id").to_string();
    // A client without elicitation is told which approval waits and how to
    // resolve it.
    assert_eq!(
        state["pending_approval_ids"],
        json!([approval_id]),
        "{state}"
    );
    let hint = state["hint"].as_str().expect("a hint");
    assert!(
        hint.contains(&approval_id) && hint.contains("resolve_task_approval"),
        "{hint}"
    );

    let r = mcp.request(
        "tools/call",
        json!({"name": "resolve_task_approval", "_meta": {"progressToken": 9},
               "arguments": {"task_id": task, "approval_id": approval_id,
                             "decision": "approve", "note": "looks fine", "wait": true}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    let out = &r["result"]["structuredContent"];
    assert_eq!(out["approval"]["status"], "approved");
    assert_eq!(out["approval"]["note"], "looks fine");
    assert_eq!(out["run"]["run"]["status"], "completed", "{out}");
    assert_eq!(out["run"]["pending_approval_ids"], json!([]));
    assert_eq!(out["run"]["hint"], Value::Null);
    let stdout = out["run"]["artifacts"]
        .as_array()
        .expect("artifacts")
        .iter()
        .find(|a| a["kind"] == "stdout")
        .expect("stdout")
        .clone();
    assert_eq!(stdout["preview"], "approved output\n");
    let msgs: Vec<String> = mcp
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress" && n["params"]["progressToken"] == 9)
        .map(|n| {
            n["params"]["message"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(
        msgs.iter().any(|m| m.starts_with("approval.resolved"))
            && msgs.last().is_some_and(|m| m.starts_with("run.finished")),
        "{msgs:?}"
    );

    // Resolving it again is a conflict, as over HTTP.
    let again = mcp.call(
        "resolve_task_approval",
        json!({"task_id": task, "approval_id": approval_id, "decision": "reject"}),
    );
    assert_eq!(tool_error(&again)["type"], "conflict");
}

#[test]
fn bad_input_and_unknown_ids_are_tool_errors_with_stable_types() {
    let home = ungated();
    let mut mcp = McpProc::start(&home, json!({}));
    let cases = [
        (
            json!({"execution_kind": "python", "shell_command": "x"}),
            "execution_kind",
        ),
        (json!({"execution_kind": "shell"}), "shell_command"),
        (
            json!({"execution_kind": "shell", "shell_command": "x", "working_directory": "/definitely/not/here"}),
            "working_directory",
        ),
    ];
    for (args, field) in cases {
        let e = tool_error(&mcp.call("create_task", args.clone()));
        assert_eq!(e["type"], "invalid_request", "{args}: {e}");
        assert_eq!(e["field"], field, "{args}: {e}");
    }
    let unknown_field = mcp.call(
        "create_task",
        json!({"execution_kind": "shell", "shell_command": "x", "colour": "red"}),
    );
    assert_eq!(unknown_field["result"]["isError"], true, "{unknown_field}");
    // Every task tool refuses a field it does not know, naming it.
    for tool in TASK_TOOLS.iter().filter(|t| **t != "create_task") {
        let r = mcp.call(
            tool,
            json!({"colour": "red", "task_id": "task_x", "run_id": "trun_x"}),
        );
        assert_eq!(r["result"]["isError"], true, "{tool}: {r}");
        assert!(
            first_text(&r["result"]).contains("colour"),
            "{tool} names the field: {r}"
        );
    }
    let listed = mcp.call_ok("list_tasks", json!({}));
    assert_eq!(
        listed["structuredContent"]["tasks"],
        json!([]),
        "bad input created nothing"
    );

    for (tool, args) in [
        ("get_task", json!({"task_id": "task_nope"})),
        ("start_task", json!({"task_id": "task_nope", "wait": true})),
        ("list_task_events", json!({"task_id": "task_nope"})),
        (
            "cancel_task_run",
            json!({"task_id": "task_nope", "run_id": "trun_nope"}),
        ),
        ("delete_task", json!({"task_id": "task_nope"})),
        ("list_task_patches", json!({"task_id": "task_nope"})),
        (
            "follow_task_run",
            json!({"task_id": "task_nope", "run_id": "trun_nope"}),
        ),
    ] {
        let e = tool_error(&mcp.call(tool, args));
        assert_eq!(e["type"], "not_found", "{tool}: {e}");
    }
    let task = create_shell(&mut mcp, "true");
    for (tool, args) in [
        (
            "get_task_run",
            json!({"task_id": task, "run_id": "trun_nope"}),
        ),
        (
            "list_task_events",
            json!({"task_id": task, "run_id": "trun_nope"}),
        ),
        (
            "resolve_task_approval",
            json!({"task_id": task, "approval_id": "tappr_nope", "decision": "approve"}),
        ),
        (
            "follow_task_run",
            json!({"task_id": task, "run_id": "trun_nope"}),
        ),
        (
            "retry_task_run",
            json!({"task_id": task, "run_id": "trun_nope", "wait": true}),
        ),
        (
            "resume_task_run",
            json!({"task_id": task, "run_id": "trun_nope"}),
        ),
        (
            "list_task_patches",
            json!({"task_id": task, "run_id": "trun_nope"}),
        ),
        (
            "apply_task_patch",
            json!({"task_id": task, "run_id": "trun_nope", "patch_id": "tart_nope"}),
        ),
        (
            "revert_task_patch",
            json!({"task_id": task, "run_id": "trun_nope", "patch_id": "tart_nope"}),
        ),
    ] {
        let e = tool_error(&mcp.call(tool, args));
        assert_eq!(e["type"], "not_found", "{tool}: {e}");
    }
    let bad_decision = mcp.call(
        "resolve_task_approval",
        json!({"task_id": task, "approval_id": "tappr_nope", "decision": "maybe"}),
    );
    assert_eq!(bad_decision["result"]["isError"], true, "{bad_decision}");
}
