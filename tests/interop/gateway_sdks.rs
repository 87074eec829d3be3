//! The official `openai` and `anthropic` Python SDKs (installed pinned by
//! `scripts/test-deps/model-sdks.sh` under `target/test-deps/model-sdks/`)
//! pointed at Hecate's model gateway: each lists the models and, against an
//! OpenAI-compatible and an Anthropic provider (the fixture model server), makes
//! a plain call, a streamed call and a tool call round trip, with the server
//! token as its API key; the round trip carries `X-Hecate-Session-Id` and shows
//! up as a recorded chat session. The `openai` SDK's Responses API
//! (`client.responses.create`, streaming and not, with a function tool) does the
//! same through `/v1/responses`.

use crate::support::common::{Home, ModelServer, test_deps};
use crate::support::http::{Api, Served, serve};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;

/// Serves a home with both provider kinds on `fx` and the token `sdk-token`,
/// and runs the Python SDK client `client` (under `tests/model_sdks/`) against
/// it for both providers' models; answers the home (its data directory must
/// outlive the server), the server and the client's JSON report.
fn run_sdk_client(fx: &ModelServer, client: &str) -> (Home, Served, Value) {
    let python = test_deps("model-sdks", "the model SDKs").join("venv/bin/python");
    let mut home = Home::with_both_kinds(fx);
    home.set("HECATE_TOKEN", "sdk-token");
    let s = serve(&home);
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/model_sdks")
        .join(client);
    let out = Command::new(python)
        .arg(script)
        .args([
            s.base.as_str(),
            "sdk-token",
            "oai/gpt-fix",
            "ant/claude-fix",
        ])
        .output()
        .expect("run python");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python client failed: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    (home, s, report)
}

/// The fixture's answers, in the order the Python client asks: per SDK, per
/// provider, a plain answer, a streamed one, a tool call and the final answer.
fn script() -> Value {
    let mut steps = Vec::new();
    for _sdk in ["openai", "anthropic"] {
        for api in ["openai_chat", "anthropic"] {
            steps.extend(provider_steps(api));
        }
    }
    Value::Array(steps)
}

/// One client's answers from one provider API (`openai_chat` or `anthropic`):
/// a plain answer, a streamed one, a tool call and the final answer.
fn provider_steps(api: &str) -> [Value; 4] {
    [
        json!({"match": {"api": api, "stream": false},
            "text": "plain answer", "usage": {"input_tokens": 5, "output_tokens": 2}}),
        json!({"match": {"api": api, "stream": true},
            "text": "streamed answer here", "usage": {"input_tokens": 5, "output_tokens": 3}}),
        json!({"match": {"api": api, "contains": "Paris"},
            "tool_calls": [{"name": "weather", "arguments": {"city": "Paris"}}]}),
        json!({"match": {"api": api}, "text": "It is sunny in Paris."}),
    ]
}

