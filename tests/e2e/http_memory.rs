//! Working-memory strategies over real HTTP and the CLI: each session's strategy
//! decides exactly which history the model receives; a summary-buffer session gets
//! a summary message after 20 messages and the next turn starts from it; a failed
//! summary never fails the turn, and one the session's provider cannot write is
//! written by the next provider serving the model; an unknown strategy is a
//! stable 400.

use crate::support::common::{Home, ModelServer, session_id_from, text};
use crate::support::http::{Api, serve, serve_openai};
use serde_json::{Value, json};
use std::time::Duration;

/// The (role, content) pairs of one recorded request.
fn messages_of(request: &Value) -> Vec<(String, String)> {
    request["body"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (
                m["role"].as_str().unwrap_or("").to_string(),
                m["content"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// The messages of the newest request the model server received whose last
/// message starts with `last`.
fn request_ending(server: &ModelServer, last: &str) -> Vec<(String, String)> {
    server
        .requests()
        .iter()
        .rev()
        .map(messages_of)
        .find(|ms| ms.last().is_some_and(|(_, c)| c.starts_with(last)))
        .unwrap_or_else(|| panic!("no request ended with {last:?}"))
}

/// Whether the model server was asked for a summary.
fn asked_for_summary(server: &ModelServer) -> bool {
    server
        .requests()
        .iter()
        .map(messages_of)
        .any(|ms| ms.last().is_some_and(|(_, c)| c.starts_with(SUMMARIZE)))
}

/// How the summary instruction starts.
const SUMMARIZE: &str = "Summarize the conversation above";

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(r, c)| (r.to_string(), c.to_string()))
        .collect()
}

async fn turn(api: &Api, id: &str, content: &str) -> Value {
    let a = api.say(id, content).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["data"]["status"], "completed", "{}", a.body);
    a.body
}

/// Waits (polling the transcript) for a summary message in the session.
async fn wait_summary(api: &Api, id: &str) -> Value {
    for _ in 0..500 {
        let a = api
            .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
            .await;
        let found = a.body["data"]["messages"]
            .as_array()
            .and_then(|ms| ms.iter().find(|m| m["is_summary"] == true).cloned());
        if let Some(m) = found {
            return m;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("session {id} never got a summary");
}

#[tokio::test]
async fn each_strategy_gives_the_model_exactly_its_history() {
    let server = ModelServer::start(None);
    let (_home, _s, api) = serve_openai(&server);

    // No strategy named: the config's default, shown on the session.
    let plain = api
        .post_session(json!({"model": "fix/fixture-model"}))
        .await;
    assert_eq!(plain.status, 200, "{}", plain.body);
    assert_eq!(
        plain.body["data"]["history"],
        json!({"strategy": "buffer_window", "window": 100})
    );

    let window = api
        .create_session(json!({"history": {"strategy": "buffer_window", "window": 3}}))
        .await;
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{window}"))
        .await;
    assert_eq!(
        shown.body["data"]["history"],
        json!({"strategy": "buffer_window", "window": 3})
    );
    for prompt in ["one", "two", "three"] {
        turn(&api, &window, prompt).await;
    }
    assert_eq!(
        request_ending(&server, "three"),
        pairs(&[
            ("user", "two"),
            ("assistant", "echo: two"),
            ("user", "three")
        ])
    );

    // "beta" costs 5 estimated tokens, "echo: alpha" 7, "alpha" 6: a budget of
    // 12 holds the newest two.
    let budget = api
        .create_session(json!({"history": {"strategy": "token_budget", "max_tokens": 12}}))
        .await;
    for prompt in ["alpha", "beta"] {
        turn(&api, &budget, prompt).await;
    }
    assert_eq!(
        request_ending(&server, "beta"),
        pairs(&[("assistant", "echo: alpha"), ("user", "beta")])
    );
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{budget}"))
        .await;
    assert_eq!(
        shown.body["data"]["history"],
        json!({"strategy": "token_budget", "max_tokens": 12})
    );
}

#[tokio::test]
async fn a_summary_buffer_session_summarizes_after_twenty_messages_and_loads_from_it() {
    let server = ModelServer::start(None);
    let (_home, _s, api) = serve_openai(&server);
    let id = api
        .create_session(json!({"history": {"strategy": "summary_buffer"}}))
        .await;
    for i in 0..9 {
        let body = turn(&api, &id, &format!("q{i}")).await;
        assert!(
            body["data"]["messages"]
                .as_array()
                .is_some_and(|ms| ms.iter().all(|m| m["is_summary"] == false))
        );
    }
    // Without a checkpoint the turn sees everything (under the safety limit).
    turn(&api, &id, "q9").await;
    assert_eq!(request_ending(&server, "q9").len(), 19);

    let summary = wait_summary(&api, &id).await;
    assert_eq!(summary["sequence"], 20, "after the 20 messages");
    assert_eq!(summary["role"], "system");
    let content = summary["content"].as_str().expect("content");
    assert!(content.starts_with("Summary: "), "{content}");
    // The summary request: all 20 messages, then the instruction.
    let asked = request_ending(&server, SUMMARIZE);
    assert_eq!(asked.len(), 21);
    assert_eq!(asked[0], ("user".to_string(), "q0".to_string()));
    assert_eq!(asked[19], ("assistant".to_string(), "echo: q9".to_string()));
    // Every message is kept.
    let all = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(
        all.body["data"]["messages"].as_array().map(Vec::len),
        Some(21)
    );

    turn(&api, &id, "next").await;
    assert_eq!(
        request_ending(&server, "next"),
        vec![
            ("system".to_string(), content.to_string()),
            ("user".to_string(), "next".to_string())
        ]
    );
}

#[tokio::test]
async fn a_failed_summary_leaves_the_turn_completed_and_the_session_going() {
    let server = ModelServer::start(Some(json!([
        {"match": {"contains": SUMMARIZE}, "repeat": true,
         "status": 500, "error_message": "summarizer down"},
        {"repeat": true, "text": "fine"}
    ])));
    let (_home, _s, api) = serve_openai(&server);
    let id = api
        .create_session(json!({"history": {"strategy": "summary_buffer"}}))
        .await;
    let mut last = Value::Null;
    for i in 0..10 {
        last = turn(&api, &id, &format!("q{i}")).await;
    }
    let run_id = last["data"]["latest_run_id"]
        .as_str()
        .expect("run")
        .to_string();
    for _ in 0..500 {
        if asked_for_summary(&server) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(asked_for_summary(&server), "the summary was asked for");
    let a = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    let run = a.body["data"]["runs"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["id"] == run_id.as_str()).cloned())
        .expect("the run");
    assert_eq!(run["status"], "completed");
    let after = turn(&api, &id, "still here").await;
    assert_eq!(after["data"]["messages"].as_array().map(Vec::len), Some(2));
    let whole = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    let ms = whole.body["data"]["messages"].as_array().expect("messages");
    assert!(ms.iter().all(|m| m["is_summary"] == false));
    assert_eq!(ms.len(), 22);
}

#[tokio::test]
async fn an_unknown_strategy_is_a_400_naming_the_field() {
    let server = ModelServer::start(None);
    let (_home, _s, api) = serve_openai(&server);
    let a = api
        .post_session(json!({"model": "fix/fixture-model", "history": {"strategy": "lru"}}))
        .await;
    assert_eq!(a.status, 400, "{}", a.body);
    assert_eq!(a.error_type(), "agent_chat.history_strategy_invalid");
    let message = a.body["error"]["message"].as_str().unwrap_or("");
    assert!(message.contains("history.strategy"), "{message}");
    let listed = api.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(listed.body["data"], json!([]), "nothing created");
}

#[test]
fn the_cli_creates_a_session_with_a_strategy_and_shows_it() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let out = home.run(&[
        "chat",
        "--model",
        "fix/fixture-model",
        "--history",
        "token_budget",
        "--history-max-tokens",
        "64",
        "hello",
    ]);
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let id = session_id_from(&out.stderr);
    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    assert_eq!(
        show["data"]["history"],
        json!({"strategy": "token_budget", "max_tokens": 64})
    );
    let out = home.run(&[
        "chat",
        "--model",
        "fix/fixture-model",
        "--history",
        "lru",
        "hello",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out).1.contains("--history"));
}

#[tokio::test]
async fn an_external_agent_is_handed_off_to_a_fresh_primed_session_at_the_summary_boundary() {
    let home = Home::empty();
    home.add_fixture_agent("fixture", &[]);
    let s = serve(&home);
    let api = Api::new(&s);
    let (_guard, ws) = crate::support::common::workspace();
    let created = api
        .post_session(
            json!({"runtime_kind": "external_agent", "adapter_id": "fixture",
                   "workspace": ws.display().to_string(),
                   "history": {"strategy": "summary_buffer"}}),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let id = created.body["data"]["id"].as_str().expect("id").to_string();
    let say = async |content: &str| -> Value {
        let a = api.say(&id, content).await;
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(a.body["data"]["status"], "completed", "{}", a.body);
        a.body
    };
    // Ten turns: 20 messages, the boundary.
    let mut native = Value::Null;
    for i in 0..10 {
        let body = say(&format!("turn {i}")).await;
        let turn = body["data"]["messages"].as_array().expect("messages");
        assert_eq!(turn.len(), 2, "the turn answers its own two messages");
        assert_eq!(turn[0]["sequence"], 2 * i, "{body}");
        let answer = &turn[1];
        assert_eq!(
            answer["content"],
            format!("echo: turn {i}"),
            "one native session so far"
        );
        if i == 0 {
            native = body["data"]["native_session_id"].clone();
        }
        assert_eq!(body["data"]["native_session_id"], native);
    }
    // The next prompt goes to a fresh native session primed with the transcript
    // the strategy loads, instead of the agent's ever-growing own context.
    let body = say("turn 10").await;
    let answer = body["data"]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .expect("answer")
        .to_string();
    assert!(answer.starts_with("echo: Context:"), "{answer}");
    assert!(answer.contains("User: turn 0"), "{answer}");
    assert!(answer.contains("Assistant: echo: turn 9"), "{answer}");
    assert!(answer.ends_with("turn 10"), "{answer}");
    assert_ne!(
        body["data"]["native_session_id"], native,
        "a fresh native session"
    );
    // Then it goes on in that session.
    let body = say("turn 11").await;
    let last = body["data"]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .expect("answer");
    assert_eq!(last["content"], "echo: turn 11");
}

/// A summary fails over like a model turn: the session's provider `a` refuses
/// the summary request (503), `b`, which serves the same model, writes it.
#[tokio::test]
async fn a_summary_the_sessions_provider_cannot_write_is_written_by_the_next_one() {
    let fa = ModelServer::start(Some(json!([
        {"match": {"contains": SUMMARIZE}, "repeat": true,
         "status": 503, "error_message": "summarizer down"},
        {"repeat": true, "text": "fine"}
    ])));
    let fb = ModelServer::start(Some(json!([{"repeat": true, "text": "the b summary"}])));
    let mut home = Home::empty();
    for (name, fx) in [("A", &fa), ("B", &fb)] {
        home.set(&format!("PROVIDER_{name}_KIND"), "openai");
        home.set(
            &format!("PROVIDER_{name}_BASE_URL"),
            &format!("{}/v1", fx.base),
        );
        home.set(&format!("PROVIDER_{name}_MODELS"), "m");
    }
    let s = serve(&home);
    let api = Api::new(&s);
    let id = api
        .create_session(json!({"model": "a/m", "history": {"strategy": "summary_buffer"}}))
        .await;
    for i in 0..10 {
        turn(&api, &id, &format!("q{i}")).await;
    }
    let summary = wait_summary(&api, &id).await;
    assert_eq!(summary["content"], "Summary: the b summary", "{summary}");
    assert!(asked_for_summary(&fa), "a was asked first");
    assert_eq!(fb.requests().len(), 1, "b wrote the summary only");
}
