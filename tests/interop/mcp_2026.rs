//! The official Python MCP SDK (`mcp` 2.3.0, installed by
//! `scripts/test-deps/mcp.sh`) pinned to protocol revision 2026-07-28 against
//! `hecate mcp` (stdio) and `/mcp` (Streamable HTTP with a bearer token): no
//! initialize, tools listed and called with per-request `_meta`, a session's
//! updates received through `subscriptions/listen` while a turn runs, the
//! approval of a `require_approval` upstream tool answered through the SDK's
//! multi round-trip driver, and `mode="auto"` settling on 2026-07-28 after
//! probing `server/discover`.

use crate::support::common::{self, Home, ModelServer};
use crate::support::mcp::fixture_upstream;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

/// The bearer token of the HTTP hub.
const TOKEN: &str = "peer-2026-token-7c2e";

fn venv_python() -> PathBuf {
    common::test_deps("mcp", "the MCP peers").join("venv/bin/python")
}

/// A home with the fixture model provider and the upstreams `fx` (auto) and
/// `guarded` (require_approval).
fn home(server: &ModelServer) -> Home {
    let home = Home::with_openai(server);
    home.write_config(&format!(
        "{}{}",
        fixture_upstream("fx", &[], ""),
        fixture_upstream(
            "guarded",
            &["--name", "guarded"],
            "policy = \"require_approval\"\n"
        )
    ));
    home
}

/// Runs `tests/mcp_peers/python_client_2026.py` with `args`; returns its report.
fn python_2026(args: &[String]) -> Value {
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_peers/python_client_2026.py");
    let out = Command::new(venv_python())
        .arg(script)
        .args(args)
        .output()
        .expect("run python");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python client: {stderr}");
    serde_json::from_slice(&out.stdout).expect("a JSON report")
}

/// What the client must have observed on either transport.
fn assert_report(v: &Value) {
    assert_eq!(v["protocol"], "2026-07-28", "{v}");
    let tools = v["tools"].as_array().expect("tools");
    for name in ["list_sessions", "send_message", "fx__echo", "guarded__echo"] {
        assert!(tools.contains(&json!(name)), "{name} in {tools:?}");
    }
    assert_eq!(v["echo"], "from python 2026");
    assert_eq!(v["elicited"].as_array().map(Vec::len), Some(1), "{v}");
    assert!(
        v["elicited"][0]
            .as_str()
            .is_some_and(|m| m.contains("guarded__echo")),
        "{v}"
    );
    assert_eq!(v["guarded"], "approved in rounds", "{v}");
    assert_eq!(v["guarded_error"], false);
    let honored = v["honored"].as_array().expect("honored URIs");
    assert_eq!(honored.len(), 1, "only the session is followed: {v}");
    assert_eq!(v["sent_error"], false, "{v}");
    assert_eq!(v["updated"], honored[0], "{v}");
    assert_eq!(v["auto_protocol"], "2026-07-28", "{v}");
}

#[test]
fn mcp_2026_python_sdk_pinned_to_the_revision_works_over_stdio() {
    let server = ModelServer::start(None);
    let home = home(&server);
    let mut args = vec![env!("CARGO_BIN_EXE_hecate").to_string()];
    args.extend(home.env.iter().map(|(k, v)| format!("{k}={v}")));
    assert_report(&python_2026(&args));
}

struct Hub(Child, String);

impl Drop for Hub {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn mcp_2026_python_sdk_pinned_to_the_revision_works_over_streamable_http() {
    let server = ModelServer::start(None);
    let mut home = home(&server);
    home.set("HECATE_TOKEN", TOKEN);
    let stderr = std::fs::File::create(home.path("hub-stderr.log")).expect("stderr file");
    let mut child = home
        .cmd(&["mcp", "http"])
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn hecate mcp http");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("ready line");
    let ready: Value = serde_json::from_str(&line).expect("ready JSON");
    let hub = Hub(child, ready["listening"].as_str().expect("url").to_string());
    assert_report(&python_2026(&[
        "--http".into(),
        hub.1.clone(),
        TOKEN.into(),
    ]));
}
