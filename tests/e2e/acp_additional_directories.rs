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

/// Hecate serves an agent's `fs/*` and `terminal/*` requests in the directories
/// the editor granted beside the workspace (absolute paths only), and still
/// refuses a directory it did not grant.
#[tokio::test(flavor = "multi_thread")]
async fn the_agents_files_and_terminals_reach_the_granted_directories_and_no_others() {
    let (_g, ws) = workspace();
    let (_g2, extra) = workspace();
    let (_g3, other) = workspace();
    let script = serde_json::json!({"turns": [{"match": "files", "actions": [
        {"fs_write": {"path": extra.join("agent.txt"), "content": "in the extra"}},
        {"fs_read": {"path": extra.join("agent.txt")}},
        {"terminal": {"command": "pwd", "cwd": extra}},
        {"fs_write": {"path": other.join("no.txt"), "content": "x"}},
        {"terminal": {"command": "pwd", "cwd": other}}
    ]}]})
    .to_string();
    let home = Home::empty();
    home.add_scripted_agent(&script, &["--additional-directories"], "");
    let (_hecate, updates) = one_prompt(
        &home,
        &["--target", "agent:fixture"],
        Editor::default(),
        Caps::default(),
        NewSessionRequest::new(&ws).additional_directories(vec![extra.clone()]),
        "files please",
    )
    .await;
    let text = answer(&updates);
    assert_eq!(
        std::fs::read_to_string(extra.join("agent.txt")).expect("written by the agent"),
        "in the extra"
    );
    assert!(text.contains("read: in the extra"), "{text}");
    assert!(
        text.contains(&format!("terminal exit 0: {}", extra.display())),
        "the terminal ran in the granted directory: {text}"
    );
    assert!(
        !other.join("no.txt").exists(),
        "not granted: nothing written"
    );
    assert_eq!(
        text.matches("additional directories").count(),
        2,
        "the write and the terminal outside both are refused, naming the rule: {text}"
    );
}
