//! `hecate chat --agent` against the fixture ACP agent: streaming, permissions
//! answered on the terminal, by mode, by grant and from another process, diffs and
//! revert, reattaching after a restart, and the faults.

use crate::support::common::{
    Home, fixture_chat_args, git_workspace, permission_turn, session_id_from, text,
};
use crate::support::http::{Api, serve};
use serde_json::{Value, json};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

/// The fixture agent's turns, picked by the prompt: a gated write (after a
/// thought), escapes from the workspace, a terminal, and the faults.
fn write_script() -> String {
    let mut write = permission_turn(
        "Write b.txt",
        json!([
            {"fs_write": {"path": "b.txt", "content": "new file\n"}},
            {"edit_file": {"path": "a.txt", "content": "changed\n"}}
        ]),
    );
    write["actions"]
        .as_array_mut()
        .expect("actions")
        .insert(0, json!({"thought": "planning"}));
    json!({"turns": [
        write,
        {"match":"escape","actions":[{"fs_write":{"path":"../outside.txt","content":"x"}},{"fs_read":{"path":"/etc/hostname"}}]},
        {"match":"shell","actions":[{"terminal":{"command":"sh","args":["-c","echo from-terminal; exit 3"]}}]},
        {"match":"crash","actions":[{"text":"about to crash "},{"crash":7}]},
        {"match":"hang","actions":[{"text":"hanging "},{"hang":true}]},
        {"match":"slow","actions":[{"chunks":["one ","two ","three ","four "],"delay_ms":700}]},
        {"match":"garbage","actions":[{"text":"before "},{"garbage":"this is not json"},{"text":"after"}]}
    ]})
    .to_string()
}

fn home_with_agent(extra: &[&str]) -> Home {
    let home = Home::empty();
    home.add_scripted_agent(&write_script(), extra, "");
    home
}

fn chat(home: &Home, ws: &str, args: &[&str], stdin: &[u8]) -> Output {
    home.run_with_stdin(&fixture_chat_args(ws, args), stdin)
}

/// Starts `chat --agent fixture` in `ws` with `args` in the background, its
/// stdout and stderr piped.
fn spawn_chat(home: &Home, ws: &str, args: &[&str]) -> Child {
    home.cmd(&fixture_chat_args(ws, args))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn chat")
}

/// Asserts that a command printed `needle` on stdout.
fn assert_prints(out: &Output, needle: &str) {
    let (stdout, stderr) = text(out);
    assert!(stdout.contains(needle), "{stdout}\n{stderr}");
}

/// Every approval of `home`, resolved or not (`approvals list --all`).
fn all_approvals(home: &Home) -> Value {
    home.json(&["approvals", "list", "--all", "--format", "json"])
}

/// Polls `done` every 50 ms until it holds (a 30 s hang guard naming `what`).
fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !done() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn show(home: &Home, id: &str) -> Value {
    home.json(&["sessions", "show", id, "--format", "json"])["data"].clone()
}

#[test]
fn a_turn_streams_text_and_continues_the_same_native_session() {
    let home = home_with_agent(&[]);
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let out = chat(&home, &w, &["hello agent"], b"");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "echo: hello agent");
    let id = session_id_from(&out.stderr);
    let out = home.run(&["chat", "--session", &id, "second"]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert_eq!(
        text(&out).0.trim(),
        "echo: second",
        "loaded natively, not primed"
    );
    let data = show(&home, &id);
    assert_eq!(data["runtime_kind"], "external_agent");
    assert_eq!(data["adapter_id"], "fixture");
    assert!(
        data["native_session_id"]
            .as_str()
            .is_some_and(|s| s.starts_with("fixture-sess-"))
    );
    let msgs = data["messages"].as_array().expect("messages");
    assert_eq!(msgs.len(), 4);
    assert_eq!(msgs[1]["adapter_id"], "fixture");
    assert!(
        data["provider_calls"].as_array().is_some_and(Vec::is_empty),
        "external cost is not a provider call"
    );
}

