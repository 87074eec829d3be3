//! Cancellation, restarts (list + load in a new process), and process lifecycle:
//! stdin EOF and client disconnects mid-turn, and agents crashing mid-turn.

use crate::support::acp_editor::*;
use crate::support::common::{Home, ModelServer, workspace};
use agent_client_protocol::v1::schema::{
    CancelNotification, ContentBlock, ListSessionsRequest, LoadSessionRequest, PromptRequest,
    SessionId, StopReason,
};
use serde_json::json;

/// Prompts `text`, waits for the first answer chunk, cancels, and returns the
/// stop reason and the answer received.
async fn cancel_after_first_chunk(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
    updates: &mut Updates,
    sid: &SessionId,
    text: &str,
) -> Result<(StopReason, String), agent_client_protocol::Error> {
    let pending = cx
        .send_request(PromptRequest::new(
            sid.clone(),
            vec![ContentBlock::from(text)],
        ))
        .block_task();
    let mut seen = String::new();
    while seen.is_empty() {
        seen.extend(agent_text(&updates.next().await));
    }
    cx.send_notification(CancelNotification::new(sid.clone()))?;
    let stop = pending.await?.stop_reason;
    seen.push_str(&answer(&updates.drain()));
    Ok((stop, seen))
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_stops_an_agent_turn_and_keeps_the_partial_answer() {
    let home = agent_home(&[]);
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    let sid = run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        let (stop, seen) = cancel_after_first_chunk(&cx, &mut updates, &sid, "slow please").await?;
        assert_eq!(stop, StopReason::Cancelled);
        assert!(seen.starts_with("start") && !seen.contains(" t "), "{seen}");
        assert_eq!(prompt(&cx, &sid, "again").await?, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "echo: again");
        Ok(sid)
    })
    .await
    .expect("editor session");
    let show = home.json(&["sessions", "show", &sid.0, "--format", "json"]);
    let first = &show["data"]["messages"][1];
    assert_eq!(first["status"], "cancelled", "{first}");
    assert!(
        first["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("start"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_stops_a_model_turn() {
    let words: Vec<String> = (0..40).map(|i| format!("w{i}")).collect();
    let server = ModelServer::start(Some(json!([
        {"text": words.join(" "), "chunk_delay_ms": 500},
        {"text": "second answer"}
    ])));
    let home = Home::with_openai(&server);
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "model:fix/fixture-model"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        let (stop, seen) = cancel_after_first_chunk(&cx, &mut updates, &sid, "talk slowly").await?;
        assert_eq!(stop, StopReason::Cancelled);
        assert!(!seen.contains("w39"), "{seen}");
        assert_eq!(prompt(&cx, &sid, "next").await?, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "second answer");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancel_right_behind_its_prompt_is_not_lost() {
    let home = agent_home(&[]);
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        let pending = cx
            .send_request(PromptRequest::new(
                sid.clone(),
                vec![ContentBlock::from("slow")],
            ))
            .block_task();
        cx.send_notification(CancelNotification::new(sid.clone()))?;
        assert_eq!(pending.await?.stop_reason, StopReason::Cancelled);
        let seen = answer(&updates.drain());
        assert!(!seen.contains(" t "), "{seen}");
        Ok(())
    })
    .await
    .expect("editor session");
}

/// Opens a thread in `ws`, says `first`, and closes the connection.
async fn first_process(home: &Home, args: &[&str], ws: &std::path::Path) -> SessionId {
    let (mut hecate, transport) = Hecate::spawn(home, args);
    let sid = run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, ws).await?;
        prompt(&cx, &sid, "remember the word zebra").await?;
        assert!(answer(&updates.drain()).contains("zebra"));
        Ok(sid)
    })
    .await
    .expect("first process");
    assert_eq!(hecate.exit_code().await, Some(0), "{}", hecate.stderr());
    sid
}

