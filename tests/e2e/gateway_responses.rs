//! The OpenAI Responses API on the model gateway (`POST /v1/responses`) over
//! the real `hecate serve` and the fixture model server as both kinds of
//! provider (`oai`: OpenAI-compatible, `ant`: Anthropic): complete and
//! streamed text answers, a tool call round trip (`function_call` then
//! `function_call_output`), recording into a chat session named by header, a
//! trace per request, bad input answered 400 in the OpenAI shape naming the
//! field, and a client that goes away mid-stream recorded as a partial answer.

use crate::support::common::{Home, ModelServer};
use crate::support::http::{Api, Served, recorded_chat_session, serve};
use eventsource_stream::Eventsource;
use futures::StreamExt;
use serde_json::{Value, json};

fn gateway(fixture: &ModelServer) -> (Home, Served, Api) {
    let home = Home::with_both_kinds(fixture);
    let served = serve(&home);
    let api = Api::new(&served);
    (home, served, api)
}

/// Posts a streamed Responses request and reads every SSE event: `(event
/// name, data as JSON)`.
async fn stream(api: &Api, body: Value, headers: &[(&str, &str)]) -> Vec<(String, Value)> {
    api.post_sse("/v1/responses", headers, &body)
        .await
        .into_iter()
        .map(|(event, data)| {
            let data: Value = serde_json::from_str(&data).expect("every event's data is JSON");
            (event, data)
        })
        .collect()
}

/// Checks the shape every Responses stream has: each event named after its
/// `type`, numbered from 0, opened by `response.created` and
/// `response.in_progress`; answers the text deltas joined and the last event.
fn check_stream(events: &[(String, Value)]) -> (String, Value) {
    for (i, (name, data)) in events.iter().enumerate() {
        assert_eq!(data["type"], name.as_str(), "event {i}");
        assert_eq!(data["sequence_number"], i as u64, "event {i}");
    }
    let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names[..2],
        ["response.created", "response.in_progress"],
        "{names:?}"
    );
    let text = events
        .iter()
        .filter(|(n, _)| n == "response.output_text.delta")
        .filter_map(|(_, d)| d["delta"].as_str())
        .collect();
    let last = events.last().expect("events").1.clone();
    (text, last)
}