#[tokio::test]
async fn official_sdks_call_both_provider_kinds_through_the_gateway() {
    let fx = ModelServer::start(Some(script()));
    let (_home, s, report) = run_sdk_client(&fx, "gateway_client.py");

    for sdk in ["openai", "anthropic"] {
        let models = report[sdk]["models"].as_array().expect("models");
        for id in ["oai/gpt-fix", "ant/claude-fix", "gpt-fix", "claude-fix"] {
            assert!(models.contains(&json!(id)), "{sdk}: {id} in {models:?}");
        }
        for model in ["oai/gpt-fix", "ant/claude-fix"] {
            let r = &report[sdk][model];
            assert_eq!(r["text"], "plain answer", "{sdk} {model}: {r}");
            assert_eq!(
                r["stream_text"], "streamed answer here",
                "{sdk} {model}: {r}"
            );
            assert_eq!(r["stream_usage"], 3, "{sdk} {model}: streamed usage");
            assert_eq!(r["tool_name"], "weather");
            assert_eq!(r["tool_args"], json!({"city": "Paris"}));
            assert_eq!(r["final"], "It is sunny in Paris.");
        }
    }
    assert_eq!(report["openai"]["oai/gpt-fix"]["finish_reason"], "stop");
    assert_eq!(
        report["openai"]["ant/claude-fix"]["tool_finish"],
        "tool_calls"
    );
    assert_eq!(report["openai"]["ant/claude-fix"]["usage_total"], 7);
    assert_eq!(
        report["anthropic"]["oai/gpt-fix"]["stop_reason"],
        "end_turn"
    );
    assert_eq!(report["anthropic"]["oai/gpt-fix"]["tool_stop"], "tool_use");
    assert_eq!(report["anthropic"]["oai/gpt-fix"]["usage_output"], 2);

    // The tool results reached each provider in its own format.
    let sent = fx.requests();
    assert_eq!(sent.len(), 16);
    let openai_final = &sent[3]["body"]["messages"];
    assert_eq!(openai_final[2]["role"], "tool");
    assert_eq!(openai_final[2]["content"], "sunny");
    let anthropic_final = &sent[15]["body"]["messages"];
    assert_eq!(anthropic_final[2]["content"][0]["type"], "tool_result");
    let translated = &sent[11]["body"]["messages"];
    assert_eq!(
        translated[2]["role"], "tool",
        "an Anthropic client's tool result, as OpenAI"
    );

    // Each SDK's round trip is one chat session: the question, the tool call,
    // the tool's result and the final answer, with one provider call per request.
    let api = Api::new(&s).with_token("sdk-token");
    for sdk in ["openai", "anthropic"] {
        for (model, provider) in [("oai/gpt-fix", "oai"), ("ant/claude-fix", "ant")] {
            let id = format!("sdk-{sdk}-{}", model.replace('/', "-"));
            let got = api.get(&format!("/hecate/v1/chat/sessions/{id}")).await;
            assert_eq!(got.status, 200, "{id}: {}", got.body);
            let messages = got.body["data"]["messages"].as_array().expect("messages");
            let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
            assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "{id}");
            assert_eq!(messages[1]["tool_calls"][0]["function"]["name"], "weather");
            assert_eq!(messages[3]["content"], "It is sunny in Paris.", "{id}");
            let calls = got.body["data"]["provider_calls"]
                .as_array()
                .expect("calls");
            assert_eq!(calls.len(), 2, "{id}");
            assert_eq!(calls[1]["provider"], provider);
            assert_eq!(messages[3]["produced_by_call_id"], calls[1]["id"]);
        }
    }
}

/// The official `openai` SDK's `client.responses.create(...)`, streaming and
/// not, with a function tool, through `/v1/responses` to an OpenAI-compatible
/// and an Anthropic provider; the round trip is one recorded chat session.
#[tokio::test]
async fn the_openai_sdk_speaks_the_responses_api_through_the_gateway() {
    let steps: Vec<Value> = ["openai_chat", "anthropic"]
        .into_iter()
        .flat_map(provider_steps)
        .collect();
    let fx = ModelServer::start(Some(Value::Array(steps)));
    let (_home, s, report) = run_sdk_client(&fx, "responses_client.py");
    for model in ["oai/gpt-fix", "ant/claude-fix"] {
        let r = &report[model];
        assert_eq!(r["text"], "plain answer", "{model}: {r}");
        assert_eq!(r["status"], "completed");
        assert!(r["id"].as_str().is_some_and(|i| i.starts_with("resp_")));
        assert_eq!(r["usage_total"], 7);
        assert_eq!(r["stream_text"], "streamed answer here", "{model}: {r}");
        assert_eq!(
            r["stream_first"],
            json!(["response.created", "response.in_progress"])
        );
        assert_eq!(r["stream_last"], "response.completed");
        assert_eq!(r["stream_usage"], 3);
        assert_eq!(r["tool_name"], "weather");
        assert_eq!(r["tool_args"], json!({"city": "Paris"}));
        assert_eq!(r["final"], "It is sunny in Paris.", "{model}: {r}");
        assert_eq!(r["final_status"], "completed");
    }
    let api = Api::new(&s).with_token("sdk-token");
    for (model, provider) in [("oai/gpt-fix", "oai"), ("ant/claude-fix", "ant")] {
        let id = format!("sdk-responses-{}", model.replace('/', "-"));
        let got = api.get(&format!("/hecate/v1/chat/sessions/{id}")).await;
        assert_eq!(got.status, 200, "{id}: {}", got.body);
        let messages = got.body["data"]["messages"].as_array().expect("messages");
        let roles: Vec<&str> = messages.iter().filter_map(|m| m["role"].as_str()).collect();
        assert_eq!(roles, ["user", "assistant", "tool", "assistant"], "{id}");
        assert_eq!(messages[3]["content"], "It is sunny in Paris.", "{id}");
        let calls = got.body["data"]["provider_calls"]
            .as_array()
            .expect("calls");
        assert_eq!(calls[1]["provider"], provider);
    }
}

