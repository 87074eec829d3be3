//! Safe by default, tried as a hostile user would against the real `hecate
//! serve`: `shell`, `git` and `file` tasks and Hecate's own agent
//! (`shell_exec`, `git_exec`, `file_write`) run workspace-write (the machine
//! read-only, the workspace and a private /tmp writable, no network), `.git`
//! read-only, and git that would run another program refused. Every hostile
//! case ends with nothing written outside the workspace, nothing executed, and
//! a clear error or a new approval; ordinary work (git status and commit, a
//! build writing target/, a test writing /tmp) still works.

use crate::support::agent::{
    agent_home, agent_task, answer, approve, call, count, create_and_start, data, events, reaches,
    turn,
};
use crate::support::common::{Home, ModelServer, workspace};
use crate::support::http::{Api, serve};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A directory outside every workspace and outside /tmp (so a private /tmp
/// does not hide it; only the read-only root keeps writes out).
fn outside() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("outside dir");
    let path = dir.path().canonicalize().expect("canonical");
    (dir, path)
}

/// A home whose tasks run without approval gates.
fn ungated() -> Home {
    let mut home = Home::empty();
    home.set("HECATE_TASK_APPROVAL_POLICIES", "");
    home
}

/// A git repository with one commit in `ws`, made by the test (as the user).
fn repo(ws: &Path) {
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=T", "-c", "user.email=t@example.invalid"])
            .args(args)
            .current_dir(ws)
            .output()
            .expect("git runs");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q", "-b", "main"]);
    std::fs::write(ws.join("README"), "hello\n").expect("seed");
    git(&["add", "README"]);
    git(&["commit", "-q", "-m", "first"]);
}