#[tokio::test]
async fn text_answers_come_as_a_response_and_as_its_event_stream_from_both_kinds() {
    let fx = ModelServer::start(Some(json!([
        {"match": {"api": "openai_chat", "stream": false}, "text": "plain from oai",
         "usage": {"input_tokens": 5, "output_tokens": 3}},
        {"match": {"api": "anthropic", "stream": false}, "text": "plain from ant",
         "usage": {"input_tokens": 6, "output_tokens": 3}},
        {"match": {"api": "openai_chat", "stream": true}, "text": "streamed from oai",
         "usage": {"input_tokens": 5, "output_tokens": 3}},
        {"match": {"api": "anthropic", "stream": true}, "text": "streamed from ant",
         "usage": {"input_tokens": 6, "output_tokens": 3}},
    ])));
    let (_h, _s, api) = gateway(&fx);
    for (model, provider, text, input) in [
        ("oai/gpt-fix", "oai", "plain from oai", 5),
        ("ant/claude-fix", "ant", "plain from ant", 6),
    ] {
        let a = api
            .post(
                "/v1/responses",
                json!({"model": model, "instructions": "be brief", "input": "hi",
                       "max_output_tokens": 100, "temperature": 0.5, "store": false,
                       "metadata": {"k": "v"}}),
            )
            .await;
        assert_eq!(a.status, 200, "{model}: {}", a.body);
        assert_eq!(a.header("x-hecate-provider"), Some(provider));
        let r = &a.body;
        assert!(
            r["id"].as_str().is_some_and(|i| i.starts_with("resp_")),
            "{r}"
        );
        assert_eq!(r["object"], "response");
        assert_eq!(r["status"], "completed");
        assert!(r["created_at"].is_u64());
        let item = &r["output"][0];
        assert_eq!(item["type"], "message");
        assert_eq!(item["role"], "assistant");
        assert_eq!(item["status"], "completed");
        assert_eq!(
            item["content"][0],
            json!({"type": "output_text", "text": text, "annotations": []})
        );
        assert_eq!(
            r["usage"]["total_tokens"],
            input + 3,
            "{model}: {}",
            r["usage"]
        );
    }
    let sent = fx.requests();
    assert_eq!(sent[0]["path"], "/v1/chat/completions");
    assert_eq!(
        sent[0]["body"]["messages"],
        json!([{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}])
    );
    assert_eq!(sent[0]["body"]["max_completion_tokens"], 100);
    assert!(sent[0]["body"].get("metadata").is_none());
    assert_eq!(sent[1]["path"], "/v1/messages");
    assert_eq!(sent[1]["body"]["system"], "be brief");
    assert_eq!(sent[1]["body"]["max_tokens"], 100);

    for (model, text, input) in [
        ("oai/gpt-fix", "streamed from oai", 5),
        ("ant/claude-fix", "streamed from ant", 6),
    ] {
        let events = stream(
            &api,
            json!({"model": model, "input": [{"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "hi"}]}], "stream": true}),
            &[],
        )
        .await;
        let (joined, last) = check_stream(&events);
        assert_eq!(joined, text, "{model}");
        let names: Vec<&str> = events.iter().map(|(n, _)| n.as_str()).collect();
        for name in [
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
        ] {
            assert!(names.contains(&name), "{model}: {name} in {names:?}");
        }
        let done = events
            .iter()
            .find(|(n, _)| n == "response.output_text.done")
            .expect("output_text.done");
        assert_eq!(done.1["text"], text);
        assert_eq!(last["type"], "response.completed", "{model}");
        let response = &last["response"];
        assert_eq!(response["status"], "completed");
        assert_eq!(response["output"][0]["content"][0]["text"], text);
        assert_eq!(response["usage"]["input_tokens"], input, "{model}");
        assert_eq!(response["usage"]["output_tokens"], 3, "{model}");
    }
    // The OpenAI-compatible provider was asked for the closing usage chunk.
    assert_eq!(
        fx.requests()[2]["body"]["stream_options"]["include_usage"],
        true
    );
}

#[tokio::test]
async fn a_tool_call_round_trips_through_both_kinds_and_is_recorded_in_a_session() {
    let mut steps = Vec::new();
    for (api, id) in [("openai_chat", "call_r1"), ("anthropic", "toolu_r1")] {
        steps.push(json!({"match": {"api": api, "contains": "Paris"},
            "tool_calls": [{"id": id, "name": "weather", "arguments": {"city": "Paris"}}]}));
        steps.push(json!({"match": {"api": api}, "text": "It is sunny in Paris."}));
    }
    let fx = ModelServer::start(Some(Value::Array(steps)));
    let (_h, _s, api) = gateway(&fx);
    let tools = json!([{"type": "function", "name": "weather",
        "description": "Weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}},
        {"type": "web_search_preview"}]);
    for (model, provider, stream_first) in [
        ("oai/gpt-fix", "oai", false),
        ("ant/claude-fix", "ant", true),
    ] {
        let session = format!("resp-{provider}");
        let question = json!({"type": "message", "role": "user",
                              "content": [{"type": "input_text", "text": "weather in Paris?"}]});
        let body = json!({"model": model, "input": [question], "tools": tools,
                          "tool_choice": "auto", "parallel_tool_calls": false,
                          "stream": stream_first});
        let call = if stream_first {
            let all = stream(&api, body, &[("x-hecate-session-id", &session)]).await;
            let (_, last) = check_stream(&all);
            let args: String = all
                .iter()
                .filter(|(n, _)| n == "response.function_call_arguments.delta")
                .filter_map(|(_, d)| d["delta"].as_str())
                .collect();
            assert_eq!(
                serde_json::from_str::<Value>(&args).expect("args"),
                json!({"city": "Paris"})
            );
            let done = all
                .iter()
                .find(|(n, _)| n == "response.function_call_arguments.done")
                .expect("arguments.done");
            assert_eq!(
                serde_json::from_str::<Value>(done.1["arguments"].as_str().expect("a"))
                    .expect("json"),
                json!({"city": "Paris"})
            );
            assert_eq!(last["type"], "response.completed");
            last["response"]["output"]
                .as_array()
                .and_then(|o| o.iter().find(|i| i["type"] == "function_call"))
                .cloned()
                .expect("a function_call item")
        } else {
            let a = api
                .send(
                    api.request(reqwest::Method::POST, "/v1/responses")
                        .header("x-hecate-session-id", &session)
                        .json(&body),
                )
                .await;
            assert_eq!(a.status, 200, "{}", a.body);
            a.body["output"]
                .as_array()
                .and_then(|o| o.iter().find(|i| i["type"] == "function_call"))
                .cloned()
                .expect("a function_call item")
        };
        assert_eq!(call["name"], "weather", "{model}: {call}");
        assert_eq!(call["status"], "completed");
        let call_id = call["call_id"].as_str().expect("call_id").to_string();
        assert!(call_id.ends_with("_r1"), "{call_id}");
        let args: Value =
            serde_json::from_str(call["arguments"].as_str().expect("arguments")).expect("json");
        assert_eq!(args, json!({"city": "Paris"}));

        let follow = json!({"model": model, "tools": tools, "input": [
            question,
            {"type": "reasoning", "id": "rs_1", "summary": []},
            {"type": "function_call", "call_id": call_id, "name": "weather",
             "arguments": call["arguments"]},
            {"type": "function_call_output", "call_id": call_id, "output": "sunny"}]});
        let a = api
            .send(
                api.request(reqwest::Method::POST, "/v1/responses")
                    .header("x-hecate-session-id", &session)
                    .json(&follow),
            )
            .await;
        assert_eq!(a.status, 200, "{}", a.body);
        assert_eq!(
            a.body["output"][0]["content"][0]["text"],
            "It is sunny in Paris."
        );

        // One chat session: the question, the call, its result, the answer.
        let s = api
            .get(&format!("/hecate/v1/chat/sessions/{session}"))
            .await;
        assert_eq!(s.status, 200, "{}", s.body);
        let messages = s.body["data"]["messages"].as_array().expect("messages");
        let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
        assert_eq!(
            roles,
            ["user", "assistant", "tool", "assistant"],
            "{session}"
        );
        assert_eq!(messages[1]["tool_calls"][0]["id"], call_id.as_str());
        assert_eq!(messages[3]["content"], "It is sunny in Paris.");
        let calls = s.body["data"]["provider_calls"].as_array().expect("calls");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[1]["provider"], provider);
        let traces = api
            .get(&format!("/hecate/v1/traces?session_id={session}"))
            .await;
        let rows = traces.body["data"].as_array().expect("traces");
        assert_eq!(rows.len(), 2, "{}", traces.body);
        assert!(
            rows.iter()
                .all(|t| t["client_format"] == "openai_responses" && t["status"] == "completed"),
            "{}",
            traces.body
        );
    }
    // Each provider got the function tool (not the built-in one) and the
    // result in its own format.
    let sent = fx.requests();
    assert_eq!(sent[0]["body"]["tools"].as_array().map(Vec::len), Some(1));
    assert_eq!(sent[0]["body"]["tools"][0]["function"]["name"], "weather");
    assert_eq!(sent[0]["body"]["parallel_tool_calls"], false);
    let oai_final = &sent[1]["body"]["messages"];
    assert_eq!(oai_final[1]["tool_calls"][0]["id"], "call_r1");
    assert_eq!(
        oai_final[2],
        json!({"role": "tool", "tool_call_id": "call_r1", "content": "sunny"})
    );
    assert_eq!(sent[2]["body"]["tools"][0]["name"], "weather");
    assert_eq!(
        sent[2]["body"]["tool_choice"]["disable_parallel_tool_use"],
        true
    );
    let ant_final = &sent[3]["body"]["messages"];
    assert_eq!(ant_final[1]["content"][0]["type"], "tool_use");
    assert_eq!(
        ant_final[2]["content"][0],
        json!({"type": "tool_result", "tool_use_id": "toolu_r1", "content": "sunny"})
    );
}

#[tokio::test]
async fn bad_input_is_a_400_in_the_openai_shape_naming_the_field() {
    let fx = ModelServer::start(Some(json!([
        {"match": {"contains": "explode"}, "repeat": true, "status": 500,
         "error_message": "upstream exploded"},
    ])));
    let (_h, _s, api) = gateway(&fx);
    let raw = api
        .send(
            api.request(reqwest::Method::POST, "/v1/responses")
                .header("content-type", "application/json")
                .body("{not json"),
        )
        .await;
    assert_eq!(raw.status, 400);
    assert_eq!(raw.body["error"]["type"], "invalid_request_error");
    assert!(
        raw.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("JSON"))
    );
    assert!(raw.body["error"]["request_id"].is_string());
    for (body, field) in [
        (json!({"model": "oai/gpt-fix"}), "`input`"),
        (json!({"model": "oai/gpt-fix", "input": 7}), "`input`"),
        (
            json!({"model": "oai/gpt-fix", "input": [{"type": "computer_call", "id": "x"}]}),
            "`input[0].type`",
        ),
        (
            json!({"model": "oai/gpt-fix", "input": [{"role": "tool", "content": "x"}]}),
            "`input[0].role`",
        ),
        (
            json!({"model": "oai/gpt-fix", "input": "hi", "previous_response_id": "resp_1"}),
            "`previous_response_id`",
        ),
        (
            json!({"model": "oai/gpt-fix", "input": "hi", "stream": "yes"}),
            "`stream`",
        ),
    ] {
        let a = api.post("/v1/responses", body.clone()).await;
        assert_eq!(a.status, 400, "{body}: {}", a.body);
        let e = &a.body["error"];
        assert_eq!(e["type"], "invalid_request_error", "{body}");
        assert_eq!(e["hecate_type"], "invalid_request", "{body}");
        assert!(
            e["message"].as_str().is_some_and(|m| m.contains(field)),
            "{body}: {e}"
        );
        assert_eq!(e["param"], field.trim_matches('`'), "{body}: {e}");
    }
    // An unknown model is the same 404 Chat Completions gives.
    let a = api
        .post("/v1/responses", json!({"model": "gpt-9", "input": "hi"}))
        .await;
    assert_eq!(a.status, 404, "{}", a.body);
    assert_eq!(a.body["error"]["code"], "model_not_found");
    assert_eq!(a.body["error"]["param"], "model");
    // A failing provider: the OpenAI error shape with the envelope fields.
    let a = api
        .post(
            "/v1/responses",
            json!({"model": "oai/gpt-fix", "input": "explode"}),
        )
        .await;
    assert_eq!(a.status, 502, "{}", a.body);
    assert_eq!(a.body["error"]["type"], "api_error");
    assert_eq!(a.body["error"]["provider"], "oai");
    assert_eq!(
        fx.requests().len(),
        1,
        "only the last request went upstream"
    );
}

#[tokio::test]
async fn a_stream_cut_upstream_ends_with_response_failed() {
    let fx = ModelServer::start(Some(json!([
        {"text": "half an answer", "cut_after_chunks": 1},
    ])));
    let (_h, _s, api) = gateway(&fx);
    let events = stream(
        &api,
        json!({"model": "ant/claude-fix", "input": "hi", "stream": true}),
        &[],
    )
    .await;
    let (_, last) = check_stream(&events);
    assert_eq!(last["type"], "response.failed", "{events:?}");
    assert_eq!(last["response"]["status"], "failed");
    assert!(last["response"]["error"]["message"].is_string(), "{last}");
}

#[tokio::test]
async fn a_client_that_goes_away_mid_stream_is_recorded_as_a_partial_answer() {
    let words: Vec<String> = (0..600).map(|i| format!("w{i}")).collect();
    let fx = ModelServer::start(Some(json!([
        {"text": words.join(" "), "chunk_delay_ms": 100},
    ])));
    let (_h, _s, api) = gateway(&fx);
    let r = api
        .request(reqwest::Method::POST, "/v1/responses")
        .header("x-hecate-session-id", "resp_cut")
        .json(&json!({"model": "oai/gpt-fix", "stream": true, "input": "long answer"}))
        .send()
        .await
        .expect("stream");
    let mut events = r.bytes_stream().eventsource();
    for _ in 0..5 {
        events.next().await.expect("an event").expect("event");
    }
    drop(events);
    let session = recorded_chat_session(&api, "resp_cut").await;
    let answer = &session.body["data"]["messages"][1];
    assert_eq!(answer["partial"], true, "{}", session.body);
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
}
