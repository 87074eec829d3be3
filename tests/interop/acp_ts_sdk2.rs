//! `hecate acp` driven by the ACP TypeScript SDK 2.4.0's client app
//! (`tests/acp_peers/ts_sdk2_client.mjs`, one scenario per run, printing what it
//! saw as JSON): an agent's config options with their categories and its modes
//! (a forbidden mode refused), the model it picks reaching the fixture model
//! the agent calls, a model thread switching its model; the turn's usage and
//! `usage_update`; `session/resume` in a fresh process attaching without a
//! replay, then `session/close` and `session/delete`; an image reaching a
//! vision model and refused for a text-only one; and an agent's form
//! elicitation answered by the SDK client. The SDK comes from
//! `scripts/test-deps/acp-clients.sh`; a missing install fails the test naming
//! it.

use crate::support::acp_clients::{CLIENTS, Clients, client_cmd, hecate, run};
use crate::support::common::{Home, ModelServer, test_deps, text, workspace};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// A 1×1 PNG (the one the script sends).
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// Runs the SDK 2.x client's `scenario` against `hecate acp ARGS` in `ws` with
/// `home`'s environment and `extra` parameters; asserts that it and Hecate
/// exited cleanly and answers its report.
fn sdk2(scenario: &str, home: &Home, ws: &Path, args: &[&str], extra: Value) -> Value {
    test_deps("acp-clients", "the ACP TypeScript SDK 2.4.0 and Node 22");
    let clients = Clients::get();
    let script =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/acp_peers/ts_sdk2_client.mjs");
    let mut params = json!({"hecate": hecate(), "args": args, "cwd": ws});
    for (k, v) in extra.as_object().into_iter().flatten() {
        params[k] = v.clone();
    }
    let mut c = client_cmd(&clients.node_dir().join("node"), home, ws);
    c.env("PATH", clients.path(&[]))
        .env("ACP_SDK2_DIR", Path::new(CLIENTS).join("npm"))
        .arg(script)
        .arg(scenario)
        .arg(params.to_string());
    let out = run(c, b"");
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{scenario}: {stdout}\n{stderr}");
    let report: Value = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("{scenario}: the client's JSON report ({e}): {stdout}"));
    assert_eq!(
        report["hecateExit"]["code"], 0,
        "{scenario}: hecate acp exited cleanly: {stderr}"
    );
    report
}

/// The option with `id` in a JSON list of options.
fn option<'a>(options: &'a Value, id: &str) -> &'a Value {
    options
        .as_array()
        .and_then(|a| a.iter().find(|o| o["id"] == id))
        .unwrap_or_else(|| panic!("option {id} in {options}"))
}

/// The values an option offers.
fn values(option: &Value) -> Vec<&str> {
    option["options"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["value"].as_str())
        .collect()
}

/// A model server in echo mode and a home whose provider `fix` serves `models`
/// (comma-separated).
fn model_home(models: &str) -> (ModelServer, Home) {
    let server = ModelServer::start(None);
    let mut home = Home::with_openai(&server);
    home.set("PROVIDER_FIX_MODELS", models);
    (server, home)
}

/// The model each request `server` got named.
fn models_called(server: &ModelServer) -> Vec<Value> {
    server
        .requests()
        .iter()
        .map(|r| r["body"]["model"].clone())
        .collect()
}

