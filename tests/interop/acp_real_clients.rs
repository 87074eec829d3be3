//! `hecate acp` driven by real third-party ACP clients, offline: acpx (approve-all
//! and deny-all, NDJSON traffic), the TypeScript SDK's example client (through an
//! `npx` shim, answering permission prompts by number) and the Python SDK's
//! example client — each against a model target (the fixture model server) and
//! the fixture ACP agent — plus the real Claude Code and Codex adapters behind
//! Hecate, and acpx and the TypeScript client each completing a read, edit and
//! shell turn on Hecate's own agent (the fixture model scripted with tool calls). The clients come from `scripts/test-deps/acp-clients.sh`, the agents
//! from `scripts/test-deps/node.sh`; missing ones fail the test naming the script.

use crate::support::acp_clients::*;
use crate::support::common::{AgentModeServer, Home, ModelServer, text, workspace};
use std::path::{Path, PathBuf};

#[test]
fn acpx_runs_a_model_turn_through_hecate() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let (_g, ws) = workspace();
    let ClientRun {
        stdout, frames: f, ..
    } = acpx_run(&home, &ws, "", "--approve-all", "hello there", 0);
    assert_eq!(acpx_answer(&f), "echo: hello there", "{stdout}");
    assert!(
        f.iter().any(|x| x["result"]["stopReason"] == "end_turn"),
        "{stdout}"
    );
}

/// Runs acpx with `policy` and `prompt` against `hecate acp AGENT_ARGS` in `ws`,
/// asserting its exit code.
fn acpx_run(
    home: &Home,
    ws: &Path,
    agent_args: &str,
    policy: &str,
    prompt: &str,
    code: i32,
) -> ClientRun {
    let out = acpx(&Clients::get(), home, ws, agent_args, policy, prompt, &[]);
    ClientRun::exited(&out, code, "")
}

/// Runs acpx with `policy` and `prompt` on the scripted fixture agent in a fresh
/// workspace, asserting its exit code; returns the run and the workspace.
fn acpx_on_the_fixture_agent(
    policy: &str,
    prompt: &str,
    code: i32,
) -> (ClientRun, tempfile::TempDir, PathBuf) {
    let (guard, ws) = workspace();
    let (clients, home) = (Clients::get(), agent_home());
    let out = acpx(
        &clients,
        &home,
        &ws,
        "--target agent:fixture",
        policy,
        prompt,
        &[],
    );
    (ClientRun::exited(&out, code, ""), guard, ws)
}

#[test]
fn acpx_approves_and_hecate_forwards_the_agents_writes_to_it() {
    let (run, _g, ws) = acpx_on_the_fixture_agent("--approve-all", "please write", 0);
    let ClientRun {
        stdout, frames: f, ..
    } = run;
    let answer = acpx_answer(&f);
    assert!(answer.starts_with("permission: allow-once-id"), "{answer}");
    assert!(
        answer.contains("read: from the agent") && answer.ends_with("done"),
        "{answer}"
    );
    assert_eq!(
        client_methods(&f),
        [
            "session/request_permission",
            "fs/write_text_file",
            "fs/read_text_file"
        ],
        "the editor-side client served the agent's files: {stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).expect("acpx wrote it"),
        "from the agent"
    );
}

#[test]
fn acpx_denies_and_the_agent_writes_nothing() {
    // acpx reports a denied permission with its exit code 5.
    let (run, _g, ws) = acpx_on_the_fixture_agent("--deny-all", "please write", 5);
    let answer = acpx_answer(&run.frames);
    assert!(
        answer.starts_with("permission: reject-id") && answer.contains("not writing"),
        "{answer}"
    );
    assert!(!ws.join("notes.txt").exists());
}

#[test]
fn acpx_runs_the_agents_terminal_commands() {
    let (run, _g, _ws) = acpx_on_the_fixture_agent("--approve-all", "run it", 0);
    let ClientRun {
        stdout, frames: f, ..
    } = run;
    assert_eq!(
        acpx_answer(&f).trim_end(),
        "terminal exit 0: hi",
        "{stdout}"
    );
    assert!(
        client_methods(&f).first().map(String::as_str) == Some("terminal/create"),
        "acpx ran the command: {stdout}"
    );
}

