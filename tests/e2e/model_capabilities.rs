//! Model capabilities over real HTTP: operator overrides stored in the store
//! (seen by a second `hecate serve` on the same store and after a restart),
//! deleted back to the next source; the tool-calling probe asking the fixture
//! model for real (one model scripted to call the probe tool twice, one to
//! answer in text); capabilities in `/v1/models` metadata and on Agent Chat
//! sessions and messages; `agent_chat.model_capability_required` for Hecate's
//! agent on a model marked as not calling tools; and bad input refused.

use crate::support::common::{Home, ModelServer, workspace};
use crate::support::http::{Api, serve};
use serde_json::{Value, json};

const OVERRIDES: &str = "/hecate/v1/model-capabilities/overrides";
const PROBES: &str = "/hecate/v1/model-capabilities/probes";

/// A fixture provider `fix` serving `tooly` (calls the probe tool twice),
/// `plain` (answers in text) and `fixture-model` (echoes).
fn scripted() -> ModelServer {
    ModelServer::start(Some(json!([
        {"match": {"model": "tooly"}, "repeat": true, "tool_calls": [
            {"name": "hecate_probe", "arguments": {"step": 1}},
            {"name": "hecate_probe", "arguments": {"step": 2}}]},
        {"match": {"model": "plain"}, "repeat": true, "text": "I cannot use tools."},
        {"match": {"model": "fixture-model"}, "repeat": true, "text": "hello"},
    ])))
}

fn home_for(fx: &ModelServer, config: &str) -> Home {
    let mut home = Home::empty();
    home.set("PROVIDER_FIX_KIND", "openai");
    home.set("PROVIDER_FIX_BASE_URL", &format!("{}/v1", fx.base));
    home.set("PROVIDER_FIX_MODELS", "tooly,plain,fixture-model");
    home.write_config(config);
    home
}

async fn put(api: &Api, body: Value) -> crate::support::http::Answer {
    api.send(api.request(reqwest::Method::PUT, OVERRIDES).json(&body))
        .await
}

/// The `/v1/models` metadata capabilities of `id`.
async fn listed(api: &Api, id: &str) -> Value {
    let a = api.get("/v1/models").await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["data"]
        .as_array()
        .and_then(|d| d.iter().find(|m| m["id"] == id))
        .map(|m| m["metadata"]["capabilities"].clone())
        .unwrap_or_else(|| panic!("{id} not listed: {}", a.body))
}

#[tokio::test]
async fn overrides_are_stored_shared_by_replicas_kept_across_restarts_and_deleted() {
    let fx = scripted();
    let home = home_for(
        &fx,
        "[providers.fix.capabilities.\"fixture-model\"]\nmax_context_tokens = 8192\n",
    );
    let s1 = serve(&home);
    let api = Api::new(&s1);
    let before = listed(&api, "fix/fixture-model").await;
    assert_eq!(before["source"], "config", "{before}");
    assert_eq!(before["tool_calling"], "unknown");
    assert_eq!(before["max_context_tokens"], 8192);

    let a = put(
        &api,
        json!({"provider": "fix", "model": "fixture-model", "tool_calling": "basic",
               "vision": false, "note": "checked by hand"}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["object"], "model_capability");
    let d = &a.body["data"];
    assert_eq!(d["source"], "operator_override");
    assert_eq!(d["tool_calling"], "basic");
    assert_eq!(d["note"], "checked by hand");
    assert_eq!(d["effective"]["source"], "operator_override");
    assert_eq!(
        d["effective"]["max_context_tokens"], 8192,
        "fields the override leaves unset come from the config"
    );

    // A second process on the same store sees it.
    let s2 = serve(&home);
    let replica = Api::new(&s2);
    let seen = listed(&replica, "fix/fixture-model").await;
    assert_eq!(seen["tool_calling"], "basic", "{seen}");
    assert_eq!(seen["vision"], false);
    drop(s2);
    drop(s1);

    // And it survives a restart.
    let s3 = serve(&home);
    let api = Api::new(&s3);
    assert_eq!(
        listed(&api, "fix/fixture-model").await["source"],
        "operator_override"
    );
    let gone = api
        .delete(&format!("{OVERRIDES}?provider=fix&model=fixture-model"))
        .await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    assert_eq!(gone.body["data"]["effective"]["source"], "config");
    assert_eq!(
        listed(&api, "fix/fixture-model").await["tool_calling"],
        "unknown"
    );
    let again = api
        .delete(&format!("{OVERRIDES}?provider=fix&model=fixture-model"))
        .await;
    assert_eq!(again.status, 404, "{}", again.body);
}

#[tokio::test]
async fn the_probe_asks_the_model_to_call_a_tool_and_records_what_it_did() {
    let fx = scripted();
    let home = home_for(&fx, "");
    let s = serve(&home);
    let api = Api::new(&s);

    let a = api
        .post(PROBES, json!({"provider": "fix", "model": "tooly"}))
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["object"], "model_capability_probe");
    let d = &a.body["data"];
    assert_eq!(d["source"], "probe");
    assert_eq!(d["tool_calling"], "parallel");
    assert_eq!(d["tool_calls_seen"], 2);
    assert_eq!(d["effective"]["tool_calling"], "parallel");
    let sent = fx.requests();
    let probe = &sent.last().expect("the probe reached the model")["body"];
    assert_eq!(probe["model"], "tooly");
    assert_eq!(probe["tools"][0]["function"]["name"], "hecate_probe");

    let a = api
        .post(PROBES, json!({"provider": "fix", "model": "plain"}))
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["data"]["tool_calling"], "none");
    assert_eq!(a.body["data"]["tool_calls_seen"], 0);
    assert!(
        a.body["data"]["note"]
            .as_str()
            .is_some_and(|n| n.contains("without calling the tool")),
        "{}",
        a.body
    );
    let listed_plain = listed(&api, "fix/plain").await;
    assert_eq!(listed_plain["tool_calling"], "none");
    assert_eq!(listed_plain["source"], "probe");

    // A result found by hand is recorded as given, without asking the model.
    let asked = fx.requests().len();
    let a = api
        .post(
            PROBES,
            json!({"provider": "fix", "model": "fixture-model", "tool_calling": "basic",
                   "note": "Manual tool-call probe succeeded."}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["data"]["tool_calling"], "basic");
    assert!(a.body["data"].get("tool_calls_seen").is_none());
    assert_eq!(fx.requests().len(), asked);

    // An override wins over the probe.
    put(
        &api,
        json!({"provider": "fix", "model": "plain", "tool_calling": "basic"}),
    )
    .await;
    assert_eq!(
        listed(&api, "fix/plain").await["source"],
        "operator_override"
    );
}

