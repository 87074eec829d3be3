//! Integration tests for `hecate-fixtures model-server`, the scripted fake LLM
//! server: every API's streaming and non-streaming shapes, tool calls, errors,
//! script mismatches, faults, echo mode, model listing and request recording.

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, Command, Stdio};

use eventsource_stream::Eventsource as _;
use futures::StreamExt as _;
use serde_json::{Value, json};

/// A running fixture server; the child process is killed on drop.
struct Server {
    child: Child,
    base: String,
    _script: Option<tempfile::NamedTempFile>,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Starts the server with a script (JSON text) or, with `None`, in echo mode.
    fn start(script: Option<&str>, extra: &[&str]) -> Self {
        let script_file = script.map(|text| {
            let mut file = tempfile::NamedTempFile::new().expect("create script file");
            file.write_all(text.as_bytes()).expect("write script");
            file.flush().expect("flush script");
            file
        });
        let mut command = Command::new(env!("CARGO_BIN_EXE_hecate-fixtures"));
        command.args(["model-server", "--listen", "127.0.0.1:0"]);
        if let Some(file) = &script_file {
            command.arg("--script").arg(file.path());
        }
        command
            .args(extra)
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn().expect("spawn hecate-fixtures");
        let stdout = child.stdout.take().expect("child stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read ready line");
        let ready: Value = serde_json::from_str(&line).expect("ready line is JSON");
        let base = ready["listening"]
            .as_str()
            .expect("ready line has listening")
            .to_owned();
        assert!(base.starts_with("http://127.0.0.1:"), "{base}");
        Self {
            child,
            base,
            _script: script_file,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

fn client() -> reqwest::Client {
    // reqwest is built without a default TLS provider; plain http still needs one installed.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

async fn post(url: &str, body: &Value) -> reqwest::Response {
    client()
        .post(url)
        .json(body)
        .send()
        .await
        .expect("request sent")
}

/// Reads a whole SSE stream into (event name, data) pairs; panics on a stream error.
async fn sse(response: reqwest::Response) -> Vec<(String, String)> {
    let (events, error) = sse_until_error(response).await;
    assert!(error.is_none(), "stream failed: {error:?}");
    events
}

/// Reads SSE events until the stream ends or fails; returns the error text if it failed.
async fn sse_until_error(response: reqwest::Response) -> (Vec<(String, String)>, Option<String>) {
    assert_eq!(response.status(), 200);
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    assert!(
        content_type.starts_with("text/event-stream"),
        "{content_type}"
    );
    let mut stream = response.bytes_stream().eventsource();
    let mut events = Vec::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => events.push((event.event, event.data)),
            Err(error) => return (events, Some(error.to_string())),
        }
    }
    (events, None)
}

fn data_json(data: &str) -> Value {
    serde_json::from_str(data).unwrap_or_else(|e| panic!("invalid JSON frame {data:?}: {e}"))
}

async fn error_json(response: reqwest::Response, status: u16) -> Value {
    assert_eq!(response.status().as_u16(), status);
    response.json().await.expect("error body is JSON")
}

fn chat_body(text: &str, stream: bool) -> Value {
    json!({
        "model": "gpt-test",
        "stream": stream,
        "stream_options": {"include_usage": true},
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": text},
        ],
    })
}

#[tokio::test]
async fn openai_chat_completions() {
    let script = json!([
        {"match": {"api": "openai_chat", "stream": true, "contains": "story"},
         "thinking": "Let me think about it", "text": "Once upon a time, the end.",
         "usage": {"input_tokens": 11, "output_tokens": 7}},
        {"match": {"api": "openai_chat"},
         "tool_calls": [{"id": "call_1", "name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"match": {"api": "openai_chat", "stream": false}, "text": "plain answer"},
        {"status": 429, "error_message": "slow down"},
        {"match": {"api": "anthropic"}, "text": "never"},
    ]);
    let server = Server::start(Some(&script.to_string()), &[]);
    let url = server.url("/v1/chat/completions");

    // Streaming text with reasoning and a usage chunk.
    let events = sse(post(&url, &chat_body("tell a story", true)).await).await;
    let (last, frames) = events.split_last().expect("frames");
    assert_eq!(last.1, "[DONE]");
    let chunks: Vec<Value> = frames.iter().map(|(_, d)| data_json(d)).collect();
    assert!(
        chunks
            .iter()
            .all(|c| c["object"] == "chat.completion.chunk")
    );
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let delta_text = |field: &str| -> String {
        chunks
            .iter()
            .filter_map(|c| c["choices"][0]["delta"][field].as_str())
            .collect()
    };
    assert_eq!(delta_text("content"), "Once upon a time, the end.");
    assert_eq!(delta_text("reasoning_content"), "Let me think about it");
    let content_chunks = chunks
        .iter()
        .filter(|c| c["choices"][0]["delta"]["content"].is_string())
        .count();
    assert!(content_chunks > 3, "text must be streamed in pieces");
    let finish = &chunks[chunks.len() - 2];
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    let usage = &chunks[chunks.len() - 1];
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(
        usage["usage"],
        json!({"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18})
    );

    // Streaming tool call through the path without /v1.
    let events = sse(post(&server.url("/chat/completions"), &chat_body("go", true)).await).await;
    assert_eq!(events.last().expect("frames").1, "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|(_, d)| data_json(d))
        .collect();
    let calls: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    assert_eq!(calls[0]["id"], "call_1");
    assert_eq!(calls[0]["type"], "function");
    assert_eq!(calls[0]["function"]["name"], "read_file");
    assert!(calls.iter().all(|c| c["index"] == 0));
    let arguments: String = calls
        .iter()
        .filter_map(|c| c["function"]["arguments"].as_str())
        .collect();
    assert!(calls.len() > 2, "arguments must be streamed in pieces");
    assert_eq!(data_json(&arguments), json!({"path": "a.txt"}));
    assert!(
        chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls")
    );

    // Non-streaming completion.
    let response = post(&url, &chat_body("hello", false)).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.expect("completion JSON");
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["choices"][0]["message"]["content"], "plain answer");
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert!(body["usage"]["total_tokens"].as_u64().expect("total") > 0);

    // Scripted error status.
    let response = post(&url, &chat_body("hello", true)).await;
    assert_eq!(
        response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok()),
        Some("1")
    );
    let error = error_json(response, 429).await;
    assert_eq!(error["error"]["message"], "slow down");
    assert!(error["error"]["type"].is_string());

    // Mismatch: the next step expects Anthropic.
    let error = error_json(post(&url, &chat_body("hello", true)).await, 500).await;
    assert_eq!(error["error"]["type"], "fixture_mismatch");
    let message = error["error"]["message"].as_str().expect("message");
    assert!(message.contains("step 4"), "{message}");
    assert!(
        message.contains(r#"api: expected "anthropic", actual "openai_chat""#),
        "{message}"
    );
}

#[tokio::test]
async fn openai_responses() {
    let script = json!([
        {"match": {"api": "openai_responses", "model": "gpt-r"},
         "thinking": "Considering the request", "text": "Here is the answer."},
        {"tool_calls": [{"id": "call_9", "name": "shell", "arguments": {"command": ["ls", "-la"]}}]},
        {"match": {"stream": false}, "text": "non streamed"},
        {"status": 503, "error_message": "overloaded"},
        {"match": {"model": "gpt-r"}, "text": "never"},
    ]);
    let server = Server::start(Some(&script.to_string()), &[]);
    let url = server.url("/v1/responses");
    let request = |stream: bool, model: &str| {
        json!({
            "model": model,
            "stream": stream,
            "instructions": "be helpful",
            "input": [{"type": "message", "role": "user",
                       "content": [{"type": "input_text", "text": "hi there"}]}],
        })
    };

    let events = sse(post(&url, &request(true, "gpt-r")).await).await;
    let frames: Vec<(String, Value)> = events
        .iter()
        .map(|(name, data)| (name.clone(), data_json(data)))
        .collect();
    for (index, (name, data)) in frames.iter().enumerate() {
        assert_eq!(data["type"], name.as_str());
        assert_eq!(data["sequence_number"], index);
    }
    let mut names: Vec<&str> = frames.iter().map(|(n, _)| n.as_str()).collect();
    names.dedup();
    assert_eq!(
        names,
        [
            "response.created",
            "response.in_progress",
            "response.output_item.added",
            "response.reasoning_summary_part.added",
            "response.reasoning_summary_text.delta",
            "response.reasoning_summary_text.done",
            "response.reasoning_summary_part.done",
            "response.output_item.done",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    let joined = |kind: &str| -> String {
        frames
            .iter()
            .filter(|(n, _)| n == kind)
            .filter_map(|(_, d)| d["delta"].as_str())
            .collect()
    };
    assert_eq!(joined("response.output_text.delta"), "Here is the answer.");
    assert_eq!(
        joined("response.reasoning_summary_text.delta"),
        "Considering the request"
    );
    let completed = &frames.last().expect("completed").1["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["model"], "gpt-r");
    assert_eq!(completed["instructions"], "be helpful");
    assert_eq!(completed["output"][0]["type"], "reasoning");
    assert_eq!(
        completed["output"][1]["content"][0]["text"],
        "Here is the answer."
    );
    let usage = &completed["usage"];
    assert_eq!(
        usage["total_tokens"].as_u64(),
        Some(
            usage["input_tokens"].as_u64().expect("input")
                + usage["output_tokens"].as_u64().expect("output")
        )
    );

    // Function call.
    let events = sse(post(&server.url("/responses"), &request(true, "gpt-r")).await).await;
    let frames: Vec<Value> = events.iter().map(|(_, d)| data_json(d)).collect();
    let added = frames
        .iter()
        .find(|f| f["type"] == "response.output_item.added")
        .expect("item added");
    assert_eq!(added["item"]["type"], "function_call");
    assert_eq!(added["item"]["call_id"], "call_9");
    assert_eq!(added["item"]["name"], "shell");
    let arguments: String = frames
        .iter()
        .filter(|f| f["type"] == "response.function_call_arguments.delta")
        .filter_map(|f| f["delta"].as_str())
        .collect();
    assert_eq!(data_json(&arguments), json!({"command": ["ls", "-la"]}));
    let done = frames
        .iter()
        .find(|f| f["type"] == "response.function_call_arguments.done")
        .expect("arguments done");
    assert_eq!(done["arguments"].as_str(), Some(arguments.as_str()));
    assert_eq!(
        frames.last().expect("last")["type"],
        "response.completed",
        "completed must be last"
    );

    // Non-streaming.
    let response = post(&url, &request(false, "gpt-r")).await;
    let body: Value = response.json().await.expect("response JSON");
    assert_eq!(body["object"], "response");
    assert_eq!(body["status"], "completed");
    assert_eq!(body["output"][0]["content"][0]["text"], "non streamed");

    // Error and mismatch.
    let error = error_json(post(&url, &request(true, "gpt-r")).await, 503).await;
    assert_eq!(error["error"]["message"], "overloaded");
    let error = error_json(post(&url, &request(true, "other")).await, 500).await;
    assert_eq!(error["error"]["type"], "fixture_mismatch");
    let message = error["error"]["message"].as_str().expect("message");
    assert!(
        message.contains(r#"model: expected "gpt-r", actual "other""#),
        "{message}"
    );
}

fn anthropic_body(text: &str, stream: bool) -> Value {
    json!({
        "model": "claude-test",
        "max_tokens": 1024,
        "stream": stream,
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
    })
}

#[tokio::test]
async fn anthropic_messages() {
    let script = json!([
        {"match": {"api": "anthropic", "contains": "weather"},
         "thinking": "The user wants weather", "signature": "sig-1", "text": "It is sunny today."},
        {"text": "Let me look.", "tool_calls": [{"id": "toolu_1", "name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"match": {"stream": false}, "thinking": "hm", "text": "whole"},
        {"status": 529, "error_message": "busy"},
        {"match": {"contains": "banana"}, "text": "never"},
    ]);
    let server = Server::start(Some(&script.to_string()), &[]);
    let url = server.url("/v1/messages");

    let events = sse(post(&url, &anthropic_body("what is the weather", true)).await).await;
    let frames: Vec<(String, Value)> = events
        .iter()
        .map(|(name, data)| (name.clone(), data_json(data)))
        .collect();
    for (name, data) in &frames {
        assert_eq!(data["type"], name.as_str());
    }
    let mut names: Vec<String> = frames
        .iter()
        .map(|(name, data)| match data["delta"]["type"].as_str() {
            Some(kind) => format!("{name}:{kind}"),
            None => match data["content_block"]["type"].as_str() {
                Some(kind) => format!("{name}:{kind}"),
                None => name.clone(),
            },
        })
        .collect();
    names.dedup();
    assert_eq!(
        names,
        [
            "message_start",
            "ping",
            "content_block_start:thinking",
            "content_block_delta:thinking_delta",
            "content_block_delta:signature_delta",
            "content_block_stop",
            "content_block_start:text",
            "content_block_delta:text_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    let joined = |kind: &str, field: &str| -> String {
        frames
            .iter()
            .filter(|(_, d)| d["delta"]["type"] == kind)
            .filter_map(|(_, d)| d["delta"][field].as_str())
            .collect()
    };
    assert_eq!(joined("text_delta", "text"), "It is sunny today.");
    assert_eq!(
        joined("thinking_delta", "thinking"),
        "The user wants weather"
    );
    assert_eq!(joined("signature_delta", "signature"), "sig-1");
    let start = &frames[0].1["message"];
    assert_eq!(start["model"], "claude-test");
    assert!(start["usage"]["input_tokens"].as_u64().expect("input") > 0);
    let delta = &frames[frames.len() - 2].1;
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert!(delta["usage"]["output_tokens"].as_u64().expect("output") > 0);

    // Tool use.
    let events = sse(post(&url, &anthropic_body("and tomorrow?", true)).await).await;
    let frames: Vec<Value> = events.iter().map(|(_, d)| data_json(d)).collect();
    let tool_start = frames
        .iter()
        .find(|f| f["content_block"]["type"] == "tool_use")
        .expect("tool_use block");
    assert_eq!(tool_start["content_block"]["id"], "toolu_1");
    assert_eq!(tool_start["content_block"]["name"], "get_weather");
    assert_eq!(tool_start["index"], 1);
    let partial: String = frames
        .iter()
        .filter(|f| f["delta"]["type"] == "input_json_delta")
        .filter_map(|f| f["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(data_json(&partial), json!({"city": "Paris"}));
    let delta = frames
        .iter()
        .find(|f| f["type"] == "message_delta")
        .expect("message_delta");
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(frames.last().expect("last")["type"], "message_stop");

    // Non-streaming message.
    let body: Value = post(&url, &anthropic_body("x", false))
        .await
        .json()
        .await
        .expect("message JSON");
    assert_eq!(body["type"], "message");
    assert_eq!(body["content"][0]["type"], "thinking");
    assert_eq!(body["content"][0]["thinking"], "hm");
    assert!(body["content"][0]["signature"].is_string());
    assert_eq!(body["content"][1], json!({"type": "text", "text": "whole"}));
    assert_eq!(body["stop_reason"], "end_turn");

    // Error and mismatch, both in the Anthropic error shape.
    let error = error_json(post(&url, &anthropic_body("x", true)).await, 529).await;
    assert_eq!(
        error,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
    );
    let error = error_json(post(&url, &anthropic_body("apple", true)).await, 500).await;
    assert_eq!(error["type"], "error");
    assert_eq!(error["error"]["type"], "fixture_mismatch");
    let message = error["error"]["message"].as_str().expect("message");
    assert!(message.contains("contains"), "{message}");
    assert!(message.contains(r#""banana""#), "{message}");
    assert!(message.contains(r#""apple""#), "{message}");
}

fn gemini_body(text: &str) -> Value {
    json!({
        "contents": [
            {"role": "user", "parts": [{"text": text}]},
        ],
        "generationConfig": {"thinkingConfig": {"includeThoughts": true}},
    })
}

#[tokio::test]
async fn gemini_generate_content() {
    let script = json!([
        {"match": {"api": "gemini", "model": "gemini-test", "stream": true},
         "thinking": "Thinking hard", "text": "Gemini says hello."},
        {"match": {"stream": true},
         "tool_calls": [{"name": "list_dir", "arguments": {"path": "."}}]},
        {"match": {"stream": false}, "text": "single"},
        {"status": 429, "error_message": "quota"},
        {"match": {"stream": true}, "text": "never"},
    ]);
    let server = Server::start(Some(&script.to_string()), &[]);
    let model_url = |action: &str| server.url(&format!("/v1beta/models/gemini-test:{action}"));

    let events = sse(post(
        &model_url("streamGenerateContent?alt=sse"),
        &gemini_body("hello"),
    )
    .await)
    .await;
    let chunks: Vec<Value> = events.iter().map(|(_, d)| data_json(d)).collect();
    let parts: Vec<&Value> = chunks
        .iter()
        .flat_map(|c| {
            c["candidates"][0]["content"]["parts"]
                .as_array()
                .expect("parts")
        })
        .collect();
    let text = |thought: bool| -> String {
        parts
            .iter()
            .filter(|p| p["thought"].as_bool().unwrap_or(false) == thought)
            .filter_map(|p| p["text"].as_str())
            .collect()
    };
    assert_eq!(text(true), "Thinking hard");
    assert_eq!(text(false), "Gemini says hello.");
    assert!(chunks.len() > 3);
    let last = chunks.last().expect("last chunk");
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["candidates"][0]["content"]["role"], "model");
    let usage = &last["usageMetadata"];
    assert!(usage["promptTokenCount"].as_u64().expect("prompt") > 0);
    assert!(usage["candidatesTokenCount"].as_u64().expect("candidates") > 0);
    assert!(usage["totalTokenCount"].as_u64().expect("total") > 0);

    // Function call, streamed as a JSON array (no alt=sse).
    let response = post(&model_url("streamGenerateContent"), &gemini_body("files?")).await;
    assert_eq!(response.status(), 200);
    let array: Value = response.json().await.expect("JSON array");
    let last = array.as_array().and_then(|a| a.last()).expect("chunks");
    assert_eq!(
        last["candidates"][0]["content"]["parts"][0]["functionCall"],
        json!({"name": "list_dir", "args": {"path": "."}})
    );
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");

    // Non-streaming.
    let body: Value = post(&model_url("generateContent"), &gemini_body("x"))
        .await
        .json()
        .await
        .expect("response JSON");
    assert_eq!(
        body["candidates"][0]["content"]["parts"][0]["text"],
        "single"
    );

    // Error and mismatch in Google's error shape.
    let error = error_json(
        post(&model_url("generateContent"), &gemini_body("x")).await,
        429,
    )
    .await;
    assert_eq!(error["error"]["code"], 429);
    assert_eq!(error["error"]["status"], "RESOURCE_EXHAUSTED");
    assert_eq!(error["error"]["message"], "quota");
    let error = error_json(
        post(&model_url("generateContent"), &gemini_body("x")).await,
        500,
    )
    .await;
    let message = error["error"]["message"].as_str().expect("message");
    assert!(message.starts_with("fixture_mismatch"), "{message}");
    assert!(
        message.contains("stream: expected true, actual false"),
        "{message}"
    );
}

#[tokio::test]
async fn faults_cut_and_malformed() {
    let script = json!([
        {"text": "one two three four five", "cut_after_chunks": 2},
        {"text": "one two three four five", "malformed_after_chunks": 2},
        {"text": "slow answer", "delay_ms": 50, "chunk_delay_ms": 20, "repeat": true},
    ]);
    let server = Server::start(Some(&script.to_string()), &[]);
    let url = server.url("/v1/messages");

    let (events, error) = sse_until_error(post(&url, &anthropic_body("x", true)).await).await;
    assert!(error.is_some(), "the stream must end abruptly");
    let text: String = events
        .iter()
        .map(|(_, d)| data_json(d))
        .filter_map(|d| d["delta"]["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(text, "one two");
    assert!(events.iter().all(|(name, _)| name != "message_stop"));

    let events = sse(post(&url, &anthropic_body("x", true)).await).await;
    let (last, before) = events.split_last().expect("frames");
    assert!(serde_json::from_str::<Value>(&last.1).is_err(), "{last:?}");
    let text_deltas = before
        .iter()
        .filter(|(_, d)| data_json(d)["delta"]["type"] == "text_delta")
        .count();
    assert_eq!(text_deltas, 2);

    // The repeat step keeps serving, with delays.
    for _ in 0..2 {
        let started = std::time::Instant::now();
        let events = sse(post(&url, &anthropic_body("x", true)).await).await;
        assert_eq!(events.last().expect("last").0, "message_stop");
        assert!(started.elapsed() >= std::time::Duration::from_millis(50));
    }
}

#[tokio::test]
async fn echo_mode() {
    let server = Server::start(None, &[]);

    let events = sse(post(
        &server.url("/v1/chat/completions"),
        &chat_body("hello world", true),
    )
    .await)
    .await;
    let text: String = events
        .iter()
        .filter(|(_, d)| d != "[DONE]")
        .filter_map(|(_, d)| {
            data_json(d)["choices"][0]["delta"]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(text, "echo: hello world");

    let body: Value = post(
        &server.url("/v1/messages"),
        &anthropic_body("hi claude", false),
    )
    .await
    .json()
    .await
    .expect("message");
    assert_eq!(body["content"][0]["text"], "echo: hi claude");

    let body: Value = post(
        &server.url("/v1/responses"),
        &json!({"model": "m", "input": "plain input"}),
    )
    .await
    .json()
    .await
    .expect("response");
    assert_eq!(body["output"][0]["content"][0]["text"], "echo: plain input");

    let body: Value = post(
        &server.url("/v1beta/models/g:generateContent"),
        &gemini_body("hi gemini"),
    )
    .await
    .json()
    .await
    .expect("gemini");
    assert_eq!(
        body["candidates"][0]["content"]["parts"][0]["text"],
        "echo: hi gemini"
    );
}

#[tokio::test]
async fn model_listing_and_recording() {
    let record = tempfile::NamedTempFile::new().expect("record file");
    let record_path = record.path().to_str().expect("utf-8 path").to_owned();
    let script = json!([{"text": "served"}]);
    let server = Server::start(
        Some(&script.to_string()),
        &["--models", "alpha,beta", "--record", &record_path],
    );
    let http = client();

    let openai: Value = http
        .get(server.url("/v1/models"))
        .header("authorization", "Bearer sk-test")
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(
        openai,
        json!({"object": "list", "data": [
            {"id": "alpha", "object": "model", "created": 0, "owned_by": "fixture"},
            {"id": "beta", "object": "model", "created": 0, "owned_by": "fixture"},
        ]})
    );

    let anthropic: Value = http
        .get(server.url("/v1/models"))
        .header("anthropic-version", "2023-06-01")
        .header("x-api-key", "ak-test")
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(anthropic["data"][0]["type"], "model");
    assert_eq!(anthropic["data"][0]["id"], "alpha");
    assert!(anthropic["data"][0]["display_name"].is_string());
    assert!(anthropic["data"][0]["created_at"].is_string());
    assert_eq!(anthropic["has_more"], false);
    assert_eq!(anthropic["first_id"], "alpha");
    assert_eq!(anthropic["last_id"], "beta");

    let gemini: Value = http
        .get(server.url("/v1beta/models"))
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(gemini["models"][1]["name"], "models/beta");

    // Listing consumed nothing: the only step still serves a generation.
    let body: Value = http
        .post(server.url("/v1/chat/completions"))
        .header("authorization", "Bearer sk-test")
        .json(&chat_body("hi", false))
        .send()
        .await
        .expect("chat")
        .json()
        .await
        .expect("json");
    assert_eq!(body["choices"][0]["message"]["content"], "served");

    let lines: Vec<Value> = std::fs::read_to_string(record.path())
        .expect("read record")
        .lines()
        .map(data_json)
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["api"], "openai_models");
    assert_eq!(lines[0]["method"], "GET");
    assert_eq!(lines[0]["headers"]["authorization"], "Bearer sk-test");
    assert_eq!(lines[1]["api"], "anthropic_models");
    assert_eq!(lines[1]["headers"]["x-api-key"], "ak-test");
    assert_eq!(lines[1]["headers"]["anthropic-version"], "2023-06-01");
    assert_eq!(lines[2]["path"], "/v1beta/models");
    let chat = &lines[3];
    assert_eq!(chat["api"], "openai_chat");
    assert_eq!(chat["method"], "POST");
    assert_eq!(chat["path"], "/v1/chat/completions");
    assert_eq!(chat["headers"]["content-type"], "application/json");
    assert_eq!(chat["body"], chat_body("hi", false));
}

#[tokio::test]
async fn agent_mode_answers_by_request_shape() {
    let server = Server::start(None, &["--agent-mode"]);

    // Codex-shaped Responses request offering the freeform apply_patch tool.
    let codex = json!({
        "model": "gpt-5.5", "stream": true,
        "tools": [{"type": "function", "name": "exec_command",
                   "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}},
                  {"type": "custom", "name": "apply_patch"}],
        "input": [{"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": "create file hello.txt containing hi"}]}],
    });
    let events = sse(post(&server.url("/v1/responses"), &codex).await).await;
    let names: Vec<&str> = events.iter().map(|(e, _)| e.as_str()).collect();
    assert!(
        names.contains(&"response.custom_tool_call_input.delta"),
        "{names:?}"
    );
    let (_, done) = events
        .iter()
        .find(|(e, _)| e == "response.output_item.done")
        .expect("item done");
    let item = &data_json(done)["item"];
    assert_eq!(item["type"], "custom_tool_call");
    assert_eq!(item["name"], "apply_patch");
    assert_eq!(
        item["input"],
        "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n"
    );

    // The tool result comes back: final text.
    let mut follow_up = codex.clone();
    follow_up["input"]
        .as_array_mut()
        .expect("input")
        .extend([
            json!({"type": "custom_tool_call", "call_id": "c1", "name": "apply_patch", "input": "..."}),
            json!({"type": "custom_tool_call_output", "call_id": "c1", "output": "Success. Updated the following files:\nA hello.txt"}),
        ]);
    follow_up["stream"] = json!(false);
    let body: Value = post(&server.url("/v1/responses"), &follow_up)
        .await
        .json()
        .await
        .expect("response");
    assert_eq!(
        body["output"][0]["content"][0]["text"],
        "done: Success. Updated the following files: A hello.txt"
    );

    // Claude-shaped structured output (a title request) and a Write tool call.
    let title = json!({
        "model": "claude", "max_tokens": 100,
        "messages": [{"role": "user", "content": "name this session"}],
        "output_config": {"format": {"type": "json_schema", "schema": {
            "type": "object", "properties": {"title": {"type": "string"}},
            "required": ["title"], "additionalProperties": false}}},
    });
    let body: Value = post(&server.url("/v1/messages?beta=true"), &title)
        .await
        .json()
        .await
        .expect("message");
    let text = body["content"][0]["text"].as_str().expect("text");
    assert_eq!(data_json(text), json!({"title": "fixture"}));
    let write = json!({
        "model": "claude", "max_tokens": 100, "stream": false,
        "system": "Primary working directory: /ws\n",
        "tools": [{"name": "Write", "input_schema": {"type": "object",
                   "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}}}}],
        "messages": [{"role": "user", "content": [{"type": "text", "text": "create file a.txt containing x"}]}],
    });
    let body: Value = post(&server.url("/v1/messages"), &write)
        .await
        .json()
        .await
        .expect("message");
    assert_eq!(body["stop_reason"], "tool_use");
    assert_eq!(
        body["content"][0]["input"],
        json!({"file_path": "/ws/a.txt", "content": "x\n"})
    );

    // Gemini-shaped shell request; plain prompts echo; Claude's connectivity check.
    let gemini = json!({
        "contents": [{"role": "user", "parts": [{"text": "run the command echo hi"}]}],
        "tools": [{"functionDeclarations": [{"name": "run_shell_command",
            "parametersJsonSchema": {"type": "object", "properties": {"command": {"type": "string"}}}}]}],
    });
    let body: Value = post(&server.url("/v1beta/models/g:generateContent"), &gemini)
        .await
        .json()
        .await
        .expect("gemini");
    assert_eq!(
        body["candidates"][0]["content"]["parts"][0]["functionCall"],
        json!({"name": "run_shell_command", "args": {"command": "echo hi"}})
    );
    let body: Value = post(
        &server.url("/v1/chat/completions"),
        &chat_body("just chatting", false),
    )
    .await
    .json()
    .await
    .expect("chat");
    assert_eq!(
        body["choices"][0]["message"]["content"],
        "echo: just chatting"
    );
    let hello = client()
        .head(server.url("/api/hello"))
        .send()
        .await
        .expect("hello");
    assert_eq!(hello.status(), 200);
}