#[test]
fn the_typescript_sdk_client_chats_with_a_model_through_hecate() {
    let clients = Clients::get();
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let (_g, ws) = workspace();
    let (stdout, _) = ts_completed(&ts_client(&clients, &home, &ws, "", b""));
    let answer: String = ts_answer(&stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(answer, "echo: Hello, agent!", "{stdout}");
}

#[test]
fn the_typescript_sdk_client_answers_permissions_and_serves_the_agents_files() {
    let clients = Clients::get();
    for (choice, allowed) in [(&b"1\n"[..], true), (&b"3\n"[..], false)] {
        let home = agent_home();
        let (_g, ws) = workspace();
        let (stdout, stderr) = ts_completed(&ts_client(
            &clients,
            &home,
            &ws,
            "--target agent:fixture",
            choice,
        ));
        assert!(
            stdout.contains("🔐 Permission requested: Write notes.txt"),
            "{stdout}"
        );
        let answer = ts_answer(&stdout);
        if allowed {
            assert!(answer.contains("permission: allow-once-id"), "{stdout}");
            // The example client mocks its files: the write reached it, not the disk.
            assert!(stderr.contains("Write text file called with"), "{stderr}");
            assert!(answer.contains("read: Mock file content"), "{stdout}");
            assert!(!ws.join("notes.txt").exists());
        } else {
            assert!(answer.contains("permission: reject-id"), "{stdout}");
            assert!(!stderr.contains("Write text file called with"), "{stderr}");
        }
    }
}

#[test]
fn the_python_sdk_client_chats_with_a_model_through_hecate() {
    let clients = Clients::get();
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let (_g, ws) = workspace();
    let out = py_client(&clients, &home, &ws, &[], b"hello from python\n");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(py_answer(&stdout), "echo: hello from python", "{stdout}");
}

#[test]
fn the_python_sdk_client_refuses_permissions_and_hecate_serves_the_files() {
    let clients = Clients::get();
    let home = agent_home();
    let (_g, ws) = workspace();
    let out = py_client(
        &clients,
        &home,
        &ws,
        &["--target", "agent:fixture"],
        b"please write\nrun it\n",
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let answer = py_answer(&stdout);
    // The example client answers permission requests with method-not-found:
    // Hecate turns that into a cancelled outcome for the agent.
    assert!(answer.contains("permission: cancelled"), "{answer}");
    assert!(answer.contains("not writing"), "{answer}");
    // It serves no terminal, so Hecate runs the command itself.
    assert!(answer.contains("terminal exit 0: hi"), "{answer}");
}

/// Runs acpx → hecate acp → a real agent: a plain prompt, then a file creation
/// approved from acpx.
fn real_agent_through_acpx(
    adapter: &str,
    bin: &str,
    env: impl Fn(&Path, &str) -> Vec<(String, String)>,
) {
    let clients = Clients::get();
    let agents = PathBuf::from(AGENTS_BIN);
    assert!(
        agents.join(bin).exists(),
        "{bin} is not installed in {AGENTS_BIN}: run scripts/test-deps/node.sh first \
         (the test command does)"
    );
    let server = AgentModeServer::start(None);
    // Codex refuses homes under /tmp: keep everything under target/.
    let root = tempfile::Builder::new()
        .prefix(&format!("acp-real-{adapter}-"))
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("sandbox");
    let home = {
        let mut h = Home::empty();
        for (k, v) in env(root.path(), &server.base) {
            h.set(&k, &v);
        }
        h.set("HOME", &root.path().display().to_string());
        h
    };
    let ws = root.path().join("ws");
    std::fs::create_dir_all(&ws).expect("ws");
    let args = format!("--target agent:{adapter}");
    let label = format!("{adapter}: ");
    let approved = |prompt: &str| {
        let out = acpx(
            &clients,
            &home,
            &ws,
            &args,
            "--approve-all",
            prompt,
            &[&agents],
        );
        ClientRun::exited(&out, 0, &label)
    };
    let ClientRun { stdout, frames, .. } = approved("say hello");
    assert!(
        acpx_answer(&frames).contains("echo: say hello"),
        "{adapter}: {stdout}"
    );
    let ClientRun {
        stdout,
        stderr,
        frames,
    } = approved("create file hello.txt containing hi from the agent");
    assert_eq!(
        std::fs::read_to_string(ws.join("hello.txt"))
            .unwrap_or_else(|e| panic!(
                "{adapter} did not create the file ({e}): {stdout}\n{stderr}"
            ))
            .trim_end(),
        "hi from the agent"
    );
    assert!(acpx_answer(&frames).contains("done"), "{adapter}: {stdout}");
}

#[test]
fn claude_code_behind_hecate_answers_acpx() {
    real_agent_through_acpx("claude_code", "claude-agent-acp", |_, base| {
        vec![
            ("ANTHROPIC_BASE_URL".into(), base.to_string()),
            ("ANTHROPIC_API_KEY".into(), "dummy".into()),
            ("IS_SANDBOX".into(), "1".into()),
        ]
    });
}

#[test]
fn codex_behind_hecate_answers_acpx() {
    real_agent_through_acpx("codex", "codex-acp", |root, base| {
        let dir = root.join("codex");
        std::fs::create_dir_all(&dir).expect("codex home");
        let config = format!(
            "model = \"gpt-5.5\"\nmodel_provider = \"fake\"\napproval_policy = \"on-request\"\n\
             sandbox_mode = \"workspace-write\"\n\n[model_providers.fake]\nname = \"fake\"\n\
             base_url = \"{base}/v1\"\nwire_api = \"responses\"\n"
        );
        std::fs::write(dir.join("config.toml"), config).expect("codex config");
        vec![("CODEX_HOME".into(), dir.display().to_string())]
    });
}

/// The fixture model scripted for Hecate's own agent: read notes.txt, edit it
/// (gated by `file_write`), run `cat notes.txt`, answer.
fn hecate_agent_home() -> (ModelServer, Home, tempfile::TempDir, PathBuf) {
    use crate::support::agent::{WIRES, agent_home, read_edit_run};
    let server = ModelServer::start(Some(read_edit_run("All done.")));
    let mut home = agent_home(&server, WIRES[0], "file_write");
    home.set("PROVIDER_FIX_MODELS", "gpt-fixture");
    let (guard, ws) = workspace();
    std::fs::write(ws.join("notes.txt"), "hello world\n").expect("seed");
    (server, home, guard, ws)
}

/// The Hecate agent target the interop turns select.
const HECATE_TARGET: &str = "--target hecate:fix/gpt-fixture";

#[test]
fn acpx_completes_a_read_edit_and_shell_turn_on_the_hecate_agent() {
    let (server, home, _g, ws) = hecate_agent_home();
    let ClientRun {
        stdout, frames: f, ..
    } = acpx_run(
        &home,
        &ws,
        HECATE_TARGET,
        "--approve-all",
        "fix the greeting",
        0,
    );
    assert_eq!(acpx_answer(&f), "All done.", "{stdout}");
    assert_eq!(
        client_methods(&f),
        ["session/request_permission"],
        "the gated edit was put to acpx: {stdout}"
    );
    let updates: Vec<&serde_json::Value> = f
        .iter()
        .map(|x| &x["params"]["update"])
        .filter(|u| u["sessionUpdate"] == "tool_call")
        .collect();
    let kinds: Vec<&str> = updates.iter().filter_map(|u| u["kind"].as_str()).collect();
    assert_eq!(kinds, ["read", "edit", "execute"], "{stdout}");
    assert!(
        f.iter()
            .any(|x| x["params"]["update"]["content"][0]["type"] == "diff"
                && x["params"]["update"]["content"][0]["newText"] == "hello agent\n"),
        "the edit's diff reached acpx: {stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).expect("edited"),
        "hello agent\n"
    );
    assert_eq!(server.requests().len(), 4);
}

#[test]
fn the_typescript_sdk_client_completes_a_read_edit_and_shell_turn_on_the_hecate_agent() {
    let clients = Clients::get();
    let (server, home, _g, ws) = hecate_agent_home();
    let (stdout, _) = ts_completed(&ts_client(&clients, &home, &ws, HECATE_TARGET, b"1\n"));
    assert!(
        stdout.contains("🔐 Permission requested:"),
        "the gated edit was asked: {stdout}"
    );
    // The answer streams word by word, one printed chunk per line.
    let answer = ts_answer(&stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(answer.contains("All done."), "{stdout}");
    for title in ["Read notes.txt", "Edit notes.txt", "Run cat notes.txt"] {
        assert!(stdout.contains(title), "{title} shown: {stdout}");
    }
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.txt")).expect("edited"),
        "hello agent\n"
    );
    assert_eq!(server.requests().len(), 4);
}

/// A model home whose `hecate serve` requires a token (which the client's
/// environment, and so `hecate acp --remote`, carries), and the server.
fn remote_hub() -> (ModelServer, Home, crate::support::http::Served) {
    let server = ModelServer::start(None);
    let mut home = Home::with_openai(&server);
    home.set("HECATE_TOKEN", "interop-remote-token");
    let served = crate::support::http::serve(&home);
    (server, home, served)
}

#[test]
fn acpx_runs_a_model_turn_through_the_remote_relay() {
    let (_server, home, served) = remote_hub();
    let (_g, ws) = workspace();
    let remote = format!("--remote {}", served.base);
    let ClientRun {
        stdout, frames: f, ..
    } = acpx_run(&home, &ws, &remote, "--approve-all", "hello hub", 0);
    assert_eq!(acpx_answer(&f), "echo: hello hub", "{stdout}");
    assert!(
        f.iter().any(|x| x["result"]["stopReason"] == "end_turn"),
        "{stdout}"
    );
}

#[test]
fn the_typescript_sdk_client_chats_with_a_model_through_the_remote_relay() {
    let clients = Clients::get();
    let (_server, home, served) = remote_hub();
    let (_g, ws) = workspace();
    let remote = format!("--remote {}", served.base);
    let (stdout, _) = ts_completed(&ts_client(&clients, &home, &ws, &remote, b""));
    let answer: String = ts_answer(&stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert_eq!(answer, "echo: Hello, agent!", "{stdout}");
}
