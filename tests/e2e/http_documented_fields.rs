//! Every field the OpenAPI document gives a transcript message is one some real
//! turn fills: a model turn, a failed model turn, a turn of Hecate's agent and an
//! external agent's turn that asked, wrote files and reported its usage, over
//! the real `hecate serve` exporting its traces to the fixture OTLP collector. A field documented but never set (or renamed on one
//! side only) fails here.

use crate::support::agent::{WIRES, agent_home, answer};
use crate::support::common::{ModelServer, git_workspace, permission_turn, workspace};
use crate::support::http::{Api, create_agent_session, pending_approval, serve};
use crate::support::otlp::{Collector, export_env};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::time::Duration;

/// Fields no turn of this test can fill, each with why (and each saying so in
/// its own documentation).
const ONLY_ELSEWHERE: &[(&str, &str)] = &[(
    "tool_call_id",
    "tool messages: no Agent Chat runtime stores one in a transcript today",
)];

/// The properties the served OpenAPI document gives schema `name`.
async fn documented(api: &Api, name: &str) -> BTreeSet<String> {
    let doc = api.get("/hecate/v1/openapi.json").await;
    assert_eq!(doc.status, 200, "{}", doc.body);
    doc.body["components"]["schemas"][name]["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("no schema {name}"))
        .keys()
        .cloned()
        .collect()
}

/// The keys of every message of session `id`'s transcript.
async fn filled(api: &Api, id: &str) -> BTreeSet<String> {
    let s = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(s.status, 200, "{}", s.body);
    s.body["data"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .flat_map(|m| m.as_object().expect("a message").keys().cloned())
        .collect()
}

/// Creates a session with `body`.
async fn session(api: &Api, body: Value) -> String {
    let a = api.post("/hecate/v1/agent-chat/sessions", body).await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["data"]["id"].as_str().expect("id").to_string()
}

#[tokio::test]
async fn every_documented_message_field_is_filled_by_some_turn() {
    let model = WIRES[0].2;
    let server = ModelServer::start(Some(json!([
        {"match": {"contains": "explode"}, "repeat": true, "status": 500,
         "error_message": "upstream exploded"},
        answer("fine"),
        answer("looked around"),
    ])));
    let mut home = agent_home(&server, WIRES[0], "");
    // Turns carry their trace and span ids when traces are exported.
    let collector = Collector::start();
    for (k, v) in export_env(&collector) {
        home.set(k, &v);
    }
    let write = json!([{"fs_write": {"path": "b.txt", "content": "new\n"}}]);
    home.add_scripted_agent(
        &json!({"turns": [
            permission_turn("Write b", write),
            {"match": "bill", "actions": [{"text": "billed"}, {"usage": {"used": 1200,
              "size": 200000, "cost": {"amount": 0.0125, "currency": "USD"},
              "turn": {"input_tokens": 100, "output_tokens": 20}}}]}
        ]})
        .to_string(),
        &[],
        "",
    );
    let s = serve(&home);
    let api = Api::new(&s);
    let mut seen = BTreeSet::new();

    // A model turn, then one the provider fails.
    let m = session(&api, json!({"runtime_kind": "model", "model": model})).await;
    assert_eq!(api.say(&m, "hello").await.status, 200);
    let failed = api.say(&m, "explode").await;
    assert_eq!(failed.status, 200, "{}", failed.body);
    assert_eq!(
        crate::support::http::last_message(&failed.body)["status"],
        "failed"
    );
    seen.extend(filled(&api, &m).await);

    // A turn of Hecate's agent (a task behind it).
    let (_dir, ws) = workspace();
    let a = session(
        &api,
        json!({"runtime_kind": "agent", "model": model, "workspace": ws}),
    )
    .await;
    let said = api.say(&a, "look around").await;
    assert_eq!(said.status, 200, "{}", said.body);
    seen.extend(filled(&api, &a).await);

    // An external agent's turn that asks, writes a file, then one that bills.
    let repo = git_workspace();
    let e = create_agent_session(&api, "fixture", repo.path()).await;
    let turn = {
        let (api, e) = (api.clone(), e.clone());
        tokio::spawn(async move { api.say(&e, "please write").await })
    };
    let pending = pending_approval(&api, &e).await;
    let aid = pending["id"].as_str().expect("approval id");
    let r = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{e}/approvals/{aid}/resolve"),
            json!({"decision": "approve"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let done = tokio::time::timeout(Duration::from_secs(60), turn)
        .await
        .expect("the turn ends")
        .expect("join");
    assert_eq!(done.status, 200, "{}", done.body);
    assert_eq!(api.say(&e, "bill me").await.status, 200);
    seen.extend(filled(&api, &e).await);

    let allowed: BTreeSet<&str> = ONLY_ELSEWHERE.iter().map(|(f, _)| *f).collect();
    let missing: Vec<String> = documented(&api, "MessageDto")
        .await
        .into_iter()
        .filter(|f| !seen.contains(f) && !allowed.contains(f.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "documented but never filled: {missing:?}"
    );
    let undocumented: Vec<&String> = seen
        .iter()
        .filter(|f| !allowed.contains(f.as_str()))
        .filter(|f| !f.is_empty())
        .collect::<Vec<_>>();
    let doc = documented(&api, "MessageDto").await;
    let extra: Vec<&&String> = undocumented.iter().filter(|f| !doc.contains(**f)).collect();
    assert!(extra.is_empty(), "filled but not documented: {extra:?}");
}
