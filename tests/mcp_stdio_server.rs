//! `hecate mcp` on stdio: the handshake, Hecate's own tools with annotations,
//! schemas and structured output, sessions shared with the CLI, turns, tool
//! errors versus protocol errors, and bad input (malformed and oversized frames,
//! unknown tools, invalid arguments). Stdout carries JSON-RPC frames only.

mod common;
mod mcp_support;

use common::{Home, ModelServer};
use mcp_support::{McpProc, first_text};
use serde_json::{Value, json};
use std::time::Duration;

fn tool<'a>(tools: &'a [Value], name: &str) -> &'a Value {
    tools
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("tool {name} is not listed"))
}

#[test]
fn initialize_names_hecate_and_lists_annotated_tools_with_schemas() {
    let home = Home::empty();
    let mut mcp = McpProc::spawn(&home, &[]);
    let init = mcp.initialize(json!({}));
    assert_eq!(init["result"]["serverInfo"]["name"], "hecate");
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25");
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], true);
    assert_eq!(caps["resources"]["subscribe"], true);
    assert!(caps.get("prompts").is_some());

    let list = mcp.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools").clone();
    for name in [
        "list_sessions",
        "search_sessions",
        "get_session",
        "get_transcript",
        "create_session",
        "send_message",
        "ask_agent",
        "cancel_turn",
        "list_approvals",
        "resolve_approval",
        "list_grants",
        "revoke_grant",
        "list_adapters",
        "probe_adapter",
        "upstream_status",
    ] {
        let t = tool(&tools, name);
        assert_eq!(t["inputSchema"]["type"], "object", "{name}");
        assert_eq!(
            t["outputSchema"]["type"], "object",
            "{name} has a structured output schema"
        );
        assert!(t["annotations"].is_object(), "{name} is annotated");
    }
    assert_eq!(
        tool(&tools, "list_sessions")["annotations"]["readOnlyHint"],
        true
    );
    assert_eq!(
        tool(&tools, "revoke_grant")["annotations"]["destructiveHint"],
        true
    );
    assert_eq!(
        tool(&tools, "revoke_grant")["annotations"]["idempotentHint"],
        true
    );
    assert_eq!(
        tool(&tools, "ask_agent")["annotations"]["readOnlyHint"],
        false
    );
    let ask = &tool(&tools, "ask_agent")["inputSchema"];
    assert!(
        ask["required"]
            .as_array()
            .is_some_and(|r| r.contains(&json!("target")))
    );
}

#[test]
fn sessions_created_over_mcp_are_the_clis_and_turns_answer_with_structured_output() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let mut mcp = McpProc::start(&home, json!({}));
    let created = mcp.call_ok(
        "create_session",
        json!({"model": "fix/m1", "title": "from mcp"}),
    );
    let id = created["structuredContent"]["session"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    assert_eq!(
        created["structuredContent"]["session"]["runtime_kind"],
        "model"
    );

    let turn = mcp.call_ok(
        "send_message",
        json!({"session_id": id, "content": "hello hub"}),
    );
    assert_eq!(turn["structuredContent"]["status"], "completed");
    assert_eq!(turn["structuredContent"]["answer"], "echo: hello hub");

    // The CLI (another process, same store and namespace) sees the session.
    let listed = home.json(&["sessions", "list", "--format", "json"]);
    assert!(
        listed["data"]
            .as_array()
            .expect("data")
            .iter()
            .any(|s| s["id"] == json!(id)),
        "{listed}"
    );
    let transcript = mcp.call_ok("get_transcript", json!({"session_id": id}));
    let msgs = transcript["structuredContent"]["messages"]
        .as_array()
        .expect("messages");
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[1]["text"], "echo: hello hub");
    let found = mcp.call_ok("search_sessions", json!({"query": "HELLO HUB"}));
    assert_eq!(found["structuredContent"]["sessions"][0]["id"], json!(id));
    let got = mcp.call_ok("get_session", json!({"session_id": id}));
    assert_eq!(got["structuredContent"]["session"]["title"], "from mcp");
    let all = mcp.call_ok("list_sessions", json!({"limit": 5}));
    assert_eq!(all["structuredContent"]["sessions"][0]["message_count"], 2);
}

