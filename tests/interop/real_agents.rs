//! Hecate's external-agent support against the REAL agents, offline: each agent
//! runs from `target/test-deps/node` (installed by `scripts/test-deps/node.sh`)
//! with its model traffic pointed at the fixture model server in `--agent-mode`,
//! which answers by looking at each request (tool calls for `create file ...` and
//! `run the command ...`, final text after a tool result, `slowly` streams).
//!
//! One behavioural suite, instantiated per agent by `real_agent_suite!` from a
//! table of descriptors. Most scenarios drive `hecate chat` and `hecate adapters`;
//! health and idle reaping also drive a `hecate serve` over HTTP. Within an agent the scenarios run one after another (a
//! failing scenario does not stop the others; the test fails at the end naming
//! every failed one); different agents run as parallel tests.
//!
//! Agents installed by the script but not in the table: none. Cursor Agent
//! (`cursor_agent`) is not an npm package and cannot be installed offline.

use crate::support::child::{finish_within, run_within};
use crate::support::common::AgentModeServer;
use crate::support::http::{
    Api, Served, agent_processes_reach, create_agent_session, last_message, serve_command,
};
use serde_json::{Value, json};
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Where `scripts/test-deps/node.sh` puts the agents' bins (and Node 22).
const DEPS_BIN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/target/test-deps/node/node_modules/.bin"
);
/// A generous limit for any one `hecate` command (cold starts take seconds).
const COMMAND_LIMIT: Duration = Duration::from_secs(240);
/// Hecate's own limits for agent turns in these tests (they never hang the suite).
const CONFIG: &str = "[agents]\nidle_timeout_ms = 120000\nturn_timeout_ms = 200000\n";
/// `[agents] process_idle_ms` of the `hecate serve` that reaps idle agents.
const REAP_AFTER_MS: &str = "1500";

/// How a restarted Hecate gets back to an agent's conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reattach {
    /// `session/load` in the new agent process: the native id is kept.
    Loaded,
    /// A fresh native session primed with Hecate's transcript.
    Primed,
}

/// What a rejected permission does to the agent's turn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rejection {
    /// The agent carries on and ends the turn normally (exit 0).
    TurnEnds,
    /// The agent ends the turn with stop reason `cancelled` (exit 130).
    TurnCancelled,
}

/// What the agent does without credentials / a configured provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NoCredentials {
    /// `session/new` answers -32000: the probe says `auth_required` at `new_session`.
    AuthRequiredAtNewSession,
    /// The probe says `ready`; the first prompt fails with `agent_auth_required`.
    ReadyThenAuthRequiredAtPrompt,
    /// The probe says `ready`; a prompt never gets an answer, so Hecate's idle
    /// timeout ends it with `agent_timeout`.
    ReadyThenSilentUntilIdleTimeout,
    /// The probe says `ready`; what a prompt does depends on the network (not
    /// asserted offline).
    Ready,
}

/// One real agent: the built-in adapter id, its bin, and how to point it at the
/// fixture model server.
struct AgentCase {
    /// Built-in adapter id.
    id: &'static str,
    /// Its bin in `node_modules/.bin`.
    bin: &'static str,
    /// Writes the agent's config files under the sandbox and returns the env that
    /// makes it use the fixture model server.
    configure: fn(&Sandbox) -> Vec<(String, String)>,
    /// The same without credentials or provider.
    unconfigured: fn(&Sandbox) -> Vec<(String, String)>,
    reattach: Reattach,
    rejection: Rejection,
    no_credentials: NoCredentials,
    reports: Reports,
    /// Whether its manifest points it at Hecate's `/v1` (`[gateway] env`).
    through_gateway: bool,
}

/// What an agent reports about a turn's model use (measured against the fixture
/// model): per-turn tokens in its prompt response, a running cost total in
/// `usage_update`, or nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reports {
    /// Tokens and a USD cost.
    TokensAndCost,
    /// Tokens only (its cost stays unknown).
    Tokens,
    /// Nothing (no call is recorded for the turn).
    Nothing,
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// Claude Code (claude-agent-acp 0.101): Anthropic Messages (`?beta=true`,
/// count_tokens, a JSON-schema title request). The built-in manifest switches it to
/// mode `default` so edits ask the client. It loads sessions natively. Without an
/// API key `session/new` still succeeds (probe `ready`); the prompt fails.
const CLAUDE_CODE: AgentCase = AgentCase {
    id: "claude_code",
    bin: "claude-agent-acp",
    configure: |s| {
        pairs(&[
            ("ANTHROPIC_BASE_URL", &s.model_base),
            ("ANTHROPIC_API_KEY", "dummy"),
            ("IS_SANDBOX", "1"),
        ])
    },
    unconfigured: |s| pairs(&[("ANTHROPIC_BASE_URL", &s.model_base), ("IS_SANDBOX", "1")]),
    reattach: Reattach::Loaded,
    rejection: Rejection::TurnEnds,
    no_credentials: NoCredentials::ReadyThenAuthRequiredAtPrompt,
    reports: Reports::TokensAndCost,
    through_gateway: true,
};