#[test]
fn the_sdk2_client_sees_an_agents_options_and_modes_and_its_model_reaches_the_agents_calls() {
    let server = ModelServer::start(None);
    let mut home = Home::empty();
    home.set("FIXTURE_MODEL_BASE_URL", &server.base);
    home.add_scripted_agent(
        &json!({"turns": []}).to_string(),
        &["--config-options", "--modes"],
        "env_allow = [\"FIXTURE_*\"]\n[quirks]\ninitial_mode = \"ask\"\n",
    );
    let (_g, ws) = workspace();
    let report = sdk2(
        "options",
        &home,
        &ws,
        &["--target", "agent:fixture"],
        json!({"model": "fixture-large", "modes": ["auto", "ask"]}),
    );
    let created = &report["newSession"];
    let options = &created["configOptions"];
    assert_eq!(options[0]["id"], "target", "{report}");
    assert_eq!(options[0]["currentValue"], "agent:fixture");
    let model = option(options, "model");
    assert_eq!(
        (&model["category"], &model["currentValue"]),
        (&json!("model"), &json!("fixture-small")),
        "{report}"
    );
    assert!(values(model).contains(&"fixture-large"), "{model}");
    assert_eq!(option(options, "reasoning")["category"], "thought_level");
    assert_eq!(option(options, "mode")["category"], "mode");
    let modes = &created["modes"];
    assert_eq!(modes["currentModeId"], "ask", "the pinned mode: {report}");
    let ids: Vec<&Value> = modes["availableModes"]
        .as_array()
        .expect("the agent's modes")
        .iter()
        .map(|m| &m["id"])
        .collect();
    assert_eq!(ids, [&json!("auto"), &json!("ask")]);

    let after = &report["setModel"]["result"]["configOptions"];
    assert_eq!(
        option(after, "model")["currentValue"],
        "fixture-large",
        "{report}"
    );
    let refused = &report["setModes"]["auto"]["error"];
    assert_eq!(
        (&refused["code"], &refused["data"]["reason"]),
        (&json!(-32602), &json!("mode_not_allowed")),
        "auto skips the editor's approval: {report}"
    );
    assert!(
        report["setModes"]["ask"].get("result").is_some(),
        "{report}"
    );

    let turn = &report["prompt"];
    assert_eq!(turn["result"]["stopReason"], "end_turn", "{report}");
    let said = turn["text"].as_str().unwrap_or_default();
    assert!(said.contains("model: echo: hello model"), "{said}");
    assert_eq!(
        models_called(&server).last(),
        Some(&json!("fixture-large")),
        "the model the SDK client chose"
    );
}

#[test]
fn the_sdk2_client_switches_a_model_threads_model() {
    let (server, home) = model_home("fixture-model,other-model");
    let (_g, ws) = workspace();
    let report = sdk2(
        "options",
        &home,
        &ws,
        &[],
        json!({"model": "fix/other-model", "prompt": "one"}),
    );
    let model = option(&report["newSession"]["configOptions"], "model");
    assert_eq!(
        (&model["category"], &model["currentValue"]),
        (&json!("model"), &json!("fix/fixture-model")),
        "{report}"
    );
    assert_eq!(values(model), ["fix/fixture-model", "fix/other-model"]);
    assert_eq!(
        report["newSession"]["modes"]["currentModeId"], "model:fix/fixture-model",
        "the thread's target as its mode: {report}"
    );
    let after = &report["setModel"]["result"]["configOptions"];
    assert_eq!(
        option(after, "target")["currentValue"],
        "model:fix/other-model",
        "{report}"
    );
    assert_eq!(report["prompt"]["result"]["stopReason"], "end_turn");
    assert_eq!(report["prompt"]["text"], "echo: one");
    assert_eq!(models_called(&server), [json!("other-model")]);
}

#[test]
fn the_sdk2_client_gets_the_turns_usage_and_the_context_window() {
    let (_server, home) = model_home("fixture-model");
    home.write_config(
        "[providers.fix.capabilities.\"fixture-model\"]\nmax_context_tokens = 8192\n",
    );
    let (_g, ws) = workspace();
    let report = sdk2("usage", &home, &ws, &[], json!({}));
    let usage = &report["prompt"]["result"]["usage"];
    let total = usage["totalTokens"].as_u64().unwrap_or_default();
    assert!(
        total > 0,
        "the turn's usage in the prompt response: {report}"
    );
    let windows = report["usageUpdates"].as_array().expect("usage updates");
    assert!(!windows.is_empty(), "usage_update sent: {report}");
    for w in windows {
        assert_eq!(w["size"], 8192, "the model's window: {report}");
        assert_eq!(w["used"], total, "the context the call filled: {report}");
    }
}

