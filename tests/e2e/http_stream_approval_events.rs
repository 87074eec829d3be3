//! An external-agent turn that asks permission shows up on the session stream as
//! `approval.requested` (with the session `awaiting_approval`), then, once another
//! process resolves it, as `approval.resolved`, and the turn ends with `done`. A
//! client that subscribes, or reconnects with `Last-Event-ID`, while the approval
//! is pending still gets its `approval.requested`, once.

use crate::support::common::{Home, git_workspace, permission_turn};
use crate::support::http;
use crate::support::http::{Api, Served, data, last_message, pending_approval, serve};
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

/// The fixture agent's one turn: asks before writing b.txt.
fn script() -> String {
    let write_b = json!([{"fs_write": {"path": "b.txt", "content": "new file\n"}}]);
    json!({"turns": [permission_turn("Write b.txt", write_b)]}).to_string()
}

/// `hecate serve` with the scripted fixture agent, and one external-agent session
/// in a fresh Git workspace: (workspace, server, client, session id).
async fn external_session(home: &Home) -> (tempfile::TempDir, Served, Api, String) {
    home.add_scripted_agent(&script(), &[], "");
    let ws = git_workspace();
    let s = serve(home);
    let api = Api::new(&s);
    let a = api
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({
                "runtime_kind": "external_agent",
                "adapter_id": "fixture",
                "workspace": ws.path().display().to_string()
            }),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let id = a.body["data"]["id"].as_str().expect("id").to_string();
    (ws, s, api, id)
}

#[tokio::test]
async fn approval_events_reach_the_stream_and_the_turn_then_ends() {
    let home = Home::empty();
    let (ws, _server, api, id) = external_session(&home).await;

    let mut sse = api.stream(&id, None).await;
    assert_eq!(sse.next(WAIT).await.expect("initial").event, "snapshot");
    let post = {
        let (api, id) = (api.clone(), id.clone());
        tokio::spawn(async move { api.say(&id, "please write").await.body })
    };

    let mut awaiting = false;
    let requested: Value = loop {
        let e = sse.next(WAIT).await.expect("an event before the approval");
        match e.event.as_str() {
            "approval.requested" => break data(&e),
            "snapshot" => awaiting |= data(&e)["data"]["status"] == "awaiting_approval",
            other => panic!("unexpected {other} before the approval"),
        }
    };
    assert_eq!(requested["session_id"], id.as_str());
    assert_eq!(requested["tool_name"], "Write b.txt");
    assert_eq!(requested["adapter_id"], "fixture");
    assert_eq!(
        requested["scope_choices"],
        serde_json::json!(["once", "session", "workspace_tool", "adapter_tool"])
    );
    assert!(
        requested["run_id"]
            .as_str()
            .is_some_and(|r| r.starts_with("run_"))
    );
    let approval_id = requested["approval_id"]
        .as_str()
        .expect("approval id")
        .to_string();

    home.approve(&approval_id);

    let mut resolved = None;
    let mut done = None;
    let mut asked_row = false;
    while done.is_none() {
        let e = sse.next(WAIT).await.expect("events until done");
        match e.event.as_str() {
            "approval.resolved" => resolved = Some(data(&e)),
            "snapshot" => {
                let snap = data(&e);
                awaiting |= snap["data"]["status"] == "awaiting_approval";
                asked_row |= approval_row(&snap)
                    .is_some_and(|r| r["needs_action"] == true && r["status"] == "pending");
            }
            "done" => done = Some(data(&e)),
            other => panic!("unexpected {other}"),
        }
    }
    assert!(awaiting, "a snapshot showed the session awaiting approval");
    assert!(
        asked_row,
        "a snapshot's running answer showed the request as waiting for a person"
    );
    let row = approval_row(&done.clone().expect("done")).expect("the answer keeps the request");
    assert_eq!(row["status"], "approved", "{row}");
    assert_eq!(row["needs_action"], false);
    assert_eq!(row["approval_id"], approval_id.as_str());
    assert!(
        row["detail"]
            .as_str()
            .is_some_and(|d| d.contains("by operator")),
        "who answered: {row}"
    );
    let resolved = resolved.expect("approval.resolved before done");
    assert_eq!(resolved["approval_id"], approval_id.as_str());
    assert_eq!(resolved["status"], "approved");
    assert_eq!(resolved["path"], "operator");
    let done = done.expect("done");
    assert_eq!(done["data"]["status"], "completed");
    assert!(
        last_message(&done)["content"]
            .as_str()
            .is_some_and(|c| c.contains("done"))
    );
    assert!(ws.path().join("b.txt").exists());
    assert_eq!(post.await.expect("join")["data"]["status"], "completed");
}

/// Reads events until `approval.requested`; returns it and the last snapshot id seen.
async fn until_requested(sse: &mut http::SseReader) -> (Value, Option<String>) {
    let mut last_id = None;
    loop {
        let e = sse.next(WAIT).await.expect("an event before the approval");
        match e.event.as_str() {
            "approval.requested" => return (data(&e), last_id),
            "snapshot" => last_id = Some(e.id.clone()).filter(|i| !i.is_empty()),
            other => panic!("unexpected {other} before the approval"),
        }
    }
}

#[tokio::test]
async fn a_late_or_reconnecting_subscriber_still_gets_the_pending_approval() {
    let home = Home::empty();
    let (_ws, _server, api, id) = external_session(&home).await;
    let post = {
        let (api, id) = (api.clone(), id.clone());
        tokio::spawn(async move { api.say(&id, "please write").await.body })
    };
    let approval_id = pending_approval(&api, &id).await["id"]
        .as_str()
        .expect("approval id")
        .to_string();

    // Subscribing only now, the pending approval is replayed after the snapshot.
    let mut late = api.stream(&id, None).await;
    let (requested, snapshot_id) = until_requested(&mut late).await;
    assert_eq!(requested["approval_id"], approval_id.as_str());
    assert_eq!(requested["session_id"], id.as_str());
    assert_eq!(requested["tool_name"], "Write b.txt");
    assert_eq!(requested["adapter_id"], "fixture", "replayed ones too");
    assert_eq!(requested["scope_choices"][3], "adapter_tool");

    // Reconnecting after that snapshot replays it too.
    let snapshot_id = snapshot_id.expect("the snapshot of a running turn has an id");
    let mut resumed = api.stream(&id, Some(&snapshot_id)).await;
    let (again, _) = until_requested(&mut resumed).await;
    assert_eq!(again["approval_id"], approval_id.as_str());

    let r = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/approvals/{approval_id}/resolve"),
            json!({"decision": "approve"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);

    for sse in [&mut late, &mut resumed] {
        let mut resolved = false;
        loop {
            let e = sse.next(WAIT).await.expect("events until done");
            match e.event.as_str() {
                "approval.resolved" => {
                    assert_eq!(data(&e)["approval_id"], approval_id.as_str());
                    resolved = true;
                }
                "approval.requested" => panic!("approval.requested sent twice"),
                "snapshot" => {}
                "done" => break,
                other => panic!("unexpected {other}"),
            }
        }
        assert!(resolved, "approval.resolved before done");
    }
    assert_eq!(post.await.expect("join")["data"]["status"], "completed");
}

/// The `approval` activity row of the transcript's last message, if any.
fn approval_row(snapshot: &Value) -> Option<Value> {
    last_message(snapshot)["activities"]
        .as_array()?
        .iter()
        .find(|a| a["type"] == "approval")
        .cloned()
}
