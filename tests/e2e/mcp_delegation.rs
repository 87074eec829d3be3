//! `ask_agent` over `hecate mcp`: a turn of another agent (the fixture ACP agent)
//! with progress notifications, the agent's permission request put to the
//! calling client by elicitation (or decided by the approval mode), the answer
//! with the files changed, and MCP cancellation turned into an engine cancel.

use crate::support::agent::{WIRES, agent_home, answer, call, turn};
use crate::support::common::{Home, ModelServer, git_workspace, workspace};
use crate::support::mcp::McpProc;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const SCRIPT: &str = r#"{"turns":[
 {"match":"write","actions":[
   {"tool_call":{"id":"t1","title":"Write b.txt","kind":"edit","status":"pending"}},
   {"request_permission":{"tool_call_id":"t1","title":"Write b.txt","kind":"edit",
     "on_allow":[{"fs_write":{"path":"b.txt","content":"new file\n"}},{"edit_file":{"path":"a.txt","content":"changed\n"}}],
     "on_reject":[{"text":"not writing. "}]}},
   {"tool_call_update":{"id":"t1","status":"completed"}},
   {"text":"done"}]},
 {"match":"slow","actions":[{"chunks":["one ","two ","three ","four ","five ","six "],"delay_ms":700}]}
]}"#;

fn home_with_agent() -> Home {
    let home = Home::empty();
    std::fs::write(home.path("script.json"), SCRIPT).expect("script");
    let script = home.path("script.json").display().to_string();
    let state = home.path("agent-state").display().to_string();
    home.add_fixture_agent("fixture", &["--script", &script, "--state-dir", &state]);
    home
}