/// Codex (codex-acp 2.6, Rust codex 0.166 inside): OpenAI Responses; `gpt-5.5` is a
/// slug it knows, so it offers `apply_patch` (a freeform custom tool). The built-in
/// manifest switches it to mode `read-only` so edits ask the client (its default,
/// `agent`, asks a reviewer model). Its only reject option ("No, and tell Codex what
/// to do differently") ends the turn as `cancelled`. Shell commands run in
/// bubblewrap. Without a provider or login `session/new` answers -32000.
const CODEX: AgentCase = AgentCase {
    id: "codex",
    bin: "codex-acp",
    configure: |s| {
        let dir = s.root().join("codex");
        std::fs::create_dir_all(&dir).expect("codex home");
        let config = format!(
            "model = \"gpt-5.5\"\nmodel_provider = \"fake\"\napproval_policy = \"on-request\"\n\
             sandbox_mode = \"workspace-write\"\n\n[model_providers.fake]\nname = \"fake\"\n\
             base_url = \"{}/v1\"\nwire_api = \"responses\"\n",
            s.model_base
        );
        std::fs::write(dir.join("config.toml"), config).expect("codex config");
        pairs(&[("CODEX_HOME", &dir.display().to_string())])
    },
    unconfigured: |s| {
        let dir = s.root().join("codex-empty");
        std::fs::create_dir_all(&dir).expect("codex home");
        pairs(&[("CODEX_HOME", &dir.display().to_string())])
    },
    reattach: Reattach::Loaded,
    rejection: Rejection::TurnCancelled,
    no_credentials: NoCredentials::AuthRequiredAtNewSession,
    reports: Reports::Tokens,
    through_gateway: true,
};

/// Gemini CLI 0.61: Gemini API (a JSON-schema router call to `generateContent`,
/// then `streamGenerateContent?alt=sse`); edits and shell go through the client's
/// fs and its permission requests. Its `session/load` is broken (the manifest
/// quirk makes Hecate prime a fresh session). Without an API key it starts fine and
/// then tries Google sign-in at the first prompt, which needs the network.
const GEMINI: AgentCase = AgentCase {
    id: "gemini",
    bin: "gemini",
    configure: |s| {
        pairs(&[
            ("GOOGLE_GEMINI_BASE_URL", &s.model_base),
            ("GEMINI_API_KEY", "dummy"),
            ("GEMINI_CLI_NO_RELAUNCH", "true"),
        ])
    },
    unconfigured: |s| {
        pairs(&[
            ("GOOGLE_GEMINI_BASE_URL", &s.model_base),
            ("GEMINI_CLI_NO_RELAUNCH", "true"),
        ])
    },
    reattach: Reattach::Primed,
    rejection: Rejection::TurnEnds,
    no_credentials: NoCredentials::Ready,
    reports: Reports::Nothing,
    through_gateway: false,
};

fn opencode_env(xdg: &Path) -> Vec<(String, String)> {
    pairs(&[
        ("XDG_CONFIG_HOME", &xdg.display().to_string()),
        ("OPENCODE_DISABLE_MODELS_FETCH", "1"),
        ("OPENCODE_DISABLE_AUTOUPDATE", "1"),
        ("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1"),
    ])
}

/// opencode 1.18: Chat Completions through `@ai-sdk/openai-compatible`, with
/// `permission` set to `ask` for edits and shell. Loads sessions natively. Without
/// a provider it starts fine and never answers a prompt.
const OPENCODE: AgentCase = AgentCase {
    id: "opencode",
    bin: "opencode",
    configure: |s| {
        let xdg = s.root().join("xdg");
        std::fs::create_dir_all(xdg.join("opencode")).expect("xdg");
        let config = serde_json::json!({
            "provider": {"fake": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Fake",
                "options": {"baseURL": format!("{}/v1", s.model_base), "apiKey": "x"},
                "models": {"fake-model": {"name": "Fake model", "tool_call": true}}
            }},
            "model": "fake/fake-model",
            "small_model": "fake/fake-model",
            "permission": {"edit": "ask", "bash": "ask"}
        });
        std::fs::write(xdg.join("opencode/opencode.json"), config.to_string())
            .expect("opencode config");
        opencode_env(&xdg)
    },
    unconfigured: |s| {
        let xdg = s.root().join("xdg-empty");
        std::fs::create_dir_all(&xdg).expect("xdg");
        opencode_env(&xdg)
    },
    reattach: Reattach::Loaded,
    rejection: Rejection::TurnEnds,
    no_credentials: NoCredentials::ReadyThenSilentUntilIdleTimeout,
    reports: Reports::Tokens,
    through_gateway: false,
};

macro_rules! real_agent_suite {
    ($($name:ident => $case:expr),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                run_suite(&$case);
            }
        )*
    };
}

real_agent_suite! {
    claude_code => CLAUDE_CODE,
    codex => CODEX,
    gemini => GEMINI,
    opencode => OPENCODE,
}

// ---------------------------------------------------------------------------
// The sandbox: model server, Hecate home, agent home, workspace.
// ---------------------------------------------------------------------------