/// A hook that, if git ever ran it, would leave `marker` behind.
fn plant_hook(ws: &Path, marker: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let hook = ws.join(".git/hooks/post-commit");
    std::fs::write(&hook, format!("#!/bin/sh\ntouch {}\n", marker.display())).expect("hook");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// Git command lines that would run a program (leaving `pwned` behind) or
/// reach outside the workspace (`out`): the forms of git that are shell.
fn hostile_git(pwned: &Path, out: &Path) -> Vec<String> {
    vec![
        format!("-c alias.x=!touch${{IFS}}{} x", pwned.display()),
        format!("-c core.pager='touch {}' log -p", pwned.display()),
        format!(
            "-c core.sshCommand='touch {}' fetch origin",
            pwned.display()
        ),
        format!("-c core.hooksPath={} commit -m x", out.display()),
        format!("-c core.fsmonitor='touch {}' status", pwned.display()),
        format!("-c diff.external='touch {}' diff", pwned.display()),
        format!("-c diff.x.textconv='touch {}' diff", pwned.display()),
        format!("-c filter.x.clean='touch {}' add .", pwned.display()),
        format!("-c credential.helper='!touch {}' fetch", pwned.display()),
        "--config-env=core.pager=X log -p".to_string(),
        format!("--exec-path={} status", out.display()),
        format!("-C {} status", out.display()),
        format!("--upload-pack='touch {}' fetch origin", pwned.display()),
        format!("fetch --upload-pack='touch {}' origin", pwned.display()),
        format!("push --receive-pack='touch {}' origin", pwned.display()),
        format!("difftool -x 'touch {}' HEAD", pwned.display()),
        "mergetool".to_string(),
        format!("submodule foreach 'touch {}'", pwned.display()),
        format!("filter-branch --tree-filter 'touch {}'", pwned.display()),
        format!("bisect run touch {}", pwned.display()),
        format!("rebase --exec 'touch {}' main", pwned.display()),
        format!("config alias.st '!touch {}'", pwned.display()),
        format!("config core.hooksPath {}", out.display()),
        "x".to_string(),
    ]
}

async fn run_task(api: &Api, body: Value) -> (String, Value) {
    let (task, run) = create_and_start(api, body).await;
    let done = reaches(api, &task, &run, &["completed", "failed", "cancelled"]).await;
    let steps = data(api, &format!("/hecate/v1/tasks/{task}/runs/{run}/steps")).await;
    (
        done["status"].as_str().unwrap_or("").to_string(),
        json!({"run": done, "steps": steps}),
    )
}

#[tokio::test]
async fn git_that_runs_programs_is_refused_at_creation_and_nothing_runs() {
    let home = ungated();
    let s = serve(&home);
    let api = Api::new(&s);
    let (_w, ws) = workspace();
    repo(&ws);
    let (_o, out) = outside();
    let pwned = out.join("pwned");
    let hostile = hostile_git(&pwned, &out);
    for line in &hostile {
        let a = api
            .post(
                "/hecate/v1/tasks",
                json!({"execution_kind": "git", "git_command": line,
                       "workspace_mode": "in_place", "working_directory": ws}),
            )
            .await;
        assert_eq!(a.status, 400, "{line}: {}", a.body);
        assert_eq!(a.error_type(), "invalid_request", "{line}");
        assert_eq!(a.body["error"]["field"], "git_command", "{line}");
        assert!(
            a.body["error"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("refused"),
            "{line}: {}",
            a.body
        );
    }
    assert!(!pwned.exists());
    let listed = data(&api, "/hecate/v1/tasks").await;
    assert!(listed.is_empty(), "nothing was created: {listed:?}");
}

#[tokio::test]
async fn git_data_is_read_only_and_a_planted_hook_never_runs() {
    let home = ungated();
    let s = serve(&home);
    let api = Api::new(&s);
    let (_w, ws) = workspace();
    repo(&ws);
    let marker = ws.join("hook-ran");
    let hook = format!("#!/bin/sh\ntouch {}\n", marker.display());
    let in_place = |extra: Value| {
        let mut body = json!({"workspace_mode": "in_place", "working_directory": ws});
        body.as_object_mut()
            .expect("object")
            .extend(extra.as_object().expect("object").clone());
        body
    };
    // A file task writing a hook fails with the reason.
    let (status, got) = run_task(
        &api,
        in_place(
            json!({"execution_kind": "file", "file_path": ".git/hooks/post-commit",
                        "file_content": hook}),
        ),
    )
    .await;
    assert_eq!(status, "failed", "{got}");
    assert_eq!(got["steps"][0]["error_type"], "sandbox_error", "{got}");
    assert!(
        got["steps"][0]["error_message"]
            .as_str()
            .unwrap_or("")
            .contains(".git"),
        "{got}"
    );
    // A shell task writing a hook or the repository's configuration fails too.
    let (status, got) = run_task(
        &api,
        in_place(json!({"execution_kind": "shell",
                        "shell_command": format!("printf '{}' > .git/hooks/post-commit", hook.replace('\n', "\\n"))})),
    )
    .await;
    assert_eq!(status, "failed", "{got}");
    let (status, _) = run_task(
        &api,
        in_place(json!({"execution_kind": "shell",
                        "shell_command": "git config core.hooksPath /tmp"})),
    )
    .await;
    assert_eq!(status, "failed");
    assert!(!ws.join(".git/hooks/post-commit").exists());
    assert!(
        !std::fs::read_to_string(ws.join(".git/config"))
            .expect("config")
            .contains("hooksPath")
    );
    // A hook that is there anyway (the user's, or from before) does not run
    // when a git task commits; the commit itself works.
    plant_hook(&ws, &marker);
    let commit =
        "-c user.name=Agent -c user.email=a@example.invalid commit --allow-empty -m by-task";
    let (status, got) = run_task(
        &api,
        in_place(json!({"execution_kind": "git", "git_command": commit})),
    )
    .await;
    assert_eq!(status, "completed", "{got}");
    assert!(!marker.exists(), "the hook did not run");
    std::fs::remove_file(ws.join(".git/hooks/post-commit")).expect("unplant");
    let (status, got) = run_task(
        &api,
        in_place(json!({"execution_kind": "git", "git_command": "log --oneline -n 1"})),
    )
    .await;
    assert_eq!(status, "completed", "{got}");
    let log = std::process::Command::new("git")
        .args(["log", "--format=%s", "-n", "1"])
        .current_dir(&ws)
        .output()
        .expect("git log");
    assert_eq!(String::from_utf8_lossy(&log.stdout), "by-task\n");
    // A task that allows it explicitly gets its hooks (and may write .git).
    let inside = ws.join("hook-ran-allowed");
    plant_hook(&ws, &inside);
    let (status, got) = run_task(
        &api,
        in_place(json!({"execution_kind": "git", "git_command": commit,
                        "sandbox_git_writable": true})),
    )
    .await;
    assert_eq!(status, "completed", "{got}");
    assert!(inside.exists(), "hooks run when the task allows them");
    assert!(!marker.exists());
}

#[tokio::test]
async fn commands_write_the_workspace_and_a_private_tmp_only_unless_loosened_in_the_approval() {
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let (_w, ws) = workspace();
    let (_o, out) = outside();
    let escape = out.join("escape");
    let script = format!(
        "(echo x > {}) 2>/dev/null || echo refused; mkdir -p target && echo built > target/out; \
         echo t > /tmp/scratch.$$ && cat /tmp/scratch.$$ && rm /tmp/scratch.$$",
        escape.display()
    );
    let body = json!({"execution_kind": "shell", "shell_command": script,
                      "workspace_mode": "in_place", "working_directory": ws});
    let (task, run) = create_and_start(&api, body.clone()).await;
    let approvals = data(&api, &format!("/hecate/v1/tasks/{task}/approvals")).await;
    let reason = approvals[0]["reason"].as_str().expect("reason").to_string();
    assert!(
        reason
            .contains("confined: workspace and private /tmp writable, .git read-only, no network"),
        "{reason}"
    );
    approve(&api, &task, approvals[0]["id"].as_str().expect("id")).await;
    let done = reaches(&api, &task, &run, &["completed", "failed"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    let arts = data(
        &api,
        &format!("/hecate/v1/tasks/{task}/runs/{run}/artifacts"),
    )
    .await;
    let stdout = arts.iter().find(|a| a["name"] == "stdout").expect("stdout");
    assert_eq!(stdout["content"], "refused\nt\n");
    assert!(!escape.exists(), "nothing outside the workspace");
    assert_eq!(
        std::fs::read_to_string(ws.join("target/out")).expect("build output"),
        "built\n"
    );
    let view = api.get(&format!("/hecate/v1/tasks/{task}")).await;
    assert_eq!(view.body["data"]["sandbox_read_only"], true);
    assert_eq!(view.body["data"]["sandbox_git_writable"], false);
    // Loosened explicitly, the approval says so before anything runs.
    let mut loose = body;
    loose["sandbox_read_only"] = json!(false);
    let (task, run) = create_and_start(&api, loose).await;
    let approvals = data(&api, &format!("/hecate/v1/tasks/{task}/approvals")).await;
    let reason = approvals[0]["reason"].as_str().expect("reason");
    assert!(
        reason.contains("LOOSENED: the whole filesystem writable"),
        "{reason}"
    );
    approve(&api, &task, approvals[0]["id"].as_str().expect("id")).await;
    let done = reaches(&api, &task, &run, &["completed", "failed"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert!(escape.exists(), "the operator approved the loosened task");
    let view = api.get(&format!("/hecate/v1/tasks/{task}")).await;
    assert_eq!(view.body["data"]["sandbox_read_only"], false);
}

#[tokio::test]
async fn the_agent_is_refused_git_that_runs_programs_and_writes_into_git_data_without_being_asked()
{
    let (_w, ws) = workspace();
    repo(&ws);
    let (_o, out) = outside();
    let pwned = out.join("pwned");
    let escape = out.join("escape");
    let marker = ws.join("hook-ran");
    let hostile = hostile_git(&pwned, &out);
    let commit =
        "-c user.name=Agent -c user.email=a@example.invalid commit --allow-empty -m by-agent";
    let server = ModelServer::start(Some(json!([
        // Approved once by the operator.
        turn(vec![call("git_exec", json!({"args": "status --short"}))]),
        // Then git that would run programs, and writes into .git: refused
        // before any approval, whatever was approved before.
        turn(
            hostile
                .iter()
                .map(|line| call("git_exec", json!({"args": line})))
                .chain([
                    call(
                        "file_write",
                        json!({"path": ".git/hooks/post-commit",
                               "content": format!("#!/bin/sh\ntouch {}\n", marker.display())}),
                    ),
                    call(
                        "file_write",
                        json!({"path": ".git/config", "content": "[core]\n"}),
                    ),
                ])
                .collect(),
        ),
        // A shell command writing outside the workspace and into .git (asked,
        // approved, and still confined).
        turn(vec![call(
            "shell_exec",
            json!({"command": format!(
                "(echo x > {}) 2>/dev/null || echo outside-refused; \
                 (echo x > .git/hooks/post-commit) 2>/dev/null || echo hook-refused",
                escape.display()
            )}),
        )]),
        // An ordinary commit (asked, approved) with a hook already there.
        turn(vec![call("git_exec", json!({"args": commit}))]),
        answer("done"),
    ])));
    let wire = crate::support::agent::WIRES[0];
    let home = agent_home(&server, wire, "shell_exec,git_exec,file_write");
    let s = serve(&home);
    let api = Api::new(&s);
    let (task, run) = create_and_start(&api, agent_task(wire.2, &ws, json!({}))).await;
    let mut approved = Vec::new();
    loop {
        let r = reaches(
            &api,
            &task,
            &run,
            &["awaiting_approval", "completed", "failed"],
        )
        .await;
        if r["status"] != "awaiting_approval" {
            assert_eq!(r["status"], "completed", "{r}");
            break;
        }
        let pending: Vec<Value> = data(&api, &format!("/hecate/v1/tasks/{task}/approvals"))
            .await
            .into_iter()
            .filter(|a| a["status"] == "pending")
            .collect();
        let a = &pending[0];
        approved.push(a["reason"].as_str().unwrap_or("").to_string());
        if approved.len() == 3 {
            // The hook the model could not write is there anyway (the user's).
            plant_hook(&ws, &marker);
        }
        approve(&api, &task, a["id"].as_str().expect("id")).await;
    }
    assert_eq!(
        approved.len(),
        3,
        "asked for status, the shell command and the commit only: {approved:?}"
    );
    assert!(
        approved[0].contains("git_exec") && approved[0].contains("hooks off"),
        "{}",
        approved[0]
    );
    assert!(
        approved[1]
            .contains("confined: workspace and private /tmp writable, .git read-only, no network"),
        "{}",
        approved[1]
    );
    assert!(!pwned.exists() && !escape.exists() && !marker.exists());
    let ev = events(&api, &task, &run).await;
    let results: Vec<(String, bool, String)> = ev
        .iter()
        .filter(|e| e["type"] == "tool.call.finished")
        .map(|e| {
            (
                e["data"]["tool"].as_str().unwrap_or("").to_string(),
                e["data"]["is_error"].as_bool().unwrap_or(false),
                e["data"]["result"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    let n = hostile.len();
    assert_eq!(results.len(), n + 5, "{results:?}");
    assert!(!results[0].1, "status ran: {results:?}");
    for r in &results[1..n + 3] {
        assert!(r.1 && r.2.contains("refused"), "{r:?}");
    }
    assert!(results[n + 1].2.contains(".git"), "{:?}", results[n + 1]);
    let shell = &results[n + 3];
    assert!(
        shell.2.contains("outside-refused") && shell.2.contains("hook-refused"),
        "{shell:?}"
    );
    assert!(!results[n + 4].1, "the commit ran: {:?}", results[n + 4]);
    assert_eq!(count(&ev, "approval.requested"), 3);
    let log = std::process::Command::new("git")
        .args(["log", "--format=%s", "-n", "1"])
        .current_dir(&ws)
        .output()
        .expect("git log");
    assert_eq!(String::from_utf8_lossy(&log.stdout), "by-agent\n");
    assert!(
        !std::fs::read_to_string(ws.join(".git/config"))
            .expect("config")
            .contains("[core]\n[core]")
    );
}