fn paths(result: &Value) -> Vec<String> {
    result["structuredContent"]["files_changed"]
        .as_array()
        .expect("files_changed")
        .iter()
        .map(|f| f["path"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Calls `ask_agent` with `arguments` and the progress token `token`, approving
/// once every elicitation (each an `elicitation/create`); answers the response,
/// which must not be a tool error, and the params of the elicitations.
fn ask_approving(mcp: &mut McpProc, token: &str, arguments: Value) -> (Value, Vec<Value>) {
    let mut elicited = Vec::new();
    let r = mcp.request_with(
        "tools/call",
        json!({"name": "ask_agent", "_meta": {"progressToken": token}, "arguments": arguments}),
        &mut |method, params| {
            assert_eq!(method, "elicitation/create");
            elicited.push(params.clone());
            json!({"action": "accept", "content": {"decision": "approve_once"}})
        },
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    (r, elicited)
}

#[test]
fn ask_agent_streams_progress_elicits_the_permission_and_reports_files() {
    let home = home_with_agent();
    let ws = git_workspace();
    let mut mcp = McpProc::start(&home, json!({"elicitation": {}}));
    let (r, elicited) = ask_approving(
        &mut mcp,
        "p1",
        json!({"target": "agent:fixture", "prompt": "please write", "workspace": ws.path()}),
    );
    let result = &r["result"];
    assert_eq!(
        elicited.len(),
        1,
        "one permission request, put to the client"
    );
    assert!(
        elicited[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Write b.txt"))
    );
    assert_eq!(
        elicited[0]["requestedSchema"]["properties"]["decision"]["enum"],
        json!(["approve_once", "approve_session", "reject"])
    );
    let out = &result["structuredContent"];
    assert_eq!(out["status"], "completed");
    assert!(
        out["answer"].as_str().is_some_and(|a| a.contains("done")),
        "{out}"
    );
    let files = paths(result);
    assert!(
        files.contains(&"a.txt".to_string()) && files.contains(&"b.txt".to_string()),
        "{files:?}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("b.txt")).expect("b"),
        "new file\n"
    );
    let progress: Vec<&Value> = mcp
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert!(!progress.is_empty(), "progress was streamed");
    assert!(
        progress
            .iter()
            .all(|n| n["params"]["progressToken"] == "p1")
    );
    let values: Vec<f64> = progress
        .iter()
        .filter_map(|n| n["params"]["progress"].as_f64())
        .collect();
    assert!(
        values.windows(2).all(|w| w[0] < w[1]),
        "progress increases: {values:?}"
    );

    // The approval was recorded as answered through the client.
    let approvals = home.json(&["approvals", "list", "--all", "--format", "json"]);
    assert_eq!(approvals["data"][0]["status"], "approved");

    // The same session continues when its id is passed back.
    let sid = out["session_id"].as_str().expect("sid").to_string();
    let again = mcp.call_ok(
        "ask_agent",
        json!({"target": "agent:fixture", "prompt": "hello again", "session_id": sid}),
    );
    assert_eq!(again["structuredContent"]["session_id"], json!(sid));
    assert_eq!(again["structuredContent"]["answer"], "echo: hello again");
}

#[test]
fn without_elicitation_the_approval_mode_decides() {
    let home = home_with_agent();
    let ws = git_workspace();
    let mut mcp = McpProc::start(&home, json!({}));
    let denied = mcp.call_ok(
        "ask_agent",
        json!({"target": "agent:fixture", "prompt": "please write", "workspace": ws.path(), "approval_mode": "deny"}),
    );
    assert!(
        denied["structuredContent"]["answer"]
            .as_str()
            .is_some_and(|a| a.contains("not writing")),
        "{denied}"
    );
    assert!(!ws.path().join("b.txt").exists());

    home.write_config("[approvals]\nmode = \"auto\"\n");
    let mut mcp = McpProc::start(&home, json!({}));
    let allowed = mcp.call_ok(
        "ask_agent",
        json!({"target": "agent:fixture", "prompt": "please write", "workspace": ws.path()}),
    );
    assert!(
        ws.path().join("b.txt").exists(),
        "the configured mode (auto) applied: {allowed}"
    );
}

#[test]
fn cancelling_the_mcp_request_cancels_the_turn() {
    let home = home_with_agent();
    let ws = git_workspace();
    let mut mcp = McpProc::start(&home, json!({}));
    let id = mcp.send_request(
        "tools/call",
        json!({"name": "ask_agent", "_meta": {"progressToken": 7}, "arguments": {
            "target": "agent:fixture", "prompt": "slow please", "workspace": ws.path()}}),
    );
    let first = mcp.wait_notification("notifications/progress", Duration::from_secs(60));
    assert!(first.is_some(), "the turn started streaming");
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id, "reason": "user"}}));
    // The engine turn ends cancelled; the transcript shows it.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let list = mcp.call_ok("list_sessions", json!({}));
        let status = list["structuredContent"]["sessions"][0]["status"].clone();
        if status == "cancelled" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the turn was not cancelled: {status}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let list = mcp.call_ok("list_sessions", json!({}));
    let sid = list["structuredContent"]["sessions"][0]["id"].clone();
    let t = mcp.call_ok("get_transcript", json!({"session_id": sid}));
    let last = t["structuredContent"]["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .expect("message");
    assert_eq!(last["status"], "cancelled");
}

#[test]
fn ask_agent_runs_hecates_own_agent_and_elicits_its_tool_gate() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call(
            "file_write",
            json!({"path": "out.txt", "content": "from the loop\n"})
        )]),
        answer("Wrote out.txt."),
    ])));
    let home = agent_home(&server, WIRES[0], "file_write");
    let (_dir, ws) = workspace();
    let mut mcp = McpProc::start(&home, json!({"elicitation": {}}));
    let target = format!("hecate:{}", WIRES[0].2);
    let (r, elicited) = ask_approving(
        &mut mcp,
        "h1",
        json!({"target": target, "prompt": "write the file", "workspace": ws}),
    );
    let result = &r["result"];
    assert_eq!(
        elicited.len(),
        1,
        "the loop's file_write gate was asked: {elicited:?}"
    );
    assert_eq!(
        result["structuredContent"]["answer"], "Wrote out.txt.",
        "{r}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("out.txt")).expect("written"),
        "from the loop\n"
    );
    let bad = mcp.request(
        "tools/call",
        json!({"name": "ask_agent", "arguments": {"target": "hecate:nomodel", "prompt": "x"}}),
    );
    assert_eq!(bad["result"]["isError"], true, "{bad}");
}

#[test]
fn ask_agent_on_the_bare_hecate_target_runs_on_the_default_model() {
    let server = ModelServer::start(Some(json!([answer("On the default model.")])));
    let extra = format!("[tasks]\ndefault_model = \"{}\"\n", WIRES[0].2);
    let home = crate::support::agent::agent_home_with(&server, WIRES[0], "", &extra);
    let (_dir, ws) = workspace();
    let mut mcp = McpProc::start(&home, json!({}));
    let r = mcp.request(
        "tools/call",
        json!({"name": "ask_agent", "arguments": {
            "target": "hecate", "prompt": "which model are you", "workspace": ws}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    assert_eq!(
        r["result"]["structuredContent"]["answer"], "On the default model.",
        "{r}"
    );
    let model = WIRES[0].2.split('/').nth(1).expect("model");
    assert_eq!(server.requests()[0]["body"]["model"], model);
}
