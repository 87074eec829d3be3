//! The agent's `http_request` tool against the real `hecate serve`, the
//! fixture model server and a local listener: a URL an `http_allow` pattern
//! names literally reaches the listener (status, headers, the body cut at the
//! cap, the cap and the full size stated); a wildcard pattern does not reach a
//! name that resolves to loopback, and with no allow list nothing is reached.
//! Refusals are tool errors the loop goes on after.

use crate::support::agent::{
    WIRES, agent_home, agent_home_with, agent_task, answer, call, run_completed, said, turn,
};
use crate::support::common::{ModelServer, workspace};
use crate::support::http::{Api, serve};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Size of the listener's response body (over the tool's 32 KiB cap).
const BODY: usize = 40 * 1024;

/// A local HTTP listener answering every request with a large body; counts
/// the requests it served.
async fn listener() -> (u16, Arc<AtomicUsize>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let port = l.local_addr().expect("addr").port();
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = l.accept().await {
            let count = count.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                count.fetch_add(1, Ordering::SeqCst);
                let head = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nX-Test: yes\r\nContent-Length: {BODY}\r\nConnection: close\r\n\r\n"
                );
                let _ = sock.write_all(head.as_bytes()).await;
                let _ = sock.write_all(&vec![b'a'; BODY]).await;
            });
        }
    });
    (port, served)
}

#[tokio::test]
async fn http_request_reaches_an_explicitly_allowed_listener_and_refuses_loopback_otherwise() {
    let (port, served) = listener().await;
    let server = ModelServer::start(Some(json!([
        turn(vec![
            call(
                "http_request",
                json!({"url": format!("http://127.0.0.1:{port}/data"), "headers": {"Accept": "text/plain"}})
            ),
            call(
                "http_request",
                json!({"url": format!("http://localhost:{port}/data")})
            ),
        ]),
        answer("fetched"),
    ])));
    let extra = format!("[tasks]\nhttp_allow = [\"http://127.0.0.1:{port}/*\", \"http://*\"]\n");
    let home = agent_home_with(&server, WIRES[0], "", &extra);
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    run_completed(&api, agent_task(WIRES[0].2, &ws, json!({}))).await;
    assert_eq!(
        served.load(Ordering::SeqCst),
        1,
        "only the allowed URL was reached"
    );
    let requests = server.requests();
    let tools = requests[0]["body"]["tools"].as_array().expect("tools");
    assert!(
        tools
            .iter()
            .any(|t| t["function"]["name"] == "http_request")
    );
    let second = said(&requests[1]);
    for want in [
        "\\\"status\\\":200",
        "x-test",
        "\\\"truncated\\\":true",
        &format!("\\\"body_bytes\\\":{BODY}"),
        "\\\"body_cap_bytes\\\":32768",
        "(loopback); a non-public address is allowed only",
    ] {
        assert!(second.contains(want), "{want} in {second}");
    }

    let (port2, served2) = listener().await;
    let server = ModelServer::start(Some(json!([
        turn(vec![call(
            "http_request",
            json!({"url": format!("http://127.0.0.1:{port2}/")})
        )]),
        answer("refused"),
    ])));
    let home = agent_home(&server, WIRES[1], "");
    let s = serve(&home);
    let api = Api::new(&s);
    run_completed(&api, agent_task(WIRES[1].2, &ws, json!({}))).await;
    assert_eq!(served2.load(Ordering::SeqCst), 0);
    let refused = said(&server.requests()[1]);
    assert!(refused.contains("http_allow is empty"), "{refused}");
}
