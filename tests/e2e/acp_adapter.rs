//! The outbound ACP adapter against the scripted fixture agent
//! (`hecate-fixtures acp-agent`) over real pipes: streaming, normalization,
//! permissions, fs and terminal services, failures and cancellation. Process
//! lifecycle, session loading, probes and the catalog are in `acp_adapter/`.

mod delegate;
mod lifecycle;
mod services;

use crate::support::acp_adapter::*;
use crate::support::common::workspace;
use hecate::adapters::acp::{AcpError, AgentConnection, StopReason, TurnIo};
use hecate::domain::event::RuntimeEvent;
use hecate::domain::permission::{
    FixedAnswer, PermissionAsker, PermissionKind, PermissionOutcome, PermissionRequest,
};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn text_streams_in_order_and_echo_works() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let script = json!({"turns": [
        {"match": "stream", "actions": [
            {"chunks": ["one ", "two ", "three "], "delay_ms": 5},
            {"stream": {"count": 200, "text": "x"}}
        ]}
    ]});
    let (conn, native) = scripted(&ws, &sdir, script).await;
    let t = turn(&conn, &native, "please stream").await;
    assert_eq!(t.result, Ok(StopReason::EndTurn));
    assert_eq!(t.text(), format!("one two three {}", "x".repeat(200)));
    let echo = turn(&conn, &native, "hello there").await;
    assert_eq!(echo.text(), "echo: hello there");
    let cwd = turn(&conn, &native, "/cwd").await;
    assert_eq!(cwd.text(), format!("cwd: {}", ws.display()));
    conn.shutdown().await;
}

#[tokio::test]
async fn updates_are_normalized() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let file = ws.join("a.txt");
    let script = json!({"turns": [{"actions": [
        {"thought": "thinking hard"},
        {"tool_call": {"id": "t1", "title": "Edit a.txt", "kind": "edit", "status": "pending",
            "locations": [file], "raw_input": {"path": "a.txt"}}},
        {"tool_call_update": {"id": "t1", "status": "completed",
            "diff": {"path": file, "old_text": "old", "new_text": "new"}}},
        {"plan": [{"content": "write tests", "priority": "high", "status": "in_progress"}]},
        {"available_commands": [{"name": "review", "description": "Review the code"}]},
        {"usage": {"used": 10, "size": 1000}},
        {"text": "done"}
    ]}]});
    let (conn, native) = scripted(&ws, &sdir, script).await;
    let t = turn(&conn, &native, "go").await;
    assert_eq!(t.result, Ok(StopReason::EndTurn));
    let ev = &t.events;
    assert!(ev.contains(&RuntimeEvent::ThoughtDelta {
        text: "thinking hard".into()
    }));
    let started = ev
        .iter()
        .find_map(|e| match e {
            RuntimeEvent::ToolCallStarted {
                id,
                name,
                kind,
                input,
            } => Some((id, name, kind, input)),
            _ => None,
        })
        .expect("tool call started");
    assert_eq!(started.0, "t1");
    assert_eq!(started.1, "Edit a.txt");
    assert_eq!(started.2.as_deref(), Some("edit"));
    assert_eq!(started.3["raw_input"]["path"], "a.txt");
    assert_eq!(
        started.3["locations"][0]["path"],
        file.display().to_string()
    );
    let updated = ev
        .iter()
        .find_map(|e| match e {
            RuntimeEvent::ToolCallUpdated { id, status, output } => Some((id, status, output)),
            _ => None,
        })
        .expect("tool call updated");
    assert_eq!(updated.0, "t1");
    assert_eq!(updated.1.as_deref(), Some("completed"));
    assert_eq!(updated.2["content"][0]["type"], "diff");
    assert_eq!(updated.2["content"][0]["newText"], "new");
    assert!(ev.iter().any(
        |e| matches!(e, RuntimeEvent::Plan { entries } if entries[0]["content"] == "write tests")
    ));
    assert!(ev.iter().any(
        |e| matches!(e, RuntimeEvent::AvailableCommands { commands } if commands[0]["name"] == "review")
    ));
    assert!(
        ev.iter()
            .any(|e| matches!(e, RuntimeEvent::ContextUsage { size, .. } if *size > 0)),
        "usage_update becomes context usage"
    );
    assert!(
        ev.iter().any(|e| matches!(e, RuntimeEvent::Raw { data }
        if data["params"]["update"]["sessionUpdate"] == "agent_message_chunk")),
        "raw frames are kept next to normalized events"
    );
    assert_eq!(t.text(), "done");
    conn.shutdown().await;
}

fn permission_script() -> serde_json::Value {
    json!({"turns": [{"actions": [
        {"request_permission": {"tool_call_id": "call_7", "title": "Run rm", "kind": "execute",
            "on_allow": [{"text": " ran"}], "on_reject": [{"text": " skipped"}]}}
    ]}]})
}

