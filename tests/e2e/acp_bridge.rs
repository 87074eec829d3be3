//! `hecate acp` end to end: the real binary driven over its pipes by the official
//! Rust SDK client role (a scripted editor), against the fixture model server and
//! the fixture ACP agent. Threads and targets are here; Hecate's own agent as the
//! target in `acp_bridge/hecate_agent.rs`; cancellation, restarts and
//! process lifecycle are in `acp_bridge/lifecycle.rs`; wire-level errors, stdout
//! purity and setup errors in `acp_bridge/wire.rs`.

mod hecate_agent;
mod lifecycle;
mod neighbours;
mod wire;

use crate::support::acp_editor::*;
use crate::support::common::{Home, workspace};
use agent_client_protocol::v1::schema::{
    McpServer, McpServerHttp, McpServerStdio, NewSessionRequest, SessionConfigOptionValue,
    SessionUpdate, SetSessionConfigOptionRequest, SetSessionModeRequest, StopReason,
};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread")]
async fn a_model_thread_streams_the_answer_and_offers_every_target() {
    let (server, home) = model_home("fixture-model,other-model");
    add_agent(&home, &[]);
    let (_ws_guard, ws) = workspace();
    let (hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let new = new_session(&cx, &ws).await?;
        let modes = new.modes.expect("targets as modes");
        assert_eq!(modes.current_mode_id.0.as_ref(), "model:fix/fixture-model");
        let ids: Vec<String> = modes
            .available_modes
            .iter()
            .map(|m| m.id.0.to_string())
            .collect();
        for id in [
            "model:fix/fixture-model",
            "model:fix/other-model",
            "agent:fixture",
        ] {
            assert!(ids.contains(&id.to_string()), "{id} offered in {ids:?}");
        }
        let options =
            serde_json::to_value(new.config_options.expect("config options")).expect("json");
        assert_eq!(options[0]["id"], "target");
        assert_eq!(options[0]["currentValue"], "model:fix/fixture-model");
        assert_eq!(
            options[0]["options"].as_array().map(Vec::len),
            Some(ids.len())
        );

        let sid = new.session_id;
        assert_eq!(prompt(&cx, &sid, "hello model").await?, StopReason::EndTurn);
        let got = updates.drain();
        assert!(
            got.iter().filter_map(agent_text).count() > 1,
            "streamed in chunks"
        );
        assert_eq!(answer(&got), "echo: hello model");
        Ok(())
    })
    .await
    .expect("editor session");
    let requests = server.requests();
    assert_eq!(
        requests.last().expect("a model call")["body"]["model"],
        "fixture-model"
    );
    drop(hecate);
}

