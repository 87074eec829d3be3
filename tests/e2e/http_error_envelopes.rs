//! Every `/hecate/v1` failure is the error envelope with the request's correlation
//! ids: unknown paths, malformed or oversized bodies, invalid fields, runtime and
//! model mistakes, transitions that are not valid now, and request heads over the
//! limit (431).

use crate::support::common::{Home, ModelServer};
use crate::support::http;
use crate::support::http::{Api, serve};
use serde_json::json;

fn assert_envelope(a: &http::Answer, status: u16, error_type: &str) {
    assert_eq!(a.status, status, "status of {}", a.body);
    assert_eq!(a.error_type(), error_type, "type of {}", a.body);
    let e = &a.body["error"];
    for field in [
        "message",
        "user_message",
        "operator_action",
        "request_id",
        "trace_id",
    ] {
        assert!(
            e[field].as_str().is_some_and(|s| !s.is_empty()),
            "{field} missing in {e}"
        );
    }
    assert_eq!(a.header("x-request-id"), e["request_id"].as_str());
    assert_eq!(a.header("x-trace-id"), e["trace_id"].as_str());
    assert!(
        a.header("content-type")
            .is_some_and(|c| c.starts_with("application/json"))
    );
}

#[tokio::test]
async fn unknown_paths_wrong_methods_and_unknown_sessions_are_enveloped() {
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let a = api.get("/hecate/v1/nope").await;
    assert_envelope(&a, 404, "not_found");
    assert!(
        a.header("x-request-id")
            .is_some_and(|r| r.starts_with("req_"))
    );
    let a = api.get("/somewhere/else").await;
    assert_envelope(&a, 404, "not_found");
    let a = api
        .send(
            api.request(reqwest::Method::PUT, "/hecate/v1/agent-chat/sessions")
                .json(&json!({})),
        )
        .await;
    assert_envelope(&a, 405, "invalid_request");
    assert!(a.header("allow").is_some());
    let a = api
        .get("/hecate/v1/agent-chat/sessions/agent_chat_missing")
        .await;
    assert_envelope(&a, 404, "not_found");
    let a = api.say("agent_chat_missing", "hello").await;
    assert_envelope(&a, 404, "not_found");
    // A client's request id is echoed, in the header and the envelope.
    let a = api
        .send(
            api.request(reqwest::Method::GET, "/hecate/v1/nope")
                .header("x-request-id", "client-id-42"),
        )
        .await;
    assert_eq!(a.header("x-request-id"), Some("client-id-42"));
    assert_eq!(a.body["error"]["request_id"], "client-id-42");
    // Successful answers carry the ids too.
    let a = api.get("/hecate/v1/system/stats").await;
    assert_eq!(a.status, 200);
    assert!(a.header("x-request-id").is_some() && a.header("x-trace-id").is_some());
}

#[tokio::test]
async fn malformed_bodies_are_400_and_oversized_bodies_413() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let s = serve(&home);
    let api = Api::new(&s);
    let sessions = "/hecate/v1/agent-chat/sessions";

    let a = api
        .send(
            api.request(reqwest::Method::POST, sessions)
                .header("content-type", "application/json")
                .body("{\"model\": "),
        )
        .await;
    assert_envelope(&a, 400, "invalid_request");
    assert!(
        a.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("JSON"))
    );

    let a = api
        .send(
            api.request(reqwest::Method::POST, sessions)
                .header("content-type", "text/plain")
                .body("{\"model\": \"fix/fixture-model\"}"),
        )
        .await;
    assert_envelope(&a, 400, "invalid_request");

    let a = api
        .send(api.request(reqwest::Method::POST, sessions).body("{}"))
        .await;
    assert_envelope(&a, 400, "invalid_request");

    let id = api.create_session(json!({})).await;
    let a = api
        .post(
            &format!("{sessions}/{id}/messages"),
            json!({"contents": "typo in the field name"}),
        )
        .await;
    assert_envelope(&a, 400, "invalid_request");
    assert!(
        a.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("content"))
    );

    let a = api
        .post(&format!("{sessions}/{id}/messages"), json!({"content": 7}))
        .await;
    assert_envelope(&a, 400, "invalid_request");

    let a = api
        .post(
            &format!("{sessions}/{id}/messages"),
            json!({"content": "   "}),
        )
        .await;
    assert_envelope(&a, 400, "invalid_request");

    let big = "x".repeat(3 * 1024 * 1024);
    let a = api
        .post(
            &format!("{sessions}/{id}/messages"),
            json!({ "content": big }),
        )
        .await;
    assert_envelope(&a, 413, "invalid_request");
    assert_eq!(a.body["error"]["limit_bytes"], 2 * 1024 * 1024);
    // Nothing was stored by any of the refused prompts.
    let t = api.get(&format!("{sessions}/{id}")).await;
    assert_eq!(t.body["data"]["messages"].as_array().map(Vec::len), Some(0));
}

