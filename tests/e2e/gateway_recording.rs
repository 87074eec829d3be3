//! What the model gateway records, over the real `hecate serve` and the fixture
//! model server: a chat session named by `X-Hecate-Session-Id` (or the
//! `session_id` field) grows by each call's new messages and its answer with the
//! provider call (a tool round trip included), read back through
//! `/hecate/v1/chat/sessions` (list, show, replay, delete); a resent history that
//! does not match is a 409; a request without a session leaves only its trace;
//! a failing upstream leaves no session; a client that goes away mid-stream is
//! recorded as a partial answer; traces filter by request, session and time;
//! the local rate limit answers 429 with its headers.

use crate::support::common::{Home, ModelServer};
use crate::support::http::{Answer, Api, Served, recorded_chat_session, serve};
use crate::support::mcp::McpProc;
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value, json};

const PRICES: &str = r#"
[pricing."oai/gpt-fix"]
input_usd_per_mtok = 1000000.0
output_usd_per_mtok = 1000000.0
"#;

fn gateway_with(fixture: &ModelServer, env: &[(&str, &str)]) -> (Home, Served, Api) {
    let mut home = Home::with_both_kinds(fixture);
    home.write_config(PRICES);
    for (k, v) in env {
        home.set(k, v);
    }
    let served = serve(&home);
    let api = Api::new(&served);
    (home, served, api)
}

async fn chat(api: &Api, session: Option<&str>, body: Value) -> Answer {
    let mut rb = api.request(reqwest::Method::POST, "/v1/chat/completions");
    if let Some(s) = session {
        rb = rb.header("x-hecate-session-id", s);
    }
    api.send(rb.json(&body)).await
}

fn roles(session: &Value) -> Vec<String> {
    session["data"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["role"].as_str().unwrap_or("?").to_string())
        .collect()
}