/// Runs the `write` turn with an editor answering `p`; returns the updates.
async fn write_turn(p: Permission) -> (Vec<SessionUpdate>, Editor, tempfile::TempDir, Home) {
    let home = agent_home(&[]);
    let (guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    let editor = Editor::answering(p);
    let updates = run_editor(transport, editor.clone(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        assert_eq!(
            prompt(&cx, &sid, "please write").await?,
            StopReason::EndTurn
        );
        Ok(updates.drain())
    })
    .await
    .expect("editor session");
    (updates, editor, guard, home)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_approved_permission_reaches_the_agent_with_its_own_options() {
    let (updates, editor, ws, _home) = write_turn(Permission::AllowOnce).await;
    let text = answer(&updates);
    assert!(text.contains("permission: allow-once-id"), "{text}");
    assert!(text.ends_with("done"), "{text}");
    let requests = editor.with(|e| e.permission_requests.clone());
    assert_eq!(requests.len(), 1);
    let options: Vec<(String, String)> = requests[0]
        .options
        .iter()
        .map(|o| {
            let v = serde_json::to_value(o).expect("json");
            (
                v["optionId"].as_str().unwrap_or_default().to_string(),
                v["kind"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        options,
        [
            ("allow-once-id".to_string(), "allow_once".to_string()),
            ("allow-always-id".to_string(), "allow_always".to_string()),
            ("reject-id".to_string(), "reject_once".to_string()),
        ]
    );
    assert_eq!(requests[0].tool_call.tool_call_id.0.as_ref(), "t1");
    assert!(
        updates
            .iter()
            .any(|u| matches!(u, SessionUpdate::ToolCall(c) if c.title == "Write b.txt")),
        "the tool call is shown"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("b.txt")).expect("written by the agent"),
        "new file\n"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejected_permission_reaches_the_agent_and_nothing_is_written() {
    let (updates, editor, ws, _home) = write_turn(Permission::RejectOnce).await;
    let text = answer(&updates);
    assert!(
        text.contains("permission: reject-id") && text.contains("not writing"),
        "{text}"
    );
    assert_eq!(editor.with(|e| e.permission_requests.len()), 1);
    assert!(!ws.path().join("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_that_serves_files_and_terminals_gets_the_agents_requests() {
    let home = agent_home(&[]);
    let (_guard, ws) = workspace();
    let editor = Editor::default();
    let (_hecate, text) = files_turn(&home, editor.clone(), Caps::ALL, &ws).await;
    let notes = ws.join("notes.txt");
    assert!(
        text.contains("read: from the agent"),
        "read back from the editor: {text}"
    );
    assert!(
        text.contains("terminal exit 0: hi from the editor"),
        "the editor ran the command: {text}"
    );
    assert!(text.contains("write error"), "escapes are refused: {text}");
    assert!(
        !notes.exists(),
        "the editor owns the file, Hecate did not write it"
    );
    let calls = editor.with(|e| e.calls.clone());
    assert_eq!(
        calls,
        [
            format!("write {}", notes.display()),
            format!("read {}", notes.display()),
            "terminal echo hi".to_string(),
            "wait editor-term-1".to_string(),
            "output editor-term-1".to_string(),
            "release editor-term-1".to_string(),
        ],
        "nothing outside the workspace reached the editor"
    );
    assert_eq!(editor.with(|e| e.terminal_cwds.clone()), [Some(ws.clone())]);
    assert_eq!(
        editor.with(|e| e.files.get(&notes).cloned()).as_deref(),
        Some("from the agent")
    );
    let events = stored_run_events(&home);
    let recorded: Vec<&str> = events
        .iter()
        .filter(|e| e["data"]["source"] == "editor")
        .filter_map(|e| e["data"]["method"].as_str())
        .collect();
    assert_eq!(
        recorded,
        [
            "fs/write_text_file",
            "fs/read_text_file",
            "terminal/create",
            "terminal/wait_for_exit"
        ]
    );
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "file_changed" && e["path"] == "notes.txt"),
        "the write is recorded as a file change: {events:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_editor_capabilities_hecate_serves_files_and_terminals() {
    let home = agent_home(&[]);
    let (_guard, ws) = workspace();
    let editor = Editor::default();
    let (_hecate, text) = files_turn(&home, editor.clone(), Caps::default(), &ws).await;
    assert!(text.contains("read: from the agent"), "{text}");
    assert!(text.contains("terminal exit 0: hi"), "{text}");
    assert!(text.contains("write error"), "{text}");
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).expect("hecate wrote it"),
        "from the agent"
    );
    assert!(!ws.parent().expect("parent").join("escape.txt").exists());
    assert!(
        editor.with(|e| e.calls.is_empty()),
        "the editor was not asked"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn targets_hand_the_thread_off_between_models_and_agents_in_both_directions() {
    let (server, home) = model_home("fixture-model,other-model");
    add_agent(&home, &[]);
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    let sid = run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        prompt(&cx, &sid, "first").await?;
        assert_eq!(answer(&updates.drain()), "echo: first");

        cx.send_request(SetSessionModeRequest::new(
            sid.clone(),
            "model:fix/other-model",
        ))
        .block_task()
        .await?;
        assert_eq!(prompt(&cx, &sid, "second").await?, StopReason::EndTurn);
        let got = updates.drain();
        assert!(
            got.iter()
                .any(|u| matches!(u, SessionUpdate::ConfigOptionUpdate(_))),
            "the config option follows the mode: {got:?}"
        );
        assert_eq!(answer(&got), "echo: second");

        let set = SetSessionConfigOptionRequest::new(
            sid.clone(),
            "target",
            SessionConfigOptionValue::value_id("agent:fixture"),
        );
        let options = cx.send_request(set).block_task().await?.config_options;
        let options = serde_json::to_value(options).expect("json");
        assert_eq!(options[0]["currentValue"], "agent:fixture");
        assert_eq!(prompt(&cx, &sid, "third").await?, StopReason::EndTurn);
        let got = updates.drain();
        assert!(
            got.iter()
                .any(|u| matches!(u, SessionUpdate::CurrentModeUpdate(m)
                if m.current_mode_id.0.as_ref() == "agent:fixture")),
            "the mode follows the config option: {got:?}"
        );
        let third = answer(&got);
        assert!(
            third.starts_with("echo: ") && third.ends_with("third"),
            "{third}"
        );
        assert!(
            third.contains("second"),
            "the agent is primed with the thread: {third}"
        );

        // Hand-off back to a model: it gets the thread, the agent's turn included.
        cx.send_request(SetSessionModeRequest::new(
            sid.clone(),
            "model:fix/fixture-model",
        ))
        .block_task()
        .await?;
        assert_eq!(prompt(&cx, &sid, "fourth").await?, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "echo: fourth");
        // And to the agent again: a fresh native session primed with everything,
        // the model's turn included.
        cx.send_request(SetSessionModeRequest::new(sid.clone(), "agent:fixture"))
            .block_task()
            .await?;
        assert_eq!(prompt(&cx, &sid, "fifth").await?, StopReason::EndTurn);
        let fifth = answer(&updates.drain());
        assert!(fifth.ends_with("fifth"), "{fifth}");
        assert!(
            fifth.contains("fourth"),
            "primed with the model's turn: {fifth}"
        );
        let unknown = cx
            .send_request(SetSessionModeRequest::new(sid.clone(), "agent:nope"))
            .block_task()
            .await
            .expect_err("unknown targets are refused");
        assert!(unknown.message.contains("not available"), "{unknown:?}");
        Ok(sid)
    })
    .await
    .expect("editor session");
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r["body"]["model"].clone())
        .collect();
    assert_eq!(models, ["fixture-model", "other-model", "fixture-model"]);
    let history = server.requests()[2]["body"]["messages"].to_string();
    assert!(
        history.contains("third") && history.contains("second"),
        "the model got the whole thread: {history}"
    );
    let show = home.json(&["sessions", "show", &sid.0, "--format", "json"]);
    let segments = show["data"]["segments"].as_array().expect("segments");
    assert_eq!(segments.len(), 5, "one segment per target: {segments:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn mcp_servers_from_session_new_reach_the_external_agent() {
    let home = agent_home(&[]);
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let new = NewSessionRequest::new(&ws).mcp_servers(vec![
            McpServer::Stdio(McpServerStdio::new("files", "/bin/true")),
            McpServer::Http(McpServerHttp::new("search", "http://127.0.0.1:9/mcp")),
        ]);
        let sid = cx.send_request(new).block_task().await?.session_id;
        prompt(&cx, &sid, "/mcp").await?;
        assert_eq!(answer(&updates.drain()), "mcp: files, search");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_permission_resolved_elsewhere_is_withdrawn_from_the_editor() {
    let home = agent_home(&[]);
    home.write_config("[approvals]\ntimeout_ms = 400\n");
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    let editor = Editor::answering(Permission::Never);
    let text = run_editor(transport, editor.clone(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        assert_eq!(
            prompt(&cx, &sid, "please write").await?,
            StopReason::EndTurn
        );
        let deadline = tokio::time::Instant::now() + STEP;
        while !editor.with(|e| e.calls.contains(&"permission withdrawn".to_string())) {
            assert!(tokio::time::Instant::now() < deadline, "never withdrawn");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        Ok(answer(&updates.drain()))
    })
    .await
    .expect("editor session");
    assert!(text.contains("permission: cancelled"), "{text}");
    assert_eq!(editor.with(|e| e.permission_requests.len()), 1);
}
