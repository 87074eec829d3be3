//! Named API keys of a shared hub: created with `hecate keys` (or by an admin
//! over HTTP) against the store a running `hecate serve` reads, a key's role
//! checked on `/hecate/v1` (read-only gets 403 for actions, admin-only paths
//! refuse operators), on the gateway (`/v1`, in the client's error shape) and on
//! `/mcp`, where a key limited to one upstream sees and calls only its tools; an
//! expired, revoked or unknown key gets 401, a key for another namespace 403.

use crate::support::common::{Home, ModelServer};
use crate::support::http::{Api, serve};
use crate::support::mcp::fixture_upstream;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::time::Duration;

const ADMIN: &str = "adm1n-static-token";

/// Creates a key with `hecate keys create` and answers its token.
fn cli_key(home: &Home, name: &str, scope: &str) -> String {
    let v = home.json(&["keys", "create", name, "--scope", scope, "--format", "json"]);
    assert_eq!(v["data"]["name"], name, "{v}");
    v["token"].as_str().expect("token").to_string()
}

fn message(a: &crate::support::http::Answer) -> String {
    a.body["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn key_roles_lifetimes_and_revocation_on_the_api_and_the_gateway() {
    let model = ModelServer::start(None);
    let mut home = Home::with_openai(&model);
    home.set("HECATE_TOKEN", ADMIN);
    let s = serve(&home);
    let admin = Api::new(&s).with_token(ADMIN);

    // Created on the command line while the server runs: the server reads them
    // from the store on the next request.
    let reader = Api::new(&s).with_token(&cli_key(&home, "reader", "read"));
    let operator = Api::new(&s).with_token(&cli_key(&home, "op", "operator"));

    let a = reader.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let a = reader
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({"runtime_kind": "model", "model": "fake-model"}),
        )
        .await;
    assert_eq!(a.status, 403, "{}", a.body);
    assert_eq!(a.error_type(), "forbidden");
    assert_eq!(a.body["error"]["required_role"], "operator");
    assert!(message(&a).contains("\"reader\""), "{}", a.body);

    let a = operator
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({"runtime_kind": "model", "model": "fake-model"}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let a = operator.get("/hecate/v1/keys").await;
    assert_eq!(a.status, 403, "keys are admin-only: {}", a.body);
    assert_eq!(a.body["error"]["required_role"], "admin");
    let a = operator
        .send(
            operator
                .request(
                    reqwest::Method::PUT,
                    "/hecate/v1/mcp/servers/fx/tools/echo/policy",
                )
                .json(&json!({"policy": "auto"})),
        )
        .await;
    assert_eq!(a.status, 403, "tool policies are admin-only: {}", a.body);

    // The gateway: a read-only key lists models but may not call one; the
    // refusal comes in the client's shape. An operator key works as Bearer and
    // as x-api-key (the Anthropic SDKs' header).
    let chat = json!({"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]});
    let a = reader.get("/v1/models").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let a = reader.post("/v1/chat/completions", chat.clone()).await;
    assert_eq!(a.status, 403, "{}", a.body);
    assert!(a.body["error"]["message"].is_string(), "{}", a.body);
    let a = operator.post("/v1/chat/completions", chat.clone()).await;
    assert_eq!(a.status, 200, "{}", a.body);
    let op_token = operator_token(&home).await;
    let anonymous = Api::new(&s);
    let a = anonymous
        .send(
            anonymous
                .request(reqwest::Method::POST, "/v1/messages")
                .header("x-api-key", &op_token)
                .header("anthropic-version", "2023-06-01")
                .json(&json!({"model": "fake-model", "max_tokens": 16,
                    "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_ne!(a.status, 401, "{}", a.body);
    assert_ne!(a.status, 403, "{}", a.body);

    // An admin creates a short-lived key over HTTP; once it expires it is 401.
    let a = admin
        .post(
            "/hecate/v1/keys",
            json!({"name": "brief", "scope": ["read"], "expires_in": "1s"}),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.body["data"]["created_by"], "admin");
    assert_eq!(a.body["data"]["state"], "active");
    let brief = Api::new(&s).with_token(a.body["token"].as_str().expect("token"));
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let a = brief.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(a.status, 401, "{}", a.body);
    assert_eq!(a.error_type(), "unauthorized");
    assert!(message(&a).contains("expired"), "{}", a.body);
    assert_eq!(a.header("www-authenticate"), Some("Bearer"));

    // Revoked on the command line: the running server refuses it at once.
    let out = home.run(&["keys", "revoke", "reader"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let a = reader.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(a.status, 401, "{}", a.body);
    assert!(message(&a).contains("revoked"), "{}", a.body);

    // A key-shaped token nobody issued, and a real key's id with a wrong secret.
    for token in [
        "key_0000000000000000.abcdef".to_string(),
        format!(
            "{}.{}",
            op_token.split('.').next().expect("id"),
            "0".repeat(64)
        ),
    ] {
        let a = Api::new(&s)
            .with_token(&token)
            .get("/hecate/v1/agent-chat/sessions")
            .await;
        assert_eq!(a.status, 401, "{token}: {}", a.body);
        assert!(message(&a).contains("not valid"), "{}", a.body);
    }

    // A key limited to another namespace is refused by this server (namespace
    // `default`), one naming it is not.
    let elsewhere = Api::new(&s).with_token(&cli_key(&home, "team-b", "read,namespace:team-b"));
    let a = elsewhere.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(a.status, 403, "{}", a.body);
    assert_eq!(a.body["error"]["namespace"], "default");
    let here = Api::new(&s).with_token(&cli_key(&home, "team-a", "read,namespace:default"));
    assert_eq!(here.get("/hecate/v1/agent-chat/sessions").await.status, 200);

    // The list shows every key's state and use, never a token or its hash.
    let a = admin.get("/hecate/v1/keys").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let keys = a.body["data"].as_array().expect("keys");
    let by_name = |n: &str| -> Value {
        keys.iter()
            .find(|k| k["name"] == n)
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(by_name("reader")["state"], "revoked");
    assert_eq!(by_name("brief")["state"], "expired");
    assert_eq!(by_name("op")["state"], "active");
    assert_eq!(by_name("op")["role"], "operator");
    assert!(by_name("op")["last_used_at"].is_string(), "{}", a.body);
    assert!(!a.body.to_string().contains("token"), "{}", a.body);
}

/// The token of key `op`, created again under another name for the x-api-key
/// check (tokens are shown only once, so the test keeps its own).
async fn operator_token(home: &Home) -> String {
    cli_key(home, "op-anthropic", "operator")
}

#[tokio::test]
async fn malformed_key_requests_get_clear_errors_and_the_cli_lists_keys() {
    let mut home = Home::empty();
    home.set("HECATE_TOKEN", ADMIN);
    let s = serve(&home);
    let admin = Api::new(&s).with_token(ADMIN);
    for (body, field) in [
        (json!({"name": "x", "scope": ["root"]}), "scope"),
        (json!({"name": "x", "scope": ["read", "admin"]}), "scope"),
        (json!({"name": "x", "scope": ["tool:github"]}), "scope"),
        (json!({"name": "x", "expires_in": "soon"}), "expires_in"),
        (json!({"name": "x", "expires_in": "0s"}), "expires_in"),
        (json!({"name": "has space"}), "name"),
        (json!({"name": ""}), "name"),
    ] {
        let a = admin.post("/hecate/v1/keys", body.clone()).await;
        assert_eq!(a.status, 400, "{body}: {}", a.body);
        assert_eq!(a.error_type(), "invalid_request");
        assert_eq!(a.body["error"]["field"], field, "{}", a.body);
    }
    let a = admin
        .post("/hecate/v1/keys", json!({"name": "x", "role": "admin"}))
        .await;
    assert_eq!(a.status, 400, "unknown field: {}", a.body);
    let a = admin.post("/hecate/v1/keys", json!({"name": "dup"})).await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.body["data"]["role"], "read", "read is the default role");
    let a = admin.post("/hecate/v1/keys", json!({"name": "dup"})).await;
    assert_eq!(a.status, 409, "{}", a.body);
    let a = admin.delete("/hecate/v1/keys/nope").await;
    assert_eq!(a.status, 404, "{}", a.body);
    let a = admin.delete("/hecate/v1/keys/dup").await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["data"]["state"], "revoked");
    // The name is free again once its key is revoked.
    let a = admin.post("/hecate/v1/keys", json!({"name": "dup"})).await;
    assert_eq!(a.status, 201, "{}", a.body);

    let out = home.run(&["keys", "create", "bad", "--scope", "superuser"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unknown scope item"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = home.run(&["keys", "list"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("dup") && text.contains("revoked") && text.contains("active"),
        "{text}"
    );
}

fn connect_with(url: &str, token: &str) -> StreamableHttpClientTransport<reqwest::Client> {
    StreamableHttpClientTransport::with_client(
        reqwest::Client::new(),
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
    )
}

fn args(v: Value) -> serde_json::Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

#[tokio::test]
async fn a_key_limited_to_one_upstream_sees_and_calls_only_its_tools_over_mcp() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut home = Home::empty();
    home.set("HECATE_TOKEN", ADMIN);
    home.write_config(&format!(
        "{}{}",
        fixture_upstream("fx", &["--read-only", "test_simple_text"], ""),
        fixture_upstream("gx", &[], "")
    ));
    let s = serve(&home);
    let url = format!("{}/mcp", s.base);

    let op = cli_key(&home, "fx-operator", "operator,server:fx");
    let client = ().serve(connect_with(&url, &op)).await.expect("connect");
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.iter().any(|n| n == "fx__echo"), "{names:?}");
    assert!(
        names.iter().all(|n| n.starts_with("fx__")),
        "only fx's tools: {names:?}"
    );
    let r = client
        .call_tool(
            CallToolRequestParams::new("fx__echo").with_arguments(args(json!({"message": "ok"}))),
        )
        .await
        .expect("fx__echo");
    assert_eq!(r.content[0].as_text().map(|t| t.text.as_str()), Some("ok"));
    for hidden in ["gx__echo", "list_sessions"] {
        let e = client
            .call_tool(
                CallToolRequestParams::new(hidden).with_arguments(args(json!({"message": "no"}))),
            )
            .await
            .expect_err(hidden);
        let text = e.to_string();
        assert!(
            text.contains("not available to the API key"),
            "{hidden}: {text}"
        );
    }
    // Nor Hecate's own resources (session transcripts) and prompts, nor another
    // upstream's: only fx's.
    let resources = client.list_all_resources().await.expect("resources");
    assert!(
        resources.iter().all(|r| !r.uri.starts_with("hecate://")),
        "{resources:?}"
    );
    let read = client
        .read_resource(rmcp::model::ReadResourceRequestParams::new(
            "hecate://sessions",
        ))
        .await;
    assert!(read.is_err(), "a hidden resource is not found: {read:?}");
    let prompts = client.list_all_prompts().await.expect("prompts");
    assert!(
        prompts
            .iter()
            .all(|p| p.name.starts_with("fx__") && p.name != "delegate_task"),
        "{prompts:?}"
    );
    let hidden = client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("delegate_task"))
        .await;
    assert!(hidden.is_err(), "{hidden:?}");
    client.cancel().await.expect("close");

    // A read-only key calls the tools marked read-only, not the others.
    let reader = cli_key(&home, "fx-reader", "read,server:fx");
    let client = ().serve(connect_with(&url, &reader)).await.expect("connect");
    let r = client
        .call_tool(CallToolRequestParams::new("fx__test_simple_text"))
        .await
        .expect("a read-only tool");
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let e = client
        .call_tool(
            CallToolRequestParams::new("fx__echo").with_arguments(args(json!({"message": "no"}))),
        )
        .await
        .expect_err("echo is not marked read-only");
    assert!(e.to_string().contains("read-only"), "{e}");
    client.cancel().await.expect("close");

    // The audit log names the key each call was made with.
    let admin = Api::new(&s).with_token(ADMIN);
    let a = admin.get("/hecate/v1/mcp/calls").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let clients: Vec<String> = a.body["data"]
        .as_array()
        .expect("calls")
        .iter()
        .filter_map(|c| c["client"].as_str().map(str::to_string))
        .collect();
    assert!(
        clients.iter().any(|c| c.contains("key:fx-operator")),
        "{clients:?}"
    );
    assert!(
        clients.iter().any(|c| c.contains("key:fx-reader")),
        "{clients:?}"
    );

    // The static token still sees everything.
    let client = ().serve(connect_with(&url, ADMIN)).await.expect("connect");
    let all = client.list_all_tools().await.expect("tools");
    assert!(all.iter().any(|t| t.name == "gx__echo"));
    assert!(all.iter().any(|t| t.name == "list_sessions"));
    let resources = client.list_all_resources().await.expect("resources");
    assert!(
        resources.iter().any(|r| r.uri == "hecate://sessions"),
        "{resources:?}"
    );
    client.cancel().await.expect("close");

    // An unknown key never opens a session.
    let bad = reqwest::Client::new()
        .post(&url)
        .header("authorization", "Bearer key_0000.nope")
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(bad.status(), 401);
}

/// Whoever decides an approval, makes a grant or starts a task is recorded as
/// the identity they acted as: `key:NAME` for a key, `admin` for the static token.
#[tokio::test]
async fn approvals_grants_and_task_starts_record_the_identity_that_made_them() {
    use crate::support::common::{git_workspace, permission_turn};
    use crate::support::http::pending_approval;
    let mut home = Home::empty();
    home.set("HECATE_TOKEN", ADMIN);
    let write_b = json!([{"fs_write": {"path": "b.txt", "content": "new\n"}}]);
    home.add_scripted_agent(
        &json!({"turns": [permission_turn("Write b.txt", write_b)]}).to_string(),
        &[],
        "",
    );
    let ws = git_workspace();
    let s = serve(&home);
    let op = Api::new(&s).with_token(&cli_key(&home, "op", "operator"));
    let reader = Api::new(&s).with_token(&cli_key(&home, "ro", "read"));

    // An agent's permission request, decided with the operator key.
    let a = op
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({"runtime_kind": "external_agent", "adapter_id": "fixture",
                   "workspace": ws.path().display().to_string()}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let session = a.body["data"]["id"].as_str().expect("id").to_string();
    let turn = {
        let (op, session) = (op.clone(), session.clone());
        tokio::spawn(async move { op.say(&session, "please write").await })
    };
    let approval = pending_approval(&op, &session).await;
    let aid = approval["id"].as_str().expect("approval id");
    let path = format!("/hecate/v1/agent-chat/sessions/{session}/approvals/{aid}/resolve");
    let a = reader
        .post(&path, json!({"decision": "approve", "scope": "session"}))
        .await;
    assert_eq!(a.status, 403, "a read key may not decide: {}", a.body);
    let a = op
        .post(&path, json!({"decision": "approve", "scope": "session"}))
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["data"]["resolved_by"], "key:op", "{}", a.body);
    assert_eq!(turn.await.expect("turn").status, 200);
    let a = op
        .get(&format!(
            "/hecate/v1/agent-chat/sessions/{session}/approvals/{aid}"
        ))
        .await;
    assert_eq!(
        a.body["data"]["resolved_by"], "key:op",
        "stored: {}",
        a.body
    );
    // The session scope became a grant made by the same key; one made by the
    // static token is the admin's.
    let a = op.get("/hecate/v1/agent-chat/grants").await;
    assert_eq!(a.body["data"][0]["created_by"], "key:op", "{}", a.body);
    let a = Api::new(&s)
        .with_token(ADMIN)
        .post(
            "/hecate/v1/agent-chat/grants",
            json!({"scope": "workspace_tool", "workspace": ws.path().display().to_string(),
                   "tool_kind": "read", "decision": "approve"}),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.body["data"]["created_by"], "admin");

    // A task started and its gate decided with the key: both events name it.
    let a = op
        .post(
            "/hecate/v1/tasks",
            json!({"execution_kind": "shell", "shell_command": "true"}),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.body);
    let task = a.body["data"]["id"].as_str().expect("task").to_string();
    let a = op
        .post(&format!("/hecate/v1/tasks/{task}/start"), json!({}))
        .await;
    assert_eq!(a.status, 202, "{}", a.body);
    let run = a.body["data"]["id"].as_str().expect("run").to_string();
    let gates = op.get(&format!("/hecate/v1/tasks/{task}/approvals")).await;
    let gate = gates.body["data"][0]["id"]
        .as_str()
        .expect("gate")
        .to_string();
    let a = op
        .post(
            &format!("/hecate/v1/tasks/{task}/approvals/{gate}/resolve"),
            json!({"decision": "reject", "note": "not now"}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let events = op
        .get(&format!("/hecate/v1/tasks/{task}/runs/{run}/events"))
        .await;
    let of = |kind: &str| -> Value {
        events.body["data"]
            .as_array()
            .expect("events")
            .iter()
            .find(|e| e["event_type"] == kind || e["type"] == kind)
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        of("run.created")["data"]["started_by"],
        "key:op",
        "{}",
        events.body
    );
    assert_eq!(
        of("approval.resolved")["data"]["by"],
        "key:op",
        "{}",
        events.body
    );
}
