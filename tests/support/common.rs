//! Shared helpers for end-to-end tests: the fixture model server and the real
//! `hecate` binary, each in its own process over real sockets and pipes.

use serde_json::Value;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// A running fixture model server, killed on drop.
pub struct ModelServer {
    child: Child,
    /// Base URL without a path, e.g. `http://127.0.0.1:1234`.
    pub base: String,
    /// The file every request is recorded to.
    pub record: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for ModelServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl ModelServer {
    /// Starts the fixture with a script (a JSON array of steps), or echo mode.
    pub fn start(script: Option<Value>) -> Self {
        Self::start_listing(script, "fixture-model")
    }

    /// [`ModelServer::start`] whose model listing (`GET /v1/models`) names
    /// `models` (comma-separated).
    pub fn start_listing(script: Option<Value>, models: &str) -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let record = dir.path().join("requests.jsonl");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hecate-fixtures"));
        cmd.args([
            "model-server",
            "--listen",
            "127.0.0.1:0",
            "--models",
            models,
            "--record",
        ])
        .arg(&record);
        if let Some(s) = script {
            let path = dir.path().join("script.json");
            std::fs::write(&path, s.to_string()).expect("script");
            cmd.arg("--script").arg(path);
        }
        cmd.env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let (child, base) = spawn_listening(&mut cmd);
        Self {
            child,
            base,
            record,
            _dir: dir,
        }
    }

    /// The requests the fixture received, in order (generation requests only).
    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["method"] == "POST")
            .collect()
    }
}

/// Spawns a fixture server and reads its `{"listening": URL}` ready line.
fn spawn_listening(cmd: &mut Command) -> (Child, String) {
    let mut child = cmd.spawn().expect("spawn fixture");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("ready line");
    let v: Value = serde_json::from_str(&line).expect("ready JSON");
    let base = v["listening"].as_str().expect("listening").to_string();
    (child, base)
}

/// The fixture model server in `--agent-mode` (answers real agents by looking
/// at each request), killed on drop.
pub struct AgentModeServer {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
}

impl Drop for AgentModeServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl AgentModeServer {
    /// Starts it, recording every request to `record` when given.
    pub fn start(record: Option<&Path>) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hecate-fixtures"));
        cmd.args(["model-server", "--agent-mode"]);
        if let Some(record) = record {
            cmd.arg("--record").arg(record);
        }
        cmd.env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let (child, base) = spawn_listening(&mut cmd);
        Self { child, base }
    }
}

/// A temporary directory by its canonical path (a workspace, a state or cache
/// directory), and its guard.
pub fn workspace() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = std::fs::canonicalize(dir.path()).expect("canonical");
    (dir, path)
}

/// An isolated Hecate home: its own data dir and (absent) config file.
pub struct Home {
    pub dir: tempfile::TempDir,
    pub env: Vec<(String, String)>,
}

impl Home {
    /// A home with an OpenAI-compatible provider `fix` pointing at `server`.
    pub fn with_openai(server: &ModelServer) -> Self {
        let mut h = Self::empty();
        h.set("PROVIDER_FIX_BASE_URL", &format!("{}/v1", server.base));
        h
    }

    /// A home with the gateway's two fixture providers on `server`: `oai`
    /// (OpenAI-compatible, models `gpt-fix` and `shared`) and `ant` (Anthropic,
    /// models `claude-fix` and `shared`).
    pub fn with_both_kinds(server: &ModelServer) -> Self {
        let mut h = Self::empty();
        h.set("PROVIDER_OAI_KIND", "openai");
        h.set("PROVIDER_OAI_BASE_URL", &format!("{}/v1", server.base));
        h.set("PROVIDER_OAI_MODELS", "gpt-fix,shared");
        h.set("PROVIDER_ANT_KIND", "anthropic");
        h.set("PROVIDER_ANT_BASE_URL", &server.base);
        h.set("PROVIDER_ANT_MODELS", "claude-fix,shared");
        h
    }

