//! `hecate acp` and `additionalDirectories`: advertised, checked on
//! `session/new`, `session/load` and `session/resume` (relative, missing and
//! off-limits directories refused with stable reasons, before anything is
//! created), and passed on to an agent that advertises the capability (never
//! to one that does not).

use crate::support::acp_editor::*;
use crate::support::common::{Home, workspace};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CloseSessionRequest, ListSessionsRequest, LoadSessionRequest, NewSessionRequest,
    ResumeSessionRequest, SessionId,
};
use agent_client_protocol::{Agent, Error, ErrorCode};
use std::path::{Path, PathBuf};

/// A home whose `fixture` agent runs with `extra` flags; answers its state dir.
fn home_with(extra: &[&str]) -> (Home, String) {
    let home = Home::empty();
    let state = home.add_scripted_agent(&agent_script(), extra, "");
    (home, state)
}

/// The `METHOD DIR…` lines the agent recorded.
fn roots_log(state: &str) -> Vec<String> {
    std::fs::read_to_string(Path::new(state).join("roots.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

async fn new_with(
    cx: &ConnectionTo<Agent>,
    cwd: &Path,
    dirs: Vec<PathBuf>,
) -> Result<SessionId, Error> {
    let r = cx
        .send_request(NewSessionRequest::new(cwd).additional_directories(dirs))
        .block_task()
        .await?;
    Ok(r.session_id)
}

/// Asserts `r` was refused as invalid params with `data.reason` `want`.
fn assert_refused<T: std::fmt::Debug>(r: Result<T, Error>, want: &str) {
    let e = r.expect_err("refused");
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
    let data = e.data.clone().unwrap_or_default();
    assert_eq!(data["reason"], want, "{e:?}");
    assert_eq!(data["type"], "invalid_request", "{e:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn checked_directories_reach_an_agent_that_takes_them_on_new_resume_and_load() {
    let (home, state) = home_with(&["--lifecycle", "--additional-directories"]);
    let (_g, ws) = workspace();
    let (_g2, extra) = workspace();
    let (_g3, other) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    let sid = run_editor(transport, Editor::default(), async |cx, _updates| {
        let init = initialize(&cx, Caps::default()).await?;
        assert!(
            init.agent_capabilities
                .session_capabilities
                .additional_directories
                .is_some(),
            "advertised"
        );
        let sid = new_with(&cx, &ws, vec![extra.clone(), extra.join("."), ws.clone()]).await?;
        assert_eq!(
            roots_log(&state),
            [format!("session/new {}", extra.display())],
            "checked, canonical, duplicates and the workspace dropped"
        );
        prompt(&cx, &sid, "hello").await?;
        cx.send_request(CloseSessionRequest::new(sid.clone()))
            .block_task()
            .await?;
        cx.send_request(
            ResumeSessionRequest::new(sid.clone(), &ws).additional_directories(vec![other.clone()]),
        )
        .block_task()
        .await?;
        assert_eq!(
            roots_log(&state).last(),
            Some(&format!("session/resume {}", other.display()))
        );
        Ok(sid)
    })
    .await
    .expect("first editor session");

    // Another process loads it for the editor; toward the agent resume is
    // preferred, and carries the list the load gave.
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        initialize(&cx, Caps::default()).await?;
        cx.send_request(
            LoadSessionRequest::new(sid.clone(), &ws)
                .additional_directories(vec![extra.clone(), other.clone()]),
        )
        .block_task()
        .await?;
        let last = roots_log(&state).last().cloned().unwrap_or_default();
        assert_eq!(
            last,
            format!("session/resume {} {}", extra.display(), other.display())
        );
        Ok(())
    })
    .await
    .expect("second editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_directories_are_refused_with_stable_reasons_and_nothing_is_created() {
    let (home, state) = home_with(&["--additional-directories"]);
    let (_g, ws) = workspace();
    let file = ws.join("a-file.txt");
    std::fs::write(&file, "x").expect("file");
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        initialize(&cx, Caps::default()).await?;
        let cases: [(PathBuf, &str); 5] = [
            ("relative/dir".into(), "additional_directory_relative"),
            (ws.join("not-here"), "additional_directory_missing"),
            (file.clone(), "additional_directory_missing"),
            ("/".into(), "additional_directory_not_allowed"),
            ("/proc".into(), "additional_directory_not_allowed"),
        ];
        for (dir, reason) in cases {
            assert_refused(new_with(&cx, &ws, vec![dir]).await, reason);
        }
        let listed = cx
            .send_request(ListSessionsRequest::new())
            .block_task()
            .await?;
        assert!(listed.sessions.is_empty(), "nothing was created");
        assert!(roots_log(&state).is_empty(), "the agent never started");

        let sid = new_with(&cx, &ws, vec![]).await?;
        assert_refused(
            cx.send_request(
                ResumeSessionRequest::new(sid.clone(), &ws)
                    .additional_directories(vec!["also/relative".into()]),
            )
            .block_task()
            .await,
            "additional_directory_relative",
        );
        assert_refused(
            cx.send_request(
                LoadSessionRequest::new(sid, &ws).additional_directories(vec![ws.join("gone")]),
            )
            .block_task()
            .await,
            "additional_directory_missing",
        );
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_that_does_not_take_them_gets_none() {
    let (home, state) = home_with(&[]);
    let (_g, ws) = workspace();
    let (_g2, extra) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        initialize(&cx, Caps::default()).await?;
        new_with(&cx, &ws, vec![extra.clone()]).await?;
        assert_eq!(roots_log(&state), ["session/new"]);
        Ok(())
    })
    .await
    .expect("editor session");
}