#[tokio::test]
async fn permission_allow_and_reject_with_fixed_answers() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let (conn, native) = scripted(&ws, &sdir, permission_script()).await;
    let allowed = turn_with(&conn, &native, "x", Arc::new(FixedAnswer { allow: true })).await;
    assert_eq!(allowed.result, Ok(StopReason::EndTurn));
    assert!(
        allowed.text().contains("permission: allow-once-id"),
        "{}",
        allowed.text()
    );
    assert!(allowed.text().contains("ran"));
    let rejected = turn_with(&conn, &native, "x", Arc::new(FixedAnswer { allow: false })).await;
    assert!(
        rejected.text().contains("permission: reject-id"),
        "{}",
        rejected.text()
    );
    assert!(rejected.text().contains("skipped"));
    conn.shutdown().await;
}

struct Recorder {
    seen: Mutex<Vec<PermissionRequest>>,
    answer: String,
}

impl PermissionAsker for Recorder {
    fn ask(
        &self,
        request: PermissionRequest,
    ) -> futures::future::BoxFuture<'static, PermissionOutcome> {
        if let Ok(mut s) = self.seen.lock() {
            s.push(request);
        }
        let option_id = self.answer.clone();
        Box::pin(async move { PermissionOutcome::Selected { option_id } })
    }
}

#[tokio::test]
async fn permission_request_reaches_the_asker_verbatim() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let script = json!({"turns": [{"actions": [
        {"request_permission": {"tool_call_id": "call_9", "title": "Write a.txt", "kind": "edit",
            "options": [
                {"id": "proceed_always", "name": "Always", "kind": "allow_always"},
                {"id": "proceed_once", "name": "Once", "kind": "allow_once"},
                {"id": "cancel", "name": "No", "kind": "reject_once"},
                {"id": "never", "name": "Never", "kind": "reject_always"}
            ],
            "on_allow": [{"text": " allowed"}]}}
    ]}]});
    let (conn, native) = scripted(&ws, &sdir, script).await;
    let recorder = Arc::new(Recorder {
        seen: Mutex::new(Vec::new()),
        answer: "proceed_always".into(),
    });
    let t = turn_with(&conn, &native, "x", recorder.clone()).await;
    assert!(
        t.text().contains("permission: proceed_always"),
        "{}",
        t.text()
    );
    let seen = recorder.seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 1);
    let req = &seen[0];
    assert_eq!(req.tool_call_id, "call_9");
    assert_eq!(req.title, "Write a.txt");
    assert_eq!(req.tool_kind.as_deref(), Some("edit"));
    let options: Vec<_> = req
        .options
        .iter()
        .map(|o| (o.id.as_str(), o.kind))
        .collect();
    assert_eq!(
        options,
        vec![
            ("proceed_always", PermissionKind::AllowAlways),
            ("proceed_once", PermissionKind::AllowOnce),
            ("cancel", PermissionKind::RejectOnce),
            ("never", PermissionKind::RejectAlways),
        ]
    );
    conn.shutdown().await;
}

/// An asker that never answers, but says when it was asked.
struct Silent(tokio::sync::Notify);

impl PermissionAsker for Silent {
    fn ask(
        &self,
        _request: PermissionRequest,
    ) -> futures::future::BoxFuture<'static, PermissionOutcome> {
        self.0.notify_one();
        Box::pin(futures::future::pending())
    }
}

#[tokio::test]
async fn cancel_answers_a_pending_permission_request_cancelled() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let (conn, native) = scripted(&ws, &sdir, permission_script()).await;
    let silent = Arc::new(Silent(tokio::sync::Notify::new()));
    let cancel = CancellationToken::new();
    let (io, mut rx) = turn_io(silent.clone(), cancel.clone());
    let blocks = vec![hecate::domain::message::ContentBlock::Text { text: "x".into() }];
    let run = conn.prompt(&native, blocks, io);
    tokio::pin!(run);
    tokio::select! {
        r = &mut run => panic!("turn ended before asking: {r:?}"),
        () = silent.0.notified() => {}
    }
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("cancel ends the turn");
    assert_eq!(result.map(|o| o.stop_reason), Ok(StopReason::Cancelled));
    let mut text = String::new();
    while let Ok(e) = rx.try_recv() {
        if let RuntimeEvent::TextDelta { text: t } = e {
            text.push_str(&t);
        }
    }
    assert!(!text.contains(" ran"), "{text}");
    // The agent got `cancelled` and the connection still works.
    assert_eq!(
        turn(&conn, &native, "x").await.result,
        Ok(StopReason::EndTurn)
    );
    conn.shutdown().await;
}