/// In a new process: lists, loads (checking the replay) and asks a follow-up;
/// returns the follow-up's answer.
async fn second_process(
    home: &Home,
    args: &[&str],
    ws: &std::path::Path,
    sid: &SessionId,
) -> String {
    let (_hecate, transport) = Hecate::spawn(home, args);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let listed = cx
            .send_request(ListSessionsRequest::new().cwd(ws.to_path_buf()))
            .block_task()
            .await?;
        assert!(
            listed
                .sessions
                .iter()
                .any(|s| &s.session_id == sid && s.cwd == ws),
            "{listed:?}"
        );
        let elsewhere = cx
            .send_request(ListSessionsRequest::new().cwd(std::env::temp_dir().join("nowhere")))
            .block_task()
            .await?;
        assert!(elsewhere.sessions.is_empty());
        cx.send_request(LoadSessionRequest::new(sid.clone(), ws))
            .block_task()
            .await?;
        let replay = updates.drain();
        let users: Vec<String> = replay.iter().filter_map(user_text).collect();
        assert_eq!(users, ["remember the word zebra"]);
        assert!(
            answer(&replay).contains("echo: remember the word zebra"),
            "{replay:?}"
        );
        assert_eq!(
            prompt(&cx, sid, "what was the word").await?,
            StopReason::EndTurn
        );
        Ok(answer(&updates.drain()))
    })
    .await
    .expect("second process")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_thread_is_listed_loaded_and_continued_after_a_restart() {
    let (server, home) = model_home("fixture-model");
    let (_guard, ws) = workspace();
    let sid = first_process(&home, &[], &ws).await;
    let follow_up = second_process(&home, &[], &ws, &sid).await;
    assert_eq!(follow_up, "echo: what was the word");
    let last = server.requests().last().cloned().expect("a call");
    assert!(
        last["body"]["messages"].to_string().contains("zebra"),
        "the model got the thread's history: {last}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_thread_is_loaded_after_a_restart_natively_or_primed() {
    for (flag, primed) in [("supported", false), ("unsupported", true)] {
        let home = agent_home(&["--load-session", flag]);
        let (_guard, ws) = workspace();
        let args = ["--target", "agent:fixture"];
        let sid = first_process(&home, &args, &ws).await;
        let follow_up = second_process(&home, &args, &ws, &sid).await;
        assert!(
            follow_up.ends_with("what was the word"),
            "{flag}: {follow_up}"
        );
        assert_eq!(follow_up.contains("zebra"), primed, "{flag}: {follow_up}");
    }
}

/// Starts the slow agent turn, waits for its first chunk, returns the pids of
/// the agent's process group (the agent and its grandchild).
async fn slow_turn_started(
    cx: &agent_client_protocol::v1::ConnectionTo<agent_client_protocol::Agent>,
    updates: &mut Updates,
    ws: &std::path::Path,
    hecate_pid: u32,
) -> Result<Vec<u32>, agent_client_protocol::Error> {
    let sid = open(cx, ws).await?;
    cx.send_request(PromptRequest::new(sid, vec![ContentBlock::from("slow")]))
        .detach();
    while agent_text(&updates.next().await).is_none() {}
    let group = descendants_groups(hecate_pid);
    assert!(
        group.len() >= 2,
        "the agent and its grandchild run: {group:?}"
    );
    Ok(group)
}

#[tokio::test(flavor = "multi_thread")]
async fn stdin_eof_during_a_turn_exits_and_kills_the_agent_and_its_grandchild() {
    let home = agent_home(&["--spawn-grandchild"]);
    let (_guard, ws) = workspace();
    let (mut hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    let pid = hecate.pid();
    let group = run_editor(transport, Editor::default(), async |cx, mut updates| {
        slow_turn_started(&cx, &mut updates, &ws, pid).await
    })
    .await
    .expect("editor session");
    // Returning from the editor closed hecate's stdin mid-turn.
    assert_eq!(hecate.exit_code().await, Some(0), "{}", hecate.stderr());
    wait_gone(&group).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_vanishes_mid_turn_leaves_no_process_behind() {
    let home = agent_home(&["--spawn-grandchild"]);
    let (_guard, ws) = workspace();
    let (mut hecate, stdin, stdout) =
        Hecate::spawn_raw(&home, &[], &["--target", "agent:fixture"], &[]);
    let mut wire = Wire::new(stdin, stdout);
    wire.send_json(json!({"jsonrpc":"2.0","id":1,"method":"initialize",
        "params":{"protocolVersion":1,"clientCapabilities":{}}}))
        .await;
    wire.response(json!(1)).await;
    wire.send_json(json!({"jsonrpc":"2.0","id":2,"method":"session/new",
        "params":{"cwd": ws, "mcpServers": []}}))
        .await;
    let (new, _) = wire.response(json!(2)).await;
    let sid = new["result"]["sessionId"].clone();
    wire.send_json(json!({"jsonrpc":"2.0","id":3,"method":"session/prompt",
        "params":{"sessionId": sid, "prompt":[{"type":"text","text":"slow"}]}}))
        .await;
    loop {
        let v = wire.recv().await;
        if v["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
            break;
        }
    }
    let group = descendants_groups(hecate.pid());
    assert!(group.len() >= 2, "{group:?}");
    // The client dies: both pipes close while chunks are still being written.
    drop(wire);
    hecate.exit_code().await;
    wait_gone(&group).await;
    assert!(!hecate.stderr().contains("panicked"), "{}", hecate.stderr());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_crash_fails_the_prompt_readably_and_the_thread_goes_on() {
    let home = agent_home(&[]);
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        let err = prompt(&cx, &sid, "crash now")
            .await
            .expect_err("the crash fails the prompt");
        let data = err.data.clone().unwrap_or_default();
        assert!(err.message.contains("exited"), "readable: {err:?}");
        assert_eq!(data["reason"], "agent_exited", "{data}");
        assert!(
            data.to_string().contains("crashing mid-turn"),
            "the agent's last words are attached: {data}"
        );
        assert_eq!(answer(&updates.drain()), "about to crash ");
        assert_eq!(
            prompt(&cx, &sid, "are you back").await?,
            StopReason::EndTurn
        );
        assert_eq!(answer(&updates.drain()), "echo: are you back");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_mid_turn_shuts_the_agents_down_like_eof() {
    let home = agent_home(&["--spawn-grandchild"]);
    let (_guard, ws) = workspace();
    let (mut hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    let pid = hecate.pid();
    let group = run_editor(transport, Editor::default(), async |cx, mut updates| {
        let group = slow_turn_started(&cx, &mut updates, &ws, pid).await?;
        // SAFETY: kill(2) has no memory-safety preconditions.
        unsafe {
            libc::kill(pid as i32, libc::SIGTERM);
        }
        // Stdin stays open: the connection ends because hecate stops.
        cx.incoming_closed().await;
        Ok(group)
    })
    .await
    .expect("editor session");
    assert_eq!(hecate.exit_code().await, Some(0), "{}", hecate.stderr());
    wait_gone(&group).await;
}
