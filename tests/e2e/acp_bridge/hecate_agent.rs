//! Hecate's own agent as the editor's target in `hecate acp`: the real binary,
//! the fixture model server scripted with tool-calling turns, and the scripted
//! editor. A turn that reads a file, edits it after a permission prompt and
//! runs a command, seen as ACP tool calls with locations and a diff; "allow
//! always" answering later gates of the same kind (on the default model); a rejection the model is
//! told about; `session/cancel` cancelling the task run; the agent's plan as
//! `plan` updates; the editor's MCP servers joining the tool catalog (under
//! unique aliases when their names clean alike); unknown models and missing
//! workspaces.

use crate::support::acp_editor::*;
use crate::support::agent::{
    WIRES, answer as final_answer, call, edit_notes, read_edit_run, said, turn,
};
use crate::support::common::{Home, ModelServer, workspace};
use crate::support::mcp::fixtures_bin;
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, McpServer, McpServerStdio, NewSessionRequest, PromptRequest,
    SessionConfigOptionValue, SessionUpdate, SetSessionConfigOptionRequest, SetSessionModeRequest,
    StopReason,
};
use serde_json::{Value, json};
use std::path::Path;

/// The Hecate agent target on the fixture model.
const TARGET: &str = "hecate:fix/gpt-fixture";

/// A home whose provider `fix` (OpenAI wire) points at `server` and declares
/// its model, with `policies` gating the agent's tools.
fn loop_home(server: &ModelServer, policies: &str) -> Home {
    let mut home = crate::support::agent::agent_home(server, WIRES[0], policies);
    home.set("PROVIDER_FIX_MODELS", "gpt-fixture");
    home
}

/// Every update as its ACP JSON.
fn as_json(updates: &[SessionUpdate]) -> Vec<Value> {
    updates
        .iter()
        .map(|u| serde_json::to_value(u).expect("json"))
        .collect()
}

/// The `tool_call` announcing the call of `kind`.
fn announced<'a>(updates: &'a [Value], kind: &str) -> &'a Value {
    updates
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["kind"] == kind)
        .unwrap_or_else(|| panic!("a {kind} tool call in {updates:#?}"))
}

/// The last `tool_call_update` of call `id` that carries a status.
fn last_status(updates: &[Value], id: &Value) -> Value {
    updates
        .iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && &u["toolCallId"] == id)
        .filter_map(|u| u.get("status").cloned())
        .next_back()
        .unwrap_or(Value::Null)
}

/// The content of the update of call `id` that finished it.
fn finished_content(updates: &[Value], id: &Value) -> Value {
    updates
        .iter()
        .rev()
        .find(|u| {
            u["sessionUpdate"] == "tool_call_update"
                && &u["toolCallId"] == id
                && u.get("content").is_some()
        })
        .map(|u| u["content"].clone())
        .unwrap_or(Value::Null)
}

/// [`one_prompt`] to the Hecate agent target.
async fn agent_prompt(
    home: &Home,
    editor: Editor,
    new: NewSessionRequest,
    text: &str,
) -> (Hecate, Vec<SessionUpdate>) {
    one_prompt(
        home,
        &["--target", TARGET],
        editor,
        Caps::default(),
        new,
        text,
    )
    .await
}

/// The editor's stdio MCP server `name` running the fixture MCP server.
fn fixture_mcp_server(name: &str) -> McpServer {
    McpServer::Stdio(McpServerStdio::new(name, fixtures_bin()).args(vec!["mcp-server".into()]))
}

fn seeded(ws: &Path) -> std::path::PathBuf {
    let notes = ws.join("notes.txt");
    std::fs::write(&notes, "hello world\n").expect("seed");
    notes
}