#[tokio::test]
async fn a_probe_that_cannot_reach_the_model_records_nothing() {
    let fx = scripted();
    let mut home = home_for(&fx, "");
    home.set("PROVIDER_DOWN_BASE_URL", "http://127.0.0.1:1/v1");
    home.set("PROVIDER_DOWN_MODELS", "m");
    let s = serve(&home);
    let api = Api::new(&s);
    let a = api
        .post(PROBES, json!({"provider": "down", "model": "m"}))
        .await;
    assert_eq!(a.status, 500, "{}", a.body);
    assert_eq!(a.error_type(), "gateway_error");
    assert_eq!(listed(&api, "down/m").await["source"], "default");
}

#[tokio::test]
async fn bad_capability_requests_are_refused_with_the_field_named() {
    let fx = scripted();
    let home = home_for(&fx, "");
    let s = serve(&home);
    let api = Api::new(&s);
    for (body, status, field) in [
        (
            json!({"provider": "fix", "model": "m", "tool_calling": "sometimes"}),
            400,
            "tool_calling",
        ),
        (
            json!({"provider": "fix", "model": "m", "tool_calling": "unknown"}),
            400,
            "tool_calling",
        ),
        (
            json!({"provider": "fix", "model": "", "tool_calling": "basic"}),
            400,
            "model",
        ),
        (
            json!({"provider": "nope", "model": "m", "tool_calling": "basic"}),
            404,
            "provider",
        ),
    ] {
        let a = put(&api, body.clone()).await;
        assert_eq!(a.status, status, "{body}: {}", a.body);
        assert_eq!(a.body["error"]["field"], field, "{body}: {}", a.body);
    }
    let a = put(
        &api,
        json!({"provider": "fix", "model": "m", "tool_calling": "basic", "colour": "red"}),
    )
    .await;
    assert_eq!(a.status, 400, "unknown fields are refused: {}", a.body);
    let a = api
        .send(
            api.request(reqwest::Method::PUT, OVERRIDES)
                .header("content-type", "application/json")
                .body("{not json"),
        )
        .await;
    assert_eq!(a.status, 400);
    let a = api.delete(&format!("{OVERRIDES}?provider=fix")).await;
    assert_eq!(a.status, 400, "{}", a.body);
    let a = api
        .post(
            PROBES,
            json!({"provider": "fix", "model": "m", "tool_calling": "maybe"}),
        )
        .await;
    assert_eq!(a.status, 400);
    assert_eq!(
        api.get("/hecate/v1/model-capabilities/overrides")
            .await
            .status,
        405,
        "no GET on the overrides path"
    );
}

#[tokio::test]
async fn agent_chat_carries_capabilities_and_refuses_tools_on_a_model_marked_none() {
    let fx = scripted();
    let home = home_for(&fx, "");
    let s = serve(&home);
    let api = Api::new(&s);
    put(
        &api,
        json!({"provider": "fix", "model": "plain", "tool_calling": "none"}),
    )
    .await;

    let id = api.create_session(json!({"model": "fix/plain"})).await;
    let a = api.say(&id, "hi").await;
    assert_eq!(
        a.status, 200,
        "a direct model turn needs no tools: {}",
        a.body
    );
    let data = &a.body["data"];
    assert_eq!(data["capabilities"]["tool_calling"], "none", "{data}");
    assert_eq!(data["capabilities"]["source"], "operator_override");
    for m in data["messages"].as_array().expect("messages") {
        assert_eq!(m["capabilities"]["tool_calling"], "none", "{m}");
    }
    let listed = api.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(
        listed.body["data"][0]["capabilities"]["tool_calling"], "none",
        "{}",
        listed.body
    );

    let (_ws_dir, ws) = workspace();
    let agent = api
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({"runtime_kind": "agent", "model": "fix/plain", "workspace": ws}),
        )
        .await;
    assert_eq!(agent.status, 200, "{}", agent.body);
    let aid = agent.body["data"]["id"].as_str().expect("id").to_string();
    let asked = fx.requests().len();
    let refused = api.say(&aid, "edit the file").await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.error_type(), "agent_chat.model_capability_required");
    assert_eq!(refused.body["error"]["provider"], "fix");
    assert_eq!(refused.body["error"]["model"], "plain");
    assert_eq!(
        refused.body["error"]["capabilities"]["tool_calling"],
        "none"
    );
    assert_eq!(fx.requests().len(), asked, "nothing reached the model");
    let t = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{aid}"))
        .await;
    assert_eq!(
        t.body["data"]["messages"].as_array().map(Vec::len),
        Some(0),
        "nothing was stored"
    );
}
