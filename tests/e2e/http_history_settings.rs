//! A session's working-memory limits over `/hecate/v1`: `history.summarize_every`
//! and `history.max_messages` of a `summary_buffer` session are stored and shown
//! with the session, and the session's model writes its summary at that interval;
//! `[history]` gives sessions that name none the same settings; a value out of
//! range, or given to another strategy, is 400 `invalid_request` naming the field,
//! and in the config file an error naming the key.

use crate::support::common::{Home, ModelServer, text};
use crate::support::http::{Api, serve, serve_openai};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

/// The session's messages, oldest first.
async fn all_messages(api: &Api, id: &str) -> Vec<Value> {
    let a = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}/messages"))
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["data"].as_array().expect("data").clone()
}

/// Waits (up to ten seconds) for a summary message and answers its sequence.
async fn summary_sequence(api: &Api, id: &str) -> Option<i64> {
    let until = Instant::now() + Duration::from_secs(10);
    while Instant::now() < until {
        if let Some(m) = all_messages(api, id)
            .await
            .iter()
            .find(|m| m["is_summary"] == true)
        {
            return m["sequence"].as_i64();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

#[tokio::test]
async fn a_sessions_summary_interval_and_limit_are_its_own_and_bounded() {
    let server = ModelServer::start(None);
    let (_home, _s, api) = serve_openai(&server);
    let history = json!({"strategy": "summary_buffer", "summarize_every": 4, "max_messages": 6});
    let id = api.create_session(json!({"history": history})).await;
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(shown.body["data"]["history"], history, "{}", shown.body);

    // Two turns bring the session to 4 messages: the summary is due.
    for i in 0..2 {
        let a = api.say(&id, &format!("turn {i}")).await;
        assert_eq!(a.status, 200, "{}", a.body);
    }
    assert_eq!(
        summary_sequence(&api, &id).await,
        Some(4),
        "after message 4"
    );

    // The default interval (20) writes none after the same two turns.
    let plain = api
        .create_session(json!({"history": {"strategy": "summary_buffer"}}))
        .await;
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{plain}"))
        .await;
    assert_eq!(
        shown.body["data"]["history"],
        json!({"strategy": "summary_buffer", "summarize_every": 20, "max_messages": 100})
    );
    for i in 0..2 {
        let a = api.say(&plain, &format!("turn {i}")).await;
        assert_eq!(a.status, 200, "{}", a.body);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        all_messages(&api, &plain)
            .await
            .iter()
            .all(|m| m["is_summary"] == false),
        "no summary before 20 messages"
    );

    for (history, field) in [
        (
            json!({"strategy": "summary_buffer", "summarize_every": 0}),
            "history.summarize_every",
        ),
        (
            json!({"strategy": "summary_buffer", "max_messages": 10001}),
            "history.max_messages",
        ),
        (
            json!({"strategy": "buffer_window", "max_messages": 5}),
            "history.max_messages",
        ),
        (
            json!({"strategy": "token_budget", "summarize_every": 5}),
            "history.summarize_every",
        ),
    ] {
        let bad = api
            .post_session(json!({"model": "fix/fixture-model", "history": history}))
            .await;
        assert_eq!(bad.status, 400, "{history}: {}", bad.body);
        assert_eq!(bad.error_type(), "invalid_request", "{}", bad.body);
        assert_eq!(bad.body["error"]["field"], field, "{}", bad.body);
        let message = bad.body["error"]["message"].as_str().expect("message");
        assert!(message.contains(field), "{message}");
    }
}

#[tokio::test]
async fn the_config_sets_the_defaults_and_refuses_a_bad_value_by_key() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    home.write_config(
        "[history]\nstrategy = \"summary_buffer\"\nsummarize_every = 6\nmax_messages = 12\n",
    );
    let served = serve(&home);
    let api = Api::new(&served);
    let id = api.create_session(json!({})).await;
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(
        shown.body["data"]["history"],
        json!({"strategy": "summary_buffer", "summarize_every": 6, "max_messages": 12})
    );
    drop(served);

    let bad = Home::with_openai(&server);
    bad.write_config("[history]\nstrategy = \"summary_buffer\"\nmax_messages = 0\n");
    let out = bad
        .cmd(&["doctor", "--timeout", "1"])
        .output()
        .expect("doctor");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}{stderr}");
    assert!(
        stdout.contains("[history] max_messages must be between 1 and 10000"),
        "{stdout}"
    );
}