#[test]
fn the_sdk2_client_resumes_a_thread_in_a_new_process_then_closes_and_deletes_it() {
    let (server, home) = model_home("fixture-model");
    let (_g, ws) = workspace();
    let started = sdk2(
        "start",
        &home,
        &ws,
        &[],
        json!({"prompt": "remember the word zebra"}),
    );
    assert_eq!(started["prompt"]["text"], "echo: remember the word zebra");
    let sid = started["sessionId"].as_str().expect("a session id");

    let report = sdk2(
        "resume",
        &home,
        &ws,
        &[],
        json!({"session": sid, "prompt": "what was the word"}),
    );
    let caps = &report["initialize"]["agentCapabilities"]["sessionCapabilities"];
    for cap in ["resume", "close", "delete", "list"] {
        assert!(caps[cap].is_object(), "{cap} advertised: {report}");
    }
    assert!(report["resumed"].get("result").is_some(), "{report}");
    let replayed: Vec<&Value> = report["duringResume"]
        .as_array()
        .expect("updates")
        .iter()
        .filter(|u| {
            ["user_message_chunk", "agent_message_chunk"]
                .contains(&u["sessionUpdate"].as_str().unwrap_or_default())
        })
        .collect();
    assert!(replayed.is_empty(), "resume replays nothing: {replayed:?}");
    assert_eq!(report["prompt"]["result"]["stopReason"], "end_turn");
    assert_eq!(report["prompt"]["text"], "echo: what was the word");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert!(
        requests[1]["body"]["messages"]
            .to_string()
            .contains("remember the word zebra"),
        "the resumed thread kept its history: {}",
        requests[1]["body"]
    );

    assert!(report["closed"].get("result").is_some(), "{report}");
    assert!(report["deleted"].get("result").is_some(), "{report}");
    let listed = report["listed"]["result"]["sessions"]
        .as_array()
        .expect("session/list answered");
    assert!(
        listed.iter().all(|s| s["sessionId"] != sid),
        "deleted: {report}"
    );
    let gone = &report["resumedAgain"]["error"];
    assert_eq!(
        (
            &gone["code"],
            &gone["data"]["reason"],
            &gone["data"]["sessionId"]
        ),
        (&json!(-32002), &json!("session_not_found"), &json!(sid)),
        "{report}"
    );
}

#[test]
fn the_sdk2_clients_image_reaches_a_vision_model_and_a_text_only_model_refuses_it() {
    let (_g, ws) = workspace();
    let target = ["--target", "model:fix/fixture-model"];
    let caps = "[providers.fix.capabilities.\"fixture-model\"]\nvision = ";

    let (server, home) = model_home("fixture-model");
    home.write_config(&format!("{caps}true\n"));
    let report = sdk2("image", &home, &ws, &target, json!({}));
    assert_eq!(report["promptCapabilities"]["image"], true, "{report}");
    assert_eq!(report["prompt"]["result"]["stopReason"], "end_turn");
    assert_eq!(report["prompt"]["text"], "echo: describe it");
    let requests = server.requests();
    let user = requests.last().expect("a model request")["body"]["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| m["content"].clone())
        .expect("a user message");
    assert_eq!(
        user,
        json!([
            {"type": "text", "text": "describe it"},
            {"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}}
        ])
    );

    let (server, home) = model_home("fixture-model");
    home.write_config(&format!("{caps}false\n"));
    let report = sdk2("image", &home, &ws, &target, json!({}));
    let e = &report["prompt"]["error"];
    assert_eq!(e["code"], -32602, "{report}");
    assert_eq!(e["data"]["reason"], "content_unsupported", "{report}");
    assert_eq!(e["data"]["block"], "image");
    assert_eq!(e["data"]["target"], "model:fix/fixture-model");
    let message = e["message"].as_str().unwrap_or_default();
    assert!(message.contains("vision = false"), "{message}");
    assert!(server.requests().is_empty(), "no model call was made");
}

#[test]
fn the_sdk2_client_answers_an_agents_form_and_the_agent_gets_the_content() {
    let home = Home::empty();
    let script = json!({"turns": [{"match": "form", "actions": [{"elicit": {
        "message": "Who are you?",
        "schema": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "minLength": 1},
            "count": {"type": "integer", "minimum": 1, "maximum": 5}}}}}]}]});
    home.add_scripted_agent(&script.to_string(), &[], "");
    let (_g, ws) = workspace();
    let report = sdk2(
        "elicit",
        &home,
        &ws,
        &["--target", "agent:fixture"],
        json!({"prompt": "form please", "content": {"name": "Ada", "count": 3}}),
    );
    assert_eq!(report["prompt"]["result"]["stopReason"], "end_turn");
    assert_eq!(
        report["prompt"]["text"], r#"elicitation: accept {"count":3,"name":"Ada"}"#,
        "the agent was told it may elicit and got the SDK client's content: {report}"
    );
    let asked = report["elicitations"].as_array().expect("elicitations");
    assert_eq!(asked.len(), 1, "{report}");
    assert_eq!(asked[0]["message"], "Who are you?");
    assert_eq!(asked[0]["mode"], "form");
    assert_eq!(
        asked[0]["sessionId"], report["sessionId"],
        "in the SDK client's session"
    );
    assert_eq!(asked[0]["requestedSchema"]["required"], json!(["name"]));
}