#[tokio::test(flavor = "multi_thread")]
async fn the_hecate_agent_reads_edits_after_a_permission_prompt_and_runs_a_command() {
    let mut script = read_edit_run("All done.");
    // The answer's words arrive apart, so each is streamed as it comes (words
    // that arrive together are merged into one update).
    script[3]["chunk_delay_ms"] = json!(100);
    let server = ModelServer::start(Some(script));
    let home = loop_home(&server, "file_write");
    let (_guard, ws) = workspace();
    let notes = seeded(&ws);
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    let editor = Editor::answering(Permission::AllowOnce);
    let updates = run_editor(transport, editor.clone(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let new = new_session(&cx, &ws).await?;
        let modes = new.modes.expect("targets as modes");
        let hecate = modes
            .available_modes
            .iter()
            .find(|m| m.id.0.as_ref() == TARGET)
            .unwrap_or_else(|| panic!("{TARGET} offered in {:?}", modes.available_modes));
        assert!(hecate.name.contains("Hecate agent"), "{}", hecate.name);
        let sid = new.session_id;
        cx.send_request(SetSessionModeRequest::new(sid.clone(), TARGET))
            .block_task()
            .await?;
        assert_eq!(
            prompt(&cx, &sid, "fix the greeting").await?,
            StopReason::EndTurn
        );
        Ok(updates.drain())
    })
    .await
    .expect("editor session");
    let got = as_json(&updates);
    assert_eq!(answer(&updates), "All done.");
    // The model's last turn may talk before the turn's follower has read the
    // end of the command before it; its words still come after that end.
    let ended = got
        .iter()
        .rposition(|u| u["sessionUpdate"] == "tool_call_update" && u.get("status").is_some())
        .expect("tool calls");
    let first_word = updates.iter().position(|u| agent_text(u).is_some());
    assert!(
        first_word.is_some_and(|w| w > ended),
        "the answer's words follow the last tool call's end: {got:#?}"
    );
    let chunks = updates.iter().filter_map(agent_text).count();
    assert!(
        chunks >= 2,
        "the answer streams as the model says it, word by word: {chunks} chunk(s)"
    );
    assert_eq!(
        std::fs::read_to_string(&notes).expect("read"),
        "hello agent\n"
    );
    let path = notes.display().to_string();

    let read = announced(&got, "read");
    assert_eq!(read["title"], "Read notes.txt", "{read}");
    assert_eq!(read["locations"], json!([{"path": path}]));
    assert_eq!(read["rawInput"], json!({"path": "notes.txt"}));
    assert_eq!(last_status(&got, &read["toolCallId"]), "completed");
    let read_out = finished_content(&got, &read["toolCallId"]).to_string();
    assert!(read_out.contains("hello world"), "{read_out}");

    let edit = announced(&got, "edit");
    assert_eq!(edit["title"], "Edit notes.txt", "{edit}");
    assert!(
        edit.get("status").is_none_or(|s| s == "pending"),
        "announced pending (the default) while it waits: {edit}"
    );
    assert_eq!(edit["locations"], json!([{"path": path}]));
    assert_eq!(last_status(&got, &edit["toolCallId"]), "completed");
    assert_eq!(
        finished_content(&got, &edit["toolCallId"]),
        json!([{"type": "diff", "path": path, "oldText": "hello world\n", "newText": "hello agent\n"}])
    );

    let run = announced(&got, "execute");
    assert_eq!(run["title"], "Run cat notes.txt", "{run}");
    assert_eq!(last_status(&got, &run["toolCallId"]), "completed");
    let out = finished_content(&got, &run["toolCallId"]).to_string();
    assert!(out.contains("hello agent"), "{out}");

    let asked = editor.with(|e| e.permission_requests.clone());
    assert_eq!(asked.len(), 1, "only the gated edit was asked: {asked:?}");
    assert_eq!(
        serde_json::to_value(&asked[0].tool_call.tool_call_id).expect("id"),
        edit["toolCallId"]
    );
    let kinds: Vec<Value> = asked[0]
        .options
        .iter()
        .map(|o| serde_json::to_value(o).expect("json")["kind"].clone())
        .collect();
    assert_eq!(
        kinds,
        [
            json!("allow_once"),
            json!("allow_always"),
            json!("reject_once")
        ]
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4, "one model call per turn");
    assert!(said(&requests[3]).contains("hello agent"));
}

