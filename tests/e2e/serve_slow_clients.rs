//! Slow and idle clients against `hecate serve` (`[server]` connection limits):
//! a client that stops in the middle of its request head is disconnected after
//! the header read timeout; a body that stops arriving is answered 408 (the
//! envelope of the path's surface) and the connection closed; connections over
//! `max_connections` are answered 503 and closed, and once the slow ones are
//! shed the server answers again; SSE streams on `/hecate/v1` and `/mcp`
//! outlive both timeouts.

use crate::support::common::{Home, ModelServer};
use crate::support::http::{Api, Served, data, serve, slow_text};
use crate::support::mcp::fixture_upstream;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Hang guard for the server closing a connection (never a timing assertion).
const CLOSE_BOUND: Duration = Duration::from_secs(20);

fn limits(header_secs: u64, body_secs: u64, max_connections: usize) -> String {
    format!(
        "[server]\nheader_read_timeout_secs = {header_secs}\nbody_read_timeout_secs = {body_secs}\n\
         max_connections = {max_connections}\n"
    )
}

fn addr(s: &Served) -> String {
    s.base.trim_start_matches("http://").to_string()
}

/// Opens a raw connection and writes `bytes` on it.
async fn raw(s: &Served, bytes: &[u8]) -> TcpStream {
    let mut tcp = TcpStream::connect(addr(s)).await.expect("connect");
    tcp.write_all(bytes).await.expect("write");
    tcp
}

/// Reads until the server closes the connection; panics past [`CLOSE_BOUND`].
async fn until_closed(tcp: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    let read = tokio::time::timeout(CLOSE_BOUND, async {
        loop {
            match tcp.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => out.extend_from_slice(&buf[..n]),
            }
        }
    })
    .await;
    assert!(
        read.is_ok(),
        "the server kept the connection open for {CLOSE_BOUND:?}"
    );
    String::from_utf8_lossy(&out).into_owned()
}

/// The status code and JSON body of a raw HTTP/1.1 response.
fn parse(response: &str) -> (u16, String, Value) {
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((response, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = serde_json::from_str(body).unwrap_or(Value::Null);
    (status, head.to_ascii_lowercase(), body)
}

#[tokio::test]
async fn a_client_that_stops_mid_header_is_disconnected_after_the_header_timeout() {
    let home = Home::empty();
    home.write_config(&limits(1, 30, 64));
    let s = serve(&home);
    let mut tcp = raw(&s, b"GET /hecate/v1/system/stats HTTP/1.1\r\nHost: 127.0").await;
    until_closed(&mut tcp).await;

    let mut idle = raw(&s, b"").await;
    until_closed(&mut idle).await;

    let a = Api::new(&s).get("/healthz").await;
    assert_eq!(a.status, 200, "the server still answers");
}

#[tokio::test]
async fn a_body_that_never_arrives_is_answered_408_and_the_connection_closed() {
    let home = Home::empty();
    home.write_config(&limits(30, 1, 64));
    let s = serve(&home);

    let mut api = raw(
        &s,
        b"POST /hecate/v1/agent-chat/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\n\
          Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"mo",
    )
    .await;
    let (status, head, body) = parse(&until_closed(&mut api).await);
    assert_eq!(status, 408, "{head}\n{body}");
    assert!(head.contains("connection: close"), "{head}");
    assert_eq!(body["error"]["type"], "invalid_request", "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("body read timeout")),
        "{body}"
    );

    let mut mcp = raw(
        &s,
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
          Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"js",
    )
    .await;
    let (status, head, body) = parse(&until_closed(&mut mcp).await);
    assert_eq!(status, 408, "{head}\n{body}");
    assert!(head.contains("connection: close"), "{head}");
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert!(body.get("id").is_some_and(Value::is_null), "{body}");
    assert_eq!(body["error"]["data"]["type"], "invalid_request", "{body}");
}

#[tokio::test]
async fn connections_over_the_cap_are_refused_503_and_served_again_once_slow_ones_are_shed() {
    let mut home = Home::empty();
    // The environment's cap wins over the file's.
    home.write_config(&limits(5, 30, 64));
    home.env
        .push(("HECATE_SERVER_MAX_CONNECTIONS".into(), "2".into()));
    let s = serve(&home);
    let mut slow = Vec::new();
    for _ in 0..2 {
        slow.push(raw(&s, b"GET /healthz HTTP/1.1\r\nX-Trickle: a").await);
    }

    let mut over = raw(
        &s,
        b"GET /hecate/v1/system/stats HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
    )
    .await;
    let (status, head, body) = parse(&until_closed(&mut over).await);
    assert_eq!(status, 503, "{head}\n{body}");
    assert!(head.contains("retry-after: 1"), "{head}");
    assert_eq!(body["error"]["type"], "server_busy", "{body}");
    assert_eq!(body["error"]["max_connections"], 2, "{body}");

    let mut over_mcp = raw(&s, b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").await;
    let (status, _, body) = parse(&until_closed(&mut over_mcp).await);
    assert_eq!(status, 503);
    assert!(body.get("id").is_some_and(Value::is_null), "{body}");
    assert_eq!(body["error"]["data"]["type"], "server_busy", "{body}");

    for tcp in &mut slow {
        let _ = tcp.write_all(b"b").await;
        until_closed(tcp).await;
    }
    let a = Api::new(&s).get("/hecate/v1/system/stats").await;
    assert_eq!(a.status, 200, "{}", a.body);
}

#[tokio::test]
async fn a_session_stream_outlives_the_header_and_body_timeouts() {
    let server = ModelServer::start(Some(json!([slow_text(30, 100)])));
    let home = Home::with_openai(&server);
    home.write_config(&limits(1, 1, 64));
    let s = serve(&home);
    let api = Api::new(&s);
    let id = api.create_session(json!({})).await;
    let mut sse = api.stream(&id, None).await;
    let first = sse.next(CLOSE_BOUND).await.expect("initial snapshot");
    assert_eq!(first.event, "snapshot");
    assert!(
        sse.quiet_for(Duration::from_secs(3)).await,
        "the stream stays open past both timeouts"
    );
    let post = {
        let (api, id) = (api.clone(), id.clone());
        tokio::spawn(async move { api.say(&id, "stream please").await })
    };
    let events = sse.until_done(Duration::from_secs(60)).await;
    assert!(events.len() > 2, "partial snapshots arrived: {events:?}");
    let done = events.last().expect("events");
    assert_eq!(done.event, "done");
    assert_eq!(data(done)["data"]["status"], "completed");
    assert_eq!(post.await.expect("post").status, 200);
}

#[tokio::test]
async fn an_mcp_response_stream_outlives_the_header_and_body_timeouts() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let home = Home::empty();
    home.write_config(&format!(
        "{}{}",
        limits(1, 1, 64),
        fixture_upstream("fx", &[], "")
    ));
    let s = serve(&home);
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "{}/mcp",
            s.base
        )))
        .await
        .expect("connect");
    let r = client
        .call_tool(
            CallToolRequestParams::new("fx__slow")
                .with_arguments(json!({"ms": 3000}).as_object().cloned().unwrap_or_default()),
        )
        .await
        .expect("a 3 s call answers over its response stream");
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let tools = client.list_all_tools().await.expect("tools after idling");
    assert!(tools.iter().any(|t| t.name == "fx__slow"));
    client.cancel().await.expect("close");
}