/// A recorded Anthropic conversation keeps what the canonical message keeps:
/// the thinking block with its signature (read from the streamed answer) and a
/// tool result marked as an error. Replayed through `/v1/chat/completions`
/// with the OpenAI SDK, both reach an Anthropic provider as Anthropic blocks,
/// and an OpenAI-compatible provider sees neither extension field.
#[tokio::test]
async fn thinking_signatures_and_tool_errors_survive_recording_and_replay() {
    let fx = ModelServer::start(Some(json!([
        {"match": {"api": "anthropic", "contains": "Oslo"},
         "thinking": "The user wants the weather in Oslo.", "signature": "sig-oslo-1",
         "tool_calls": [{"name": "weather", "arguments": {"city": "Oslo"}}]},
        {"match": {"api": "anthropic", "contains": "no such city"},
         "text": "I could not find Oslo."},
        {"match": {"api": "anthropic", "contains": "tomorrow"}, "text": "Tomorrow too."},
        {"match": {"api": "openai_chat"}, "text": "Tomorrow, plainly."},
    ])));
    let (_home, _s, report) = run_sdk_client(&fx, "thinking_client.py");

    assert_eq!(report["thinking"], "The user wants the weather in Oslo.");
    assert_eq!(report["signature"], "sig-oslo-1");
    assert_eq!(report["final"], "I could not find Oslo.");

    let recorded = report["recorded"].as_array().expect("recorded messages");
    let roles: Vec<&str> = recorded.iter().filter_map(|m| m["role"].as_str()).collect();
    assert_eq!(roles, ["user", "assistant", "tool", "assistant"]);
    let blocks = &recorded[1]["content_blocks"];
    assert_eq!(blocks[0]["type"], "thinking", "{}", recorded[1]);
    assert_eq!(blocks[0]["thinking"], "The user wants the weather in Oslo.");
    assert_eq!(blocks[0]["signature"], "sig-oslo-1");
    assert_eq!(blocks[1]["type"], "tool_use");
    assert_eq!(blocks[1]["input"], json!({"city": "Oslo"}));
    assert_eq!(recorded[2]["tool_error"], true, "{}", recorded[2]);
    assert!(recorded[3].get("content_blocks").is_none());
    assert!(recorded[3].get("tool_error").is_none());

    let replayed = &report["replayed"];
    assert_eq!(replayed["ant/claude-fix"], "Tomorrow too.");
    assert_eq!(replayed["oai/gpt-fix"], "Tomorrow, plainly.");

    let sent = fx.requests();
    assert_eq!(sent.len(), 4);
    let to_anthropic = &sent[2]["body"]["messages"];
    assert_eq!(to_anthropic[1]["role"], "assistant");
    assert_eq!(
        to_anthropic[1]["content"][0],
        json!({"type": "thinking", "thinking": "The user wants the weather in Oslo.",
               "signature": "sig-oslo-1"}),
        "the replay gives the provider the signed thinking block"
    );
    assert_eq!(to_anthropic[1]["content"][1]["type"], "tool_use");
    assert_eq!(to_anthropic[2]["content"][0]["type"], "tool_result");
    assert_eq!(to_anthropic[2]["content"][0]["is_error"], true);
    let to_openai = sent[3]["body"].to_string();
    assert!(
        !to_openai.contains("content_blocks") && !to_openai.contains("tool_error"),
        "{to_openai}"
    );
}
