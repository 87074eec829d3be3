//! Remote A2A agents (`[a2a_agents]`) that cannot be used, against the real
//! `hecate serve`: a card URL answering an HTML page, one that never answers,
//! a card without a usable interface, and an agent that answers a JSON-RPC
//! error. Each is a stable reason in the catalog (`unavailable` with
//! `unavailable_reason`) and a failed turn with a typed error (`gateway_error`
//! and the error's words).

use crate::support::common::{Home, workspace};
use crate::support::http::{Api, Served, create_agent_session, serve};
use axum::Router;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use serde_json::{Value, json};
use std::time::Duration;

/// A local HTTP server whose paths play the broken agents; answers its base URL.
async fn broken_agents() -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let rpc = format!("{base}/erring/rpc");
    let app = Router::new()
        .route(
            "/html/.well-known/agent-card.json",
            get(|| async {
                (
                    [(CONTENT_TYPE, "text/html; charset=utf-8")],
                    "<!doctype html><html><body>Welcome</body></html>",
                )
                    .into_response()
            }),
        )
        .route(
            "/slow/.well-known/agent-card.json",
            get(|| async {
                tokio::time::sleep(Duration::from_secs(30)).await;
                "{}".into_response()
            }),
        )
        .route(
            "/grpc/.well-known/agent-card.json",
            get(|| async {
                axum::Json(json!({"name": "grpc only", "supportedInterfaces": [
                    {"url": "http://127.0.0.1:1", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
                ]}))
            }),
        )
        .route(
            "/erring/.well-known/agent-card.json",
            get(move || {
                let rpc = rpc.clone();
                async move {
                    axum::Json(json!({"name": "Erring agent", "supportedInterfaces": [
                        {"url": rpc, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
                    ], "capabilities": {"streaming": false}}))
                }
            }),
        )
        .route(
            "/erring/rpc",
            post(|axum::Json(req): axum::Json<Value>| async move {
                axum::Json(json!({"jsonrpc": "2.0", "id": req["id"],
                    "error": {"code": -32603, "message": "the agent broke"}}))
            }),
        );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    base
}

/// `hecate serve` with the four broken agents declared.
fn serve_with(base: &str) -> (Home, Served, Api) {
    let home = Home::empty();
    let card = |p: &str| format!("{base}/{p}/.well-known/agent-card.json");
    home.write_config(&format!(
        "[a2a_agents.html]\ncard_url = \"{}\"\n\n\
         [a2a_agents.slow]\ncard_url = \"{}\"\ncard_timeout_secs = 1\n\n\
         [a2a_agents.grpc]\ncard_url = \"{}\"\n\n\
         [a2a_agents.erring]\ncard_url = \"{}\"\nname = \"Erring agent\"\n",
        card("html"),
        card("slow"),
        card("grpc"),
        card("erring"),
    ));
    let served = serve(&home);
    let api = Api::new(&served);
    (home, served, api)
}

/// The catalog row of adapter `id`.
async fn row(api: &Api, id: &str) -> Value {
    let list = api.get("/hecate/v1/agent-adapters").await;
    assert_eq!(list.status, 200, "{}", list.body);
    list.body["data"]
        .as_array()
        .expect("adapters")
        .iter()
        .find(|a| a["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no row {id} in {}", list.body))
}

#[tokio::test(flavor = "multi_thread")]
async fn unusable_cards_are_unavailable_with_their_reason() {
    let base = broken_agents().await;
    let (_home, _served, api) = serve_with(&base);
    for (id, reason) in [
        ("html", "card_invalid"),
        ("slow", "card_timeout"),
        ("grpc", "no_usable_interface"),
    ] {
        let r = row(&api, id).await;
        assert_eq!(r["kind"], "a2a", "{r}");
        assert_eq!(r["status"], "unavailable", "{r}");
        assert_eq!(r["available"], false, "{r}");
        let why = r["unavailable_reason"].as_str().unwrap_or_default();
        assert!(why.starts_with(&format!("{reason}: ")), "{id}: {r}");
    }
    let html = row(&api, "html").await;
    assert!(
        html["unavailable_reason"]
            .as_str()
            .is_some_and(|w| w.contains("HTML")),
        "{html}"
    );
    let erring = row(&api, "erring").await;
    assert_eq!(erring["status"], "available", "{erring}");
    assert_eq!(erring["name"], "Erring agent");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_turn_on_a_broken_agent_fails_with_a_typed_error() {
    let base = broken_agents().await;
    let (_home, _served, api) = serve_with(&base);
    let (_dir, ws) = workspace();
    for (id, words) in [
        ("html", "is not an A2A agent card: an HTML page"),
        ("slow", "did not answer within 1 s"),
        ("grpc", "offers no usable interface"),
        (
            "erring",
            "the agent answered an error (-32603): the agent broke",
        ),
    ] {
        let sid = create_agent_session(&api, id, &ws).await;
        let a = api.say(&sid, "hello").await;
        assert_eq!(a.status, 200, "{id}: {}", a.body);
        let run = &a.body["data"]["runs"][0];
        assert_eq!(run["status"], "failed", "{id}: {run}");
        assert_eq!(run["error_type"], "gateway_error", "{id}: {run}");
        let said = run["error_message"].as_str().unwrap_or_default();
        assert!(said.starts_with(&format!("{id}: ")), "{id}: {said}");
        assert!(said.contains(words), "{id}: {said}");
        let answer = &a.body["data"]["messages"][1];
        assert_eq!(answer["driver_kind"], "a2a", "{answer}");
        assert_eq!(answer["status"], "failed", "{answer}");
    }
}