#[tokio::test]
async fn a_session_grows_by_each_calls_new_messages_and_answer_with_its_call() {
    let fx = ModelServer::start(Some(json!([
        {"text": "Hello."},
        {"tool_calls": [{"id": "call_w1", "name": "weather", "arguments": {"city": "Paris"}}]},
        {"text": "It is sunny in Paris."},
    ])));
    let (_h, _s, api) = gateway_with(&fx, &[]);
    let tools = json!([{"type": "function", "function": {"name": "weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    let mut messages = vec![
        json!({"role": "system", "content": "Be brief."}),
        json!({"role": "user", "content": "hi"}),
    ];
    let first = chat(
        &api,
        Some("chat_e2e"),
        json!({"model": "oai/gpt-fix", "messages": messages}),
    )
    .await;
    assert_eq!(first.status, 200, "{}", first.body);
    messages.push(first.body["choices"][0]["message"].clone());
    messages.push(json!({"role": "user", "content": "weather in Paris?"}));
    // The second call streams and names its session in the body.
    let r = api
        .request(reqwest::Method::POST, "/v1/chat/completions")
        .json(
            &json!({"model": "oai/gpt-fix", "messages": messages, "tools": tools,
                      "stream": true, "session_id": "chat_e2e"}),
        )
        .send()
        .await
        .expect("stream");
    assert_eq!(r.status(), 200);
    let second_id = r.headers()["x-request-id"]
        .to_str()
        .expect("id")
        .to_string();
    let _ = r.text().await.expect("stream body");
    let sent = fx.requests();
    assert!(
        sent[1]["body"].get("session_id").is_none(),
        "the session field does not go upstream"
    );
    messages.push(json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_w1", "type": "function",
         "function": {"name": "weather", "arguments": "{\"city\":\"Paris\"}"}}]}));
    messages.push(json!({"role": "tool", "tool_call_id": "call_w1", "content": "sunny"}));
    let third = chat(
        &api,
        Some("chat_e2e"),
        json!({"model": "oai/gpt-fix", "messages": messages, "tools": tools}),
    )
    .await;
    assert_eq!(third.status, 200, "{}", third.body);

    let s = api.get("/hecate/v1/chat/sessions/chat_e2e").await;
    assert_eq!(s.status, 200, "{}", s.body);
    assert_eq!(s.body["object"], "chat_session");
    assert_eq!(
        roles(&s.body),
        [
            "system",
            "user",
            "assistant",
            "user",
            "assistant",
            "tool",
            "assistant"
        ]
    );
    let msgs = s.body["data"]["messages"].as_array().expect("messages");
    let seqs: Vec<i64> = msgs.iter().filter_map(|m| m["sequence"].as_i64()).collect();
    assert_eq!(seqs, [0, 1, 2, 3, 4, 5, 6]);
    assert_eq!(msgs[2]["content"], "Hello.");
    assert_eq!(msgs[4]["tool_calls"][0]["id"], "call_w1");
    assert_eq!(
        json_of(msgs[4]["tool_calls"][0]["function"]["arguments"].as_str()),
        json!({"city": "Paris"})
    );
    assert_eq!(msgs[6]["content"], "It is sunny in Paris.");
    let calls = s.body["data"]["provider_calls"].as_array().expect("calls");
    assert_eq!(calls.len(), 3);
    for (m, c) in [(2, 0), (4, 1), (6, 2)] {
        assert_eq!(msgs[m]["produced_by_call_id"], calls[c]["id"]);
    }
    for m in [0, 1, 3, 5] {
        assert!(msgs[m].get("produced_by_call_id").is_none(), "{}", msgs[m]);
    }
    assert_eq!(
        calls[0]["request_id"].as_str(),
        first.header("x-request-id")
    );
    assert_eq!(calls[1]["request_id"], second_id.as_str());
    assert_eq!(calls[2]["provider"], "oai");
    assert_eq!(calls[2]["model"], "gpt-fix");
    assert_eq!(calls[2]["outcome"], "completed");
    let tokens = calls[0]["total_tokens"].as_i64().expect("tokens");
    assert!(tokens > 0);
    assert_eq!(
        calls[0]["cost_micros_usd"].as_i64(),
        Some(tokens * 1_000_000)
    );

    let replay = api.get("/hecate/v1/chat/sessions/chat_e2e/replay").await;
    assert_eq!(replay.status, 200, "{}", replay.body);
    let replayed = replay.body["data"]["messages"].as_array().expect("replay");
    assert_eq!(replayed.len(), 7);
    assert_eq!(replayed[5]["tool_call_id"], "call_w1");

    // A history that does not continue the session is refused, nothing written.
    let wrong = chat(
        &api,
        Some("chat_e2e"),
        json!({"model": "oai/gpt-fix",
               "messages": [{"role": "user", "content": "something else"}]}),
    )
    .await;
    assert_eq!(wrong.status, 409, "{}", wrong.body);
    assert_eq!(wrong.body["error"]["code"], "chat_session_history_mismatch");
    assert_eq!(
        fx.requests().len(),
        3,
        "a refused request is not sent upstream"
    );

    let list = api.get("/hecate/v1/chat/sessions").await;
    assert_eq!(list.status, 200, "{}", list.body);
    let row = &list.body["data"][0];
    assert_eq!(row["id"], "chat_e2e");
    assert_eq!(
        (
            row["message_count"].as_i64(),
            row["provider_call_count"].as_i64()
        ),
        (Some(7), Some(3))
    );
    assert_eq!(
        row["last_request_id"].as_str(),
        third.header("x-request-id")
    );
    assert_eq!(row["last_model"], "gpt-fix");

    let d = api.delete("/hecate/v1/chat/sessions/chat_e2e").await;
    assert_eq!(d.status, 200, "{}", d.body);
    assert_eq!(d.body["data"]["deleted"], true);
    for path in [
        "/hecate/v1/chat/sessions/chat_e2e",
        "/hecate/v1/chat/sessions/chat_e2e/replay",
    ] {
        let gone = api.get(path).await;
        assert_eq!(gone.status, 404, "{path}: {}", gone.body);
        assert_eq!(gone.error_type(), "not_found");
    }
    assert_eq!(
        api.delete("/hecate/v1/chat/sessions/chat_e2e").await.status,
        404
    );
}