#[test]
fn permission_approved_on_the_terminal_writes_captures_the_diff_and_reverts() {
    let home = home_with_agent(&[]);
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    std::fs::write(ws.path().join("dirty.txt"), "dirty before the turn\n").expect("dirty");
    let out = chat(&home, &w, &["please write"], b"a\n");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("permission: allow-once-id"), "{stdout}");
    assert!(stdout.contains("done"));
    assert!(
        stderr.contains("permission requested: Write b.txt"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("b.txt")).expect("b"),
        "new file\n"
    );
    let id = session_id_from(&out.stderr);
    let data = show(&home, &id);
    let msg = data["messages"][1]["id"].as_str().expect("id").to_string();
    let files = home.json(&["sessions", "files", &id, &msg, "--format", "json"]);
    let paths: Vec<&str> = files["data"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["path"].as_str().unwrap_or(""))
        .collect();
    assert!(
        paths.contains(&"a.txt") && paths.contains(&"b.txt"),
        "{paths:?}"
    );
    assert!(
        !paths.contains(&"dirty.txt"),
        "pre-existing changes are not the turn's"
    );
    let diff = text(&home.run(&["sessions", "files", &id, &msg, "--diff", "a.txt"])).0;
    assert!(
        diff.contains("-original") && diff.contains("+changed"),
        "{diff}"
    );
    let approvals = all_approvals(&home);
    assert_eq!(approvals["data"][0]["status"], "approved");
    assert_eq!(approvals["data"][0]["path"], "operator");
    assert_eq!(approvals["data"][0]["selected_option"], "allow-once-id");

    let bad = home.run(&["sessions", "revert", &id, &msg, "dirty.txt"]);
    assert_eq!(
        bad.status.code(),
        Some(2),
        "only captured paths can be reverted"
    );
    let out = home.run(&["sessions", "revert", &id, &msg]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).expect("a"),
        "original\n"
    );
    assert!(!ws.path().join("b.txt").exists());
    assert!(ws.path().join("dirty.txt").exists());
}

#[test]
fn permission_rejected_on_the_terminal_is_passed_back_by_kind() {
    let home = home_with_agent(&[]);
    let ws = git_workspace();
    let out = chat(
        &home,
        &ws.path().display().to_string(),
        &["please write"],
        b"r\n",
    );
    let stdout = text(&out).0;
    assert!(out.status.success(), "{}", text(&out).1);
    assert!(
        stdout.contains("permission: reject-id") && stdout.contains("not writing"),
        "{stdout}"
    );
    assert!(!ws.path().join("b.txt").exists());
}

#[test]
fn modes_and_grants_answer_without_asking() {
    let home = home_with_agent(&[]);
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let out = chat(&home, &w, &["--approval", "deny", "please write"], b"");
    assert_prints(&out, "permission: reject-id");
    let out = chat(&home, &w, &["--approval", "auto", "please write"], b"");
    assert_prints(&out, "permission: allow-once-id");
    let approvals = all_approvals(&home);
    assert!(
        approvals["data"]
            .as_array()
            .expect("list")
            .iter()
            .all(|a| a["path"] == "default_mode")
    );

    // Approving for the session creates a grant that answers the next request.
    let first = chat(&home, &w, &["please write"], b"s\n");
    assert_prints(&first, "permission: allow-always-id");
    let id = session_id_from(&first.stderr);
    let grants = home.json(&["grants", "list", "--format", "json"]);
    assert_eq!(grants["data"][0]["scope"], "session");
    assert_eq!(grants["data"][0]["tool_kind"], "edit");
    let second = home.run_with_stdin(&["chat", "--session", &id, "please write again"], b"");
    assert_prints(&second, "permission: allow-always-id");
    let approvals = home.json(&[
        "approvals",
        "list",
        "--all",
        "--session",
        &id,
        "--format",
        "json",
    ]);
    let rows = approvals["data"].as_array().expect("approvals");
    assert_eq!(
        rows.last().map(|a| a["path"].clone()),
        Some(json!("grant")),
        "the newest approval of the session was answered by the grant: {approvals}"
    );
    let gid = grants["data"][0]["id"].as_str().expect("grant id");
    assert!(home.run(&["grants", "revoke", gid]).status.success());
    assert_eq!(
        home.json(&["grants", "list", "--format", "json"])["data"]
            .as_array()
            .map(Vec::len),
        Some(0)
    );
}

