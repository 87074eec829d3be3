//! `hecate acp` resuming, closing and deleting threads: what it advertises,
//! `session/resume` attaching without a replay, `session/close` ending a
//! running turn as cancelled and letting go of the agent, `session/delete`
//! removing the stored session; and what reaches the fixture agent (its own
//! `session/resume`, `session/close` and `session/delete` when it advertises
//! them, `session/load` and a stopped process when it does not; the idle
//! reaper closing before it stops an agent). Unknown sessions get a stable
//! not-found error.

use crate::support::acp_editor::*;
use crate::support::common::{Home, workspace};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CloseSessionRequest, ContentBlock, DeleteSessionRequest, ListSessionsRequest, PromptRequest,
    ResumeSessionRequest, SessionId, SessionUpdate, StopReason,
};
use agent_client_protocol::{Agent, Error, ErrorCode};
use serde_json::Value;
use std::path::Path;

/// A home whose `fixture` agent plays [`agent_script`] with `extra` arguments;
/// answers the home and the agent's state directory.
fn lifecycle_home(extra: &[&str]) -> (Home, String) {
    let home = Home::empty();
    let state = home.add_scripted_agent(&agent_script(), extra, "");
    (home, state)
}

/// The session requests the fixture agent received, as `METHOD NATIVE_ID` lines.
fn received(state: &str) -> Vec<String> {
    std::fs::read_to_string(Path::new(state).join("methods.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// The native session id of the last `session/new` the agent received.
fn native_id(state: &str) -> String {
    received(state)
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("session/new ").map(str::to_string))
        .expect("the agent opened a session")
}

/// Waits until the agent received `line` (no limit of its own: the editor's
/// session has one).
async fn wait_for(state: &str, line: &str) {
    while !received(state).iter().any(|l| l == line) {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

async fn resume(cx: &ConnectionTo<Agent>, sid: &SessionId, ws: &Path) -> Result<(), Error> {
    cx.send_request(ResumeSessionRequest::new(sid.clone(), ws))
        .block_task()
        .await
        .map(|_| ())
}

async fn close(cx: &ConnectionTo<Agent>, sid: &SessionId) -> Result<(), Error> {
    cx.send_request(CloseSessionRequest::new(sid.clone()))
        .block_task()
        .await
        .map(|_| ())
}

async fn delete(cx: &ConnectionTo<Agent>, sid: &SessionId) -> Result<(), Error> {
    cx.send_request(DeleteSessionRequest::new(sid.clone()))
        .block_task()
        .await
        .map(|_| ())
}

/// Whether `updates` replay any of the thread (user or agent text).
fn replayed(updates: &[SessionUpdate]) -> bool {
    updates
        .iter()
        .any(|u| user_text(u).is_some() || agent_text(u).is_some())
}

/// Asserts `r` is the stable not-found error for session `sid`.
fn assert_not_found(r: Result<(), Error>, sid: &str) {
    let e = r.expect_err("an unknown session is refused");
    assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND, "{e:?}");
    let data = e.data.clone().unwrap_or(Value::Null);
    assert_eq!(data["reason"], "session_not_found", "{e:?}");
    assert_eq!(data["sessionId"], sid, "{e:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn resume_close_and_delete_are_advertised_and_reach_an_agent_that_offers_them() {
    let (home, state) = lifecycle_home(&["--lifecycle"]);
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let init = initialize(&cx, Caps::default()).await?;
        let caps = &init.agent_capabilities.session_capabilities;
        assert!(caps.list.is_some() && caps.resume.is_some(), "{caps:?}");
        assert!(caps.close.is_some() && caps.delete.is_some(), "{caps:?}");
        let sid = new_session(&cx, &ws).await?.session_id;
        prompt(&cx, &sid, "remember the word zebra").await?;
        assert!(answer(&updates.drain()).contains("zebra"));
        let native = native_id(&state);

        close(&cx, &sid).await?;
        assert!(
            received(&state).contains(&format!("session/close {native}")),
            "{:?}",
            received(&state)
        );

        resume(&cx, &sid, &ws).await?;
        assert!(!replayed(&updates.drain()), "resume replays nothing");
        let seen = received(&state);
        assert!(
            seen.contains(&format!("session/resume {native}")),
            "{seen:?}"
        );
        assert!(
            !seen.iter().any(|l| l.starts_with("session/load")),
            "resume is preferred over load: {seen:?}"
        );
        assert_eq!(
            prompt(&cx, &sid, "what was the word").await?,
            StopReason::EndTurn
        );
        let follow_up = answer(&updates.drain());
        assert_eq!(follow_up, "echo: what was the word", "not primed again");

        delete(&cx, &sid).await?;
        assert!(
            received(&state).contains(&format!("session/delete {native}")),
            "{:?}",
            received(&state)
        );
        let listed = cx
            .send_request(ListSessionsRequest::new())
            .block_task()
            .await?;
        assert!(
            listed.sessions.iter().all(|s| s.session_id != sid),
            "{listed:?}"
        );
        assert_not_found(resume(&cx, &sid, &ws).await, &sid.0);
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_without_them_is_loaded_and_stopped_instead() {
    let (home, state) = lifecycle_home(&[]);
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        prompt(&cx, &sid, "remember the word zebra").await?;
        updates.drain();
        let native = native_id(&state);
        close(&cx, &sid).await?;
        resume(&cx, &sid, &ws).await?;
        assert!(
            !replayed(&updates.drain()),
            "the agent's replay is not relayed"
        );
        assert_eq!(
            prompt(&cx, &sid, "what was the word").await?,
            StopReason::EndTurn
        );
        assert_eq!(answer(&updates.drain()), "echo: what was the word");
        delete(&cx, &sid).await?;
        let seen = received(&state);
        assert!(seen.contains(&format!("session/load {native}")), "{seen:?}");
        assert!(
            !seen.iter().any(|l| l.starts_with("session/resume")
                || l.starts_with("session/close")
                || l.starts_with("session/delete")),
            "nothing the agent did not advertise was sent: {seen:?}"
        );
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn closing_a_running_thread_cancels_its_turn_and_it_can_be_resumed() {
    let (home, state) = lifecycle_home(&["--lifecycle"]);
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        let pending = cx
            .send_request(PromptRequest::new(
                sid.clone(),
                vec![ContentBlock::from("slow please")],
            ))
            .block_task();
        let mut seen = String::new();
        while seen.is_empty() {
            seen.extend(agent_text(&updates.next().await));
        }
        close(&cx, &sid).await?;
        assert_eq!(pending.await?.stop_reason, StopReason::Cancelled);
        let native = native_id(&state);
        assert!(
            received(&state).contains(&format!("session/close {native}")),
            "{:?}",
            received(&state)
        );
        updates.drain();
        resume(&cx, &sid, &ws).await?;
        assert_eq!(prompt(&cx, &sid, "again").await?, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "echo: again");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_agent_is_closed_before_it_is_stopped_and_resumed_by_the_next_prompt() {
    let (home, state) = lifecycle_home(&["--lifecycle"]);
    home.write_config("[agents]\nprocess_idle_ms = 300\n");
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        assert_eq!(prompt(&cx, &sid, "hello").await?, StopReason::EndTurn);
        let native = native_id(&state);
        wait_for(&state, &format!("session/close {native}")).await;
        updates.drain();
        assert_eq!(prompt(&cx, &sid, "again").await?, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "echo: again");
        let seen = received(&state);
        assert!(
            seen.contains(&format!("session/resume {native}")),
            "{seen:?}"
        );
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_sessions_get_a_stable_not_found_error() {
    let (home, _state) = lifecycle_home(&["--lifecycle"]);
    let (_guard, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        initialize(&cx, Caps::default()).await?;
        let nope = SessionId::new("no-such-session");
        assert_not_found(resume(&cx, &nope, &ws).await, "no-such-session");
        assert_not_found(close(&cx, &nope).await, "no-such-session");
        assert_not_found(delete(&cx, &nope).await, "no-such-session");
        Ok(())
    })
    .await
    .expect("editor session");
}
