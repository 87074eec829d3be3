//! The model gateway (`/v1`) over the real `hecate serve` and the fixture model
//! server configured as both kinds of provider (`oai`: OpenAI-compatible, `ant`:
//! Anthropic): the model list in both shapes, same-format requests passed
//! through and cross-format requests translated (streaming and not, tool calls
//! included), errors in the client's shape with Hecate's envelope fields, the
//! token, and a client that goes away mid-stream cancelling the upstream call.

use crate::support::common::{Home, ModelServer};
use crate::support::http::{Answer, Api, Served, serve};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value, json};
use std::time::Duration;

fn gateway(fixture: &ModelServer) -> (Home, Served, Api) {
    gateway_with(fixture, &[])
}

fn gateway_with(fixture: &ModelServer, env: &[(&str, &str)]) -> (Home, Served, Api) {
    let mut home = Home::with_both_kinds(fixture);
    for (k, v) in env {
        home.set(k, v);
    }
    let served = serve(&home);
    let api = Api::new(&served);
    (home, served, api)
}

/// Posts `body` to `path` and reads every SSE event: `(event name, data)`.
async fn stream(api: &Api, path: &str, body: Value) -> Vec<(String, String)> {
    api.post_sse(path, &[("anthropic-version", "2023-06-01")], &body)
        .await
}

fn json_of(data: &str) -> Value {
    serde_json::from_str(data).unwrap_or(Value::Null)
}