#[tokio::test(flavor = "multi_thread")]
async fn allow_always_answers_the_next_gate_of_the_same_kind() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call(
            "file_write",
            json!({"path": "one.txt", "content": "1\n"})
        )]),
        turn(vec![call(
            "file_write",
            json!({"path": "two.txt", "content": "2\n"})
        )]),
        final_answer("Both written."),
    ])));
    let mut home = loop_home(&server, "file_write");
    home.set("HECATE_GATEWAY_DEFAULT_MODEL", "fix/gpt-fixture");
    let (_guard, ws) = workspace();
    // `hecate`: the agent on the hub's default model.
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "hecate"]);
    let editor = Editor::answering(Permission::AllowAlways);
    let text = run_editor(transport, editor.clone(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let new = new_session(&cx, &ws).await?;
        let modes = new.modes.expect("modes");
        assert_eq!(modes.current_mode_id.0.as_ref(), "hecate");
        let sid = new.session_id;
        assert_eq!(prompt(&cx, &sid, "write both").await?, StopReason::EndTurn);
        Ok(answer(&updates.drain()))
    })
    .await
    .expect("editor session");
    assert_eq!(text, "Both written.");
    assert_eq!(editor.with(|e| e.permission_requests.len()), 1);
    assert!(ws.join("one.txt").exists() && ws.join("two.txt").exists());
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[0]["body"]["model"], "gpt-fixture",
        "the default model"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejected_edit_is_refused_and_the_model_is_told() {
    let server = ModelServer::start(Some(json!([
        turn(vec![edit_notes("agent")]),
        final_answer("Left it alone."),
    ])));
    let home = loop_home(&server, "file_write");
    let (_guard, ws) = workspace();
    let notes = seeded(&ws);
    let editor = Editor::answering(Permission::RejectOnce);
    let (_hecate, updates) = agent_prompt(
        &home,
        editor.clone(),
        NewSessionRequest::new(&ws),
        "fix the greeting",
    )
    .await;
    assert_eq!(answer(&updates), "Left it alone.");
    assert_eq!(
        std::fs::read_to_string(&notes).expect("read"),
        "hello world\n"
    );
    let got = as_json(&updates);
    let edit = announced(&got, "edit");
    assert_eq!(last_status(&got, &edit["toolCallId"]), "failed");
    assert!(
        finished_content(&got, &edit["toolCallId"])
            .to_string()
            .contains("refused"),
        "{got:#?}"
    );
    assert_eq!(editor.with(|e| e.permission_requests.len()), 1);
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert!(
        said(&requests[1]).contains("refused"),
        "{}",
        said(&requests[1])
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_while_a_gate_waits_cancels_the_task_run() {
    let server = ModelServer::start(Some(json!([turn(vec![edit_notes("agent")])])));
    let home = loop_home(&server, "file_write");
    let (_guard, ws) = workspace();
    let notes = seeded(&ws);
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", TARGET]);
    let editor = Editor::answering(Permission::Never);
    run_editor(transport, editor.clone(), async |cx, _updates| {
        let sid = open(&cx, &ws).await?;
        let pending = cx
            .send_request(PromptRequest::new(
                sid.clone(),
                vec![ContentBlock::from("fix the greeting")],
            ))
            .block_task();
        let deadline = tokio::time::Instant::now() + STEP;
        while editor.with(|e| e.permission_requests.is_empty()) {
            assert!(tokio::time::Instant::now() < deadline, "never asked");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        cx.send_notification(CancelNotification::new(sid.clone()))?;
        assert_eq!(pending.await?.stop_reason, StopReason::Cancelled);
        Ok(())
    })
    .await
    .expect("editor session");
    assert_eq!(
        std::fs::read_to_string(&notes).expect("read"),
        "hello world\n"
    );
    let tasks = home.json(&["tasks", "list", "--format", "json"]);
    let task = tasks["data"][0]["id"].as_str().expect("the backing task");
    let shown = home.json(&["tasks", "show", task, "--format", "json"]);
    assert_eq!(shown["data"]["runs"][0]["status"], "cancelled", "{shown:#}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agents_plan_reaches_the_editor_as_plan_updates() {
    let entry = |content: &str, status: &str| json!({"content": content, "priority": "high", "status": status});
    let first = json!([
        entry("Read the notes", "in_progress"),
        entry("Answer", "pending")
    ]);
    let last = json!([
        entry("Read the notes", "completed"),
        entry("Answer", "completed")
    ]);
    let server = ModelServer::start(Some(json!([
        turn(vec![call("update_plan", json!({"entries": first}))]),
        turn(vec![call("read_file", json!({"path": "notes.txt"}))]),
        turn(vec![call("update_plan", json!({"entries": last}))]),
        final_answer("Planned and done."),
    ])));
    let home = loop_home(&server, "");
    let (_guard, ws) = workspace();
    seeded(&ws);
    let (_hecate, updates) = agent_prompt(
        &home,
        Editor::default(),
        NewSessionRequest::new(&ws),
        "plan it",
    )
    .await;
    assert_eq!(answer(&updates), "Planned and done.");
    let got = as_json(&updates);
    let plans: Vec<&Value> = got
        .iter()
        .filter(|u| u["sessionUpdate"] == "plan")
        .collect();
    assert_eq!(plans.len(), 2, "{got:#?}");
    assert_eq!(plans[0]["entries"], first);
    assert_eq!(plans[1]["entries"], last);
    assert!(
        !got.iter()
            .any(|u| u["sessionUpdate"] == "tool_call" && u["title"] == "update_plan"),
        "plan calls show as the plan, not as tool calls: {got:#?}"
    );
    assert_eq!(announced(&got, "read")["title"], "Read notes.txt");
    let requests = server.requests();
    assert!(said(&requests[1]).contains("plan updated: 0 of 2 done"));
}

#[tokio::test(flavor = "multi_thread")]
async fn the_editors_mcp_servers_join_the_agents_tools() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call(
            "mcp__files__echo",
            json!({"message": "from the editor's server"})
        )]),
        final_answer("Echoed."),
    ])));
    let home = loop_home(&server, "");
    let (_guard, ws) = workspace();
    let new = NewSessionRequest::new(&ws).mcp_servers(vec![fixture_mcp_server("files")]);
    let (_hecate, updates) = agent_prompt(&home, Editor::default(), new, "echo").await;
    assert_eq!(answer(&updates), "Echoed.");
    let got = as_json(&updates);
    let echo = got
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call" && u["title"] == "mcp__files__echo")
        .unwrap_or_else(|| panic!("the MCP tool call in {got:#?}"));
    assert_eq!(last_status(&got, &echo["toolCallId"]), "completed");
    let requests = server.requests();
    let tools = requests[0]["body"]["tools"].to_string();
    assert!(tools.contains("mcp__files__echo"), "{tools}");
    assert!(said(&requests[1]).contains("from the editor's server"));
}

