//! OpenTelemetry: with `OTEL_EXPORTER_OTLP_ENDPOINT` set, a chat turn's spans are
//! exported over OTLP/HTTP to that collector; without it nothing is sent.

use crate::support::common::{Home, ModelServer, text};
use std::io::{Read as _, Write as _};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A minimal collector: accepts connections and records request heads.
fn collector() -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let sink = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
            let mut buf = vec![0u8; 65536];
            let n = s.read(&mut buf).unwrap_or(0);
            let head = String::from_utf8_lossy(&buf[..n])
                .lines()
                .next()
                .unwrap_or("")
                .to_string();
            sink.lock().expect("lock").push(head);
            let _ =
                s.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n");
        }
    });
    (format!("http://{addr}"), seen)
}

#[test]
fn spans_are_exported_only_when_an_endpoint_is_configured() {
    let server = ModelServer::start(None);
    let (endpoint, seen) = collector();
    let mut home = Home::with_openai(&server);
    home.set("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint);
    let out = home.run(&["chat", "--model", "fix/m", "traced"]);
    assert!(out.status.success(), "{}", text(&out).1);
    let heads = seen.lock().expect("lock").clone();
    assert!(
        heads.iter().any(|h| h.starts_with("POST /v1/traces")),
        "collector saw {heads:?}"
    );

    let (_, quiet) = collector();
    let home = Home::with_openai(&server);
    let out = home.run(&["chat", "--model", "fix/m", "untraced"]);
    assert!(out.status.success());
    assert!(quiet.lock().expect("lock").is_empty());
}
