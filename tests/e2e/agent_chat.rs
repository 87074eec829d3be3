//! Agent Chat with Hecate's own agent (`runtime_kind="agent"`) against the real
//! `hecate serve` and `hecate chat --tools`, with the fixture model server
//! scripted with tool-calling turns: the first prompt creates an `agent_loop`
//! task and answers with its final answer, a follow-up continues the task's
//! run; a turn waiting for a task approval makes the session busy (409 naming
//! the task run) until the approval is resolved on the session; no workspace
//! is `agent_chat.workspace_required`; the CLI asks the approval on stdin; the
//! agent's plan as an activity of its answer.

use crate::support::agent::{
    WIRES, agent_home, answer, call, data, edit_notes, events, said, tools_chat_args, turn,
};
use crate::support::common::{Home, ModelServer, session_id_from, text, workspace};
use crate::support::http::{Api, Served, serve};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// Creates a Hecate Agent session on `model` in `ws`.
async fn agent_session(api: &Api, model: &str, ws: &Path) -> String {
    let a = api
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({"runtime_kind": "agent", "model": model, "workspace": ws,
                   "system_prompt": "be terse"}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["data"]["runtime_kind"], "agent");
    a.body["data"]["id"].as_str().expect("id").to_string()
}

/// The assistant messages of an answered turn's transcript.
fn assistants(body: &Value) -> Vec<Value> {
    body["data"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "assistant")
        .cloned()
        .collect()
}

#[tokio::test]
async fn a_first_prompt_creates_the_task_and_a_follow_up_continues_its_run() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call("read_file", json!({"path": "notes.txt"}))]),
        answer("The notes say hello."),
        turn(vec![edit_notes("chat")]),
        answer("Edited the notes."),
    ])));
    let home = agent_home(&server, WIRES[0], "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    std::fs::write(ws.join("notes.txt"), "hello world\n").expect("seed");
    let id = agent_session(&api, WIRES[0].2, &ws).await;

    let first = api.say(&id, "what do the notes say?").await;
    assert_eq!(first.status, 200, "{}", first.body);
    let a1 = assistants(&first.body);
    assert_eq!(a1.len(), 1);
    assert_eq!(a1[0]["content"], "The notes say hello.");
    assert_eq!(a1[0]["status"], "completed");
    assert_eq!(a1[0]["runtime_kind"], "agent");
    let task = a1[0]["task_id"].as_str().expect("task_id").to_string();
    let run1 = a1[0]["task_run_id"]
        .as_str()
        .expect("task_run_id")
        .to_string();
    let activities = a1[0]["activities"].to_string();
    assert!(activities.contains("read_file"), "{activities}");
    // Where the time went, from the backing run's steps.
    let timing = &a1[0]["timing"];
    assert_eq!(
        (&timing["turn_count"], &timing["tool_count"]),
        (&json!(2), &json!(1)),
        "{timing}"
    );
    let bucket = |k: &str| {
        timing[k]
            .as_i64()
            .unwrap_or_else(|| panic!("{k} in {timing}"))
    };
    let parts = [
        "queue_ms",
        "model_ms",
        "tool_ms",
        "approval_wait_ms",
        "overhead_ms",
    ];
    assert!(parts.iter().all(|k| bucket(k) >= 0), "{timing}");
    assert_eq!(
        parts.iter().map(|k| bucket(k)).sum::<i64>(),
        bucket("total_ms"),
        "{timing}"
    );
    assert_eq!(bucket("approval_wait_ms"), 0);
    let neck = timing["bottleneck"].as_str().expect("bottleneck");
    assert_eq!(
        bucket("bottleneck_ms"),
        bucket(&format!("{neck}_ms")),
        "{timing}"
    );

    // The backing task is a visible agent_loop task in the session's workspace.
    let t = api.get(&format!("/hecate/v1/tasks/{task}")).await;
    assert_eq!(t.status, 200, "{}", t.body);
    assert_eq!(t.body["data"]["execution_kind"], "agent_loop");
    assert_eq!(
        t.body["data"]["working_directory"],
        ws.display().to_string()
    );
    assert_eq!(t.body["data"]["system_prompt"], "be terse");

    let second = api.say(&id, "now change world to chat").await;
    assert_eq!(second.status, 200, "{}", second.body);
    // The turn's answer holds this turn only; the session holds both.
    let a2 = assistants(&second.body);
    assert_eq!(a2.len(), 1, "{}", second.body);
    let whole = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(assistants(&whole.body).len(), 2, "{}", whole.body);
    assert_eq!(a2[0]["content"], "Edited the notes.");
    assert_eq!(
        a2[0]["task_id"],
        task.as_str(),
        "the follow-up continues the task"
    );
    let run2 = a2[0]["task_run_id"].as_str().expect("run").to_string();
    assert_ne!(run2, run1);
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).expect("read"),
        "hello chat\n"
    );
    let linked: Vec<Value> = events(&api, &task, &run2)
        .await
        .into_iter()
        .filter(|e| e["type"] == "run.resumed_from_event")
        .collect();
    assert_eq!(linked.len(), 1);
    assert_eq!(linked[0]["data"]["mode"], "continue");
    // The continued run's first model call carries the first run's conversation.
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    let carried = said(&requests[2]);
    assert!(carried.contains("hello world"), "{carried}");
    assert!(carried.contains("The notes say hello."), "{carried}");
    assert!(carried.contains("now change world to chat"), "{carried}");
    // One segment: both turns ran on Hecate Agent.
    let segments = second.body["data"]["segments"]
        .as_array()
        .expect("segments");
    assert_eq!(segments.len(), 1, "{segments:?}");
    assert_eq!(segments[0]["task_id"], task.as_str(), "{segments:?}");
    assert_eq!(segments[0]["task_run_id"], run2.as_str(), "{segments:?}");
}