#[test]
fn another_process_can_resolve_a_pending_approval() {
    let home = home_with_agent(&[]);
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let child = spawn_chat(&home, &w, &["please write"]);
    let mut id = String::new();
    wait_until("no pending approval appeared", || {
        let list = home.json(&["approvals", "list", "--format", "json"]);
        list["data"][0]["id"]
            .as_str()
            .map(|i| id = i.to_string())
            .is_some()
    });
    home.approve(&id);
    let again = home.run(&["approvals", "resolve", &id, "--decision", "reject"]);
    assert_eq!(
        again.status.code(),
        Some(4),
        "resolving twice is a conflict"
    );
    let out = child.wait_with_output().expect("chat ends");
    assert!(out.status.success(), "{}", text(&out).1);
    assert!(text(&out).0.contains("permission: allow-once-id"));
    assert!(ws.path().join("b.txt").exists());
}

#[test]
fn an_unanswered_permission_times_out_as_cancelled() {
    let home = home_with_agent(&[]);
    home.write_config("[approvals]\ntimeout_ms = 400\n");
    let ws = git_workspace();
    let out = chat(
        &home,
        &ws.path().display().to_string(),
        &["please write"],
        b"",
    );
    assert_prints(&out, "permission: cancelled");
    let list = all_approvals(&home);
    assert_eq!(list["data"][0]["status"], "timed_out");
    assert_eq!(list["data"][0]["path"], "timeout");
}

#[test]
fn fs_requests_outside_the_workspace_are_rejected_and_terminals_run_inside() {
    let home = home_with_agent(&[]);
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let out = chat(&home, &w, &["escape please"], b"");
    let stdout = text(&out).0;
    assert!(stdout.contains("write error"), "{stdout}");
    assert!(stdout.contains("read error"), "{stdout}");
    assert!(
        !ws.path()
            .parent()
            .expect("parent")
            .join("outside.txt")
            .exists()
    );
    let out = chat(&home, &w, &["shell please"], b"");
    assert_prints(&out, "terminal exit 3: from-terminal");
}

#[test]
fn reattach_after_restart_loads_or_primes_without_losing_context() {
    for (flag, expect_primed) in [
        ("supported", false),
        ("unsupported", true),
        ("broken", true),
    ] {
        let home = home_with_agent(&["--load-session", flag]);
        let ws = git_workspace();
        let w = ws.path().display().to_string();
        let out = chat(&home, &w, &["remember the word zebra"], b"");
        assert!(out.status.success(), "{flag}: {}", text(&out).1);
        let id = session_id_from(&out.stderr);
        let out = home.run(&["chat", "--session", &id, "what was the word"]);
        assert!(out.status.success(), "{flag}: {}", text(&out).1);
        let answer = text(&out).0;
        assert_eq!(answer.contains("zebra"), expect_primed, "{flag}: {answer}");
        assert!(answer.contains("what was the word"), "{flag}: {answer}");
    }
}