#[tokio::test(flavor = "multi_thread")]
async fn editor_servers_whose_names_clean_alike_both_join_under_unique_aliases() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call(
            "mcp__my_files__echo",
            json!({"message": "first"})
        )]),
        turn(vec![call(
            "mcp__my_files-2__echo",
            json!({"message": "second"})
        )]),
        final_answer("Both echoed."),
    ])));
    let home = loop_home(&server, "");
    let (_guard, ws) = workspace();
    let new = NewSessionRequest::new(&ws).mcp_servers(vec![
        fixture_mcp_server("my files"),
        fixture_mcp_server("my_files"),
    ]);
    let (_hecate, updates) = agent_prompt(&home, Editor::default(), new, "echo twice").await;
    assert_eq!(answer(&updates), "Both echoed.");
    let requests = server.requests();
    let tools = requests[0]["body"]["tools"].to_string();
    assert!(
        tools.contains("mcp__my_files__echo") && tools.contains("mcp__my_files-2__echo"),
        "{tools}"
    );
    assert!(said(&requests[1]).contains("first"));
    assert!(said(&requests[2]).contains("second"));
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_hecate_models_and_missing_workspaces_are_refused_clearly() {
    let server = ModelServer::start(Some(json!([])));
    let home = loop_home(&server, "");
    let (_guard, ws) = workspace();
    let gone = ws.join("not-there");
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    let homeless = run_editor(transport, Editor::default(), async |cx, _updates| {
        let sid = open(&cx, &ws).await?;
        let unknown = cx
            .send_request(SetSessionModeRequest::new(sid.clone(), "hecate:fix/nope"))
            .block_task()
            .await
            .expect_err("an unknown model is refused");
        assert!(
            unknown.message.contains("not available") && unknown.message.contains("fix/nope"),
            "{unknown:?}"
        );
        let no_default = cx
            .send_request(SetSessionModeRequest::new(sid.clone(), "hecate"))
            .block_task()
            .await
            .expect_err("no default model, no `hecate` target");
        assert!(
            no_default.message.contains("no default model"),
            "{no_default:?}"
        );
        let malformed = cx
            .send_request(SetSessionConfigOptionRequest::new(
                sid.clone(),
                "target",
                SessionConfigOptionValue::value_id("hecate:nomodel"),
            ))
            .block_task()
            .await
            .expect_err("a malformed target is refused");
        assert!(
            malformed.message.contains("hecate:PROVIDER/MODEL"),
            "{malformed:?}"
        );

        // A thread opened where there is no directory cannot switch to the agent.
        let homeless = new_session(&cx, &gone).await?.session_id;
        let refused = cx
            .send_request(SetSessionModeRequest::new(homeless.clone(), TARGET))
            .block_task()
            .await
            .expect_err("no workspace");
        let data = refused.data.clone().unwrap_or_default();
        assert_eq!(data["type"], "agent_chat.workspace_required", "{refused:?}");
        Ok(homeless)
    })
    .await
    .expect("editor session");

    // With the agent as the default target, session/new itself says so.
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", TARGET]);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        initialize(&cx, Caps::default()).await?;
        let refused = new_session(&cx, &gone).await.expect_err("no workspace");
        let data = refused.data.clone().unwrap_or_default();
        assert_eq!(data["type"], "agent_chat.workspace_required", "{refused:?}");
        // A stored thread without a workspace, never loaded here, has none: it
        // is refused, never run in `/`.
        let stored = cx
            .send_request(SetSessionModeRequest::new(homeless, TARGET))
            .block_task()
            .await
            .expect_err("no workspace");
        assert!(stored.message.contains("has none"), "{stored:?}");
        Ok(())
    })
    .await
    .expect("editor session");
    assert!(server.requests().is_empty(), "no model was called");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_thread_moves_from_a_model_to_the_agent_and_follow_ups_continue_its_task() {
    let server = ModelServer::start(Some(json!([
        final_answer("A plain answer."),
        turn(vec![call("read_file", json!({"path": "notes.txt"}))]),
        final_answer("Read it."),
        final_answer("Still here."),
    ])));
    let home = loop_home(&server, "");
    let (_guard, ws) = workspace();
    seeded(&ws);
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "model:fix/gpt-fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        assert_eq!(prompt(&cx, &sid, "just talk").await?, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "A plain answer.");
        let set = SetSessionConfigOptionRequest::new(
            sid.clone(),
            "target",
            SessionConfigOptionValue::value_id(TARGET),
        );
        let options = cx.send_request(set).block_task().await?.config_options;
        assert_eq!(
            serde_json::to_value(options).expect("json")[0]["currentValue"],
            TARGET
        );
        assert_eq!(
            prompt(&cx, &sid, "read the notes").await?,
            StopReason::EndTurn
        );
        assert_eq!(answer(&updates.drain()), "Read it.");
        assert_eq!(
            prompt(&cx, &sid, "anything else?").await?,
            StopReason::EndTurn
        );
        assert_eq!(answer(&updates.drain()), "Still here.");
        Ok(())
    })
    .await
    .expect("editor session");
    let tasks = home.json(&["tasks", "list", "--format", "json"]);
    let list = tasks["data"].as_array().expect("tasks");
    assert_eq!(list.len(), 1, "the follow-up continued the task: {tasks:#}");
    let task = list[0]["id"].as_str().expect("id");
    let shown = home.json(&["tasks", "show", task, "--format", "json"]);
    assert_eq!(
        shown["data"]["runs"].as_array().map(Vec::len),
        Some(2),
        "{shown:#}"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    assert!(
        requests[0]["body"]["tools"].is_null(),
        "the model turn had no tools"
    );
    let last = said(&requests[3]);
    assert!(
        last.contains("hello world") && last.contains("anything else?"),
        "the follow-up carries the task's conversation: {last}"
    );
}
