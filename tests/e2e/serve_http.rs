//! `hecate serve` over a real socket: liveness, the 404 envelope, loopback-only
//! binding, and a clean stop on SIGTERM.

use crate::support::common::Home;
use crate::support::http::{client, serve};

#[tokio::test]
async fn healthz_answers_and_unknown_paths_are_enveloped_404s() {
    let home = Home::empty();
    let s = serve(&home);
    let v: serde_json::Value = client()
        .get(format!("{}/healthz", s.base))
        .send()
        .await
        .expect("healthz")
        .json()
        .await
        .expect("json");
    assert_eq!(v["status"], "ok");
    assert_eq!(v["version"], env!("CARGO_PKG_VERSION"));
    assert!(v["time"].as_str().is_some_and(|t| t.ends_with('Z')));
    let r = client()
        .get(format!("{}/hecate/v1/nope", s.base))
        .send()
        .await
        .expect("404");
    assert_eq!(r.status(), 404);
    let e: serde_json::Value = r.json().await.expect("json");
    assert_eq!(e["error"]["type"], "not_found");
    assert!(e["error"]["operator_action"].is_string());
    // The store was created zero-config in the data dir.
    assert!(home.data_dir().join("hecate.db").exists());
}

#[test]
fn serve_refuses_non_loopback_without_a_token_and_stops_on_sigterm() {
    let home = Home::empty();
    let out = home.run(&["serve", "--listen", "0.0.0.0:0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("non-loopback"));

    let mut s = serve(&home);
    let st = s.stop_gracefully().expect("serve did not stop on SIGTERM");
    assert!(st.success(), "graceful exit, got {st:?}");
}

#[tokio::test]
async fn serve_also_answers_mcp_on_the_same_listener() {
    let home = Home::empty();
    let s = serve(&home);
    let init = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "serve-test", "version": "0"}}
    });
    let r = client()
        .post(format!("{}/mcp", s.base))
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .expect("mcp initialize");
    assert_eq!(r.status(), 200);
    let body = r.text().await.expect("body");
    assert!(
        body.contains("serverInfo") && body.contains("hecate"),
        "{body}"
    );
    let foreign = client()
        .post(format!("{}/mcp", s.base))
        .header("host", "evil.example")
        .header("accept", "application/json, text/event-stream")
        .json(&init)
        .send()
        .await
        .expect("foreign host");
    assert_eq!(foreign.status(), 403);
}
