//! Upstream MCP servers over `/hecate/v1/mcp`: the servers with their tools and
//! policies, a tool's policy set at runtime (a blocked tool leaves a real MCP
//! client's list at once and stays blocked after a restart), the audit log of
//! proxied calls, and bad input.

use crate::support::common::Home;
use crate::support::http::{Api, serve};
use crate::support::mcp::fixture_upstream;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::{Value, json};

fn tool<'a>(servers: &'a Value, server: &str, name: &str) -> &'a Value {
    servers["data"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|s| s["name"] == server)
        .and_then(|s| s["tools"].as_array())
        .and_then(|tools| tools.iter().find(|t| t["name"] == name))
        .unwrap_or_else(|| panic!("{server}/{name} in {servers}"))
}

async fn client_tools(base: &str) -> Vec<String> {
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "{base}/mcp"
        )))
        .await
        .expect("connect");
    let names = client
        .list_all_tools()
        .await
        .expect("tools")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    client.cancel().await.expect("close");
    names
}

#[tokio::test]
async fn a_tool_set_to_block_leaves_the_clients_list_and_stays_blocked() {
    let home = Home::empty();
    home.write_config(&fixture_upstream("fx", &[], ""));
    let s = serve(&home);
    let api = Api::new(&s);

    let servers = api.get("/hecate/v1/mcp/servers").await;
    assert_eq!(servers.status, 200, "{}", servers.body);
    let fx = &servers.body["data"][0];
    assert_eq!(
        (
            fx["name"].as_str(),
            fx["transport"].as_str(),
            fx["state"].as_str()
        ),
        (Some("fx"), Some("stdio"), Some("ok")),
        "{fx}"
    );
    assert!(
        !fx["target"]
            .as_str()
            .unwrap_or_default()
            .contains("mcp-server"),
        "no arguments shown: {fx}"
    );
    let echo = tool(&servers.body, "fx", "echo");
    assert_eq!(
        (echo["policy"].as_str(), echo["exposed_name"].as_str()),
        (Some("auto"), Some("fx__echo"))
    );
    assert!(
        client_tools(&s.base)
            .await
            .contains(&"fx__echo".to_string())
    );

    // A call is audited with who made it and how it ended.
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "{}/mcp",
            s.base
        )))
        .await
        .expect("connect");
    client
        .call_tool(
            CallToolRequestParams::new("fx__echo").with_arguments(
                json!({"message": "hi"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("call");
    client.cancel().await.expect("close");
    let calls = api.get("/hecate/v1/mcp/calls?limit=5").await;
    assert_eq!(calls.status, 200, "{}", calls.body);
    let call = &calls.body["data"][0];
    assert_eq!(
        (
            call["server"].as_str(),
            call["tool"].as_str(),
            call["outcome"].as_str()
        ),
        (Some("fx"), Some("echo"), Some("ok")),
        "{call}"
    );
    assert!(
        call["client"]
            .as_str()
            .is_some_and(|c| c.ends_with("(http)")),
        "{call}"
    );

    let set = api
        .request(
            reqwest::Method::PUT,
            "/hecate/v1/mcp/servers/fx/tools/echo/policy",
        )
        .json(&json!({"policy": "block"}));
    let set = api.send(set).await;
    assert_eq!(set.status, 200, "{}", set.body);
    assert_eq!(set.body["data"]["policy"], "block");
    let servers = api.get("/hecate/v1/mcp/servers").await;
    let echo = tool(&servers.body, "fx", "echo");
    assert_eq!(
        (echo["policy"].as_str(), echo["exposed_name"].as_str()),
        (Some("block"), None),
        "{echo}"
    );
    let names = client_tools(&s.base).await;
    assert!(!names.contains(&"fx__echo".to_string()), "{names:?}");
    assert!(
        names.contains(&"fx__test_simple_text".to_string()),
        "only that tool: {names:?}"
    );

    for (path, body, status, field) in [
        (
            "/hecate/v1/mcp/servers/fx/tools/echo/policy",
            json!({"policy": "sometimes"}),
            400,
            Some("policy"),
        ),
        (
            "/hecate/v1/mcp/servers/nope/tools/echo/policy",
            json!({"policy": "block"}),
            404,
            None,
        ),
        (
            "/hecate/v1/mcp/servers/fx/tools/nope/policy",
            json!({"policy": "block"}),
            404,
            None,
        ),
        (
            "/hecate/v1/mcp/servers/fx/tools/echo/policy",
            json!({"policy": "block", "x": 1}),
            400,
            None,
        ),
    ] {
        let bad = api
            .send(api.request(reqwest::Method::PUT, path).json(&body))
            .await;
        assert_eq!(bad.status, status, "{path} {body}: {}", bad.body);
        if let Some(f) = field {
            assert_eq!(bad.body["error"]["field"], f, "{}", bad.body);
        }
    }
    let bad = api.get("/hecate/v1/mcp/calls?limit=0").await;
    assert_eq!((bad.status, bad.error_type()), (400, "invalid_request"));

    // The policy is the store's: a new process on the same data keeps it.
    drop(s);
    let s = serve(&home);
    let names = client_tools(&s.base).await;
    assert!(
        !names.contains(&"fx__echo".to_string()),
        "still blocked after a restart: {names:?}"
    );
    let api = Api::new(&s);
    let servers = api.get("/hecate/v1/mcp/servers").await;
    assert_eq!(tool(&servers.body, "fx", "echo")["policy"], "block");
}