#[tokio::test]
async fn the_plan_the_agent_shares_is_an_activity_of_its_answer() {
    let entry =
        |status: &str| json!({"content": "Read the notes", "priority": "high", "status": status});
    let server = ModelServer::start(Some(json!([
        turn(vec![call(
            "update_plan",
            json!({"entries": [entry("in_progress")]})
        )]),
        turn(vec![call(
            "update_plan",
            json!({"entries": [entry("completed")]})
        )]),
        answer("Planned and done."),
    ])));
    let home = agent_home(&server, WIRES[0], "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let id = agent_session(&api, WIRES[0].2, &ws).await;
    let said_back = api.say(&id, "plan it").await;
    assert_eq!(said_back.status, 200, "{}", said_back.body);
    let answer = &assistants(&said_back.body)[0];
    assert_eq!(answer["content"], "Planned and done.");
    let rows = answer["activities"].as_array().expect("activities");
    let plans: Vec<&Value> = rows.iter().filter(|r| r["type"] == "plan").collect();
    assert_eq!(plans.len(), 1, "one row showing the latest plan: {rows:#?}");
    assert_eq!(
        (&plans[0]["status"], &plans[0]["detail"]),
        (&json!("completed"), &json!("1 of 1 done"))
    );
    assert!(
        !rows.iter().any(|r| r["type"] == "tool_call"),
        "plan calls are not tool-call rows: {rows:#?}"
    );
}

#[tokio::test]
async fn a_turn_awaiting_a_task_approval_makes_the_session_busy_until_it_is_resolved() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call(
            "file_write",
            json!({"path": "out.txt", "content": "written\n"})
        )]),
        answer("Wrote out.txt."),
    ])));
    let home = agent_home(&server, WIRES[0], "file_write");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let id = agent_session(&api, WIRES[0].2, &ws).await;

    let prompt = {
        let api = Api::new(&s);
        let id = id.clone();
        tokio::spawn(async move { api.say(&id, "write out.txt").await })
    };
    let mut pending = Vec::new();
    for _ in 0..600 {
        pending = data(
            &api,
            &format!("/hecate/v1/agent-chat/sessions/{id}/approvals"),
        )
        .await
        .into_iter()
        .filter(|a| a["status"] == "pending")
        .collect();
        if !pending.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(pending.len(), 1, "the task's gate reaches the session");
    assert!(
        pending[0]["tool_name"]
            .as_str()
            .unwrap_or("")
            .contains("file_write")
    );

    let busy = api.say(&id, "another prompt").await;
    assert_eq!(busy.status, 409, "{}", busy.body);
    assert_eq!(busy.error_type(), "agent_chat.agent_session_busy");
    let err = &busy.body["error"];
    assert_eq!(err["run_status"], "awaiting_approval", "{err}");
    let task = err["task_id"].as_str().expect("task_id");
    let run = err["latest_run_id"].as_str().expect("latest_run_id");
    let gates = data(&api, &format!("/hecate/v1/tasks/{task}/approvals")).await;
    assert_eq!(gates.len(), 1);
    assert_eq!(
        (gates[0]["run_id"].as_str(), gates[0]["status"].as_str()),
        (Some(run), Some("pending"))
    );
    // A direct model turn is refused too.
    let model_turn = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/messages"),
            json!({"content": "plain chat", "runtime_kind": "model"}),
        )
        .await;
    assert_eq!(model_turn.error_type(), "agent_chat.agent_session_busy");

    let approval = pending[0]["id"].as_str().expect("approval id");
    let resolved = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/approvals/{approval}/resolve"),
            json!({"decision": "approve"}),
        )
        .await;
    assert_eq!(resolved.status, 200, "{}", resolved.body);
    let answered = prompt.await.expect("prompt task");
    assert_eq!(answered.status, 200, "{}", answered.body);
    let a = assistants(&answered.body);
    assert_eq!(a[0]["content"], "Wrote out.txt.");
    assert_eq!(
        std::fs::read_to_string(ws.join("out.txt")).expect("written"),
        "written\n"
    );
    let gates = data(&api, &format!("/hecate/v1/tasks/{task}/approvals")).await;
    assert_eq!(gates[0]["status"], "approved");
}