/// Security: an agent that reloads a session in its own default mode (Codex's
/// reviewer approves its own edits) must be switched back to the mode Hecate chose,
/// or the client is never asked. The fixture's `--modes` starts every new or loaded
/// session in `auto`, which skips permission requests; the manifest asks for `ask`.
#[test]
fn a_reattached_session_is_put_back_into_the_mode_that_asks() {
    for (flag, expect_loaded) in [("supported", true), ("broken", false)] {
        let home = Home::empty();
        home.add_scripted_agent(
            &write_script(),
            &["--modes", "--load-session", flag],
            "[quirks]\ninitial_mode = \"ask\"\n",
        );
        let ws = git_workspace();
        let w = ws.path().display().to_string();
        let out = chat(&home, &w, &["write one"], b"a\n");
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{flag}: {stderr}");
        assert!(!stdout.contains("auto-approved"), "{flag}: {stdout}");
        let id = session_id_from(&out.stderr);
        let native_before = show(&home, &id)["native_session_id"].clone();
        // A new Hecate process reattaches: the agent process is new too.
        let out = home.run_with_stdin(&["chat", "--session", &id, "write two"], b"r\n");
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{flag}: {stderr}");
        assert!(
            !stdout.contains("auto-approved"),
            "{flag}: the reattached agent approved its own write: {stdout}"
        );
        assert!(stdout.contains("not writing."), "{flag}: {stdout}");
        let native_after = show(&home, &id)["native_session_id"].clone();
        assert_eq!(native_after == native_before, expect_loaded, "{flag}");
        let approvals = all_approvals(&home);
        let statuses: Vec<&str> = approvals["data"]
            .as_array()
            .expect("approvals")
            .iter()
            .filter_map(|a| a["status"].as_str())
            .collect();
        let mut sorted = statuses.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, ["approved", "rejected"], "{flag}: {approvals}");
    }
}

#[test]
fn a_crashing_agent_fails_the_turn_with_its_stderr_and_the_session_stays_usable() {
    let home = home_with_agent(&[]);
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let out = chat(&home, &w, &["--format", "json", "crash now"], b"");
    assert_eq!(out.status.code(), Some(6), "{}", text(&out).1);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["data"]["run"]["status"], "failed");
    assert_eq!(v["data"]["error"]["reason"], "agent_exited");
    let detail = v["data"]["error"].to_string();
    assert!(
        detail.contains("crashing mid-turn"),
        "stderr tail attached: {detail}"
    );
    assert_eq!(v["data"]["assistant"]["content"], "about to crash ");
    let id = v["data"]["session_id"].as_str().expect("id").to_string();
    let out = home.run(&["chat", "--session", &id, "are you back"]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert!(text(&out).0.contains("are you back"));
}

#[test]
fn garbage_on_the_agents_stdout_does_not_break_the_turn() {
    let home = home_with_agent(&[]);
    let ws = git_workspace();
    let out = chat(
        &home,
        &ws.path().display().to_string(),
        &["garbage please"],
        b"",
    );
    assert!(out.status.success(), "{}", text(&out).1);
    assert_eq!(text(&out).0.trim(), "before after");
}