#[tokio::test]
async fn crash_mid_turn_is_an_exit_with_stderr() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let script = json!({"turns": [{"actions": [{"text": "before"}, {"crash": 7}]}]});
    let (conn, native) = scripted(&ws, &sdir, script).await;
    let t = turn(&conn, &native, "go").await;
    assert_eq!(t.text(), "before");
    match t.result {
        Err(AcpError::Exited { code, stderr_tail }) => {
            assert_eq!(code, Some(7));
            assert!(stderr_tail.contains("crashing mid-turn"), "{stderr_tail}");
        }
        other => panic!("expected Exited, got {other:?}"),
    }
    assert!(!conn.is_alive());
    let e = AcpError::Exited {
        code: Some(7),
        stderr_tail: "x".into(),
    }
    .into_hecate("fixture");
    assert_eq!(e.details["reason"], "agent_exited");
}

#[tokio::test]
async fn cancel_of_a_hung_turn_ends_after_the_grace_period() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let script = json!({"turns": [
        {"match": "hang", "actions": [{"text": "working"}, {"hang": true}]},
        {"match": "sleep", "actions": [{"text": "napping"}, {"sleep_ms": 60000}, {"text": "never"}]}
    ]});
    let (conn, native) = scripted(&ws, &sdir, script).await;
    for prompt in ["hang", "sleep"] {
        let cancel = CancellationToken::new();
        let (io, mut rx) = turn_io(Arc::new(FixedAnswer { allow: true }), cancel.clone());
        let blocks = vec![hecate::domain::message::ContentBlock::Text {
            text: prompt.into(),
        }];
        let run = conn.prompt(&native, blocks, io);
        tokio::pin!(run);
        // Wait for the first text so the agent is inside the turn, then cancel.
        loop {
            tokio::select! {
                r = &mut run => panic!("turn ended early: {r:?}"),
                e = rx.recv() => if matches!(e, Some(RuntimeEvent::TextDelta { .. })) { break },
            }
        }
        cancel.cancel();
        let result = tokio::time::timeout(Duration::from_secs(30), run)
            .await
            .expect("cancel ends the turn");
        assert_eq!(
            result.map(|o| o.stop_reason),
            Ok(StopReason::Cancelled),
            "{prompt}"
        );
    }
    // The connection is still usable after a hung turn was abandoned.
    assert!(conn.is_alive());
    conn.shutdown().await;
}

#[tokio::test]
async fn garbage_on_stdout_is_a_diagnostic_not_a_failure() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let script = json!({"turns": [{"actions": [
        {"text": "a"}, {"garbage": "Loading plugins... not json"}, {"text": "b"}
    ]}]});
    let (conn, native) = scripted(&ws, &sdir, script).await;
    let t = turn(&conn, &native, "go").await;
    assert_eq!(t.result, Ok(StopReason::EndTurn));
    assert_eq!(t.text(), "ab");
    assert!(t.diagnostics().iter().any(
        |d| d["diagnostic"] == "non_json_stdout" && d["line"] == "Loading plugins... not json"
    ));
    let again = turn(&conn, &native, "go").await;
    assert_eq!(again.result, Ok(StopReason::EndTurn));
    conn.shutdown().await;
}

#[tokio::test]
async fn idle_turn_times_out() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let script = script_file(
        &sdir,
        json!({"turns": [{"actions": [{"sleep_ms": 60000}]}]}),
    );
    let mut opts = options();
    opts.prompt_idle_timeout = Some(Duration::from_millis(300));
    let conn = AgentConnection::start(&spec(&["--script", &script]), &ws, agent_env(), opts)
        .await
        .expect("start");
    let native = conn.new_session(&ws, &[]).await.expect("session").id;
    let t = turn(&conn, &native, "go").await;
    assert!(
        matches!(
            t.result,
            Err(AcpError::Timeout {
                stage: hecate::adapters::acp::Stage::Prompt
            })
        ),
        "{:?}",
        t.result
    );
    let e = AcpError::Timeout {
        stage: hecate::adapters::acp::Stage::Prompt,
    }
    .into_hecate("fixture");
    assert_eq!(e.details["reason"], "agent_timeout");
    conn.shutdown().await;
}

#[test]
fn connections_and_turns_can_move_across_tasks() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>(_: &T) {}
    send_sync::<AgentConnection>();
    send_sync::<TurnIo>();
    fn check(conn: &AgentConnection, io: TurnIo) {
        let fut = conn.prompt("s", vec![], io);
        send(&fut);
        let load = conn.load_session(
            "s",
            std::path::Path::new("/"),
            &[],
            tokio::sync::mpsc::unbounded_channel().0,
        );
        send(&load);
        let shutdown = conn.shutdown();
        send(&shutdown);
    }
    let _ = check;
}