#[tokio::test]
async fn hecate_agent_turns_need_a_workspace() {
    let server = ModelServer::start(Some(json!([])));
    let home = agent_home(&server, WIRES[0], "");
    let s = serve(&home);
    let api = Api::new(&s);
    let created = api
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({"runtime_kind": "agent", "model": WIRES[0].2}),
        )
        .await;
    assert_eq!(created.status, 400, "{}", created.body);
    assert_eq!(created.error_type(), "agent_chat.workspace_required");
    // A model session switching to the agent without a workspace.
    let id = api.create_session(json!({"model": WIRES[0].2})).await;
    let switched = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/messages"),
            json!({"content": "use tools", "runtime_kind": "agent"}),
        )
        .await;
    assert_eq!(switched.status, 400, "{}", switched.body);
    assert_eq!(switched.error_type(), "agent_chat.workspace_required");
    assert!(server.requests().is_empty());
}

#[test]
fn hecate_chat_with_tools_asks_the_approval_on_the_terminal_and_continues_with_session() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call(
            "file_write",
            json!({"path": "hello.txt", "content": "hi\n"})
        )]),
        answer("Created hello.txt."),
        answer("It says hi."),
    ])));
    let home = agent_home(&server, WIRES[0], "file_write");
    let (_dir, ws) = workspace();
    let ws_arg = ws.display().to_string();
    let out = home.run_with_stdin(&tools_chat_args(&ws_arg, &["create hello.txt"]), b"a\n");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "Created hello.txt.", "{stderr}");
    assert!(stderr.contains("permission requested"), "{stderr}");
    assert!(stderr.contains("[tool: file_write (edit)]"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(ws.join("hello.txt")).expect("written"),
        "hi\n"
    );
    let id = session_id_from(&out.stderr);

    let out = home.run_with_stdin(
        &["chat", "--session", &id, "--tools", "what does it say?"],
        b"",
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "It says hi.");
    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    let answers: Vec<&Value> = show["data"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "assistant")
        .collect();
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0]["task_id"], answers[1]["task_id"], "{show}");
    assert_ne!(answers[0]["task_run_id"], answers[1]["task_run_id"]);
}

