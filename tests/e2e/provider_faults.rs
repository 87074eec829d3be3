//! Provider faults: each failure ends the turn `failed` with a stable error type,
//! keeps the user message, and keeps (and marks) whatever partial answer arrived.

use crate::support::common::{Home, ModelServer, text};
use serde_json::{Value, json};

/// Runs one chat turn with `--format json` and returns (exit code, turn JSON, session JSON).
fn failed_turn(home: &Home, model: &str) -> (i32, Value, Value) {
    let out = home.run(&["chat", "--model", model, "--format", "json", "hello"]);
    let code = out.status.code().unwrap_or(-1);
    let turn: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|_| panic!("turn JSON on stdout: {:?}", text(&out)));
    let id = turn["data"]["session_id"]
        .as_str()
        .expect("session id")
        .to_string();
    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    (code, turn, show)
}

fn assert_failed_with(turn: &Value, show: &Value, error_type: &str, reason: &str) {
    assert_eq!(turn["data"]["run"]["status"], "failed", "{turn}");
    assert_eq!(turn["data"]["error"]["type"], error_type, "{turn}");
    assert_eq!(turn["data"]["error"]["reason"], reason, "{turn}");
    assert!(
        turn["data"]["error"]["operator_action"]
            .as_str()
            .is_some_and(|s| !s.is_empty())
    );
    let msgs = show["data"]["messages"].as_array().expect("messages");
    assert_eq!(msgs[0]["role"], "user");
    assert_eq!(msgs[0]["content"], "hello", "the user message stays stored");
    assert_eq!(msgs[1]["status"], "failed");
    assert_eq!(msgs[1]["error"], error_type);
    assert_eq!(show["data"]["runs"][0]["error_type"], error_type);
    assert_eq!(show["data"]["status"], "failed");
}

#[test]
fn http_error_statuses_map_to_stable_types() {
    let server = ModelServer::start(Some(json!([
        {"status": 401, "error_message": "bad key"},
        {"status": 429, "error_message": "slow down"},
        {"status": 500, "error_message": "boom"},
        {"status": 404, "error_message": "no such model"}
    ])));
    let home = Home::with_openai(&server);
    let (code, turn, show) = failed_turn(&home, "fix/m");
    assert_failed_with(&turn, &show, "gateway_error", "credential_rejected");
    assert_eq!(code, 6);
    let (code, turn, show) = failed_turn(&home, "fix/m");
    assert_failed_with(&turn, &show, "rate_limit_exceeded", "provider_rate_limited");
    assert_eq!(turn["data"]["error"]["retry_after"], "1");
    assert_eq!(code, 6);
    let (_, turn, show) = failed_turn(&home, "fix/m");
    assert_failed_with(&turn, &show, "gateway_error", "provider_error");
    let (code, turn, show) = failed_turn(&home, "fix/m");
    assert_failed_with(&turn, &show, "model_not_configured", "model_not_found");
    assert_eq!(code, 5);
}

#[test]
fn a_stream_cut_mid_way_keeps_the_partial_answer_marked() {
    let server = ModelServer::start(Some(json!([
        {"chunks": ["partial ", "answer ", "never ", "finished"], "cut_after_chunks": 2}
    ])));
    let home = Home::with_openai(&server);
    let (code, turn, show) = failed_turn(&home, "fix/m");
    assert_failed_with(&turn, &show, "gateway_error", "stream_interrupted");
    assert_eq!(code, 6);
    assert_eq!(show["data"]["messages"][1]["content"], "partial answer ");
}

#[test]
fn malformed_sse_fails_the_turn_cleanly() {
    for api in ["openai", "anthropic"] {
        let server = ModelServer::start(Some(json!([
            {"chunks": ["good ", "then ", "bad"], "malformed_after_chunks": 1}
        ])));
        let mut home = Home::with_openai(&server);
        home.set("PROVIDER_ANT_BASE_URL", &server.base);
        home.set("PROVIDER_ANT_KIND", "anthropic");
        let model = if api == "openai" { "fix/m" } else { "ant/m" };
        let (_, turn, show) = failed_turn(&home, model);
        assert_failed_with(&turn, &show, "gateway_error", "malformed_stream");
        assert_eq!(show["data"]["messages"][1]["content"], "good ");
    }
}

#[test]
fn an_unreachable_provider_fails_with_an_actionable_error() {
    // Bind and drop a listener to get a port nobody listens on.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let mut home = Home::empty();
    home.set(
        "PROVIDER_DOWN_BASE_URL",
        &format!("http://127.0.0.1:{port}/v1"),
    );
    let (code, turn, show) = failed_turn(&home, "down/m");
    assert_failed_with(&turn, &show, "gateway_error", "provider_unreachable");
    assert_eq!(code, 6);
    // The session can be continued once the provider is back; the failed answer is
    // not replayed to it.
    let out = home.run(&["doctor", "--format", "json", "--timeout", "2"]);
    assert_eq!(
        out.status.code(),
        Some(5),
        "doctor reports nothing routable"
    );
    let doc: Value = serde_json::from_slice(&out.stdout).expect("doctor JSON");
    let checks = &doc["data"]["providers"][0]["readiness_checks"];
    assert_eq!(checks[2]["name"], "health");
    assert_eq!(checks[2]["status"], "blocked");
    assert_eq!(checks[3]["reason"], "provider_unhealthy");
}

#[test]
fn a_failed_answer_is_not_replayed_on_the_next_turn() {
    let server = ModelServer::start(Some(json!([
        {"chunks": ["half ", "way"], "cut_after_chunks": 1},
        {"text": "recovered"}
    ])));
    let home = Home::with_openai(&server);
    let (_, turn, _) = failed_turn(&home, "fix/m");
    let id = turn["data"]["session_id"].as_str().expect("id").to_string();
    let out = home.run(&["chat", "--session", &id, "try again"]);
    assert!(out.status.success(), "{}", text(&out).1);
    let reqs = server.requests();
    let roles: Vec<_> = reqs[1]["body"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["role"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(roles, ["user", "user"]);
}
