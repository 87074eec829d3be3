//! Task approval gates put to the MCP client by elicitation while a call waits
//! for the run (`start_task` and `follow_task_run` with the default policy,
//! which gates shell commands): approving runs the run to its end, declining
//! rejects the gate with a note, dismissing leaves it pending with its id, and
//! a gate resolved elsewhere while the client is asked withdraws the question
//! while the run's progress keeps coming.

use super::{create_shell, messages, progress};
use crate::support::common::Home;
use crate::support::mcp::{McpProc, REQUEST_BOUND};
use serde_json::{Value, json};

/// The client capabilities of an eliciting client.
fn eliciting() -> Value {
    json!({"elicitation": {}})
}

/// Calls `tool` with a progressToken, answering every elicitation with
/// `answer`; returns the response and the elicitations asked.
fn call_answering(
    mcp: &mut McpProc,
    tool: &str,
    token: &str,
    arguments: Value,
    answer: Value,
) -> (Value, Vec<Value>) {
    let mut asked = Vec::new();
    let r = mcp.request_with(
        "tools/call",
        json!({"name": tool, "_meta": {"progressToken": token}, "arguments": arguments}),
        &mut |method, params| {
            assert_eq!(method, "elicitation/create", "{params}");
            asked.push(params.clone());
            answer.clone()
        },
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    (r, asked)
}

fn stdout_preview(state: &Value) -> Value {
    state["artifacts"]
        .as_array()
        .and_then(|a| a.iter().find(|x| x["kind"] == "stdout"))
        .map(|x| x["preview"].clone())
        .unwrap_or(Value::Null)
}

#[test]
fn a_waiting_start_asks_an_eliciting_client_and_returns_the_finished_run() {
    let home = Home::empty();
    let mut mcp = McpProc::start(&home, eliciting());
    let task = create_shell(&mut mcp, "echo elicited output");
    let (r, asked) = call_answering(
        &mut mcp,
        "start_task",
        "gate",
        json!({"task_id": task, "wait": true}),
        json!({"action": "accept", "content": {"decision": "approve_once", "note": "fine by me"}}),
    );
    let state = &r["result"]["structuredContent"];
    assert_eq!(state["run"]["status"], "completed", "{state}");
    let run_id = state["run"]["id"].as_str().expect("run id").to_string();

    assert_eq!(asked.len(), 1, "one gate, asked once: {asked:?}");
    let form = &asked[0];
    let message = form["message"].as_str().expect("message");
    for part in ["echo elicited output", "shell_command", &task, &run_id] {
        assert!(message.contains(part), "{part} in {message:?}");
    }
    assert_eq!(
        form["requestedSchema"]["properties"]["decision"]["enum"],
        json!(["approve_once", "reject"]),
        "the agent-session choices, without a session grant"
    );
    let named = &form["_meta"]["hecate/task_approval"];
    assert_eq!(named["task_id"], json!(task), "{form}");
    assert_eq!(named["run_id"], json!(run_id));
    assert_eq!(named["kind"], "shell_command");

    let approval = &state["approvals"][0];
    assert_eq!(approval["id"], named["approval_id"]);
    assert_eq!(approval["status"], "approved", "{approval}");
    assert_eq!(approval["note"], "fine by me");
    assert_eq!(state["pending_approval_ids"], json!([]));
    assert_eq!(state["hint"], Value::Null);
    assert_eq!(stdout_preview(state), "elicited output\n");

    let msgs = messages(&progress(&mcp, "gate"));
    for wanted in ["approval.requested", "approval.resolved", "run.started"] {
        assert!(
            msgs.iter().any(|m| m.starts_with(wanted)),
            "{wanted} in {msgs:?}"
        );
    }
    assert!(
        msgs.last().is_some_and(|m| m.starts_with("run.finished")),
        "{msgs:?}"
    );
}

#[test]
fn declining_rejects_the_gate_and_dismissing_leaves_it_pending_for_follow_task_run() {
    let home = Home::empty();
    let mut mcp = McpProc::start(&home, eliciting());

    // Declined: the gate is rejected with a note and the run fails.
    let task = create_shell(&mut mcp, "echo never");
    let (r, asked) = call_answering(
        &mut mcp,
        "start_task",
        "decline",
        json!({"task_id": task, "wait": true}),
        json!({"action": "decline"}),
    );
    assert_eq!(asked.len(), 1);
    let state = &r["result"]["structuredContent"];
    assert_eq!(state["run"]["status"], "failed", "{state}");
    assert_eq!(state["run"]["error_type"], "approval_rejected");
    assert_eq!(state["approvals"][0]["status"], "rejected");
    assert_eq!(
        state["approvals"][0]["note"],
        "declined by the MCP client's user"
    );
    assert_eq!(state["steps"], json!([]), "nothing ran");

    // Dismissed: the gate stays pending and the call says which one and how to
    // resolve it.
    let task = create_shell(&mut mcp, "echo later");
    let (r, asked) = call_answering(
        &mut mcp,
        "start_task",
        "dismiss",
        json!({"task_id": task, "wait": true}),
        json!({"action": "cancel"}),
    );
    assert_eq!(asked.len(), 1);
    let state = &r["result"]["structuredContent"];
    assert_eq!(state["run"]["status"], "awaiting_approval", "{state}");
    let approval_id = state["approvals"][0]["id"].clone();
    assert_eq!(state["approvals"][0]["status"], "pending");
    assert_eq!(state["pending_approval_ids"], json!([approval_id]));
    assert!(
        state["hint"]
            .as_str()
            .is_some_and(|h| h.contains("resolve_task_approval")),
        "{state}"
    );
    let run_id = state["run"]["id"].clone();

    // follow_task_run asks again; approved, the run goes to its end, and the
    // follower saw its events from the first.
    let (r, asked) = call_answering(
        &mut mcp,
        "follow_task_run",
        "follow",
        json!({"task_id": task, "run_id": run_id}),
        json!({"action": "accept", "content": {"decision": "approve_once"}}),
    );
    assert_eq!(asked.len(), 1);
    let state = &r["result"]["structuredContent"];
    assert_eq!(state["run"]["status"], "completed", "{state}");
    assert_eq!(state["approvals"][0]["status"], "approved");
    assert_eq!(stdout_preview(state), "later\n");
    let msgs = messages(&progress(&mcp, "follow"));
    assert!(
        msgs.first().is_some_and(|m| m.starts_with("run.created"))
            && msgs.last().is_some_and(|m| m.starts_with("run.finished")),
        "{msgs:?}"
    );
}

#[test]
fn a_gate_resolved_elsewhere_withdraws_the_question_while_progress_keeps_coming() {
    let home = Home::empty();
    let mut mcp = McpProc::start(&home, eliciting());
    let task = create_shell(&mut mcp, "echo resolved elsewhere");
    let call = mcp.send_request(
        "tools/call",
        json!({"name": "start_task", "_meta": {"progressToken": "elsewhere"},
               "arguments": {"task_id": task, "wait": true}}),
    );
    let question = loop {
        let m = mcp.next_message(REQUEST_BOUND).expect("the elicitation");
        if m["method"] == "elicitation/create" {
            break m;
        }
        assert_ne!(m["id"], json!(call), "answered without asking: {m}");
    };
    let approval_id = question["params"]["_meta"]["hecate/task_approval"]["approval_id"]
        .as_str()
        .expect("approval id")
        .to_string();

    // The question stays open; another process (the CLI) approves the gate.
    let cli = home.run(&[
        "tasks",
        "approve",
        &task,
        &approval_id,
        "--note",
        "from the CLI",
    ]);
    assert!(cli.status.success(), "{cli:?}");

    // Until the answer: the gate's resolution arrives as progress while the
    // question is still open, then the question is withdrawn.
    let mut order = Vec::new();
    let mut finished = false;
    let response = loop {
        let m = mcp.next_message(REQUEST_BOUND).expect("the call goes on");
        assert_ne!(m["method"], "elicitation/create", "asked once: {m}");
        let text = m["params"]["message"].as_str().unwrap_or_default();
        if m["method"] == "notifications/progress" && text.starts_with("approval.resolved") {
            order.push("progress: approval.resolved");
        }
        finished |= m["method"] == "notifications/progress" && text.starts_with("run.finished");
        if m["method"] == "notifications/cancelled" && m["params"]["requestId"] == question["id"] {
            order.push("question withdrawn");
        }
        if m.get("method").is_none() && m["id"] == json!(call) {
            break m;
        }
    };
    assert_eq!(
        order,
        ["progress: approval.resolved", "question withdrawn"],
        "progress flows while the question is open, then it is withdrawn"
    );
    assert!(finished, "the run's end was sent as progress");
    let state = &response["result"]["structuredContent"];
    assert_eq!(state["run"]["status"], "completed", "{response}");
    assert_eq!(state["approvals"][0]["status"], "approved");
    assert_eq!(state["approvals"][0]["note"], "from the CLI");
    assert_eq!(stdout_preview(state), "resolved elsewhere\n");
}