/// Everything one agent's suite runs in, under `target/` (Codex refuses homes
/// under `/tmp`), removed on drop.
struct Sandbox {
    dir: tempfile::TempDir,
    /// `http://127.0.0.1:PORT` of the model server.
    model_base: String,
    _server: AgentModeServer,
}

impl Sandbox {
    fn new(agent: &str) -> Self {
        let dir = tempfile::Builder::new()
            .prefix(&format!("real-{agent}-"))
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("sandbox dir");
        for sub in ["home", "empty-path"] {
            std::fs::create_dir_all(dir.path().join(sub)).expect("sandbox subdir");
        }
        std::fs::write(dir.path().join("config.toml"), CONFIG).expect("config");
        let server = AgentModeServer::start(Some(&dir.path().join("requests.jsonl")));
        Self {
            dir,
            model_base: server.base.clone(),
            _server: server,
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A fresh Git workspace with one committed file.
    fn workspace(&self, name: &str) -> PathBuf {
        let ws = self.root().join(name);
        std::fs::create_dir_all(&ws).expect("workspace");
        let st = Command::new("sh")
            .arg("-c")
            .arg(
                "git init -q && git config user.email t@example.com && git config user.name t && \
                 printf 'original\\n' > a.txt && git add -A && git commit -qm init",
            )
            .current_dir(&ws)
            .env("HOME", self.root().join("home"))
            .status()
            .expect("git");
        assert!(st.success(), "git init failed in {}", ws.display());
        ws
    }

    /// A `hecate` command with a cleared environment: this sandbox's data dir,
    /// config and HOME, PATH = the agents' bins (Node 22 first) + the system, and
    /// `env` (later pairs win).
    fn hecate(&self, args: &[&str], env: &[(String, String)]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hecate"));
        c.args(args)
            .env_clear()
            .env("PATH", format!("{DEPS_BIN}:/usr/local/bin:/usr/bin:/bin"))
            .env("HOME", self.root().join("home"))
            .env("LANG", "C.UTF-8")
            .env("HECATE_DATA_DIR", self.root().join("data"))
            .env("HECATE_CONFIG", self.root().join("config.toml"));
        for (k, v) in env {
            c.env(k, v);
        }
        c
    }

    /// The generation requests the model server received so far.
    fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(self.root().join("requests.jsonl"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|v| v["method"] == "POST")
            .collect()
    }
}

/// Runs a command to completion with `input` on stdin, killing it (and failing)
/// after [`COMMAND_LIMIT`].
fn run(cmd: Command, input: &[u8]) -> Output {
    run_within(cmd, input, COMMAND_LIMIT)
}

/// A finished `hecate chat --format json` turn.
struct Turn {
    code: Option<i32>,
    data: Value,
    stderr: String,
}

impl Turn {
    fn from(out: &Output) -> Self {
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "hecate chat printed no JSON ({e}); exit {:?}\nstdout: {}\nstderr: {stderr}",
                out.status.code(),
                String::from_utf8_lossy(&out.stdout)
            )
        });
        Self {
            code: out.status.code(),
            data: v["data"].clone(),
            stderr,
        }
    }

    fn session(&self) -> String {
        self.data["session_id"]
            .as_str()
            .expect("session id")
            .to_string()
    }

    fn status(&self) -> &str {
        self.data["run"]["status"].as_str().unwrap_or("?")
    }

    fn answer(&self) -> &str {
        self.data["assistant"]["content"].as_str().unwrap_or("")
    }

    fn assert_completed(&self, what: &str) {
        assert_eq!(
            (self.code, self.status()),
            (Some(0), "completed"),
            "{what}: {}\nstderr: {}",
            self.data,
            self.stderr
        );
    }
}

/// The per-agent context the scenarios share.
struct Ctx<'a> {
    case: &'a AgentCase,
    sandbox: &'a Sandbox,
    env: Vec<(String, String)>,
}

