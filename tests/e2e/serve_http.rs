//! `hecate serve` over a real socket: liveness, the 404 envelope, loopback-only
//! binding, and a clean stop on SIGTERM.

use crate::support::common::Home;
use std::io::{BufRead as _, BufReader};
use std::process::{Child, Stdio};
use std::time::Duration;

struct Served {
    child: Child,
    base: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(home: &Home) -> Served {
    let mut child = home
        .cmd(&["serve", "--listen", "127.0.0.1:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn serve");
    let mut reader = BufReader::new(child.stderr.take().expect("stderr"));
    let mut base = None;
    for _ in 0..20 {
        let mut line = String::new();
        if reader.read_line(&mut line).expect("read") == 0 {
            break;
        }
        if let Some(rest) = line.trim().split("listening on ").nth(1) {
            base = Some(rest.to_string());
            break;
        }
    }
    std::thread::spawn(move || for _ in reader.lines() {});
    Served {
        child,
        base: base.expect("serve announced its address"),
    }
}

fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

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
    let pid = s.child.id().to_string();
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    for _ in 0..100 {
        if let Some(st) = s.child.try_wait().expect("try_wait") {
            assert!(st.success(), "graceful exit, got {st:?}");
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("serve did not stop on SIGTERM");
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