/// The text of OpenAI chunks, joined.
fn openai_text(events: &[(String, String)]) -> String {
    events
        .iter()
        .filter_map(|(_, d)| {
            json_of(d)["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

/// The text of Anthropic `text_delta`s, joined.
fn anthropic_text(events: &[(String, String)]) -> String {
    events
        .iter()
        .filter_map(|(_, d)| {
            let v = json_of(d);
            (v["delta"]["type"] == "text_delta")
                .then(|| v["delta"]["text"].as_str().map(str::to_string))?
        })
        .collect()
}

async fn post_anthropic(api: &Api, body: Value) -> Answer {
    api.send(
        api.request(reqwest::Method::POST, "/v1/messages")
            .header("anthropic-version", "2023-06-01")
            .json(&body),
    )
    .await
}

#[tokio::test]
async fn models_are_listed_in_the_openai_and_the_anthropic_shape() {
    let fx = ModelServer::start(None);
    let (_h, _s, api) = gateway(&fx);
    let a = api
        .send(
            api.request(reqwest::Method::GET, "/v1/models")
                .header("x-request-id", "req_client-1"),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.header("x-request-id"), Some("req_client-1"));
    assert!(a.header("x-trace-id").is_some_and(|t| t.len() == 32));
    assert_eq!(a.body["object"], "list");
    let ids: Vec<&str> = a.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    for id in [
        "oai/gpt-fix",
        "oai/shared",
        "ant/claude-fix",
        "ant/shared",
        "gpt-fix",
        "claude-fix",
    ] {
        assert!(ids.contains(&id), "{id} missing from {ids:?}");
    }
    assert!(
        !ids.contains(&"shared"),
        "an ambiguous bare id is not listed"
    );
    let a = api
        .send(
            api.request(reqwest::Method::GET, "/v1/models")
                .header("anthropic-version", "2023-06-01"),
        )
        .await;
    assert_eq!(a.body["has_more"], false);
    assert_eq!(a.body["data"][0]["type"], "model");
    assert_eq!(a.body["first_id"], "ant/claude-fix");
}

#[tokio::test]
async fn same_format_requests_pass_through_streaming_and_not() {
    let fx = ModelServer::start(None);
    let (_h, _s, api) = gateway_with(&fx, &[("HECATE_GATEWAY_DEFAULT_MODEL", "oai/gpt-fix")]);

    let a = api
        .post(
            "/v1/chat/completions",
            json!({"model": "gpt-fix", "seed": 7,
                   "messages": [{"role": "user", "content": "hi there"}]}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["object"], "chat.completion");
    assert_eq!(a.body["choices"][0]["message"]["content"], "echo: hi there");
    assert_eq!(a.header("x-hecate-provider"), Some("oai"));
    assert!(a.header("x-request-id").is_some());

    let events = stream(
        &api,
        "/v1/chat/completions",
        json!({"messages": [{"role": "user", "content": "by default"}], "stream": true,
               "stream_options": {"include_usage": true}}),
    )
    .await;
    assert_eq!(openai_text(&events), "echo: by default");
    assert_eq!(events.last().map(|e| e.1.as_str()), Some("[DONE]"));
    assert!(
        events
            .iter()
            .any(|(_, d)| json_of(d)["usage"]["completion_tokens"].is_u64())
    );

    let a = post_anthropic(
        &api,
        json!({"model": "ant/claude-fix", "max_tokens": 32,
               "messages": [{"role": "user", "content": "hello"}]}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["type"], "message");
    assert_eq!(a.body["content"][0]["text"], "echo: hello");

    let events = stream(
        &api,
        "/v1/messages",
        json!({"model": "claude-fix", "max_tokens": 32, "stream": true,
               "messages": [{"role": "user", "content": "streamed"}]}),
    )
    .await;
    assert_eq!(anthropic_text(&events), "echo: streamed");
    assert_eq!(events.last().map(|e| e.0.as_str()), Some("message_stop"));

    let sent = fx.requests();
    assert_eq!(sent.len(), 4);
    assert_eq!(sent[0]["body"]["model"], "gpt-fix");
    assert_eq!(sent[0]["body"]["seed"], 7, "unknown fields pass through");
    assert_eq!(sent[1]["body"]["model"], "gpt-fix", "the default model");
    assert_eq!(sent[2]["api"], "anthropic");
    assert_eq!(sent[2]["body"]["model"], "claude-fix");
    assert_eq!(sent[2]["headers"]["anthropic-version"], "2023-06-01");
}

#[tokio::test]
async fn cross_format_requests_are_translated_streaming_and_not() {
    let fx = ModelServer::start(None);
    let (_h, _s, api) = gateway(&fx);

    let a = api
        .post(
            "/v1/chat/completions",
            json!({"model": "ant/claude-fix", "max_tokens": 20, "stop": ["XYZ"],
                   "messages": [{"role": "system", "content": "be kind"},
                                {"role": "user", "content": "to anthropic"}]}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["object"], "chat.completion");
    assert_eq!(
        a.body["choices"][0]["message"]["content"],
        "echo: to anthropic"
    );
    assert_eq!(a.body["choices"][0]["finish_reason"], "stop");
    assert!(
        a.body["usage"]["prompt_tokens"]
            .as_u64()
            .is_some_and(|n| n > 0)
    );

    let events = stream(
        &api,
        "/v1/chat/completions",
        json!({"model": "claude-fix", "stream": true, "stream_options": {"include_usage": true},
               "messages": [{"role": "user", "content": "streamed across"}]}),
    )
    .await;
    assert_eq!(openai_text(&events), "echo: streamed across");
    let n = events.len();
    assert_eq!(events[n - 1].1, "[DONE]");
    let usage = json_of(&events[n - 2].1);
    assert!(
        usage["usage"]["completion_tokens"]
            .as_u64()
            .is_some_and(|t| t > 0),
        "{usage}"
    );
    assert!(
        events
            .iter()
            .any(|(_, d)| json_of(d)["choices"][0]["finish_reason"] == "stop")
    );

    let a = post_anthropic(
        &api,
        json!({"model": "oai/gpt-fix", "max_tokens": 20, "system": "be kind",
               "messages": [{"role": "user", "content": "to openai"}]}),
    )
    .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["type"], "message");
    assert_eq!(a.body["content"][0]["text"], "echo: to openai");
    assert_eq!(a.body["stop_reason"], "end_turn");

    let events = stream(
        &api,
        "/v1/messages",
        json!({"model": "gpt-fix", "max_tokens": 20, "stream": true,
               "messages": [{"role": "user", "content": "streamed back"}]}),
    )
    .await;
    assert_eq!(anthropic_text(&events), "echo: streamed back");
    let names: Vec<&str> = events.iter().map(|e| e.0.as_str()).collect();
    assert_eq!(names.first(), Some(&"message_start"));
    assert_eq!(&names[names.len() - 2..], ["message_delta", "message_stop"]);
    assert!(names.contains(&"content_block_start") && names.contains(&"content_block_stop"));
    let delta = json_of(&events[events.len() - 2].1);
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert!(
        delta["usage"]["output_tokens"]
            .as_u64()
            .is_some_and(|t| t > 0),
        "{delta}"
    );

    let sent = fx.requests();
    assert_eq!(sent[0]["api"], "anthropic");
    assert_eq!(sent[0]["body"]["system"], "be kind");
    assert_eq!(sent[0]["body"]["stop_sequences"], json!(["XYZ"]));
    assert_eq!(sent[2]["api"], "openai_chat");
    assert_eq!(
        sent[2]["body"]["messages"][0],
        json!({"role": "system", "content": "be kind"})
    );
    assert_eq!(sent[3]["body"]["stream_options"]["include_usage"], true);
}

#[tokio::test]
async fn tool_calls_round_trip_across_formats() {
    let fx = ModelServer::start(Some(json!([
        {"tool_calls": [{"id": "toolu_w1", "name": "weather", "arguments": {"city": "Paris"}}]},
        {"text": "It is sunny in Paris."},
        {"tool_calls": [{"id": "call_w2", "name": "weather", "arguments": {"city": "Oslo"}}]},
    ])));
    let (_h, _s, api) = gateway(&fx);
    let tools = json!([{"type": "function", "function": {"name": "weather",
        "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}}]);
    let mut messages = vec![json!({"role": "user", "content": "weather in Paris?"})];
    let a = api
        .post(
            "/v1/chat/completions",
            json!({"model": "ant/claude-fix", "messages": messages, "tools": tools,
                   "tool_choice": "auto"}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let choice = &a.body["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(call["id"], "toolu_w1");
    assert_eq!(call["function"]["name"], "weather");
    let args: Value = serde_json::from_str(call["function"]["arguments"].as_str().expect("args"))
        .expect("arguments are JSON");
    assert_eq!(args, json!({"city": "Paris"}));
    messages.push(choice["message"].clone());
    messages.push(json!({"role": "tool", "tool_call_id": "toolu_w1", "content": "sunny"}));
    let a = api
        .post(
            "/v1/chat/completions",
            json!({"model": "ant/claude-fix", "messages": messages, "tools": tools}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.body["choices"][0]["message"]["content"],
        "It is sunny in Paris."
    );
    let sent = fx.requests();
    assert_eq!(sent[0]["body"]["tools"][0]["name"], "weather");
    assert_eq!(
        sent[0]["body"]["tools"][0]["input_schema"]["type"],
        "object"
    );
    assert_eq!(sent[0]["body"]["tool_choice"], json!({"type": "auto"}));
    let history = &sent[1]["body"]["messages"];
    assert_eq!(history[1]["content"][0]["type"], "tool_use");
    assert_eq!(history[1]["content"][0]["input"], json!({"city": "Paris"}));
    assert_eq!(
        history[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_w1", "content": "sunny"})
    );

    // An Anthropic client streaming from the OpenAI-compatible provider.
    let events = stream(
        &api,
        "/v1/messages",
        json!({"model": "oai/gpt-fix", "max_tokens": 50, "stream": true,
               "tools": [{"name": "weather", "input_schema": {"type": "object"}}],
               "messages": [{"role": "user", "content": "weather in Oslo?"}]}),
    )
    .await;
    let start = events
        .iter()
        .map(|(_, d)| json_of(d))
        .find(|v| v["content_block"]["type"] == "tool_use")
        .expect("a tool_use block");
    assert_eq!(start["content_block"]["id"], "call_w2");
    assert_eq!(start["content_block"]["name"], "weather");
    let partial: String = events
        .iter()
        .filter_map(|(_, d)| {
            json_of(d)["delta"]["partial_json"]
                .as_str()
                .map(str::to_string)
        })
        .collect();
    assert_eq!(json_of(&partial), json!({"city": "Oslo"}));
    let delta = events
        .iter()
        .map(|(_, d)| json_of(d))
        .find(|v| v["type"] == "message_delta")
        .expect("message_delta");
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(
        fx.requests()[2]["body"]["tools"][0]["function"]["name"],
        "weather"
    );
}

#[tokio::test]
async fn errors_come_in_the_clients_shape_with_the_envelope_fields() {
    let fx = ModelServer::start(Some(json!([
        {"match": {"contains": "explode"}, "repeat": true, "status": 500,
         "error_message": "upstream exploded"},
        {"match": {"contains": "throttle"}, "repeat": true, "status": 429,
         "error_message": "slow down"},
        {"match": {"contains": "route me"}, "repeat": true, "text": "routed"},
    ])));
    let (_h, _s, api) = gateway_with(
        &fx,
        &[
            ("PROVIDER_DOWN_BASE_URL", "http://127.0.0.1:1/v1"),
            ("PROVIDER_DOWN_MODELS", "down-model"),
        ],
    );
    let chat = |model: &str, text: &str| json!({"model": model, "messages": [{"role": "user", "content": text}]});

    let a = api
        .send(
            api.request(reqwest::Method::POST, "/v1/chat/completions")
                .header("x-request-id", "req_err-1")
                .json(&chat("no-such-model", "hi")),
        )
        .await;
    assert_eq!(a.status, 404, "{}", a.body);
    let e = &a.body["error"];
    assert_eq!(e["type"], "invalid_request_error");
    assert_eq!(e["code"], "model_not_found");
    assert_eq!(e["param"], "model");
    assert_eq!(e["hecate_type"], "model_not_configured");
    assert_eq!(e["request_id"], "req_err-1");
    assert!(e["trace_id"].is_string() && e["user_message"].is_string());
    assert!(e["operator_action"].is_string());

    let a = post_anthropic(
        &api,
        json!({"model": "nope", "max_tokens": 5,
        "messages": [{"role": "user", "content": "x"}]}),
    )
    .await;
    assert_eq!(a.status, 404);
    assert_eq!(a.body["type"], "error");
    assert_eq!(a.body["error"]["type"], "not_found_error");
    assert!(a.body["error"]["request_id"].is_string());

    // A bare model several providers serve is routed to the first of them,
    // the others kept as fallbacks (gateway_routing.rs tests the failover).
    let a = api
        .post("/v1/chat/completions", chat("shared", "route me"))
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.header("x-hecate-provider"), Some("ant"));

    let r = api
        .request(reqwest::Method::POST, "/v1/messages")
        .header("content-type", "application/json")
        .body("{not json");
    let a = api.send(r).await;
    assert_eq!(a.status, 400);
    assert_eq!(a.body["error"]["type"], "invalid_request_error");
    let a = api
        .post("/v1/chat/completions", json!({"model": "gpt-fix"}))
        .await;
    assert_eq!(a.status, 400);
    assert!(
        a.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("messages"))
    );

    let a = api
        .post("/v1/chat/completions", chat("oai/gpt-fix", "explode"))
        .await;
    assert_eq!(a.status, 502, "{}", a.body);
    assert_eq!(a.body["error"]["upstream_status"], 500);
    assert_eq!(a.body["error"]["provider"], "oai");
    let a = post_anthropic(
        &api,
        json!({"model": "gpt-fix", "max_tokens": 5,
        "messages": [{"role": "user", "content": "explode"}]}),
    )
    .await;
    assert_eq!(a.status, 502);
    assert_eq!(a.body["error"]["type"], "api_error");

    let a = api
        .post("/v1/chat/completions", chat("ant/claude-fix", "throttle"))
        .await;
    assert_eq!(a.status, 429, "{}", a.body);
    assert_eq!(a.header("retry-after"), Some("1"));
    assert_eq!(a.body["error"]["type"], "rate_limit_error");
    assert_eq!(a.body["error"]["code"], "provider_rate_limited");

    let a = api
        .post("/v1/chat/completions", chat("down/down-model", "hi"))
        .await;
    assert_eq!(a.status, 502, "{}", a.body);
    assert_eq!(a.body["error"]["code"], "provider_unreachable");

    let a = api.get("/v1/nothing-here").await;
    assert_eq!(a.status, 404);
    assert_eq!(a.body["error"]["type"], "invalid_request_error");
}

#[tokio::test]
async fn the_server_token_is_required_as_bearer_or_x_api_key() {
    let fx = ModelServer::start(None);
    let (_h, _s, api) = gateway_with(&fx, &[("HECATE_TOKEN", "gw-s3cret")]);
    let body = json!({"model": "gpt-fix", "messages": [{"role": "user", "content": "hi"}]});
    let a = api.post("/v1/chat/completions", body.clone()).await;
    assert_eq!(a.status, 401);
    assert_eq!(a.body["error"]["code"], "invalid_api_key");
    assert!(a.body["error"]["request_id"].is_string());
    let a = api.clone().with_token("wrong").get("/v1/models").await;
    assert_eq!(a.status, 401);
    let a = post_anthropic(
        &api,
        json!({"model": "claude-fix", "max_tokens": 5,
        "messages": [{"role": "user", "content": "hi"}]}),
    )
    .await;
    assert_eq!(a.status, 401);
    assert_eq!(a.body["error"]["type"], "authentication_error");
    let a = api
        .send(
            api.request(reqwest::Method::POST, "/v1/messages")
                .header("anthropic-version", "2023-06-01")
                .header("x-api-key", "gw-s3cret")
                .json(&json!({"model": "claude-fix", "max_tokens": 5,
                              "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let a = api
        .clone()
        .with_token("gw-s3cret")
        .post("/v1/chat/completions", body)
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
}

/// Established TCP connections whose local port is `port` (Linux `/proc/net/tcp`).
fn established_on(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            cols.len() > 3
                && cols[3] == "01"
                && cols[1].rsplit(':').next() == Some(&format!("{port:04X}"))
        })
        .count()
}

#[tokio::test]
async fn a_client_that_goes_away_mid_stream_cancels_the_upstream_request() {
    let words: Vec<String> = (0..600).map(|i| format!("w{i}")).collect();
    let fx = ModelServer::start(Some(json!([
        {"text": words.join(" "), "chunk_delay_ms": 100},
    ])));
    let port: u16 = fx
        .base
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("port");
    let (_h, _s, api) = gateway(&fx);
    let r = api
        .request(reqwest::Method::POST, "/v1/messages")
        .header("anthropic-version", "2023-06-01")
        .json(
            &json!({"model": "oai/gpt-fix", "max_tokens": 5000, "stream": true,
                      "messages": [{"role": "user", "content": "long answer"}]}),
        )
        .send()
        .await
        .expect("stream");
    let mut events = r.bytes_stream().eventsource();
    let mut seen = 0;
    while seen < 3 {
        events.next().await.expect("an event").expect("event");
        seen += 1;
    }
    assert_eq!(
        established_on(port),
        1,
        "one upstream connection while streaming"
    );
    drop(events);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while established_on(port) > 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the upstream connection outlived the client (the stream runs for a minute)"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