impl Ctx<'_> {
    /// `hecate chat --agent ID --workspace WS --format json [extra] PROMPT`.
    fn chat(&self, ws: &Path, extra: &[&str], prompt: &str, input: &[u8]) -> Turn {
        let w = ws.display().to_string();
        let mut args = vec![
            "chat",
            "--agent",
            self.case.id,
            "--workspace",
            &w,
            "--format",
            "json",
        ];
        args.extend_from_slice(extra);
        args.push(prompt);
        Turn::from(&run(self.sandbox.hecate(&args, &self.env), input))
    }

    fn json(&self, args: &[&str]) -> Value {
        let out = run(self.sandbox.hecate(args, &self.env), b"");
        assert!(
            out.status.success(),
            "hecate {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("stdout is JSON")
    }

    /// `hecate serve` on a loopback port in this sandbox with the agent's env and
    /// `extra`, and an async runtime to drive it with.
    fn serve(&self, extra: &[(&str, &str)]) -> (Served, Api, tokio::runtime::Runtime) {
        let env: Vec<(String, String)> = self.env.iter().cloned().chain(pairs(extra)).collect();
        let served = serve_in(self.sandbox, &env);
        let api = Api::new(&served);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("async runtime");
        (served, api, rt)
    }

    fn probe(&self, env: &[(String, String)]) -> Value {
        let out = run(
            self.sandbox.hecate(
                &["adapters", "probe", self.case.id, "--format", "json"],
                env,
            ),
            b"",
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "probe printed no JSON ({e}): {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        v["data"].clone()
    }

    fn approvals(&self, session: &str) -> Vec<Value> {
        self.json(&[
            "approvals",
            "list",
            "--all",
            "--session",
            session,
            "--format",
            "json",
        ])["data"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }
}

fn run_suite(case: &AgentCase) {
    let bin = Path::new(DEPS_BIN).join(case.bin);
    assert!(
        bin.exists(),
        "{} is not installed at {}: run scripts/test-deps/node.sh first (the test \
         command does); it installs the real agents these tests drive",
        case.bin,
        bin.display()
    );
    if case.id == "codex" {
        let bwrap = ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"]
            .iter()
            .any(|p| Path::new(p).exists());
        assert!(
            bwrap,
            "Codex runs shell tools in bubblewrap and `bwrap` is missing: run \
             scripts/test-deps/node.sh as root, or install the bubblewrap package"
        );
    }
    let sandbox = Sandbox::new(case.id);
    let ctx = Ctx {
        case,
        sandbox: &sandbox,
        env: (case.configure)(&sandbox),
    };
    type Scenario = fn(&Ctx<'_>);
    let scenarios: &[(&str, Scenario)] = &[
        ("health_ready", health_ready),
        ("text_answer", text_answer),
        ("write_approved", write_approved),
        ("write_rejected", write_rejected),
        ("shell_command", shell_command),
        ("cancel_mid_turn", cancel_mid_turn),
        ("reattach_after_restart", reattach_after_restart),
        (
            "reaped_when_idle_then_reloaded",
            reaped_when_idle_then_reloaded,
        ),
        ("without_credentials", without_credentials),
        ("missing_binary", missing_binary),
        ("through_the_gateway", through_the_gateway),
    ];
    // `HECATE_REAL_AGENT_SCENARIOS=a,b` runs only those scenarios (a quicker
    // loop while working on one of them); unset, all of them run.
    let only = std::env::var("HECATE_REAL_AGENT_SCENARIOS").unwrap_or_default();
    let only: Vec<&str> = only
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect();
    let mut failed = Vec::new();
    for (name, scenario) in scenarios {
        if !only.is_empty() && !only.contains(name) {
            continue;
        }
        let started = Instant::now();
        let result = std::panic::catch_unwind(AssertUnwindSafe(|| scenario(&ctx)));
        let secs = started.elapsed().as_secs_f64();
        match result {
            Ok(()) => eprintln!("[{}] {name}: ok ({secs:.1} s)", case.id),
            Err(_) => {
                eprintln!("[{}] {name}: FAILED ({secs:.1} s)", case.id);
                failed.push(*name);
            }
        }
    }
    assert!(
        failed.is_empty(),
        "{}: scenarios failed: {failed:?} (their panics are printed above)",
        case.id
    );
}

// ---------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------

/// `hecate adapters health ID` and `GET /hecate/v1/agent-adapters/{id}/health`
/// each really start the agent, initialize it and open a session.
fn health_ready(ctx: &Ctx<'_>) {
    let cli = ctx.json(&["adapters", "health", ctx.case.id, "--format", "json"]);
    assert_eq!(cli["object"], "agent_adapter_health", "{cli}");
    let report = &cli["data"];
    assert_eq!(
        (report["status"].as_str(), report["stage"].as_str()),
        (Some("ready"), Some("ready")),
        "{report}"
    );
    eprintln!(
        "[{}] health: ready in {} ms ({} {})",
        ctx.case.id,
        report["duration_ms"],
        report["agent_name"].as_str().unwrap_or("?"),
        report["agent_version"].as_str().unwrap_or("?")
    );
    let (_served, api, rt) = ctx.serve(&[]);
    let http = rt.block_on(api.get(&format!("/hecate/v1/agent-adapters/{}/health", ctx.case.id)));
    assert_eq!(http.status, 200, "{}", http.body);
    assert_eq!(http.body["object"], "agent_adapter_health");
    let report = &http.body["data"];
    assert_eq!(report["adapter_id"], ctx.case.id, "{report}");
    assert_eq!(
        (report["status"].as_str(), report["stage"].as_str()),
        (Some("ready"), Some("ready")),
        "{report}"
    );
    assert!(report["duration_ms"].is_u64(), "{report}");
}

fn text_answer(ctx: &Ctx<'_>) {
    let ws = ctx.sandbox.workspace("ws-text");
    let turn = ctx.chat(&ws, &[], "hello from the real agent suite", b"");
    turn.assert_completed("text answer");
    assert!(
        turn.answer()
            .contains("echo: hello from the real agent suite"),
        "{}",
        turn.answer()
    );
    let show = ctx.json(&["sessions", "show", &turn.session(), "--format", "json"]);
    // The model use the agent reported is the turn's recorded call.
    assert_reported_usage(ctx.case, &show, 1);
    assert_eq!(show["data"]["runtime_kind"], "external_agent");
    assert_eq!(show["data"]["adapter_id"], ctx.case.id);
    assert!(
        show["data"]["native_session_id"]
            .as_str()
            .is_some_and(|s| !s.is_empty()),
        "{show}"
    );
}

/// The session `shown` (a `sessions show` or HTTP session body) holds one call per
/// turn of its `turns` with the tokens (and cost) the agent reports, or none for
/// an agent that reports nothing.
fn assert_reported_usage(case: &AgentCase, shown: &Value, turns: usize) {
    let calls = shown["data"]["provider_calls"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    match case.reports {
        Reports::Nothing => assert!(calls.is_empty(), "{calls:?}"),
        reports => {
            assert_eq!(calls.len(), turns, "{calls:?}");
            for c in &calls {
                assert_eq!(c["provider"], case.id);
                assert!(
                    c["prompt_tokens"].as_u64().is_some_and(|t| t > 0)
                        && c["completion_tokens"].as_u64().is_some_and(|t| t > 0),
                    "{c}"
                );
                let priced = c["cost_micros_usd"].as_i64().is_some_and(|m| m > 0);
                assert_eq!(priced, reports == Reports::TokensAndCost, "{c}");
            }
        }
    }
}

fn write_approved(ctx: &Ctx<'_>) {
    let ws = ctx.sandbox.workspace("ws-approve");
    let turn = ctx.chat(
        &ws,
        &[],
        "create file approved.txt containing approved-by-test",
        b"a\n",
    );
    turn.assert_completed("approved write");
    let content = std::fs::read_to_string(ws.join("approved.txt")).unwrap_or_else(|e| {
        panic!(
            "approved.txt was not written ({e}); answer: {}\nstderr: {}",
            turn.answer(),
            turn.stderr
        )
    });
    assert_eq!(content.trim_end(), "approved-by-test");
    let session = turn.session();
    let approvals = ctx.approvals(&session);
    assert!(
        approvals
            .iter()
            .any(|a| a["status"] == "approved" && a["path"] == "operator"),
        "{approvals:?}"
    );
    let message = turn.data["assistant"]["id"]
        .as_str()
        .expect("assistant id")
        .to_string();
    let files = ctx.json(&["sessions", "files", &session, &message, "--format", "json"]);
    let paths: Vec<&str> = files["data"]
        .as_array()
        .expect("files")
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    assert!(paths.contains(&"approved.txt"), "{files}");
}

fn write_rejected(ctx: &Ctx<'_>) {
    let ws = ctx.sandbox.workspace("ws-reject");
    let turn = ctx.chat(
        &ws,
        &[],
        "create file rejected.txt containing must-not-exist",
        b"r\n",
    );
    let expected = match ctx.case.rejection {
        Rejection::TurnEnds => (Some(0), "completed"),
        Rejection::TurnCancelled => (Some(130), "cancelled"),
    };
    assert_eq!(
        (turn.code, turn.status()),
        expected,
        "{}\nstderr: {}",
        turn.data,
        turn.stderr
    );
    assert!(
        !ws.join("rejected.txt").exists(),
        "the rejected write happened"
    );
    let approvals = ctx.approvals(&turn.session());
    assert!(
        approvals
            .iter()
            .any(|a| a["status"] == "rejected" && a["path"] == "operator"),
        "{approvals:?}"
    );
}

fn shell_command(ctx: &Ctx<'_>) {
    let ws = ctx.sandbox.workspace("ws-shell");
    // The output differs from the command line, so it proves the command ran.
    let turn = ctx.chat(
        &ws,
        &["--approval", "auto"],
        "run the command printf 'shell-%s\\n' ok",
        b"",
    );
    turn.assert_completed("shell command");
    assert!(
        turn.answer().contains("done:") && turn.answer().contains("shell-ok"),
        "{}",
        turn.answer()
    );
}

fn cancel_mid_turn(ctx: &Ctx<'_>) {
    let ws = ctx.sandbox.workspace("ws-cancel");
    let w = ws.display().to_string();
    let mut cmd = ctx.sandbox.hecate(
        &[
            "chat",
            "--agent",
            ctx.case.id,
            "--workspace",
            &w,
            "--format",
            "json",
            "please answer slowly",
        ],
        &ctx.env,
    );
    let child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn chat");
    // Wait until the agent's model request for this prompt is streaming.
    let deadline = Instant::now() + COMMAND_LIMIT;
    loop {
        let streaming = ctx.sandbox.requests().iter().any(|r| {
            // The agent's main request (it offers tools; title and router requests do not).
            r["body"].to_string().contains("please answer slowly")
                && r["body"]["tools"].as_array().is_some_and(|t| !t.is_empty())
        });
        if streaming {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the agent never sent the prompt to the model"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(1500));
    let st = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(st.success());
    let turn = Turn::from(&finish_within(child, b"", COMMAND_LIMIT));
    assert_eq!(
        (turn.code, turn.status()),
        (Some(130), "cancelled"),
        "{}\nstderr: {}",
        turn.data,
        turn.stderr
    );
    // Whatever streamed before the cancel is kept; the answer did not finish.
    let partial = turn.answer();
    assert!(
        partial.is_empty() || partial.starts_with("slow1 "),
        "{partial}"
    );
    assert!(!partial.contains("slow120"), "the turn was not cut short");
    assert_eq!(turn.data["assistant"]["status"], "cancelled");
}

fn reattach_after_restart(ctx: &Ctx<'_>) {
    let ws = ctx.sandbox.workspace("ws-reattach");
    let word = format!("zebra-{}", ctx.case.id);
    let first = ctx.chat(&ws, &[], &format!("remember the word {word}"), b"");
    first.assert_completed("first turn");
    let session = first.session();
    let show = |ctx: &Ctx<'_>| ctx.json(&["sessions", "show", &session, "--format", "json"]);
    let native_before = show(ctx)["data"]["native_session_id"].clone();
    // A new Hecate process: the agent process of the first turn is gone.
    let out = run(
        ctx.sandbox.hecate(
            &[
                "chat",
                "--session",
                &session,
                "--format",
                "json",
                "what was the word",
            ],
            &ctx.env,
        ),
        b"",
    );
    let second = Turn::from(&out);
    second.assert_completed("reattached turn");
    assert!(
        second.answer().contains("echo: what was the word"),
        "{}",
        second.answer()
    );
    // The model saw the earlier turn: replayed natively or primed by Hecate.
    let saw_context = ctx.sandbox.requests().iter().any(|r| {
        let body = r["body"].to_string();
        body.contains("what was the word") && body.contains(&word)
    });
    assert!(
        saw_context,
        "no model request for the second turn carried the first turn"
    );
    let data = show(ctx)["data"].clone();
    assert_eq!(data["messages"].as_array().map(Vec::len), Some(4), "{data}");
    let native_after = &data["native_session_id"];
    match ctx.case.reattach {
        Reattach::Loaded => assert_eq!(
            native_after, &native_before,
            "expected session/load to reuse the native session"
        ),
        Reattach::Primed => assert_ne!(
            native_after, &native_before,
            "expected a fresh, primed native session"
        ),
    }
    // Security: the reattached agent must still ask before it writes (Codex reloads
    // a session in its own auto-review mode unless Hecate switches it back).
    let rejected_before = rejected_count(ctx, &session);
    let out = run(
        ctx.sandbox.hecate(
            &[
                "chat",
                "--session",
                &session,
                "--format",
                "json",
                "create file after-reattach.txt containing must-ask-first",
            ],
            &ctx.env,
        ),
        b"r\n",
    );
    let third = Turn::from(&out);
    assert!(
        !ws.join("after-reattach.txt").exists(),
        "the reattached agent wrote without asking: {}\nstderr: {}",
        third.data,
        third.stderr
    );
    assert_eq!(
        rejected_count(ctx, &session),
        rejected_before + 1,
        "the write after reattaching was not asked about: {}",
        third.data
    );
}

/// `hecate serve` with a short `[agents] process_idle_ms`: the agent process of an
/// idle session is stopped, the next prompt reattaches (`session/load` or a primed
/// fresh session) with the conversation kept, and after another reap a write is
/// still asked about (the reattached agent is put back into the asking mode).
fn reaped_when_idle_then_reloaded(ctx: &Ctx<'_>) {
    let ws = ctx.sandbox.workspace("ws-reaped");
    let word = format!("walrus-{}", ctx.case.id);
    let (_served, api, rt) = ctx.serve(&[("HECATE_AGENT_PROCESS_IDLE_MS", REAP_AFTER_MS)]);
    rt.block_on(async {
        let id = create_agent_session(&api, ctx.case.id, &ws).await;
        let path = format!("/hecate/v1/agent-chat/sessions/{id}");
        let say = |prompt: String| {
            let (api, id) = (api.clone(), id.clone());
            async move {
                tokio::time::timeout(COMMAND_LIMIT, api.say(&id, &prompt))
                    .await
                    .expect("the turn ends")
                    .body
            }
        };

        let first = say(format!("remember the word {word}")).await;
        assert_eq!(first["data"]["status"], "completed", "{first}");
        let shown = api.get(&path).await.body;
        // Usage the agent reports reaches the HTTP session too.
        assert_reported_usage(ctx.case, &shown, 1);
        let native_before = shown["data"]["native_session_id"].clone();
        assert!(native_before.is_string(), "{shown}");

        agent_processes_reach(&api, 0, COMMAND_LIMIT).await;
        let second = say("what was the word".to_string()).await;
        assert_eq!(second["data"]["status"], "completed", "{second}");
        let shown = api.get(&path).await.body;
        assert!(
            last_message(&shown)["content"]
                .as_str()
                .is_some_and(|c| c.contains("echo: what was the word")),
            "{shown}"
        );
        let saw_context = ctx.sandbox.requests().iter().any(|r| {
            let body = r["body"].to_string();
            body.contains("what was the word") && body.contains(&word)
        });
        assert!(saw_context, "the reattached agent lost the first turn");
        let native_after = &shown["data"]["native_session_id"];
        match ctx.case.reattach {
            Reattach::Loaded => assert_eq!(native_after, &native_before, "session/load"),
            Reattach::Primed => assert_ne!(native_after, &native_before, "a primed session"),
        }

        // Reaped again, the reattached agent must still ask before it writes.
        agent_processes_reach(&api, 0, COMMAND_LIMIT).await;
        let turn = tokio::spawn(say(
            "create file after-reap.txt containing must-ask-first".to_string()
        ));
        let approval = loop {
            let pending = api.get(&format!("{path}/approvals?status=pending")).await;
            assert_eq!(pending.status, 200, "{}", pending.body);
            if let Some(a) = pending.body["data"].as_array().and_then(|d| d.first()) {
                break a.clone();
            }
            assert!(
                !turn.is_finished(),
                "the turn ended without asking: the reattached agent was not put back \
                 into its asking mode (after-reap.txt exists: {})",
                ws.join("after-reap.txt").exists()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        let aid = approval["id"].as_str().expect("approval id");
        let r = api
            .post(
                &format!("{path}/approvals/{aid}/resolve"),
                json!({"decision": "reject"}),
            )
            .await;
        assert_eq!(r.status, 200, "{}", r.body);
        let third = turn.await.expect("join");
        assert!(
            !ws.join("after-reap.txt").exists(),
            "the rejected write happened: {third}"
        );
    });
}

fn rejected_count(ctx: &Ctx<'_>, session: &str) -> usize {
    ctx.approvals(session)
        .iter()
        .filter(|a| a["status"] == "rejected")
        .count()
}

fn without_credentials(ctx: &Ctx<'_>) {
    let env = (ctx.case.unconfigured)(ctx.sandbox);
    let report = ctx.probe(&env);
    let got = (report["status"].as_str(), report["stage"].as_str());
    match ctx.case.no_credentials {
        NoCredentials::AuthRequiredAtNewSession => {
            assert_eq!(
                got,
                (Some("auth_required"), Some("new_session")),
                "{report}"
            );
            return;
        }
        NoCredentials::ReadyThenAuthRequiredAtPrompt
        | NoCredentials::ReadyThenSilentUntilIdleTimeout
        | NoCredentials::Ready => {
            assert_eq!(got, (Some("ready"), Some("ready")), "{report}");
        }
    }
    let ws = ctx.sandbox.workspace("ws-nocreds");
    let (extra_env, reason) = match ctx.case.no_credentials {
        NoCredentials::ReadyThenAuthRequiredAtPrompt => (vec![], "agent_auth_required"),
        NoCredentials::ReadyThenSilentUntilIdleTimeout => {
            let config = ctx.sandbox.root().join("config-short-idle.toml");
            std::fs::write(&config, "[agents]\nidle_timeout_ms = 8000\n").expect("config");
            (
                vec![("HECATE_CONFIG".to_string(), config.display().to_string())],
                "agent_timeout",
            )
        }
        _ => return,
    };
    let env: Vec<(String, String)> = env.into_iter().chain(extra_env).collect();
    let w = ws.display().to_string();
    let args = [
        "chat",
        "--agent",
        ctx.case.id,
        "--workspace",
        &w,
        "--format",
        "json",
        "hello",
    ];
    let turn = Turn::from(&run(ctx.sandbox.hecate(&args, &env), b""));
    assert_eq!(
        (turn.code, turn.status()),
        (Some(6), "failed"),
        "{}",
        turn.data
    );
    assert_eq!(turn.data["error"]["reason"], reason, "{}", turn.data);
    assert_eq!(turn.data["error"]["stage"], "prompt", "{}", turn.data);
}

fn missing_binary(ctx: &Ctx<'_>) {
    let empty = ctx.sandbox.root().join("empty-path").display().to_string();
    let env: Vec<(String, String)> = ctx
        .env
        .iter()
        .cloned()
        .chain([("PATH".to_string(), empty)])
        .collect();
    let report = ctx.probe(&env);
    assert_eq!(
        (report["status"].as_str(), report["stage"].as_str()),
        (Some("not_installed"), Some("lookup")),
        "{report}"
    );
}

/// `[agents.gateway]`: under `hecate serve` the agent is started with its
/// manifest's `[gateway] env`, so its model calls go through the server's own
/// `/v1` (to a provider on the fixture model server) and are traced and costed
/// under the Agent Chat session that prompted it; then a `hecate chat` turn that
/// reaches the server through `[agents] gateway_url` runs a shell command, its
/// tool call and the answer after the result both crossing `/v1`.
fn through_the_gateway(ctx: &Ctx<'_>) {
    if !ctx.case.through_gateway {
        eprintln!(
            "[{}] through_the_gateway: its manifest says it cannot",
            ctx.case.id
        );
        return;
    }
    let config = ctx.sandbox.root().join("gateway-config.toml");
    std::fs::write(
        &config,
        format!(
            "{CONFIG}\n[agents.gateway]\n{} = true\n\n[pricing.\"up/fixture-model\"]\n\
             input_usd_per_mtok = 1.0\noutput_usd_per_mtok = 1.0\n\n[pricing.\"up/gpt-5.5\"]\n\
             input_usd_per_mtok = 1.0\noutput_usd_per_mtok = 1.0\n",
            ctx.case.id
        ),
    )
    .expect("config");
    let mut env = ctx.env.clone();
    // The agent's own endpoint stays the fixture: only the gateway env points it
    // at Hecate, which routes its model to provider `up` on the fixture (an
    // Anthropic provider, so Codex's Responses requests are translated on the
    // way there and back; Codex asks for the `gpt-5.5` of its config).
    env.extend(pairs(&[
        ("HECATE_CONFIG", &config.display().to_string()),
        ("PROVIDER_UP_KIND", "anthropic"),
        ("PROVIDER_UP_BASE_URL", &ctx.sandbox.model_base),
        ("PROVIDER_UP_MODELS", "fixture-model,gpt-5.5"),
        ("ANTHROPIC_MODEL", "fixture-model"),
        ("ANTHROPIC_SMALL_FAST_MODEL", "fixture-model"),
        ("ANTHROPIC_DEFAULT_HAIKU_MODEL", "fixture-model"),
        ("ANTHROPIC_DEFAULT_SONNET_MODEL", "fixture-model"),
        ("ANTHROPIC_DEFAULT_OPUS_MODEL", "fixture-model"),
    ]));
    let served = serve_in(ctx.sandbox, &env);
    let api = Api::new(&served);
    let ws = ctx.sandbox.workspace("ws-gateway");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (answer, traces) = rt.block_on(async {
        let created = api
            .post(
                "/hecate/v1/agent-chat/sessions",
                serde_json::json!({"runtime_kind": "external_agent", "adapter_id": ctx.case.id,
                                   "workspace": ws.display().to_string()}),
            )
            .await;
        assert_eq!(created.status, 200, "{}", created.body);
        let id = created.body["data"]["id"].as_str().expect("id").to_string();
        let said = api
            .post(
                &format!("/hecate/v1/agent-chat/sessions/{id}/messages"),
                serde_json::json!({"content": "hello through the gateway"}),
            )
            .await;
        assert_eq!(said.status, 200, "{}", said.body);
        let traces = api.get(&format!("/hecate/v1/traces?session_id={id}")).await;
        (said.body, traces.body)
    });
    let text = answer["data"]["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "assistant"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string();
    assert!(text.contains("echo: hello through the gateway"), "{answer}");
    let rows = traces["data"].as_array().cloned().unwrap_or_default();
    let answered: Vec<&Value> = rows
        .iter()
        .filter(|t| t["status"] == "completed" && t["provider"] == "up")
        .collect();
    assert!(
        !answered.is_empty(),
        "no model call of the agent went through /v1: {traces}"
    );
    assert!(
        answered
            .iter()
            .any(|t| t["cost_micros_usd"].as_i64().is_some_and(|c| c > 0)),
        "{traces}"
    );
    // A tool call through the gateway: `hecate chat` (a process that does not
    // serve /v1 itself) reaches the server through `[agents] gateway_url`; the
    // agent's shell call and the final answer after its result both cross /v1.
    let chat_config = ctx.sandbox.root().join("gateway-chat-config.toml");
    std::fs::write(
        &chat_config,
        format!(
            "{CONFIG}gateway_url = \"{}\"\n\n[agents.gateway]\n{} = true\n",
            served.base, ctx.case.id
        ),
    )
    .expect("chat config");
    let mut chat_env = env.clone();
    chat_env.push(("HECATE_CONFIG".into(), chat_config.display().to_string()));
    let w = ws.display().to_string();
    let args = [
        "chat",
        "--agent",
        ctx.case.id,
        "--workspace",
        &w,
        "--format",
        "json",
        "--approval",
        "auto",
        "run the command printf 'gw-%s\\n' ok",
    ];
    let turn = Turn::from(&run(ctx.sandbox.hecate(&args, &chat_env), b""));
    turn.assert_completed("shell command through the gateway");
    assert!(
        turn.answer().contains("done:") && turn.answer().contains("gw-ok"),
        "{}",
        turn.answer()
    );
    let tool_traces = rt.block_on(async {
        api.get(&format!("/hecate/v1/traces?session_id={}", turn.session()))
            .await
            .body
    });
    let tool_rows: Vec<&Value> = tool_traces["data"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["status"] == "completed" && t["provider"] == "up")
        .collect();
    assert!(
        tool_rows.len() >= 2,
        "the tool call and the answer after its result both go through /v1: {tool_traces}"
    );
    let formats: std::collections::BTreeSet<&str> = answered
        .iter()
        .filter_map(|t| t["client_format"].as_str())
        .collect();
    eprintln!(
        "[{}] through_the_gateway: {} model calls through /v1 ({} completed, as {formats:?}); \
         {} for the shell command turn",
        ctx.case.id,
        rows.len(),
        answered.len(),
        tool_rows.len()
    );
}

/// Starts `hecate serve` on a free port in the sandbox with `env`.
fn serve_in(sandbox: &Sandbox, env: &[(String, String)]) -> Served {
    let mut cmd = sandbox.hecate(&["serve", "--listen", "127.0.0.1:0"], env);
    cmd.stdin(Stdio::null());
    serve_command(cmd)
}