#[tokio::test]
async fn runtime_workspace_and_model_mistakes_have_stable_types() {
    let server = ModelServer::start(None);
    let mut home = Home::with_openai(&server);
    home.set("PROVIDER_FIX_MODELS", "fixture-model,other-model");
    let s = serve(&home);
    let api = Api::new(&s);
    let sessions = "/hecate/v1/agent-chat/sessions";

    let a = api
        .post(
            sessions,
            json!({"runtime_kind": "robot", "model": "fix/fixture-model"}),
        )
        .await;
    assert_envelope(&a, 400, "agent_chat.runtime_kind_invalid");

    let a = api
        .post(
            sessions,
            json!({"model": "fix/fixture-model", "workspace": "/definitely/not/here"}),
        )
        .await;
    assert_envelope(&a, 400, "agent_chat.workspace_required");

    let a = api
        .post(sessions, json!({"model": "fix/retired-model"}))
        .await;
    assert_envelope(&a, 422, "model_not_configured");
    assert_eq!(
        a.body["error"]["suggested_models"],
        json!(["fixture-model", "other-model"])
    );

    let a = api.post(sessions, json!({"model": "nowhere/model"})).await;
    assert_envelope(&a, 422, "route_impossible");

    let a = api.post(sessions, json!({"title": "no model"})).await;
    assert_envelope(&a, 400, "agent_chat.model_required");

    let a = api
        .post(sessions, json!({"runtime_kind": "external_agent", "adapter_id": "no-such-agent", "workspace": "/"}))
        .await;
    assert_envelope(&a, 400, "agent_chat.adapter_not_found");
    // Handing an external-agent session to a model needs a model.
    let workspace = tempfile::tempdir().expect("workspace");
    let a = api
        .post(
            sessions,
            json!({
                "runtime_kind": "external_agent",
                "adapter_id": "codex",
                "workspace": workspace.path().display().to_string()
            }),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let external = a.body["data"]["id"].as_str().expect("id").to_string();
    let a = api
        .post(
            &format!("{sessions}/{external}/messages"),
            json!({"content": "hi", "runtime_kind": "model"}),
        )
        .await;
    assert_envelope(&a, 400, "agent_chat.model_required");

    let id = api.create_session(json!({})).await;
    let msgs = format!("{sessions}/{id}/messages");
    let a = api
        .post(&msgs, json!({"content": "hi", "runtime_kind": "robot"}))
        .await;
    assert_envelope(&a, 400, "agent_chat.runtime_kind_invalid");
    let a = api
        .post(
            &msgs,
            json!({"content": "hi", "model": "fix/retired-model"}),
        )
        .await;
    assert_envelope(&a, 422, "model_not_configured");
    let a = api
        .post(
            &msgs,
            json!({"content": "hi", "workspace": "/definitely/not/here"}),
        )
        .await;
    assert_envelope(&a, 400, "agent_chat.workspace_required");

    let a = api
        .post(&format!("{sessions}/{id}/cancel"), json!({}))
        .await;
    assert_envelope(&a, 409, "agent_chat.session_not_running");
}

#[tokio::test]
async fn guardrails_set_at_creation_refuse_turns_with_422() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let s = serve(&home);
    let api = Api::new(&s);
    let id = api
        .create_session(json!({"max_turns_per_session": 1}))
        .await;
    let a = api.say(&id, "first").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let a = api.say(&id, "second").await;
    assert_envelope(&a, 422, "agent_chat.session_limit_exceeded");
    assert_eq!(a.body["error"]["turns_used"], 1);
}

#[tokio::test]
async fn a_request_head_over_the_limit_is_431_with_the_envelope() {
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let mut crowded = api.request(reqwest::Method::GET, "/hecate/v1/system/stats");
    for i in 0..150 {
        crowded = crowded.header(format!("x-pad-{i}"), "1");
    }
    let a = api.send(crowded).await;
    assert_envelope(&a, 431, "invalid_request");
    assert!(
        a.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("header fields") && m.contains("at most 100")),
        "{}",
        a.body
    );
    let long = api
        .send(
            api.request(reqwest::Method::GET, "/hecate/v1/system/stats")
                .header("cookie", "c".repeat(100 * 1024)),
        )
        .await;
    assert_envelope(&long, 431, "invalid_request");
}