#[test]
fn a_hung_agent_is_caught_by_the_idle_timeout_and_leaves_no_process_behind() {
    let home = home_with_agent(&["--spawn-grandchild"]);
    home.write_config("[agents]\nidle_timeout_ms = 800\n");
    let ws = git_workspace();
    let out = chat(
        &home,
        &ws.path().display().to_string(),
        &["--format", "json", "hang around"],
        b"",
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["data"]["run"]["status"], "failed", "{v}");
    assert_eq!(v["data"]["error"]["reason"], "agent_timeout");
    let tail = v["data"]["error"]["stderr_tail"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let pid: u32 = tail
        .lines()
        .find_map(|l| l.split("grandchild pid: ").nth(1))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("the stderr tail names the grandchild: {tail:?}"));
    let proc_dir = format!("/proc/{pid}");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::path::Path::new(&proc_dir).exists() {
        assert!(
            Instant::now() < deadline,
            "grandchild {pid} outlived the session"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn sigint_cancels_the_turn_and_keeps_the_partial_answer() {
    let home = home_with_agent(&[]);
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let mut child = spawn_chat(&home, &w, &["--format", "json", "slow please"]);
    wait_until("turn never started", || {
        let list = home.json(&["sessions", "list", "--format", "json"]);
        list["data"][0]["status"] == "running"
    });
    std::thread::sleep(Duration::from_millis(900));
    let st = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(st.success());
    let out = std::mem::replace(&mut child, home.cmd(&["--version"]).spawn().expect("noop"))
        .wait_with_output()
        .expect("wait");
    let _ = child.wait();
    assert_eq!(out.status.code(), Some(130), "{}", text(&out).1);
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["data"]["run"]["status"], "cancelled");
    assert!(
        v["data"]["assistant"]["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("one"))
    );
}

#[test]
fn bad_input_is_rejected_before_anything_spawns() {
    let home = home_with_agent(&[]);
    let ws = git_workspace();
    let file = ws.path().join("a.txt").display().to_string();
    let out = home.run(&[
        "chat",
        "--agent",
        "nope",
        "--workspace",
        &ws.path().display().to_string(),
        "hi",
    ]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out).1.contains("agent_chat.adapter_not_found"));
    for w in ["/definitely/missing", file.as_str()] {
        let out = home.run(&["chat", "--agent", "fixture", "--workspace", w, "hi"]);
        assert_eq!(out.status.code(), Some(2), "{w}");
        assert!(text(&out).1.contains("agent_chat.workspace_required"));
    }
    let out = home.run(&["chat", "--agent", "fixture", "hi"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        home.json(&["sessions", "list", "--format", "json"])["data"]
            .as_array()
            .map(Vec::len),
        Some(0)
    );
}

#[test]
fn probes_classify_ready_auth_required_not_installed_and_errors() {
    let home = home_with_agent(&[]);
    home.add_fixture_agent("needs_auth", &["--auth-required"]);
    home.add_fixture_agent("crashes", &["--crash-on", "initialize"]);
    std::fs::write(
        home.path("adapters/missing.toml"),
        "id = \"missing\"\nname = \"Missing\"\ncommand = \"definitely-not-installed-agent\"\n",
    )
    .expect("manifest");
    let probe = |id: &str| -> Value {
        let out = home.run(&["adapters", "probe", id, "--format", "json"]);
        serde_json::from_slice::<Value>(&out.stdout).expect("json")["data"].clone()
    };
    assert_eq!(probe("fixture")["status"], "ready");
    let auth = probe("needs_auth");
    assert_eq!(
        (auth["status"].as_str(), auth["stage"].as_str()),
        (Some("auth_required"), Some("new_session"))
    );
    let missing = probe("missing");
    assert_eq!(
        (missing["status"].as_str(), missing["stage"].as_str()),
        (Some("not_installed"), Some("lookup"))
    );
    let crash = probe("crashes");
    assert_eq!(
        (crash["status"].as_str(), crash["stage"].as_str()),
        (Some("error"), Some("initialize"))
    );
    assert!(
        crash["stderr"]
            .as_str()
            .is_some_and(|t| t.contains("crashing on purpose")),
        "{crash}"
    );
    // `adapters health` runs the same end-to-end probe and says what to do next.
    let health = |id: &str| -> (Option<i32>, Value) {
        let out = home.run(&["adapters", "health", id, "--format", "json"]);
        let v = serde_json::from_slice::<Value>(&out.stdout).expect("json");
        assert_eq!(v["object"], "agent_adapter_health");
        (out.status.code(), v["data"].clone())
    };
    let (code, ready) = health("fixture");
    assert_eq!((code, ready["status"].as_str()), (Some(0), Some("ready")));
    assert!(
        ready["path"].is_string() && ready["hint"].is_null(),
        "{ready}"
    );
    let (code, auth) = health("needs_auth");
    assert_eq!(code, Some(9));
    assert!(
        auth["hint"].as_str().is_some_and(|h| h.contains("login")),
        "{auth}"
    );
    let out = home.run(&["adapters", "health", "missing"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("not_installed at stage lookup") && text.contains("next step:"),
        "{text}"
    );
    let list = home.json(&["adapters", "list", "--format", "json"]);
    let ids: Vec<&str> = list["data"]
        .as_array()
        .expect("list")
        .iter()
        .map(|a| a["id"].as_str().unwrap_or(""))
        .collect();
    for id in [
        "codex",
        "claude_code",
        "cursor_agent",
        "gemini",
        "opencode",
        "fixture",
    ] {
        assert!(ids.contains(&id), "{id} in {ids:?}");
    }
    assert!(
        list["data"]
            .as_array()
            .expect("list")
            .iter()
            .all(|a| a["cost_mode"] == "external")
    );
    let _ = json!(null);
}

#[test]
fn an_operator_grant_answers_until_it_expires_and_retention_prunes_what_is_past() {
    let mut home = home_with_agent(&[]);
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let created = home.json(&[
        "grants",
        "create",
        "--scope",
        "workspace-tool",
        "--workspace",
        &w,
        "--tool-kind",
        "edit",
        "--decision",
        "approve",
        "--expires-in",
        "1h",
        "--format",
        "json",
    ]);
    let grant = &created["data"];
    assert_eq!(grant["scope"], "workspace_tool", "{created}");
    assert!(grant["expires_at"].as_str().is_some(), "{created}");
    // The grant answers without asking (nothing on stdin).
    let out = chat(&home, &w, &["please write"], b"");
    assert_prints(&out, "permission: allow");
    // Once past its expiry it answers nothing: the person is asked again.
    let db = rusqlite::Connection::open(home.data_dir().join("hecate.db")).expect("open db");
    db.execute("UPDATE grants SET expires_at = '2001-01-01T00:00:00Z'", [])
        .expect("expire the grant");
    let out = chat(&home, &w, &["please write"], b"r\n");
    assert_prints(&out, "permission: reject-id");
    let resolved = |home: &Home| {
        all_approvals(home)["data"]
            .as_array()
            .map(Vec::len)
            .unwrap_or_default()
    };
    assert_eq!(resolved(&home), 2);
    // A standing grant without expiry is never pruned.
    let standing = home.json(&[
        "grants",
        "create",
        "--scope",
        "adapter-tool",
        "--adapter",
        "fixture",
        "--tool-kind",
        "read",
        "--decision",
        "approve",
        "--format",
        "json",
    ]);
    // Retention runs when `hecate serve` starts: the expired grant and all but the
    // newest resolved approval go.
    home.env
        .push(("HECATE_APPROVALS_RETENTION_MAX".into(), "1".into()));
    let _served = crate::support::http::serve(&home);
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let grants = home.json(&["grants", "list", "--format", "json"]);
        let ids: Vec<&str> = grants["data"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| g["id"].as_str())
            .collect();
        if ids == [standing["data"]["id"].as_str().unwrap_or("?")] && resolved(&home) == 1 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "retention did not prune: grants {grants}, {} approvals",
            resolved(&home)
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Hand-off: `--model` and `--agent` on an existing `--session` move it between
/// an external agent and a model in both directions; each new target gets the
/// stored transcript (the model as history, the agent as a primed fresh session).
#[test]
fn a_session_hands_off_between_an_agent_and_a_model_with_its_transcript() {
    let server = crate::support::common::ModelServer::start(None);
    let mut home = home_with_agent(&[]);
    home.set("PROVIDER_FIX_BASE_URL", &format!("{}/v1", server.base));
    home.set("PROVIDER_FIX_KIND", "openai");
    home.set("PROVIDER_FIX_API_KEY", "test-key");
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let out = chat(&home, &w, &["remember the word zebra"], b"");
    assert!(out.status.success(), "{}", text(&out).1);
    let id = session_id_from(&out.stderr);

    let out = home.run(&[
        "chat",
        "--session",
        &id,
        "--model",
        "fix/fixture-model",
        "which word was it",
    ]);
    assert!(out.status.success(), "{}", text(&out).1);
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let history = requests[0]["body"]["messages"].to_string();
    assert!(
        history.contains("remember the word zebra"),
        "the model got the agent's turn: {history}"
    );

    let out = home.run(&[
        "chat",
        "--session",
        &id,
        "--agent",
        "fixture",
        "and once more",
    ]);
    assert!(out.status.success(), "{}", text(&out).1);
    let answer = text(&out).0;
    assert!(
        answer.contains("which word was it"),
        "the agent was primed with the model's turn: {answer}"
    );
    let shown = show(&home, &id);
    let kinds: Vec<&str> = shown["segments"]
        .as_array()
        .expect("segments")
        .iter()
        .filter_map(|s| s["runtime_kind"].as_str())
        .collect();
    assert_eq!(
        kinds,
        ["external_agent", "model", "external_agent"],
        "{shown}"
    );

    // An agent that is not installed is refused before anything runs.
    let out = home.run(&["chat", "--session", &id, "--agent", "nope", "hi"]);
    assert!(!out.status.success());
    assert!(text(&out).1.contains("nope"), "{}", text(&out).1);
}

/// `[agents.modes]` chooses the session mode per adapter over the manifest: the
/// fixture's `auto` mode lets the agent act without asking (like Codex's own
/// sandbox and reviewer), so no approval is recorded; the manifest's `ask` asks.
#[test]
fn the_config_chooses_an_agents_session_mode_over_its_manifest() {
    for (config, asks) in [("", true), ("[agents.modes]\nfixture = \"auto\"\n", false)] {
        let home = Home::empty();
        let script = home.write_agent_script(&write_script());
        home.add_fixture_agent_with(
            "fixture",
            &["--script", &script, "--modes"],
            "[quirks]\ninitial_mode = \"ask\"\n",
        );
        home.write_config(config);
        let ws = git_workspace();
        let out = chat(
            &home,
            &ws.path().display().to_string(),
            &["write one"],
            b"a\n",
        );
        let (stdout, stderr) = text(&out);
        assert!(out.status.success(), "{config}: {stderr}");
        assert_eq!(
            !stdout.contains("auto-approved"),
            asks,
            "{config}: {stdout}"
        );
        let approvals = all_approvals(&home);
        let n = approvals["data"].as_array().map_or(0, Vec::len);
        assert_eq!(n, usize::from(asks), "{config}: {approvals}");
    }
}

#[tokio::test]
async fn a_runaway_agents_text_is_cut_at_the_per_turn_limit_and_the_cut_recorded() {
    let home = Home::empty();
    let script = r#"{"turns":[{"actions":[{"stream":{"count":5000,"text":"0123456789"}}]}]}"#;
    let script = home.write_agent_script(script);
    home.add_fixture_agent("fixture", &["--script", &script]);
    home.write_config("[agents]\nmax_output_bytes = 1005\n");
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let out = chat(&home, &w, &["flood"], b"");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    // 50,000 bytes streamed; the terminal saw the first 1,005.
    assert_eq!(stdout.trim_end().len(), 1005, "{stdout:.80}");
    let id = session_id_from(&out.stderr);
    let served = serve(&home);
    let got = Api::new(&served)
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(got.status, 200, "{}", got.body);
    let session = &got.body["data"];
    let answer = session["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "assistant"))
        .cloned()
        .expect("assistant message");
    let content = answer["content"].as_str().expect("content");
    assert_eq!(content.len(), 1005);
    assert!(content.starts_with("0123456789") && content.ends_with("01234"));
    assert_eq!(answer["status"], "completed", "{answer}");
    let cut = answer["activities"]
        .as_array()
        .and_then(|a| a.iter().find(|a| a["type"] == "output_capped"))
        .unwrap_or_else(|| panic!("the cut is recorded: {}", answer["activities"]));
    assert!(
        cut["detail"]
            .as_str()
            .is_some_and(|d| d.contains("1005 bytes")),
        "{cut}"
    );
}