#[test]
fn tool_failures_are_results_and_protocol_errors_keep_codes() {
    let home = Home::empty();
    let mut mcp = McpProc::start(&home, json!({}));
    let missing = mcp.call("get_session", json!({"session_id": "agent_chat_nope"}));
    assert_eq!(missing["result"]["isError"], true, "{missing}");
    let body: Value = serde_json::from_str(&first_text(&missing["result"])).expect("error JSON");
    assert_eq!(body["error"]["type"], "not_found");

    let idle = mcp.call("cancel_turn", json!({"session_id": "agent_chat_nope"}));
    assert_eq!(idle["result"]["isError"], true);

    let bad_args = mcp.call("list_sessions", json!({"limit": "many"}));
    assert_eq!(
        bad_args["result"]["isError"], true,
        "invalid arguments are a tool error: {bad_args}"
    );
    let unknown_field = mcp.call("get_session", json!({"session_id": "x", "extra": 1}));
    assert_eq!(unknown_field["result"]["isError"], true);

    let unknown = mcp.call("no_such_tool", json!({}));
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert_eq!(unknown["error"]["data"]["type"], "not_found");

    let method = mcp.request("no/such/method", json!({}));
    assert_eq!(method["error"]["code"], -32601);

    let target = mcp.call("ask_agent", json!({"target": "robot", "prompt": "hi"}));
    assert_eq!(target["result"]["isError"], true);
}

#[test]
fn malformed_and_oversized_frames_are_refused_and_the_connection_lives() {
    let home = Home::empty();
    let mut mcp = McpProc::start(&home, json!({}));
    mcp.send_line("this is not json");
    mcp.send_line("{\"jsonrpc\": \"2.0\", \"id\": ");
    // Valid JSON of the wrong shape gets Invalid Request.
    mcp.send_line("{\"hello\": 1}");
    let big = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":999,\"method\":\"tools/call\",\"params\":{{\"name\":\"search_sessions\",\"arguments\":{{\"query\":\"{}\"}}}}}}",
        "x".repeat(5 * 1024 * 1024)
    );
    mcp.send_line(&big);
    // Refused with its own id, never read whole or echoed.
    let refused = mcp.wait_response(999, &mut |m, _| panic!("unexpected server request {m}"));
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let ping = mcp.request("ping", json!({}));
    assert_eq!(ping["result"], json!({}), "{ping}");
    let codes: Vec<Value> = mcp
        .raw
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["id"].is_null())
        .map(|v| v["error"]["code"].clone())
        .collect();
    assert_eq!(codes, vec![json!(-32700), json!(-32700), json!(-32600)]);
    assert!(mcp.raw.iter().all(|l| l.len() < 4096));
    let listed = mcp.call_ok("list_sessions", json!({}));
    assert!(listed["structuredContent"]["sessions"].is_array());
}

#[test]
fn stdout_carries_only_json_rpc_frames_even_with_verbose_logging() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let mut mcp = McpProc::spawn(&home, &["-vvv"]);
    mcp.initialize(json!({}));
    let created = mcp.call_ok("create_session", json!({"model": "fix/m1"}));
    let id = created["structuredContent"]["session"]["id"].clone();
    mcp.call_ok(
        "send_message",
        json!({"session_id": id, "content": "log a lot"}),
    );
    mcp.call("get_session", json!({"session_id": "agent_chat_missing"}));
    mcp.call("unknown_tool", json!({}));
    let status = mcp.close_and_wait(Duration::from_secs(30));
    assert!(status.is_some_and(|s| s.success()), "exits cleanly on EOF");
    assert!(!mcp.raw.is_empty());
    for line in &mcp.raw {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("non-JSON line on stdout ({e}): {line:?}"));
        assert_eq!(v["jsonrpc"], "2.0", "not a JSON-RPC frame: {line}");
    }
    assert!(
        mcp.stderr().contains("DEBUG") || mcp.stderr().contains("TRACE"),
        "logs went to stderr"
    );
}

#[test]
fn approvals_and_grants_tools_read_the_shared_store() {
    let home = Home::empty();
    let mut mcp = McpProc::start(&home, json!({}));
    let approvals = mcp.call_ok("list_approvals", json!({}));
    assert_eq!(approvals["structuredContent"]["approvals"], json!([]));
    let grants = mcp.call_ok("list_grants", json!({}));
    assert_eq!(grants["structuredContent"]["grants"], json!([]));
    let revoke = mcp.call("revoke_grant", json!({"grant_id": "grant_nope"}));
    assert_eq!(revoke["result"]["isError"], true);
    let resolve = mcp.call(
        "resolve_approval",
        json!({"approval_id": "appr_nope", "decision": "approve"}),
    );
    assert_eq!(resolve["result"]["isError"], true);
    let adapters = mcp.call_ok("list_adapters", json!({}));
    assert!(
        adapters["structuredContent"]["adapters"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x["id"] == "codex")),
        "the built-in catalog is listed: {adapters}"
    );
}