fn json_of(s: Option<&str>) -> Value {
    s.and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn requests_without_a_session_leave_a_trace_tied_to_their_ids() {
    let fx = ModelServer::start(Some(json!([
        {"text": "one", "repeat": true},
    ])));
    let (_h, _s, api) = gateway_with(&fx, &[]);
    let a = chat(
        &api,
        None,
        json!({"model": "gpt-fix", "messages": [{"role": "user", "content": "x"}]}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let request_id = a.header("x-request-id").expect("request id").to_string();
    let trace_id = a.header("x-trace-id").expect("trace id").to_string();
    let b = api
        .send(
            api.request(reqwest::Method::POST, "/v1/messages")
                .header("anthropic-version", "2023-06-01")
                .header("x-hecate-session-id", "chat_traced")
                .json(&json!({"model": "ant/claude-fix", "max_tokens": 20,
                              "messages": [{"role": "user", "content": "y"}]})),
        )
        .await;
    assert_eq!(b.status, 200, "{}", b.body);

    let t = api
        .get(&format!("/hecate/v1/traces?request_id={request_id}"))
        .await;
    assert_eq!(t.status, 200, "{}", t.body);
    assert_eq!(t.body["object"], "traces");
    let traces = t.body["data"].as_array().expect("traces");
    assert_eq!(traces.len(), 1, "{}", t.body);
    let tr = &traces[0];
    assert_eq!(tr["trace_id"], trace_id.as_str());
    assert_eq!(tr["client_format"], "openai");
    assert_eq!(tr["requested_model"], "gpt-fix");
    assert_eq!(
        (tr["provider"].as_str(), tr["model"].as_str()),
        (Some("oai"), Some("gpt-fix"))
    );
    assert_eq!(tr["status"], "completed");
    assert!(tr["session_id"].is_null());
    let tokens = tr["total_tokens"].as_i64().expect("tokens");
    assert!(tokens > 0);
    assert_eq!(tr["cost_micros_usd"].as_i64(), Some(tokens * 1_000_000));
    assert!(tr["duration_ms"].as_i64().is_some());

    let by_session = api.get("/hecate/v1/traces?session_id=chat_traced").await;
    let rows = by_session.body["data"].as_array().expect("rows");
    assert_eq!(rows.len(), 1, "{}", by_session.body);
    assert_eq!(rows[0]["client_format"], "anthropic");
    assert_eq!(rows[0]["provider"], "ant");
    assert!(
        rows[0]["cost_micros_usd"].is_null(),
        "claude-fix has no price"
    );

    let all = api.get("/hecate/v1/traces").await;
    assert_eq!(all.body["data"].as_array().map(Vec::len), Some(2));
    let started = tr["started_at"].as_str().expect("started_at");
    let since = api
        .get(&format!("/hecate/v1/traces?since={started}&limit=10"))
        .await;
    assert_eq!(since.body["data"].as_array().map(Vec::len), Some(2));
    let before = api.get(&format!("/hecate/v1/traces?until={started}")).await;
    assert_eq!(before.body["data"].as_array().map(Vec::len), Some(0));
    let page = api.get("/hecate/v1/traces?limit=1&offset=1").await;
    assert_eq!(page.body["data"][0]["request_id"], request_id.as_str());
    let bad = api.get("/hecate/v1/traces?since=yesterday").await;
    assert_eq!(bad.status, 400, "{}", bad.body);

    let sessions = api.get("/hecate/v1/chat/sessions").await;
    let ids: Vec<&str> = sessions.body["data"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        ["chat_traced"],
        "only the request with a session made one"
    );

    // The process's totals count both requests, their tokens and the priced cost.
    let stats = api.get("/hecate/v1/system/stats").await;
    assert_eq!(stats.status, 200, "{}", stats.body);
    let g = &stats.body["data"]["gateway"];
    assert_eq!(
        (
            &g["requests"],
            &g["completed"],
            &g["failed"],
            &g["cancelled"]
        ),
        (&json!(2), &json!(2), &json!(0), &json!(0)),
        "{g}"
    );
    let counted = g["prompt_tokens"].as_i64().expect("prompt")
        + g["completion_tokens"].as_i64().expect("completion");
    let other = rows[0]["total_tokens"].as_i64().expect("tokens");
    assert_eq!(counted, tokens + other, "{g}");
    assert_eq!(
        g["cost_micros_usd"].as_i64(),
        Some(tokens * 1_000_000),
        "{g}"
    );
}

#[tokio::test]
async fn a_failing_upstream_leaves_no_half_exchange() {
    let fx = ModelServer::start(Some(json!([
        {"match": {"contains": "explode"}, "repeat": true, "status": 500,
         "error_message": "upstream exploded"},
    ])));
    let (_h, _s, api) = gateway_with(&fx, &[]);
    let a = chat(
        &api,
        Some("chat_fail"),
        json!({"model": "oai/gpt-fix", "messages": [{"role": "user", "content": "explode"}]}),
    )
    .await;
    assert_eq!(a.status, 502, "{}", a.body);
    assert_eq!(
        api.get("/hecate/v1/chat/sessions/chat_fail").await.status,
        404,
        "the session was not created"
    );
    let request_id = a.header("x-request-id").expect("id");
    let t = api
        .get(&format!("/hecate/v1/traces?request_id={request_id}"))
        .await;
    let tr = &t.body["data"][0];
    assert_eq!(tr["status"], "failed", "{}", t.body);
    assert_eq!(tr["session_id"], "chat_fail");
    assert_eq!(tr["error_type"], "gateway_error");
    assert_eq!(tr["provider"], "oai");
}

#[tokio::test]
async fn a_client_that_goes_away_mid_stream_is_recorded_as_a_partial_answer() {
    let words: Vec<String> = (0..600).map(|i| format!("w{i}")).collect();
    let fx = ModelServer::start(Some(json!([
        {"text": words.join(" "), "chunk_delay_ms": 100},
    ])));
    let (_h, _s, api) = gateway_with(&fx, &[]);
    let r = api
        .request(reqwest::Method::POST, "/v1/chat/completions")
        .header("x-hecate-session-id", "chat_cut")
        .json(&json!({"model": "oai/gpt-fix", "stream": true,
                      "messages": [{"role": "user", "content": "long answer"}]}))
        .send()
        .await
        .expect("stream");
    let mut events = r.bytes_stream().eventsource();
    for _ in 0..3 {
        events.next().await.expect("an event").expect("event");
    }
    drop(events);
    // The partial exchange is written once the gateway notices the drop.
    let session = recorded_chat_session(&api, "chat_cut").await;
    assert_eq!(roles(&session.body), ["user", "assistant"]);
    let answer = &session.body["data"]["messages"][1];
    assert_eq!(answer["partial"], true);
    assert!(
        answer["content"]
            .as_str()
            .is_some_and(|t| t.starts_with("w0")),
        "{answer}"
    );
    assert_eq!(
        session.body["data"]["provider_calls"][0]["outcome"],
        "cancelled"
    );
    let replay = api.get("/hecate/v1/chat/sessions/chat_cut/replay").await;
    assert_eq!(
        replay.body["data"]["messages"].as_array().map(Vec::len),
        Some(1),
        "a cut-off answer is not replayed"
    );
}

#[tokio::test]
async fn over_the_rate_limit_requests_get_429_with_the_rate_limit_headers() {
    let fx = ModelServer::start(Some(json!([{"text": "ok", "repeat": true}])));
    let (_h, _s, api) = gateway_with(&fx, &[("HECATE_GATEWAY_RATE_LIMIT_RPM", "2")]);
    let body = json!({"model": "oai/gpt-fix", "messages": [{"role": "user", "content": "x"}]});
    let first = chat(&api, None, body.clone()).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.header("x-ratelimit-limit"), Some("2"));
    assert_eq!(first.header("x-ratelimit-remaining"), Some("1"));
    assert!(
        first
            .header("x-ratelimit-reset")
            .and_then(|r| r.parse::<u64>().ok())
            .is_some_and(|r| r > 1_700_000_000)
    );
    let second = chat(&api, None, body.clone()).await;
    assert_eq!(second.status, 200, "{}", second.body);
    assert_eq!(second.header("x-ratelimit-remaining"), Some("0"));
    let refused = chat(&api, None, body).await;
    assert_eq!(refused.status, 429, "{}", refused.body);
    assert_eq!(refused.body["error"]["code"], "rate_limit_exceeded");
    assert_eq!(refused.body["error"]["type"], "rate_limit_error");
    assert!(
        refused
            .header("retry-after")
            .is_some_and(|r| r.parse::<u64>().is_ok_and(|s| s >= 1))
    );
    assert_eq!(refused.header("x-ratelimit-limit"), Some("2"));
    assert!(refused.header("x-request-id").is_some());
    let anthropic = api
        .send(
            api.request(reqwest::Method::POST, "/v1/messages")
                .header("anthropic-version", "2023-06-01")
                .json(&json!({"model": "ant/claude-fix", "max_tokens": 5,
                              "messages": [{"role": "user", "content": "x"}]})),
        )
        .await;
    assert_eq!(anthropic.status, 429, "{}", anthropic.body);
    assert_eq!(anthropic.body["type"], "error");
    assert_eq!(anthropic.body["error"]["type"], "rate_limit_error");
    assert_eq!(anthropic.body["error"]["code"], "rate_limit_exceeded");
    assert_eq!(
        fx.requests().len(),
        2,
        "refused requests never went upstream"
    );
}

#[tokio::test]
async fn without_a_configured_limit_the_headers_are_zero() {
    let fx = ModelServer::start(None);
    let (_h, _s, api) = gateway_with(&fx, &[]);
    let a = api.get("/v1/models").await;
    assert_eq!(a.status, 200);
    for h in [
        "x-ratelimit-limit",
        "x-ratelimit-remaining",
        "x-ratelimit-reset",
    ] {
        assert_eq!(a.header(h), Some("0"), "{h}");
    }
}

#[tokio::test]
async fn recorded_chat_sessions_are_listed_by_the_mcp_tool_and_the_cli() {
    let fx = ModelServer::start(Some(json!([{"text": "hi there", "repeat": true}])));
    let (home, _s, api) = gateway_with(&fx, &[]);
    let a = chat(
        &api,
        Some("chat_mcp"),
        json!({"model": "oai/gpt-fix", "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let mut mcp = McpProc::start(&home, json!({}));
    let listed = mcp.call_ok("list_chat_sessions", json!({"limit": 5}));
    let row = &listed["structuredContent"]["chat_sessions"][0];
    assert_eq!(row["id"], "chat_mcp", "{listed}");
    assert_eq!(row["message_count"], 2);
    assert_eq!(row["provider_call_count"], 1);
    assert_eq!(row["last_provider"], "oai");
    assert_eq!(row["last_request_id"].as_str(), a.header("x-request-id"));
    let strict = mcp.call("list_chat_sessions", json!({"limit": 5, "kind": "chat"}));
    assert_eq!(
        strict["result"]["isError"], true,
        "unknown arguments are refused: {strict}"
    );

    let cli = home.json(&["chat-sessions", "list", "--format", "json"]);
    assert_eq!(cli["object"], "chat_sessions");
    assert_eq!(cli["data"][0]["id"], "chat_mcp");
    let shown = home.json(&["chat-sessions", "show", "chat_mcp", "--format", "json"]);
    assert_eq!(shown["data"]["messages"][1]["content"], "hi there");
    let aliased = home.json(&["conversations", "show", "chat_mcp", "--format", "json"]);
    assert_eq!(
        aliased, shown,
        "`hecate conversations` is `hecate chat-sessions`"
    );
    let text = home.run(&["chat-sessions", "show", "chat_mcp"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("[1] assistant: hi there"), "{text}");
    assert!(
        home.run(&["chat-sessions", "delete", "chat_mcp"])
            .status
            .success()
    );
    let gone = home.run(&["chat-sessions", "show", "chat_mcp"]);
    assert!(!gone.status.success(), "a deleted session is not found");
}

#[tokio::test]
async fn anthropic_streams_are_recorded_in_the_openai_shape_either_way() {
    let fx = ModelServer::start(Some(json!([
        {"match": {"api": "anthropic"}, "text": "passed through", "repeat": true},
        {"match": {"api": "openai_chat"}, "text": "translated", "repeat": true},
    ])));
    let (_h, _s, api) = gateway_with(&fx, &[]);
    for (model, session, text) in [
        ("ant/claude-fix", "chat_pass", "passed through"),
        ("oai/gpt-fix", "chat_translated", "translated"),
    ] {
        let r = api
            .request(reqwest::Method::POST, "/v1/messages")
            .header("anthropic-version", "2023-06-01")
            .header("x-hecate-session-id", session)
            .json(&json!({"model": model, "max_tokens": 50, "stream": true,
                          "system": "Be brief.",
                          "messages": [{"role": "user", "content": "hi"}]}))
            .send()
            .await
            .expect("stream");
        assert_eq!(r.status(), 200);
        let _ = r.text().await.expect("body");
        let s = api
            .get(&format!("/hecate/v1/chat/sessions/{session}"))
            .await;
        assert_eq!(s.status, 200, "{session}: {}", s.body);
        assert_eq!(roles(&s.body), ["system", "user", "assistant"], "{session}");
        let answer = &s.body["data"]["messages"][2];
        assert_eq!(answer["content"], text, "{session}: {answer}");
        assert!(answer.get("partial").is_none());
        let call = &s.body["data"]["provider_calls"][0];
        assert_eq!(call["outcome"], "completed");
        assert!(
            call["completion_tokens"].as_i64().is_some_and(|t| t > 0),
            "{call}"
        );
    }
}

/// Traces are stored just after their answers, journalled first: a `hecate
/// serve` killed before it stored them loses none, because the next process on
/// the data directory replays its journal; a clean stop leaves no journal.
#[tokio::test]
async fn traces_answered_before_a_kill_are_stored_by_the_next_process() {
    let fx = ModelServer::start(Some(json!([{"text": "ok", "repeat": true}])));
    let home = Home::with_both_kinds(&fx);
    // The writer stores the first batch, then waits ten minutes for the next.
    home.write_config("[store]\nwrite_gather_ms = 600000\n");
    let served = serve(&home);
    let api = Api::new(&served);
    let mut expected = Vec::new();
    for i in 0..4 {
        let id = format!("before-kill-{i}");
        let r = api
            .send(
                api.request(reqwest::Method::POST, "/v1/chat/completions")
                    .header("x-request-id", &id)
                    .json(&json!({"model": "oai/gpt-fix", "stream": i == 3,
                                  "messages": [{"role": "user", "content": format!("n{i}")}]})),
            )
            .await;
        assert_eq!(r.status, 200, "{id}: {}", r.body);
        expected.push((id, "completed"));
    }
    let missing = api
        .send(
            api.request(reqwest::Method::POST, "/v1/chat/completions")
                .header("x-request-id", "before-kill-missing")
                .json(
                    &json!({"model": "oai/nope", "messages": [{"role": "user", "content": "x"}]}),
                ),
        )
        .await;
    assert_eq!(missing.status, 404, "{}", missing.body);
    expected.push(("before-kill-missing".into(), "failed"));
    // Once the first batch is stored, the writer waits ten minutes: a trace
    // answered after that can only be in the journal when the process dies.
    let db = rusqlite::Connection::open(home.data_dir().join("hecate.db")).expect("open db");
    let stored_now = || -> usize {
        db.query_row("SELECT COUNT(*) FROM gateway_traces", [], |r| {
            r.get::<_, i64>(0)
        })
        .map_or(0, |n| n as usize)
    };
    for i in 0.. {
        if stored_now() > 0 {
            break;
        }
        assert!(i < 600, "the first batch was never stored");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let late = api
        .send(
            api.request(reqwest::Method::POST, "/v1/chat/completions")
                .header("x-request-id", "before-kill-late")
                .json(&json!({"model": "oai/gpt-fix",
                              "messages": [{"role": "user", "content": "late"}]})),
        )
        .await;
    assert_eq!(late.status, 200, "{}", late.body);
    expected.push(("before-kill-late".into(), "completed"));
    let journalled: usize = journal_files(&home.data_dir(), "traces")
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("journal").lines().count())
        .sum();
    assert!(journalled >= 1, "the late trace waits in the journal");
    // Nothing answered is lost: each trace is stored or journalled (one whose
    // batch is being written may briefly be both).
    assert!(
        journalled + stored_now() >= expected.len(),
        "every answered trace is stored or journalled: {journalled} journalled"
    );
    drop(served); // SIGKILL

    let mut again = serve(&home);
    let api = Api::new(&again);
    let traces = api.get("/hecate/v1/traces?limit=50").await;
    assert_eq!(traces.status, 200, "{}", traces.body);
    let stored: Vec<(String, String)> = traces.body["data"]
        .as_array()
        .expect("traces")
        .iter()
        .map(|t| {
            (
                t["request_id"].as_str().unwrap_or("?").to_string(),
                t["status"].as_str().unwrap_or("?").to_string(),
            )
        })
        .collect();
    for (id, status) in &expected {
        assert!(
            stored.iter().any(|(i, s)| i == id && s == status),
            "{id} {status} not in {stored:?}"
        );
    }
    assert_eq!(stored.len(), expected.len(), "each trace once: {stored:?}");
    let exited = again.stop_gracefully();
    assert!(exited.is_some_and(|st| st.success()), "{exited:?}");
    assert!(
        journal_files(&home.data_dir(), "").is_empty(),
        "a clean stop leaves no journal: {:?}",
        journal_files(&home.data_dir(), "")
    );
}

/// The files of kind `kind` (every file, for "") in the journals under `data`.
fn journal_files(data: &std::path::Path, kind: &str) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(stores) = std::fs::read_dir(data.join("journal")) else {
        return out;
    };
    for store in stores.flatten() {
        for process in std::fs::read_dir(store.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            for f in std::fs::read_dir(process.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let name = f.file_name().to_string_lossy().to_string();
                if name.starts_with(kind) && name != "lock" || kind.is_empty() {
                    out.push(f.path());
                }
            }
        }
    }
    out
}

/// A chat session made ahead (`POST /hecate/v1/chat/sessions`) gives its system
/// prompt to each request of the session that has none of its own, in every
/// client format, without recording the prompt as a message; the client may
/// send the prompt back as its first message and the history still matches.
/// `PATCH` changes the title and the prompt for the next request.
#[tokio::test]
async fn a_session_made_ahead_puts_its_system_prompt_in_front_of_each_request() {
    let fx = ModelServer::start(Some(json!([{"text": "Bonjour.", "repeat": true}])));
    let (_h, _s, api) = gateway_with(&fx, &[]);
    let made = api
        .post(
            "/hecate/v1/chat/sessions",
            json!({"id": "chat_fr", "title": "French", "system_prompt": "Answer in French."}),
        )
        .await;
    assert_eq!(made.status, 200, "{}", made.body);
    assert_eq!(made.body["data"]["title"], "French");
    assert_eq!(made.body["data"]["messages"], json!([]));
    let again = api
        .post("/hecate/v1/chat/sessions", json!({"id": "chat_fr"}))
        .await;
    assert_eq!(again.status, 409, "{}", again.body);
    let generated = api
        .post("/hecate/v1/chat/sessions", json!({"title": "no id"}))
        .await;
    assert_eq!(generated.status, 200, "{}", generated.body);
    assert!(
        generated.body["data"]["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("chat_")),
        "{}",
        generated.body
    );
    for (body, field) in [
        (json!({"id": "bad id!"}), "id"),
        (json!({"title": 5}), "title"),
        (json!({"prompt": "x"}), "prompt"),
    ] {
        let r = api.post("/hecate/v1/chat/sessions", body.clone()).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        assert!(r.body.to_string().contains(field), "{field}: {}", r.body);
    }

    // OpenAI: the prompt goes in front; the recorded messages do not hold it.
    let mut messages = vec![json!({"role": "user", "content": "hello"})];
    let first = chat(
        &api,
        Some("chat_fr"),
        json!({"model": "oai/gpt-fix", "messages": messages}),
    )
    .await;
    assert_eq!(first.status, 200, "{}", first.body);
    messages.push(first.body["choices"][0]["message"].clone());
    messages.push(json!({"role": "user", "content": "and now?"}));
    // The client sends the prompt back itself: matched, not recorded.
    let mut with_prompt = vec![json!({"role": "system", "content": "Answer in French."})];
    with_prompt.extend(messages.iter().cloned());
    let second = chat(
        &api,
        Some("chat_fr"),
        json!({"model": "oai/gpt-fix", "messages": with_prompt}),
    )
    .await;
    assert_eq!(second.status, 200, "{}", second.body);
    // Anthropic, after the prompt changed: the new one goes in `system`.
    let patched = api
        .send(
            api.request(reqwest::Method::PATCH, "/hecate/v1/chat/sessions/chat_fr")
                .json(&json!({"title": "Français", "system_prompt": "Réponds en français."})),
        )
        .await;
    assert_eq!(patched.status, 200, "{}", patched.body);
    assert_eq!(patched.body["data"]["title"], "Français");
    assert_eq!(
        patched.body["data"]["system_prompt"],
        "Réponds en français."
    );
    messages.push(second.body["choices"][0]["message"].clone());
    messages.push(json!({"role": "user", "content": "merci"}));
    let third = api
        .send(
            api.request(reqwest::Method::POST, "/v1/messages")
                .header("anthropic-version", "2023-06-01")
                .header("x-hecate-session-id", "chat_fr")
                .json(&json!({"model": "ant/claude-fix", "max_tokens": 50,
                    "messages": messages.iter().map(|m| json!({
                        "role": m["role"], "content": m["content"]})).collect::<Vec<_>>()})),
        )
        .await;
    assert_eq!(third.status, 200, "{}", third.body);
    // A request with a system message of its own keeps it.
    let own = chat(
        &api,
        Some("chat_own"),
        json!({"model": "oai/gpt-fix", "messages": [{"role": "user", "content": "x"}]}),
    )
    .await;
    assert_eq!(own.status, 200, "{}", own.body);

    let sent = fx.requests();
    assert_eq!(sent.len(), 4, "{sent:?}");
    assert_eq!(
        sent[0]["body"]["messages"],
        json!([{"role": "system", "content": "Answer in French."},
               {"role": "user", "content": "hello"}])
    );
    assert_eq!(
        sent[1]["body"]["messages"][0],
        json!({"role": "system", "content": "Answer in French."}),
        "not put in twice"
    );
    assert_eq!(
        sent[1]["body"]["messages"].as_array().map(Vec::len),
        Some(4)
    );
    assert_eq!(sent[2]["api"], "anthropic");
    assert_eq!(sent[2]["body"]["system"], "Réponds en français.");
    assert!(
        sent[3]["body"]["messages"][0]["role"] == "user",
        "a session without a prompt sends none: {}",
        sent[3]["body"]
    );
    let s = api.get("/hecate/v1/chat/sessions/chat_fr").await;
    assert_eq!(
        roles(&s.body),
        [
            "user",
            "assistant",
            "user",
            "assistant",
            "user",
            "assistant"
        ],
        "the prompt is not a message of the session: {}",
        s.body
    );
    let unknown = api
        .send(
            api.request(reqwest::Method::PATCH, "/hecate/v1/chat/sessions/chat_nope")
                .json(&json!({"title": "x"})),
        )
        .await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    let empty = api
        .send(
            api.request(reqwest::Method::PATCH, "/hecate/v1/chat/sessions/chat_fr")
                .json(&json!({})),
        )
        .await;
    assert_eq!(empty.status, 400, "{}", empty.body);
}
