//! `hecate acp` and `additionalDirectories`: advertised, checked on
//! `session/new`, `session/load` and `session/resume` (relative, missing and
//! off-limits directories refused with stable reasons, before anything is
//! created), passed on to an agent that advertises the capability (never
//! to one that does not), and taken by Hecate's own agent's file and shell
//! tools.

use crate::support::acp_editor::*;
use crate::support::agent::{WIRES, agent_home, answer as final_answer, call, said, turn};
use crate::support::common::{Home, ModelServer, workspace};
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

/// Hecate's own agent (a `hecate` target) reads and writes in the directory the
/// editor granted, by absolute path, and its sandboxed shell may write there;
/// a relative path stays in the thread's folder, a path outside both is
/// refused in the tool's result, and the model is told which directories it
/// has. A resumed thread given another directory works with that one only.
#[tokio::test(flavor = "multi_thread")]
async fn hecate_agent_tools_reach_the_granted_directories_and_no_others() {
    let (_g, ws) = workspace();
    let (_g2, extra) = workspace();
    let (_g3, other) = workspace();
    let (_g4, outside) = workspace();
    std::fs::write(ws.join("notes.txt"), "in the workspace\n").expect("seed");
    std::fs::write(extra.join("in.txt"), "in the extra\n").expect("seed");
    std::fs::write(other.join("o.txt"), "in the other\n").expect("seed");
    let at = |dir: &Path, name: &str| dir.join(name).display().to_string();
    let read = |path: String| call("read_file", serde_json::json!({"path": path}));
    let write = |path: String, content: &str| {
        call(
            "file_write",
            serde_json::json!({"path": path, "content": content}),
        )
    };
    let shell = format!(
        "echo from the shell > {} && cat {}",
        at(&extra, "shell.txt"),
        at(&extra, "in.txt")
    );
    let server = ModelServer::start(Some(serde_json::json!([
        turn(vec![read(at(&extra, "in.txt"))]),
        turn(vec![write(at(&extra, "out.txt"), "written by hecate")]),
        turn(vec![write(at(&outside, "no.txt"), "x")]),
        turn(vec![read("notes.txt".into())]),
        turn(vec![write("rel.txt".into(), "relative")]),
        turn(vec![call(
            "shell_exec",
            serde_json::json!({"command": shell})
        )]),
        final_answer("Done."),
        turn(vec![read(at(&other, "o.txt"))]),
        turn(vec![read(at(&extra, "in.txt"))]),
        final_answer("Done again."),
    ])));
    let mut home = agent_home(&server, WIRES[0], "");
    home.set("PROVIDER_FIX_MODELS", "gpt-fixture");
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "hecate:fix/gpt-fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let sid = new_with(&cx, &ws, vec![extra.clone()]).await?;
        prompt(&cx, &sid, "use the extra directory").await?;
        assert_eq!(answer(&updates.drain()), "Done.");
        cx.send_request(CloseSessionRequest::new(sid.clone()))
            .block_task()
            .await?;
        cx.send_request(
            ResumeSessionRequest::new(sid.clone(), &ws).additional_directories(vec![other.clone()]),
        )
        .block_task()
        .await?;
        prompt(&cx, &sid, "use the other directory").await?;
        assert_eq!(answer(&updates.drain()), "Done again.");
        Ok(())
    })
    .await
    .expect("editor session");

    let requests = server.requests();
    assert_eq!(requests.len(), 10, "every scripted turn was asked");
    let extra_named = format!(
        "additional directories, naming them by absolute path (relative paths stay in the workspace): {}.",
        extra.display()
    );
    assert!(
        said(&requests[0]).contains(&extra_named),
        "the model is told: {}",
        said(&requests[0])
    );
    assert!(
        said(&requests[1]).contains("in the extra"),
        "read in the extra"
    );
    assert_eq!(
        std::fs::read_to_string(extra.join("out.txt")).expect("written in the extra"),
        "written by hecate"
    );
    let refusal = |path: String| {
        format!("path {path}: outside the session workspace and its additional directories")
    };
    let refused = said(&requests[3]);
    assert!(
        refused.contains(&refusal(at(&outside, "no.txt"))),
        "a path outside both is refused naming the rule: {refused}"
    );
    assert!(!outside.join("no.txt").exists(), "nothing written outside");
    assert!(
        said(&requests[4]).contains("in the workspace"),
        "relative read"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("rel.txt")).expect("relative write"),
        "relative"
    );
    assert!(!extra.join("rel.txt").exists());
    let shelled = said(&requests[6]);
    assert!(shelled.contains("exit code 0"), "{shelled}");
    assert_eq!(
        std::fs::read_to_string(extra.join("shell.txt")).expect("the sandboxed shell wrote it"),
        "from the shell\n"
    );
    // Resumed with another directory: a fresh task that has that one only.
    let other_named = format!(
        "(relative paths stay in the workspace): {}.",
        other.display()
    );
    assert!(
        said(&requests[7]).contains(&other_named),
        "{}",
        said(&requests[7])
    );
    assert!(
        said(&requests[8]).contains("in the other"),
        "read in the other"
    );
    let gone = said(&requests[9]);
    assert!(
        gone.contains(&refusal(at(&extra, "in.txt"))),
        "the first directory is no longer granted: {gone}"
    );
}
