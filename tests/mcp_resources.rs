//! Resources and prompts of `hecate mcp`: Hecate's own (`hecate://sessions`,
//! the `hecate://sessions/{id}` template with live updates to subscribers,
//! `hecate://adapters` with health) and an upstream's, passed through; prompts
//! that help an agent use Hecate and the upstream's, namespaced.

mod common;
mod mcp_support;

use common::{Home, ModelServer};
use mcp_support::{McpProc, fixture_upstream};
use serde_json::{Value, json};
use std::time::Duration;

fn uris(list: &Value, key: &str, field: &str) -> Vec<String> {
    list["result"][key]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|r| r[field].as_str().map(str::to_string))
        .collect()
}

#[test]
fn own_resources_list_read_and_notify_subscribers_while_a_turn_runs() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let mut mcp = McpProc::start(&home, json!({}));
    let list = mcp.request("resources/list", json!({}));
    let listed = uris(&list, "resources", "uri");
    assert!(
        listed.contains(&"hecate://sessions".to_string())
            && listed.contains(&"hecate://adapters".to_string())
    );
    let templates = mcp.request("resources/templates/list", json!({}));
    assert!(
        uris(&templates, "resourceTemplates", "uriTemplate")
            .contains(&"hecate://sessions/{id}".to_string())
    );

    let created = mcp.call_ok("create_session", json!({"model": "fix/m1"}));
    let id = created["structuredContent"]["session"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let uri = format!("hecate://sessions/{id}");
    let sub = mcp.request("resources/subscribe", json!({"uri": uri}));
    assert_eq!(sub["result"], json!({}), "{sub}");
    mcp.call_ok(
        "send_message",
        json!({"session_id": id, "content": "watch me"}),
    );
    let update = mcp
        .wait_notification("notifications/resources/updated", Duration::from_secs(30))
        .expect("subscribers hear about the turn");
    assert_eq!(update["params"]["uri"], json!(uri));

    let read = mcp.request("resources/read", json!({"uri": uri}));
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "application/json");
    let transcript: Value =
        serde_json::from_str(contents["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(transcript["messages"][1]["content"], "echo: watch me");

    let adapters = mcp.request("resources/read", json!({"uri": "hecate://adapters"}));
    let body: Value = serde_json::from_str(
        adapters["result"]["contents"][0]["text"]
            .as_str()
            .expect("text"),
    )
    .expect("JSON");
    assert!(
        body["adapters"]
            .as_array()
            .is_some_and(|a| a.iter().all(|x| x["status"].is_string()))
    );

    let missing = mcp.request(
        "resources/read",
        json!({"uri": "hecate://sessions/agent_chat_nope"}),
    );
    assert_eq!(missing["error"]["code"], -32002, "{missing}");

    mcp.request("resources/unsubscribe", json!({"uri": uri}));
}

#[test]
fn prompts_help_use_hecate_and_upstream_resources_and_prompts_pass_through() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    home.write_config(&fixture_upstream("up", &[], ""));
    let mut mcp = McpProc::start(&home, json!({}));

    let prompts = mcp.request("prompts/list", json!({}));
    let names = uris(&prompts, "prompts", "name");
    for n in [
        "delegate_task",
        "review_session",
        "hecate_overview",
        "up__test_prompt_with_arguments",
    ] {
        assert!(names.contains(&n.to_string()), "{n} in {names:?}");
    }
    let delegate = mcp.request("prompts/get", json!({"name": "delegate_task", "arguments": {"task": "fix the build", "target": "agent:codex"}}));
    let text = delegate["result"]["messages"][0]["content"]["text"]
        .as_str()
        .expect("text");
    assert!(
        text.contains("ask_agent")
            && text.contains("fix the build")
            && text.contains("agent:codex")
    );
    let missing_arg = mcp.request(
        "prompts/get",
        json!({"name": "delegate_task", "arguments": {}}),
    );
    assert_eq!(missing_arg["error"]["code"], -32602);

    let created = mcp.call_ok("create_session", json!({"model": "fix/m1"}));
    let id = created["structuredContent"]["session"]["id"].clone();
    let review = mcp.request(
        "prompts/get",
        json!({"name": "review_session", "arguments": {"session_id": id}}),
    );
    assert_eq!(
        review["result"]["messages"][0]["content"]["type"], "resource",
        "{review}"
    );

    let up = mcp.request(
        "prompts/get",
        json!({"name": "up__test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
    );
    assert_eq!(
        up["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );

    let resources = mcp.request("resources/list", json!({}));
    assert!(uris(&resources, "resources", "uri").contains(&"test://static-text".to_string()));
    let text = mcp.request("resources/read", json!({"uri": "test://static-text"}));
    assert_eq!(
        text["result"]["contents"][0]["text"],
        "This is the content of the static text resource."
    );
    let templated = mcp.request("resources/read", json!({"uri": "test://template/42/data"}));
    assert!(
        templated["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("42"))
    );
    let binary = mcp.request("resources/read", json!({"uri": "test://static-binary"}));
    assert_eq!(binary["result"]["contents"][0]["mimeType"], "image/png");
    let nowhere = mcp.request("resources/read", json!({"uri": "test://nowhere"}));
    assert!(nowhere.get("error").is_some(), "{nowhere}");
}
