//! Helpers for tests of Hecate's own agent (`agent_loop` tasks) over HTTP: a
//! home whose provider points at the fixture model server, scripted turns,
//! task bodies, and reads of runs, steps and events.

use super::common::{Home, ModelServer};
use super::http::Api;
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// The two wire formats: (provider env name, kind, model reference).
pub const WIRES: [(&str, &str, &str); 2] = [
    ("FIX", "openai", "fix/gpt-fixture"),
    ("ANT", "anthropic", "ant/claude-fixture"),
];

/// A home whose provider of `kind` points at `server`, priced at 1 micro-USD
/// per token, with the given approval policies.
pub fn agent_home(server: &ModelServer, wire: (&str, &str, &str), policies: &str) -> Home {
    agent_home_with(server, wire, policies, "")
}

/// [`agent_home`] with more configuration (`extra`, TOML) in its file.
pub fn agent_home_with(
    server: &ModelServer,
    (name, kind, model): (&str, &str, &str),
    policies: &str,
    extra: &str,
) -> Home {
    let mut home = Home::empty();
    let base = if kind == "openai" {
        format!("{}/v1", server.base)
    } else {
        server.base.clone()
    };
    home.set(&format!("PROVIDER_{name}_BASE_URL"), &base);
    home.set(&format!("PROVIDER_{name}_KIND"), kind);
    home.set(&format!("PROVIDER_{name}_API_KEY"), "test-key");
    home.set("HECATE_TASK_APPROVAL_POLICIES", policies);
    home.write_config(&format!(
        "{extra}\n[pricing.\"{model}\"]\ninput_usd_per_mtok = 1.0\noutput_usd_per_mtok = 1.0\n"
    ));
    home
}

/// The arguments of `hecate chat --tools` on `WIRES[0]`'s model in `ws`, then
/// `args`.
pub fn tools_chat_args<'a>(ws: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["chat", "--tools", "--model", WIRES[0].2, "--workspace", ws];
    all.extend_from_slice(args);
    all
}

/// A scripted tool call.
pub fn call(name: &str, arguments: Value) -> Value {
    json!({"name": name, "arguments": arguments})
}

/// A scripted model turn asking for `calls`.
pub fn turn(calls: Vec<Value>) -> Value {
    json!({"tool_calls": calls, "usage": {"input_tokens": 100, "output_tokens": 10}})
}

/// A scripted final answer.
pub fn answer(text: &str) -> Value {
    json!({"text": text, "usage": {"input_tokens": 100, "output_tokens": 10}})
}

/// Creates a task and starts it; answers the task and run ids.
pub async fn create_and_start(api: &Api, body: Value) -> (String, String) {
    let a = api.post("/hecate/v1/tasks", body).await;
    assert_eq!(a.status, 201, "{}", a.body);
    let task = a.body["data"]["id"].as_str().expect("id").to_string();
    let r = api
        .post(&format!("/hecate/v1/tasks/{task}/start"), json!({}))
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let run = r.body["data"]["id"].as_str().expect("run").to_string();
    (task, run)
}

/// [`agent_task`] with the task's own MCP servers, `servers`.
pub fn mcp_task(model: &str, ws: &Path, servers: Value) -> Value {
    agent_task(model, ws, json!({"mcp_servers": servers}))
}

/// The statuses a run ends in.
pub const ENDED: [&str; 3] = ["completed", "failed", "cancelled"];

/// Polls a run until it ends and asserts that it completed; answers the run.
pub async fn completed(api: &Api, task: &str, run: &str) -> Value {
    let done = reaches(api, task, run, &ENDED).await;
    assert_eq!(done["status"], "completed", "{done}");
    done
}

/// Creates and starts a task of `body` and waits for its run to end; answers
/// the task and run ids and the ended run.
pub async fn run_to_end(api: &Api, body: Value) -> (String, String, Value) {
    let (task, run) = create_and_start(api, body).await;
    let done = reaches(api, &task, &run, &ENDED).await;
    (task, run, done)
}

/// [`run_to_end`], asserting that the run completed.
pub async fn run_completed(api: &Api, body: Value) -> (String, String, Value) {
    let (task, run) = create_and_start(api, body).await;
    let done = completed(api, &task, &run).await;
    (task, run, done)
}

/// An `agent_loop` task body working in place in `ws`, with `extra` fields.
pub fn agent_task(model: &str, ws: &Path, extra: Value) -> Value {
    let mut body = json!({"execution_kind": "agent_loop", "prompt": "fix the greeting",
                          "requested_model": model, "workspace_mode": "in_place",
                          "working_directory": ws});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    body
}

/// Polls a run until its status is one of `wanted` (a hang guard, not a timing
/// assertion).
pub async fn reaches(api: &Api, task: &str, run: &str, wanted: &[&str]) -> Value {
    for _ in 0..600 {
        let a = api
            .get(&format!("/hecate/v1/tasks/{task}/runs/{run}"))
            .await;
        if wanted.contains(&a.body["data"]["status"].as_str().unwrap_or_default()) {
            return a.body["data"].clone();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("run {run} never reached {wanted:?}");
}

/// The `data` list of a GET.
pub async fn data(api: &Api, path: &str) -> Vec<Value> {
    let a = api.get(path).await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["data"].as_array().expect("list").clone()
}

/// The events of a run.
pub async fn events(api: &Api, task: &str, run: &str) -> Vec<Value> {
    data(api, &format!("/hecate/v1/tasks/{task}/runs/{run}/events")).await
}

/// How many events are of `event_type`.
pub fn count(events: &[Value], event_type: &str) -> usize {
    events.iter().filter(|e| e["type"] == event_type).count()
}

/// The text of a recorded request body's messages (every string in them).
pub fn said(request: &Value) -> String {
    request["body"]["messages"].to_string()
}

/// Asserts that the text of a recorded request's messages contains `needle`.
pub fn assert_said(request: &Value, needle: &str) {
    let said = said(request);
    assert!(said.contains(needle), "{needle:?} in {said}");
}

/// Approves the pending task approval `id` of `task`, asserting it was taken.
pub async fn approve(api: &Api, task: &str, id: &str) {
    let ok = api
        .post(
            &format!("/hecate/v1/tasks/{task}/approvals/{id}/resolve"),
            json!({"decision": "approve"}),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
}

/// A scripted edit of notes.txt that replaces "world" with `with`.
pub fn edit_notes(with: &str) -> Value {
    call(
        "file_edit",
        json!({"path": "notes.txt", "old_string": "world", "new_string": with}),
    )
}

/// The model script of the read–edit–run scenario: read notes.txt, replace
/// "world" with "agent" in it, run `cat notes.txt`, then answer `last`.
pub fn read_edit_run(last: &str) -> Value {
    json!([
        turn(vec![call("read_file", json!({"path": "notes.txt"}))]),
        turn(vec![edit_notes("agent")]),
        turn(vec![call(
            "shell_exec",
            json!({"command": "cat notes.txt"})
        )]),
        answer(last),
    ])
}
