//! External agents through Hecate's own model gateway: an adapter opted in with
//! `[agents.gateway]` is started with its manifest's `[gateway] env` (here the
//! fixture agent's `FIXTURE_MODEL_BASE_URL` and `X-Hecate-Agent-Session`
//! header), so the model calls it makes go through `hecate serve`'s `/v1` and
//! are traced, costed and exported under the session that prompted it. An agent
//! not opted in keeps its own endpoint.

use crate::support::common::{Home, ModelServer, git_workspace, session_id_from, text};
use crate::support::http::{Api, create_agent_session, serve};
use crate::support::otlp::{Collector, attr, export_env};
use serde_json::{Value, json};

/// The fixture agent's manifest section: how it is pointed at a base URL.
const GATEWAY_SECTION: &str = r#"
[gateway]
note = "FIXTURE_MODEL_BASE_URL and FIXTURE_MODEL_HEADERS"
env = { FIXTURE_MODEL_BASE_URL = "{base_url}", FIXTURE_MODEL = "gpt-fix", FIXTURE_MODEL_HEADERS = "X-Hecate-Agent-Session: {session_id}\nAuthorization: Bearer {api_key}" }
"#;

const PRICES: &str = r#"
[pricing."oai/gpt-fix"]
input_usd_per_mtok = 1.0
output_usd_per_mtok = 1.0
"#;

