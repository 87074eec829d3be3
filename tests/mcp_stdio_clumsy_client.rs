//! `hecate mcp` on stdio facing a clumsy client: messages before `initialize`
//! are refused or ignored without ending the process, and after it every bad
//! line (not JSON, not UTF-8, too long, too deep, unknown method, ill-typed
//! parameters) gets the JSON-RPC error it deserves, with an `id` member.

mod common;
mod mcp_support;

use common::Home;
use mcp_support::McpProc;
use serde_json::{Value, json};
use std::time::Duration;

/// How long one reply may take.
const BOUND: Duration = Duration::from_secs(30);

/// The next reply to `id` (`null` included), failing the test without one.
fn reply(mcp: &mut McpProc, id: Value) -> Value {
    let stderr = mcp.stderr_path.clone();
    mcp.wait_id(&id, BOUND).unwrap_or_else(|| {
        panic!(
            "no reply with id {id}; stderr:\n{}",
            std::fs::read_to_string(stderr).unwrap_or_default()
        )
    })
}

#[test]
fn notifications_and_requests_before_initialize_do_not_end_the_session() {
    let home = Home::empty();
    let mut mcp = McpProc::spawn(&home, &[]);
    mcp.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                     "params": {"requestId": 1, "reason": "early"}}),
    );
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    mcp.send(&json!({"jsonrpc": "2.0", "id": "early-list", "method": "tools/list"}));
    let early = reply(&mut mcp, json!("early-list"));
    assert!(early["error"]["code"].is_i64(), "{early}");
    mcp.send(&json!({"jsonrpc": "2.0", "id": "early-unknown", "method": "no/such"}));
    let unknown = reply(&mut mcp, json!("early-unknown"));
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let ping = mcp.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");

    let init = mcp.initialize(json!({}));
    assert_eq!(init["result"]["serverInfo"]["name"], "hecate");
    assert!(mcp.tool_names().iter().any(|t| t == "list_sessions"));
    let status = mcp.close_and_wait(BOUND);
    assert!(status.is_some_and(|s| s.success()), "{}", mcp.stderr());
}

#[test]
fn bad_lines_after_initialize_get_json_rpc_errors_with_an_id_member() {
    let home = Home::empty();
    let mut mcp = McpProc::start(&home, json!({}));

    mcp.send_line("this is not json");
    assert_eq!(reply(&mut mcp, Value::Null)["error"]["code"], -32700);

    let mut bad_utf8 = br#"{"jsonrpc":"2.0","id":"utf8","method":"ping","params":{"x":""#.to_vec();
    bad_utf8.extend_from_slice(b"\xff\xfe\"}}");
    mcp.send_bytes(&bad_utf8);
    assert_eq!(reply(&mut mcp, Value::Null)["error"]["code"], -32700);

    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"big\",\"method\":\"tools/call\",\"params\":{{\"name\":\"search_sessions\",\"arguments\":{{\"query\":\"{}\"}}}}}}",
        "x".repeat(5 * 1024 * 1024)
    );
    mcp.send_line(&big);
    let v = reply(&mut mcp, json!("big"));
    assert_eq!(v["error"]["code"], -32600, "{v}");

    let deep = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"deep\",\"method\":\"ping\",\"params\":{{\"x\":{}{}}}}}",
        "[".repeat(200),
        "]".repeat(200)
    );
    mcp.send_line(&deep);
    let v = reply(&mut mcp, Value::Null);
    assert!(v["error"]["code"].is_i64(), "{v}");

    mcp.send(&json!({"jsonrpc": "2.0", "id": "unknown", "method": "no/such/method", "params": {}}));
    assert_eq!(reply(&mut mcp, json!("unknown"))["error"]["code"], -32601);

    mcp.send(
        &json!({"jsonrpc": "2.0", "id": "types", "method": "tools/call", "params": {"name": 5}}),
    );
    assert_eq!(reply(&mut mcp, json!("types"))["error"]["code"], -32602);

    mcp.send(
        &json!({"jsonrpc": "2.0", "id": 77, "method": "resources/read", "params": {"uri": []}}),
    );
    assert_eq!(reply(&mut mcp, json!(77))["error"]["code"], -32602);

    mcp.send(&json!({"jsonrpc": "1.0", "id": "version", "method": "ping"}));
    assert_eq!(reply(&mut mcp, json!("version"))["error"]["code"], -32600);
    mcp.send_line("[]");
    assert_eq!(reply(&mut mcp, Value::Null)["error"]["code"], -32600);

    // Still serving.
    let listed = mcp.call_ok("list_sessions", json!({}));
    assert!(listed["structuredContent"]["sessions"].is_array());
    let status = mcp.close_and_wait(BOUND);
    assert!(status.is_some_and(|s| s.success()), "{}", mcp.stderr());
    for line in &mcp.raw {
        let v: Value = serde_json::from_str(line).expect("JSON frame");
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        if v.get("error").is_some() {
            assert!(
                v.as_object().is_some_and(|o| o.contains_key("id")),
                "an error reply without an id member: {line}"
            );
        }
    }
}