    /// A home with no provider.
    pub fn empty() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        let env = vec![
            (
                "HECATE_DATA_DIR".to_string(),
                dir.path().join("data").display().to_string(),
            ),
            (
                "HECATE_CONFIG".to_string(),
                dir.path().join("config.toml").display().to_string(),
            ),
        ];
        Self { dir, env }
    }

    /// Adds an environment variable for every command.
    pub fn set(&mut self, k: &str, v: &str) {
        self.env.push((k.to_string(), v.to_string()));
    }

    /// The data directory.
    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// A `hecate` command with this home's environment (and nothing inherited that
    /// could point elsewhere).
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hecate"));
        c.args(args)
            .env_remove("HECATE_NAMESPACE")
            .env_remove("HECATE_STORE_URL")
            .env_remove("HECATE_LOG")
            .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
            .stdin(Stdio::null());
        for (k, v) in &self.env {
            c.env(k, v);
        }
        c
    }

    /// Runs `hecate args...` to completion.
    pub fn run(&self, args: &[&str]) -> Output {
        self.cmd(args).output().expect("run hecate")
    }

    /// Runs `hecate args...` with `input` on stdin.
    pub fn run_with_stdin(&self, args: &[&str], input: &[u8]) -> Output {
        let mut child = self
            .cmd(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn hecate");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(input).expect("write stdin");
        drop(stdin);
        child.wait_with_output().expect("wait")
    }

    /// Runs a command and parses its stdout as JSON.
    pub fn json(&self, args: &[&str]) -> Value {
        let out = self.run(args);
        assert!(
            out.status.success(),
            "hecate {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("stdout is JSON")
    }
}

/// The session id `hecate chat` printed on stderr.
pub fn session_id_from(stderr: &[u8]) -> String {
    String::from_utf8_lossy(stderr)
        .lines()
        .find_map(|l| l.strip_prefix("session: ").map(str::to_string))
        .expect("stderr names the session")
}

/// A fixture agent turn on prompts containing "write": it announces the edit
/// `title`, asks permission for it, runs the fixture actions `on_allow` once
/// allowed or says "not writing. " once rejected, completes the edit and says
/// "done".
pub fn permission_turn(title: &str, on_allow: Value) -> Value {
    serde_json::json!({"match": "write", "actions": [
        {"tool_call": {"id": "t1", "title": title, "kind": "edit", "status": "pending"}},
        {"request_permission": {"tool_call_id": "t1", "title": title, "kind": "edit",
            "on_allow": on_allow,
            "on_reject": [{"text": "not writing. "}]}},
        {"tool_call_update": {"id": "t1", "status": "completed"}},
        {"text": "done"}
    ]})
}

/// `chat --agent fixture --workspace WS` followed by `args`: the command line of
/// a turn of the fixture agent in `ws`.
pub fn fixture_chat_args<'a>(ws: &'a str, args: &[&'a str]) -> Vec<&'a str> {
    let mut all = vec!["chat", "--agent", "fixture", "--workspace", ws];
    all.extend_from_slice(args);
    all
}

/// Stdout and stderr as strings, for assertion messages.
pub fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Whether a path exists (for readability in asserts).
pub fn exists(p: &Path) -> bool {
    p.exists()
}

/// The directory `scripts/test-deps/<kind>.sh` installs `what` into (under
/// `target/test-deps/`), or a failure naming that script.
pub fn test_deps(kind: &str, what: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-deps")
        .join(kind);
    assert!(
        dir.join(".hecate-test-deps").exists(),
        "{what} are not installed in {}: run ./scripts/test-deps/{kind}.sh first",
        dir.display()
    );
    dir
}

/// A Git workspace with one committed file, `a.txt` = "original\n".
pub fn git_workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let st = Command::new("sh")
        .arg("-c")
        .arg(
            "git init -q && git config user.email t@example.com && git config user.name t && \
             printf 'original\\n' > a.txt && git add -A && git commit -qm init",
        )
        .current_dir(dir.path())
        .status()
        .expect("git");
    assert!(st.success());
    dir
}

impl Home {
    /// Registers a user adapter manifest `id` that runs the fixture ACP agent with
    /// `args` (after `acp-agent`).
    pub fn add_fixture_agent(&self, id: &str, args: &[&str]) {
        self.add_fixture_agent_with(id, args, "");
    }

    /// Like [`Home::add_fixture_agent`], with more manifest TOML appended (sections
    /// such as `[quirks]`).
    pub fn add_fixture_agent_with(&self, id: &str, args: &[&str], extra_toml: &str) {
        let dir = self.dir.path().join("adapters");
        std::fs::create_dir_all(&dir).expect("adapters dir");
        let args: Vec<String> = std::iter::once("acp-agent".to_string())
            .chain(args.iter().map(|a| a.to_string()))
            .collect();
        let manifest = format!(
            "id = {id:?}\nname = \"Fixture {id}\"\ncommand = {:?}\nargs = {}\n{extra_toml}",
            env!("CARGO_BIN_EXE_hecate-fixtures"),
            serde_json::to_string(&args).expect("args")
        );
        std::fs::write(dir.join(format!("{id}.toml")), manifest).expect("manifest");
    }

    /// `hecate tasks create --kind shell --shell COMMAND` in this home.
    pub fn create_shell_task(&self, command: &str) -> Output {
        self.run(&["tasks", "create", "--kind", "shell", "--shell", command])
    }

    /// Writes `script` as the fixture agent's `script.json` in this home; answers
    /// its path.
    pub fn write_agent_script(&self, script: &str) -> String {
        std::fs::write(self.path("script.json"), script).expect("script");
        self.path("script.json").display().to_string()
    }

    /// Registers the fixture agent `fixture` playing `script`, keeping its sessions
    /// in the home's `agent-state` (answered), with `extra` fixture arguments and
    /// `extra_toml` appended to its manifest.
    pub fn add_scripted_agent(&self, script: &str, extra: &[&str], extra_toml: &str) -> String {
        let script = self.write_agent_script(script);
        let state = self.path("agent-state").display().to_string();
        let mut args = vec!["--script", &script, "--state-dir", &state];
        args.extend_from_slice(extra);
        self.add_fixture_agent_with("fixture", &args, extra_toml);
        state
    }

    /// `hecate approvals resolve ID --decision approve` in this home, asserting
    /// that it succeeded.
    pub fn approve(&self, approval_id: &str) {
        let out = self.run(&["approvals", "resolve", approval_id, "--decision", "approve"]);
        assert!(out.status.success(), "{}", text(&out).1);
    }

    /// Writes the config file.
    pub fn write_config(&self, toml: &str) {
        std::fs::write(self.dir.path().join("config.toml"), toml).expect("config");
    }

    /// A path inside this home (for scripts and state).
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}
