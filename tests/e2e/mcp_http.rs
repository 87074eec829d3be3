//! The Streamable HTTP endpoint (`hecate mcp http`, the router the HTTP bridge
//! mounts at `/mcp`): sessions with an rmcp client, the single-upstream
//! passthrough at `/mcp/NAME`, the bearer token (401), DNS-rebinding protection
//! (403 for foreign Host/Origin, every loopback name accepted), unknown endpoints
//! (404), the body limit (413), the head limit (431), each refusal a JSON-RPC
//! error object with `"id": null` and Hecate's type code,
//! session termination (DELETE → 200, then 404 for that session), and the
//! JSON-RPC errors for malformed bodies (the same as over stdio).

use crate::support::common::Home;
use crate::support::mcp::{HttpEndpoint, fixture_upstream};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

fn init_body() -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
}

fn post(url: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
}

/// Asserts `r` is a JSON-RPC error object with `"id": null` and Hecate's type
/// code `t` in `error.data.type`; returns the body.
async fn refusal(r: reqwest::Response, t: &str) -> Value {
    assert!(
        r.headers()["content-type"]
            .to_str()
            .is_ok_and(|c| c.starts_with("application/json")),
        "{:?}",
        r.headers()
    );
    let body: Value = r.json().await.expect("a JSON body");
    assert_eq!(body["jsonrpc"], "2.0", "{body}");
    assert!(body.get("id").is_some_and(Value::is_null), "{body}");
    assert_eq!(body["error"]["code"], -32000, "{body}");
    assert_eq!(body["error"]["data"]["type"], t, "{body}");
    body
}

fn tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