/// The dialogue of the newest model request whose last message is `last`:
/// (role, text) of its user and assistant messages and summaries (the agent's
/// own system prompt left out).
fn dialogue_ending(server: &ModelServer, last: &str) -> Vec<(String, String)> {
    server
        .requests()
        .iter()
        .rev()
        .map(|r| {
            r["body"]["messages"]
                .as_array()
                .map(|ms| {
                    ms.iter()
                        .map(|m| {
                            let role = m["role"].as_str().unwrap_or("").to_string();
                            (role, m["content"].as_str().unwrap_or("").to_string())
                        })
                        .filter(|(r, c)| r != "system" || c.starts_with("Summary: "))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
        .find(|ms| ms.last().is_some_and(|(_, c)| c == last))
        .unwrap_or_else(|| panic!("no model request ended with {last:?}"))
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(r, c)| (r.to_string(), c.to_string()))
        .collect()
}

/// The task behind the newest answer of a turn.
fn answered_by(body: &Value) -> String {
    let last = assistants(body).pop().expect("an answer");
    assert_eq!(last["status"], "completed", "{body}");
    last["task_id"].as_str().expect("task_id").to_string()
}

/// An echoing model server and a served home running the agent on it.
fn echo_agent() -> (ModelServer, Home, Served, Api) {
    let server = ModelServer::start(None);
    let home = agent_home(&server, WIRES[0], "");
    let served = serve(&home);
    let api = Api::new(&served);
    (server, home, served, api)
}

#[tokio::test]
async fn an_agent_session_loads_its_conversation_through_its_memory_strategy() {
    let (server, _home, _served, api) = echo_agent();
    let (_dir, ws) = workspace();
    let id = api
        .create_session(
            json!({"runtime_kind": "agent", "model": WIRES[0].2, "workspace": ws,
                   "history": {"strategy": "buffer_window", "window": 4}}),
        )
        .await;
    let say = async |content: &str| -> String {
        let a = api.say(&id, content).await;
        assert_eq!(a.status, 200, "{}", a.body);
        answered_by(&a.body)
    };

    let first = say("one").await;
    assert_eq!(dialogue_ending(&server, "one"), pairs(&[("user", "one")]));
    // While the window reaches the task's first message, the task goes on.
    assert_eq!(say("two").await, first, "the follow-up continues the task");
    assert_eq!(
        dialogue_ending(&server, "two"),
        pairs(&[("user", "one"), ("assistant", "echo: one"), ("user", "two")])
    );
    // The window (4) no longer holds "one": a fresh task primed with exactly
    // what the strategy loads.
    let third = say("three").await;
    assert_ne!(third, first, "a fresh task");
    assert_eq!(
        dialogue_ending(&server, "three"),
        pairs(&[
            ("assistant", "echo: one"),
            ("user", "two"),
            ("assistant", "echo: two"),
            ("user", "three")
        ])
    );
    let fourth = say("four").await;
    assert_ne!(fourth, third);
    assert_eq!(
        dialogue_ending(&server, "four"),
        pairs(&[
            ("assistant", "echo: two"),
            ("user", "three"),
            ("assistant", "echo: three"),
            ("user", "four")
        ])
    );
    // The primed context is the task's, and the session keeps every message.
    let t = api.get(&format!("/hecate/v1/tasks/{fourth}")).await;
    assert_eq!(t.status, 200, "{}", t.body);
    assert_eq!(t.body["data"]["prompt"], "four");
    assert_eq!(t.body["data"]["context_messages"], 3, "{}", t.body);
    // Sequences count from 0: "echo: two" is the fourth message.
    assert_eq!(t.body["data"]["session_sequence"], 3, "{}", t.body);
    assert_eq!(
        t.body["data"]["session_id"],
        id.as_str(),
        "the task names its chat"
    );
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(
        shown.body["data"]["messages"].as_array().map(Vec::len),
        Some(8)
    );
}

#[tokio::test]
async fn an_agent_turn_after_model_turns_sees_them_and_a_summary_starts_a_fresh_task() {
    let (server, _home, _served, api) = echo_agent();
    let (_dir, ws) = workspace();
    let id = api
        .create_session(json!({"model": WIRES[0].2, "workspace": ws,
                   "history": {"strategy": "summary_buffer"}}))
        .await;
    let say = async |content: &str, kind: &str| -> Value {
        let a = api
            .post(
                &format!("/hecate/v1/agent-chat/sessions/{id}/messages"),
                json!({"content": content, "runtime_kind": kind}),
            )
            .await;
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.body["data"]["status"], "completed", "{}", a.body);
        a.body
    };
    // A model turn, then the agent: its task starts from the model segment.
    say("My cat is called Miso", "model").await;
    let body = say("m1", "agent").await;
    let task = answered_by(&body);
    assert_eq!(
        dialogue_ending(&server, "m1"),
        pairs(&[
            ("user", "My cat is called Miso"),
            ("assistant", "echo: My cat is called Miso"),
            ("user", "m1")
        ])
    );
    // Up to the boundary (20 messages) the agent carries its task on.
    for i in 2..=9 {
        let body = say(&format!("m{i}"), "agent").await;
        assert_eq!(answered_by(&body), task, "turn m{i} continues the task");
    }
    // The summary the session's model writes at the boundary stands in for
    // the twenty messages: the next agent turn is a fresh task primed with it.
    let summary = {
        let mut found = None;
        for _ in 0..500 {
            let shown = api
                .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
                .await;
            found = shown.body["data"]["messages"]
                .as_array()
                .and_then(|ms| ms.iter().find(|m| m["is_summary"] == true).cloned());
            if found.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        found.expect("a summary at the boundary")
    };
    let content = summary["content"].as_str().expect("summary").to_string();
    let body = say("after", "agent").await;
    assert_ne!(answered_by(&body), task, "a fresh task after the summary");
    assert_eq!(
        dialogue_ending(&server, "after"),
        vec![
            ("system".to_string(), content),
            ("user".to_string(), "after".to_string())
        ]
    );
}

/// A Hecate Agent turn's edits are captured like an external agent's: the
/// answer's files list and diff show them, and a revert puts the file back.
#[tokio::test]
async fn a_hecate_agent_turns_changed_files_are_listed_diffed_and_reverted() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call(
            "file_edit",
            json!({"path": "a.txt", "old_string": "original", "new_string": "edited"}),
        )]),
        answer("Edited a.txt."),
    ])));
    let home = agent_home(&server, WIRES[0], "");
    let s = serve(&home);
    let api = Api::new(&s);
    let ws = crate::support::common::git_workspace();
    let ws_path = std::fs::canonicalize(ws.path()).expect("canonical");
    let id = agent_session(&api, WIRES[0].2, &ws_path).await;
    let r = api.say(&id, "edit a.txt").await;
    assert_eq!(r.status, 200, "{}", r.body);
    let answer = &assistants(&r.body)[0];
    assert_eq!(answer["status"], "completed", "{answer}");
    let mid = answer["id"].as_str().expect("message id");
    let files = api
        .get(&format!(
            "/hecate/v1/agent-chat/sessions/{id}/messages/{mid}/files"
        ))
        .await;
    assert_eq!(files.status, 200, "{}", files.body);
    let paths: Vec<&str> = files.body["data"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert_eq!(paths, ["a.txt"], "{}", files.body);
    let diff = api
        .get(&format!(
            "/hecate/v1/agent-chat/sessions/{id}/messages/{mid}/files/a.txt"
        ))
        .await;
    let text = diff.body["data"]["diff"].as_str().unwrap_or_default();
    assert!(
        text.contains("-original") && text.contains("+edited"),
        "{}",
        diff.body
    );
    let revert = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/messages/{mid}/revert"),
            json!({"paths": []}),
        )
        .await;
    assert_eq!(revert.status, 200, "{}", revert.body);
    assert_eq!(
        std::fs::read_to_string(ws_path.join("a.txt")).expect("read"),
        "original\n"
    );
}