fn answer_text(body: &Value) -> String {
    body["data"]["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "assistant"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn an_opted_in_agent_calls_hecates_v1_and_its_calls_are_traced_and_costed_in_its_session() {
    let model = ModelServer::start(Some(json!([
        {"text": "from the model", "usage": {"input_tokens": 5, "output_tokens": 4}}
    ])));
    let collector = Collector::start();
    let mut home = Home::with_both_kinds(&model);
    for (k, v) in export_env(&collector) {
        home.set(k, &v);
    }
    home.add_fixture_agent_with("fixture", &[], GATEWAY_SECTION);
    home.write_config(&format!("[agents.gateway]\nfixture = true\n{PRICES}"));
    let served = serve(&home);
    let api = Api::new(&served);
    let ws = git_workspace();
    let id = create_agent_session(&api, "fixture", ws.path()).await;

    let said = api.say(&id, "what does the model say?").await;
    assert_eq!(said.status, 200, "{}", said.body);
    assert_eq!(
        answer_text(&said.body),
        "model: from the model",
        "{}",
        said.body
    );

    // The agent's call went through the gateway to the provider ...
    let upstream = model.requests();
    assert_eq!(upstream.len(), 1, "{upstream:?}");
    assert_eq!(
        upstream[0]["body"]["messages"][0]["content"],
        "what does the model say?"
    );
    // ... and is the session's: traced and costed under it.
    let traces = api.get(&format!("/hecate/v1/traces?session_id={id}")).await;
    let rows = traces.body["data"].as_array().expect("traces");
    assert_eq!(rows.len(), 1, "{}", traces.body);
    assert_eq!(rows[0]["provider"], "oai");
    assert_eq!(rows[0]["model"], "gpt-fix");
    assert_eq!(rows[0]["status"], "completed");
    assert_eq!(rows[0]["total_tokens"], 9);
    assert_eq!(rows[0]["cost_micros_usd"], 9);
    // The session shows its agent's calls: HTTP, and the CLI (JSON and text).
    let session = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    let calls = session.body["data"]["gateway_calls"]
        .as_array()
        .expect("calls");
    assert_eq!(calls.len(), 1, "{}", session.body);
    assert_eq!(calls[0]["cost_micros_usd"], 9);
    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    assert_eq!(
        show["data"]["gateway_calls"][0]["provider"], "oai",
        "{show}"
    );
    let shown = home.run(&["sessions", "show", &id]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("model calls through the gateway: 1 · 5 in / 4 out tokens · $0.000009"),
        "{shown}"
    );
    // No gateway chat session was made of it: the agent's transcript is its own.
    let chats = api.get(&format!("/hecate/v1/chat/sessions/{id}")).await;
    assert_eq!(chats.status, 404, "{}", chats.body);

    // Exported: the gateway call carries the session, as the agent's prompt does.
    let call = collector.wait_span("the agent's model call", |s| s["name"] == "chat gpt-fix");
    assert_eq!(attr(&call, "hecate.agent_chat.session.id"), id);
    assert_eq!(attr(&call, "gen_ai.conversation.id"), id);
    let run = collector.wait_span("the agent prompt", |s| s["name"] == "agent_chat.run");
    assert_eq!(attr(&run, "hecate.agent_chat.session.id"), id);
}

#[tokio::test]
async fn an_agent_not_opted_in_is_not_pointed_at_the_gateway() {
    let model = ModelServer::start(None);
    let home = Home::with_both_kinds(&model);
    home.add_fixture_agent_with("fixture", &[], GATEWAY_SECTION);
    let served = serve(&home);
    let api = Api::new(&served);
    let ws = git_workspace();
    let id = create_agent_session(&api, "fixture", ws.path()).await;
    let said = api.say(&id, "hello").await;
    assert_eq!(said.status, 200, "{}", said.body);
    assert_eq!(answer_text(&said.body), "echo: hello");
    assert!(model.requests().is_empty());
}

#[tokio::test]
async fn a_malformed_agent_session_header_is_refused_in_the_clients_wire_shape() {
    let model = ModelServer::start(None);
    let home = Home::with_both_kinds(&model);
    let served = serve(&home);
    let api = Api::new(&served);
    let rb = api
        .request(reqwest::Method::POST, "/v1/chat/completions")
        .header("x-hecate-agent-session", "not a session id!")
        .json(&json!({"model": "gpt-fix", "messages": [{"role": "user", "content": "hi"}]}));
    let refused = api.send(rb).await;
    assert_eq!(refused.status, 400, "{}", refused.body);
    assert_eq!(
        refused.body["error"]["type"], "invalid_request_error",
        "{}",
        refused.body
    );
    assert!(model.requests().is_empty());
    let traces = api.get("/hecate/v1/traces").await;
    assert_eq!(traces.body["data"].as_array().map(Vec::len), Some(0));
}

#[tokio::test]
async fn a_cli_chat_reaches_the_gateway_of_a_running_server_through_gateway_url() {
    let model = ModelServer::start(Some(json!([
        {"text": "from the model", "usage": {"input_tokens": 5, "output_tokens": 4}}
    ])));
    let home = Home::with_both_kinds(&model);
    home.add_fixture_agent_with("fixture", &[], GATEWAY_SECTION);
    home.write_config(&format!("[agents.gateway]\nfixture = true\n{PRICES}"));
    let served = serve(&home);
    let api = Api::new(&served);
    // `hecate chat` serves no /v1 itself: it hands the agent the server's.
    home.write_config(&format!(
        "[agents]\ngateway_url = {:?}\n\n[agents.gateway]\nfixture = true\n{PRICES}",
        served.base
    ));
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let out = home.run(&[
        "chat",
        "--agent",
        "fixture",
        "--workspace",
        &w,
        "what does it say?",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "model: from the model");
    let id = session_id_from(&out.stderr);
    let traces = api.get(&format!("/hecate/v1/traces?session_id={id}")).await;
    let rows = traces.body["data"].as_array().expect("traces");
    assert_eq!(rows.len(), 1, "{}", traces.body);
    assert_eq!(rows[0]["cost_micros_usd"], 9);
}

#[test]
fn a_gateway_url_that_is_not_a_base_url_is_refused_naming_the_key() {
    let home = Home::empty();
    home.add_fixture_agent_with("fixture", &[], GATEWAY_SECTION);
    for bad in [
        "127.0.0.1:8765",
        "ftp://127.0.0.1:8765",
        "http://127.0.0.1:8765/v1",
    ] {
        home.write_config(&format!(
            "[agents]\ngateway_url = {bad:?}\n\n[agents.gateway]\nfixture = true\n"
        ));
        let ws = git_workspace();
        let w = ws.path().display().to_string();
        let out = home.run(&["chat", "--agent", "fixture", "--workspace", &w, "hello"]);
        let (_, stderr) = text(&out);
        assert!(!out.status.success(), "{bad} was accepted");
        assert!(
            stderr.contains("[agents] gateway_url") && stderr.contains(bad),
            "{bad}: {stderr}"
        );
    }
}