#[tokio::test]
async fn an_rmcp_client_uses_the_hub_and_a_single_upstream_passthrough() {
    tls();
    let home = Home::empty();
    home.write_config(&fixture_upstream("fx", &[], ""));
    let ep = HttpEndpoint::start(&home);
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(ep.url.as_str()))
            .await
            .expect("connect");
    let tools = client.list_all_tools().await.expect("tools");
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    assert!(
        names.contains(&"list_sessions".to_string()) && names.contains(&"fx__echo".to_string()),
        "{names:?}"
    );
    let r = client
        .call_tool(
            CallToolRequestParams::new("fx__echo").with_arguments(
                json!({"message": "over http"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("call");
    assert_eq!(
        r.content[0].as_text().map(|t| t.text.as_str()),
        Some("over http")
    );
    client.cancel().await.expect("close");

    let one = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "{}/fx",
            ep.url
        )))
        .await
        .expect("connect");
    let names: Vec<String> = one
        .list_all_tools()
        .await
        .expect("tools")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(
        names.contains(&"echo".to_string()) && names.contains(&"test_simple_text".to_string()),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n == "list_sessions" || n.contains("__")),
        "only the upstream's own names: {names:?}"
    );
    let r = one
        .call_tool(
            CallToolRequestParams::new("echo").with_arguments(
                json!({"message": "direct"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("call");
    assert_eq!(
        r.content[0].as_text().map(|t| t.text.as_str()),
        Some("direct")
    );
    one.cancel().await.expect("close");

    let calls = home.json(&["mcp", "calls", "--format", "json"]);
    assert!(
        calls["data"].as_array().is_some_and(|rows| rows
            .iter()
            .all(|r| r["client"].as_str().is_some_and(|c| c.ends_with("(http)")))),
        "{calls}"
    );
}

#[tokio::test]
async fn the_token_host_origin_path_and_size_are_checked() {
    tls();
    let mut home = Home::empty();
    home.set("HECATE_TOKEN", "s3cret");
    home.write_config(&fixture_upstream("fx", &[], ""));
    let ep = HttpEndpoint::start(&home);
    let missing = post(&ep.url).json(&init_body()).send().await.expect("send");
    assert_eq!(missing.status(), 401);
    assert_eq!(missing.headers()["www-authenticate"], "Bearer");
    let body = refusal(missing, "unauthorized").await;
    assert!(
        body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("missing")),
        "{body}"
    );
    let wrong = post(&ep.url)
        .bearer_auth("nope")
        .json(&init_body())
        .send()
        .await
        .expect("send");
    assert_eq!(wrong.status(), 401);
    refusal(wrong, "unauthorized").await;
    let ok = post(&ep.url)
        .bearer_auth("s3cret")
        .json(&init_body())
        .send()
        .await
        .expect("send");
    assert_eq!(ok.status(), 200);
    assert!(
        ok.headers().contains_key("mcp-session-id"),
        "sessions are on"
    );

    let origin = post(&ep.url)
        .bearer_auth("s3cret")
        .header("origin", "https://evil.example")
        .json(&init_body())
        .send()
        .await
        .expect("send");
    assert_eq!(origin.status(), 403);
    let body = refusal(origin, "forbidden").await;
    assert_eq!(body["error"]["data"]["origin"], "https://evil.example");
    let local_origin = post(&ep.url)
        .bearer_auth("s3cret")
        .header("origin", "http://localhost:3000")
        .json(&init_body())
        .send()
        .await
        .expect("send");
    assert_eq!(local_origin.status(), 200);
    let host = post(&ep.url)
        .bearer_auth("s3cret")
        .header("host", "rebind.example")
        .json(&init_body())
        .send()
        .await
        .expect("send");
    assert_eq!(host.status(), 403);
    let body = refusal(host, "forbidden").await;
    assert_eq!(body["error"]["data"]["host"], "rebind.example");
    for name in ["foo.localhost", "localhost.", "127.1.2.3", "[::1]"] {
        let r = post(&ep.url)
            .bearer_auth("s3cret")
            .header("host", name)
            .json(&init_body())
            .send()
            .await
            .expect("send");
        assert_eq!(r.status(), 200, "Host {name} is loopback");
    }

    let nowhere = post(&format!("{}/nope", ep.url))
        .bearer_auth("s3cret")
        .json(&init_body())
        .send()
        .await
        .expect("send");
    assert_eq!(nowhere.status(), 404);
    refusal(nowhere, "not_found").await;

    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"x\":\"{}\"}}}}",
        "y".repeat(5 * 1024 * 1024)
    );
    let too_big = post(&ep.url)
        .bearer_auth("s3cret")
        .body(big)
        .send()
        .await
        .expect("send");
    assert_eq!(too_big.status(), 413);
    refusal(too_big, "invalid_request").await;

    let mut crowded = post(&ep.url).bearer_auth("s3cret");
    for i in 0..150 {
        crowded = crowded.header(format!("x-pad-{i}"), "1");
    }
    let crowded = crowded.json(&init_body()).send().await.expect("send");
    assert_eq!(crowded.status(), 431);
    refusal(crowded, "invalid_request").await;

    let not_acceptable = reqwest::Client::new()
        .post(&ep.url)
        .bearer_auth("s3cret")
        .header("accept", "text/html")
        .json(&init_body())
        .send()
        .await
        .expect("send");
    assert_eq!(not_acceptable.status(), 406, "rmcp's own refusal");
    refusal(not_acceptable, "invalid_request").await;

    let with_token = StreamableHttpClientTransport::with_client(
        reqwest::Client::new(),
        StreamableHttpClientTransportConfig::with_uri(ep.url.as_str()).auth_header("s3cret"),
    );
    let client = ().serve(with_token).await.expect("connect with the token");
    assert!(!client.list_all_tools().await.expect("tools").is_empty());
    client.cancel().await.expect("close");
}

#[tokio::test]
async fn deleting_a_session_succeeds_and_the_session_is_then_unknown() {
    tls();
    let home = Home::empty();
    let ep = HttpEndpoint::start(&home);
    let init = post(&ep.url).json(&init_body()).send().await.expect("send");
    assert_eq!(init.status(), 200);
    let id = init.headers()["mcp-session-id"]
        .to_str()
        .expect("ascii")
        .to_string();
    let deleted = reqwest::Client::new()
        .delete(&ep.url)
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .expect("send");
    assert_eq!(
        deleted.status(),
        200,
        "a terminated session is a success for every SDK (the Python one takes only 200/204)"
    );
    let after = post(&ep.url)
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-11-25")
        .json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .send()
        .await
        .expect("send");
    assert_eq!(
        after.status(),
        404,
        "the client is told to initialize again"
    );
}

/// The JSON-RPC message of a response, sent as JSON or as one SSE event.
async fn message(r: reqwest::Response) -> Value {
    let text = r.text().await.expect("body");
    let json = text
        .lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .map(str::trim)
        .find(|d| !d.is_empty())
        .unwrap_or(&text);
    serde_json::from_str(json).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {text}"))
}

#[tokio::test]
async fn malformed_bodies_get_the_json_rpc_errors_stdio_gives() {
    tls();
    let home = Home::empty();
    let ep = HttpEndpoint::start(&home);
    let init = post(&ep.url).json(&init_body()).send().await.expect("send");
    assert_eq!(init.status(), 200);
    let sid = init.headers()["mcp-session-id"]
        .to_str()
        .expect("ascii")
        .to_string();
    let send = async |body: &str| {
        post(&ep.url)
            .header("mcp-session-id", &sid)
            .header("mcp-protocol-version", "2025-11-25")
            .body(body.to_string())
            .send()
            .await
            .expect("send")
    };
    let r = send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
    assert_eq!(r.status(), 202);

    let cases = [
        ("this is not json", Value::Null, -32700),
        (r#"{"hello": 1}"#, Value::Null, -32600),
        ("[]", Value::Null, -32600),
        (
            r#"{"jsonrpc":"2.0","id":5,"method":"no/such/method","params":{}}"#,
            json!(5),
            -32601,
        ),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":5}}"#,
            json!(6),
            -32602,
        ),
    ];
    for (body, id, code) in cases {
        let r = send(body).await;
        let status = r.status();
        let v = message(r).await;
        assert_eq!(v["error"]["code"], code, "{body}: {status} {v}");
        assert_eq!(v["id"], id, "{body}: {v}");
        assert!(
            v.as_object().is_some_and(|o| o.contains_key("id")),
            "{body}: {v}"
        );
    }
    let r = send(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#).await;
    assert_eq!(message(r).await["result"], json!({}));
}
