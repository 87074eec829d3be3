//! OpenTelemetry: with `OTEL_EXPORTER_OTLP_ENDPOINT` set, `hecate` exports the
//! spans and metrics of every path — a session turn and its model call, a
//! `/v1` gateway request, Hecate's agent with its tool calls, an external
//! agent's prompt, an MCP call relayed upstream — to a real OTLP/HTTP
//! collector (the fixtures' `otlp-collector`, decoding the official protobuf
//! messages), with the `gen_ai.*` / `mcp.*` / `hecate.*` attributes; the
//! answer stores the id of its turn's span, shown by the CLI, HTTP and MCP.
//! Without an endpoint nothing is sent.

use crate::support::agent::{WIRES, agent_home, answer, call, tools_chat_args, turn};
use crate::support::common::{
    Home, ModelServer, fixture_chat_args, git_workspace, permission_turn, session_id_from, text,
    workspace,
};
use crate::support::http::{Api, serve};
use crate::support::mcp::{McpProc, fixture_upstream};
use crate::support::otlp::{Collector, attr, export_env};
use serde_json::{Value, json};
use std::time::Duration;

/// Points `home` at `collector`.
fn traced(home: &mut Home, collector: &Collector) {
    for (k, v) in export_env(collector) {
        home.set(k, &v);
    }
}

fn named<'a>(name: &'a str) -> impl Fn(&Value) -> bool + 'a {
    move |s| s["name"] == name
}

#[test]
fn a_chat_turn_exports_its_run_and_model_call_and_the_answer_keeps_its_span_id() {
    let server = ModelServer::start(Some(json!([
        {"text": "traced answer", "usage": {"input_tokens": 7, "output_tokens": 3}}
    ])));
    let collector = Collector::start();
    let mut home = Home::with_openai(&server);
    traced(&mut home, &collector);
    let out = home.run(&["chat", "--model", "fix/m", "traced"]);
    assert!(out.status.success(), "{}", text(&out).1);
    let id = session_id_from(&out.stderr);

    let run = collector.wait_span("the turn's span", named("agent_chat.run"));
    assert_eq!(attr(&run, "hecate.agent_chat.session.id"), id);
    assert_eq!(attr(&run, "gen_ai.conversation.id"), id);
    assert_eq!(attr(&run, "hecate.runtime.kind"), "model");
    assert_eq!(attr(&run, "hecate.provider.name"), "fix");
    assert_eq!(attr(&run, "gen_ai.request.model"), "m");
    assert_eq!(attr(&run, "hecate.run.status"), "completed");
    assert_eq!(run["status"]["code"], "ok");
    assert!(attr(&run, "hecate.run.id").starts_with("run_"), "{run}");
    assert_eq!(run["attributes"]["gen_ai.usage.input_tokens"], 7);
    assert_eq!(run["resource"]["service.name"], "hecate");

    let model = collector.wait_span("the model call", named("chat m"));
    assert_eq!(model["kind"], "client");
    assert_eq!(model["trace_id"], run["trace_id"]);
    assert_eq!(model["parent_span_id"], run["span_id"]);
    assert_eq!(attr(&model, "gen_ai.operation.name"), "chat");
    assert_eq!(attr(&model, "gen_ai.provider.name"), "openai");
    assert_eq!(attr(&model, "gen_ai.request.model"), "m");
    assert_eq!(attr(&model, "hecate.provider.name"), "fix");
    assert_eq!(attr(&model, "server.address"), "127.0.0.1");
    assert_eq!(model["attributes"]["gen_ai.usage.input_tokens"], 7);
    assert_eq!(model["attributes"]["gen_ai.usage.output_tokens"], 3);
    assert!(
        model["attributes"]["gen_ai.response.finish_reasons"].is_array(),
        "{model}"
    );

    // Metrics: the call's tokens and duration, the run's count.
    let tokens = collector.wait_metric("input token usage", |m| {
        m["name"] == "gen_ai.client.token.usage" && m["attributes"]["gen_ai.token.type"] == "input"
    });
    assert_eq!(tokens["kind"], "histogram");
    assert_eq!(tokens["sum"], 7.0);
    assert_eq!(tokens["unit"], "{token}");
    assert_eq!(tokens["attributes"]["gen_ai.request.model"], "m");
    let duration = collector.wait_metric(
        "the call's duration",
        named("gen_ai.client.operation.duration"),
    );
    assert_eq!(duration["unit"], "s");
    assert_eq!(duration["count"], 1);
    let runs = collector.wait_metric("the run count", named("hecate.agent_chat.runs"));
    assert_eq!(runs["value"], 1);
    assert_eq!(runs["attributes"]["hecate.run.status"], "completed");

    // The answer keeps the span that produced it: CLI (JSON and text) ...
    let span_id = run["span_id"].as_str().expect("span id").to_string();
    let trace_id = run["trace_id"].as_str().expect("trace id").to_string();
    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    assert_eq!(show["data"]["runs"][0]["span_id"], span_id, "{show}");
    assert_eq!(show["data"]["runs"][0]["trace_id"], trace_id);
    let shown = text(&home.run(&["sessions", "show", &id])).0;
    assert!(
        shown.contains(&format!("trace {trace_id} · span {span_id}")),
        "{shown}"
    );
    // ... MCP ...
    let mut mcp = McpProc::start(&home, json!({}));
    let t = mcp.call_ok("get_transcript", json!({"session_id": id}));
    let answer = &t["structuredContent"]["messages"][1];
    assert_eq!(answer["role"], "assistant");
    assert_eq!(answer["span_id"], span_id, "{t}");
    assert_eq!(answer["trace_id"], trace_id);
    drop(mcp);
    // ... and HTTP.
    let served = serve(&home);
    let api = Api::new(&served);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let session = rt.block_on(api.get(&format!("/hecate/v1/agent-chat/sessions/{id}")));
    assert_eq!(session.status, 200, "{}", session.body);
    let messages = session.body["data"]["messages"]
        .as_array()
        .expect("messages");
    let assistant = messages
        .iter()
        .find(|m| m["role"] == "assistant")
        .expect("assistant");
    assert_eq!(assistant["span_id"], span_id, "{assistant}");
    assert_eq!(assistant["trace_id"], trace_id);
}

#[test]
fn a_failed_model_call_marks_its_span_and_its_turn_failed_with_the_error_type() {
    let server = ModelServer::start(Some(json!([
        {"status": 500, "error_message": "upstream broke"}
    ])));
    let collector = Collector::start();
    let mut home = Home::with_openai(&server);
    traced(&mut home, &collector);
    let out = home.run(&["chat", "--model", "fix/m", "doomed"]);
    assert!(!out.status.success(), "{}", text(&out).0);

    let model = collector.wait_span("the failed model call", named("chat m"));
    assert_eq!(attr(&model, "error.type"), "500", "{model}");
    assert_eq!(model["status"]["code"], "error");
    assert!(
        model["status"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("upstream broke")),
        "{model}"
    );
    let run = collector.wait_span("the failed turn", named("agent_chat.run"));
    assert_eq!(attr(&run, "hecate.run.status"), "failed");
    assert_eq!(run["status"]["code"], "error");
    assert!(!attr(&run, "error.type").is_empty(), "{run}");
    assert_eq!(model["parent_span_id"], run["span_id"]);
    let took = collector.wait_metric("the failed call's duration", |m| {
        m["name"] == "gen_ai.client.operation.duration" && m["attributes"]["error.type"] == "500"
    });
    assert_eq!(took["count"], 1);
    assert!(
        !collector
            .metrics()
            .iter()
            .any(|m| m["name"] == "gen_ai.client.token.usage"),
        "no tokens were reported, so none are counted"
    );
    let runs = collector.wait_metric("the failed run", |m| {
        m["name"] == "hecate.agent_chat.runs" && m["attributes"]["hecate.run.status"] == "failed"
    });
    assert_eq!(runs["value"], 1);
    // The warning Hecate logs is exported as an OTLP log record beside the span.
    let log = collector.wait_log("the turn's failure log", |l| {
        l["body"]
            .as_str()
            .is_some_and(|b| b.contains("turn failed"))
    });
    assert_eq!(log["severity_text"], "WARN", "{log}");
    assert_eq!(log["resource"]["service.name"], "hecate");
    assert!(!log["attributes"]["error_type"].is_null(), "{log}");
    assert_eq!(
        log["trace_id"], run["trace_id"],
        "the record is in the turn's trace: {log}"
    );
}

#[test]
fn nothing_is_sent_without_an_endpoint_and_answers_have_no_span() {
    let server = ModelServer::start(None);
    let collector = Collector::start();
    let home = Home::with_openai(&server);
    let out = home.run(&["chat", "--model", "fix/m", "untraced"]);
    assert!(out.status.success(), "{}", text(&out).1);
    let id = session_id_from(&out.stderr);
    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    assert!(show["data"]["runs"][0].get("span_id").is_none(), "{show}");
    assert!(collector.records().is_empty());
}

#[tokio::test]
async fn a_gateway_request_is_a_chat_span_under_its_http_request_with_the_gateway_metrics() {
    let server = ModelServer::start(Some(json!([
        {"text": "Hello.", "usage": {"input_tokens": 11, "output_tokens": 2}},
        {"text": "Streamed hello.", "usage": {"input_tokens": 13, "output_tokens": 3}}
    ])));
    let collector = Collector::start();
    let mut home = Home::with_both_kinds(&server);
    traced(&mut home, &collector);
    let served = serve(&home);
    let api = Api::new(&served);
    let rb = api
        .request(reqwest::Method::POST, "/v1/chat/completions")
        .header("x-hecate-session-id", "otel-gw-1")
        .json(&json!({"model": "gpt-fix", "messages": [{"role": "user", "content": "hi"}]}));
    let answer = api.send(rb).await;
    assert_eq!(answer.status, 200, "{}", answer.body);
    let request_id = answer
        .header("x-request-id")
        .expect("request id")
        .to_string();
    let trace_id = answer.header("x-trace-id").expect("trace id").to_string();

    let span = collector.wait_span("the gateway call", named("chat gpt-fix"));
    assert_eq!(span["kind"], "client");
    assert_eq!(span["trace_id"], trace_id.as_str());
    assert_ne!(
        span["parent_span_id"], "",
        "a child of the HTTP request's span"
    );
    assert_eq!(attr(&span, "gen_ai.operation.name"), "chat");
    assert_eq!(attr(&span, "gen_ai.provider.name"), "openai");
    assert_eq!(attr(&span, "gen_ai.request.model"), "gpt-fix");
    assert_eq!(attr(&span, "gen_ai.response.model"), "gpt-fix");
    assert_eq!(attr(&span, "gen_ai.conversation.id"), "otel-gw-1");
    assert_eq!(attr(&span, "hecate.provider.name"), "oai");
    assert_eq!(attr(&span, "hecate.request.id"), request_id);
    assert_eq!(attr(&span, "hecate.gateway.ingress"), "openai");
    assert_eq!(attr(&span, "hecate.gateway.outcome"), "completed");
    assert_eq!(span["attributes"]["hecate.gateway.stream"], false);
    assert_eq!(span["attributes"]["gen_ai.usage.input_tokens"], 11);
    assert_eq!(span["attributes"]["gen_ai.usage.output_tokens"], 2);

    let counted = collector.wait_metric(
        "the gateway request count",
        named("hecate.gateway.requests"),
    );
    assert_eq!(counted["value"], 1);
    assert_eq!(counted["attributes"]["hecate.gateway.outcome"], "completed");
    assert_eq!(counted["attributes"]["hecate.provider.name"], "oai");
    let output = collector.wait_metric("output token usage", |m| {
        m["name"] == "gen_ai.client.token.usage" && m["attributes"]["gen_ai.token.type"] == "output"
    });
    assert_eq!(output["sum"], 2.0);

    // A streamed Anthropic request: its span ends with the stream, usage included.
    let rb = api
        .request(reqwest::Method::POST, "/v1/messages")
        .header("anthropic-version", "2023-06-01")
        .json(
            &json!({"model": "claude-fix", "max_tokens": 64, "stream": true,
                      "messages": [{"role": "user", "content": "hi"}]}),
        );
    let streamed = rb.send().await.expect("stream");
    assert_eq!(streamed.status(), 200);
    let body = streamed.text().await.expect("stream body");
    assert!(body.contains("message_stop"), "{body}");
    let span = collector.wait_span("the streamed call", named("chat claude-fix"));
    assert_eq!(attr(&span, "gen_ai.provider.name"), "anthropic");
    assert_eq!(attr(&span, "hecate.provider.name"), "ant");
    assert_eq!(attr(&span, "hecate.gateway.ingress"), "anthropic");
    assert_eq!(span["attributes"]["hecate.gateway.stream"], true);
    assert_eq!(attr(&span, "hecate.gateway.outcome"), "completed");
    assert_eq!(span["attributes"]["gen_ai.usage.input_tokens"], 13);
    assert_eq!(span["attributes"]["gen_ai.usage.output_tokens"], 3);

    // An unknown model fails before any provider: counted as failed.
    let rb = api
        .request(reqwest::Method::POST, "/v1/chat/completions")
        .json(&json!({"model": "no-such-model", "messages": [{"role": "user", "content": "hi"}]}));
    let refused = api.send(rb).await;
    assert_eq!(refused.status, 404, "{}", refused.body);
    let failed = collector.wait_metric("the failed request count", |m| {
        m["name"] == "hecate.gateway.requests"
            && m["attributes"]["hecate.gateway.outcome"] == "failed"
    });
    assert_eq!(
        failed["attributes"]["gen_ai.request.model"],
        "no-such-model"
    );
}

#[test]
fn hecate_agent_runs_are_invoke_agent_spans_with_their_model_and_tool_calls() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call("list_dir", json!({}))]),
        answer("There is one file."),
    ])));
    let collector = Collector::start();
    let mut home = agent_home(&server, WIRES[0], "");
    traced(&mut home, &collector);
    let (_dir, ws) = workspace();
    std::fs::write(ws.join("a.txt"), "a").expect("file");
    let ws_arg = ws.display().to_string();
    let out = home.run(&tools_chat_args(&ws_arg, &["what is here?"]));
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "There is one file.");

    let agent = collector.wait_span("the agent run", named("invoke_agent hecate"));
    assert_eq!(attr(&agent, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(&agent, "gen_ai.agent.name"), "hecate");
    assert_eq!(attr(&agent, "gen_ai.request.model"), "gpt-fixture");
    assert_eq!(attr(&agent, "hecate.workspace.path"), ws_arg);
    assert_eq!(attr(&agent, "hecate.run.status"), "completed");
    assert_eq!(agent["attributes"]["hecate.agent_loop.turns"], 2);
    let task = attr(&agent, "hecate.task.id").to_string();
    assert!(task.starts_with("task_"), "{agent}");

    let tool = collector.wait_span("the tool call", named("execute_tool list_dir"));
    assert_eq!(tool["parent_span_id"], agent["span_id"]);
    assert_eq!(attr(&tool, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(attr(&tool, "gen_ai.tool.name"), "list_dir");
    assert_eq!(attr(&tool, "gen_ai.tool.type"), "function");
    assert!(!attr(&tool, "gen_ai.tool.call.id").is_empty(), "{tool}");
    assert_eq!(attr(&tool, "hecate.tool.outcome"), "ok");

    let models: Vec<Value> = collector
        .spans()
        .into_iter()
        .filter(|s| s["name"] == "chat gpt-fixture" && s["parent_span_id"] == agent["span_id"])
        .collect();
    assert_eq!(models.len(), 2, "one chat span per model turn");

    // The session turn that ran the task names it, and the run is in its trace.
    let run = collector.wait_span("the session turn", named("agent_chat.run"));
    assert_eq!(attr(&run, "hecate.runtime.kind"), "agent");
    assert_eq!(agent["trace_id"], run["trace_id"]);
    assert_eq!(agent["parent_span_id"], run["span_id"]);
    assert_eq!(attr(&run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(&run, "hecate.task.id"), task);
    let tools = collector.wait_metric("the tool duration", named("gen_ai.execute_tool.duration"));
    assert_eq!(tools["attributes"]["gen_ai.tool.name"], "list_dir");
}

/// The fixture agent asks before writing, then edits a tracked file.
fn write_script() -> String {
    let edit_a = json!([{"edit_file": {"path": "a.txt", "content": "changed\n"}}]);
    json!({"turns": [permission_turn("Write a.txt", edit_a)]}).to_string()
}

#[test]
fn an_external_agent_prompt_is_an_agent_chat_run_with_the_adapter_attributes() {
    let collector = Collector::start();
    let mut home = Home::empty();
    home.add_scripted_agent(&write_script(), &[], "");
    traced(&mut home, &collector);
    let ws = git_workspace();
    let w = ws.path().display().to_string();
    let out = home.run_with_stdin(&fixture_chat_args(&w, &["please write"]), b"a\n");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("done"), "{stdout}");
    let id = session_id_from(&out.stderr);

    let run = collector.wait_span("the agent prompt", named("agent_chat.run"));
    assert_eq!(attr(&run, "hecate.runtime.kind"), "external_agent");
    assert_eq!(attr(&run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(attr(&run, "gen_ai.agent.name"), "fixture");
    assert_eq!(attr(&run, "hecate.agent_adapter.id"), "fixture");
    assert_eq!(attr(&run, "hecate.agent_adapter.driver.kind"), "acp");
    assert!(
        attr(&run, "hecate.agent_adapter.command").ends_with("hecate-fixtures"),
        "{run}"
    );
    assert_eq!(attr(&run, "hecate.workspace.path"), w);
    assert_eq!(attr(&run, "hecate.agent_chat.session.id"), id);
    assert!(
        !attr(&run, "hecate.agent_adapter.native_session.id").is_empty(),
        "{run}"
    );
    // The external agent's answer keeps the span of the run that produced it.
    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    assert_eq!(show["data"]["runs"][0]["span_id"], run["span_id"], "{show}");
    assert_eq!(
        show["data"]["runs"][0]["trace_id"], run["trace_id"],
        "{show}"
    );
    let mut mcp = McpProc::start(&home, json!({}));
    let t = mcp.call_ok("get_transcript", json!({"session_id": id}));
    let answer = t["structuredContent"]["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "assistant"))
        .cloned()
        .expect("the agent's answer");
    assert_eq!(answer["span_id"], run["span_id"], "{t}");
    drop(mcp);
    let answer = show_answer(&home, &id);
    assert_eq!(
        run["attributes"]["hecate.agent_adapter.output.bytes"],
        answer.len(),
        "{run}"
    );
    assert_eq!(
        run["attributes"]["hecate.agent_adapter.diff.captured"],
        true
    );
    // The approval is an event of the turn's span and counted.
    let events = run["events"].as_array().expect("events");
    assert!(
        events
            .iter()
            .any(|e| e["attributes"]["hecate.approval.status"] == "approved"),
        "{run}"
    );
    let runs = collector.wait_metric("the run count", named("hecate.agent_chat.runs"));
    assert_eq!(runs["attributes"]["hecate.agent_adapter.id"], "fixture");
    let asked = collector.wait_metric("the approval asked", named("hecate.approvals.requested"));
    assert_eq!(asked["value"], 1);
    assert_eq!(asked["attributes"]["hecate.approval.tool_kind"], "edit");
    let resolved =
        collector.wait_metric("the approval answered", named("hecate.approvals.resolved"));
    assert_eq!(resolved["attributes"]["hecate.approval.status"], "approved");
    assert_eq!(resolved["attributes"]["hecate.approval.path"], "operator");
    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    assert_eq!(show["data"]["runs"][0]["span_id"], run["span_id"]);

    // A probe is counted by its outcome.
    let probed = home.run(&["adapters", "probe", "fixture"]);
    assert!(probed.status.success(), "{}", text(&probed).1);
    let probe = collector.wait_metric("the probe", named("hecate.agent_adapter.probes"));
    assert_eq!(
        probe["attributes"]["hecate.agent_adapter.probe.status"],
        "ready"
    );
    assert_eq!(probe["attributes"]["hecate.agent_adapter.id"], "fixture");
}

/// The text of a session's last answer.
fn show_answer(home: &Home, id: &str) -> String {
    let show = home.json(&["sessions", "show", id, "--format", "json"]);
    show["data"]["messages"]
        .as_array()
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "assistant"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_mcp_call_relayed_upstream_is_a_tools_call_client_span() {
    let collector = Collector::start();
    let mut home = Home::empty();
    home.write_config(&fixture_upstream("alpha", &[], ""));
    traced(&mut home, &collector);
    let mut mcp = McpProc::start(&home, json!({}));
    mcp.call_ok("alpha__echo", json!({"message": "traced"}));
    let failed = mcp.call("alpha__test_error_handling", json!({}));
    assert_eq!(failed["result"]["isError"], true, "{failed}");
    mcp.close_and_wait(Duration::from_secs(30));

    let span = collector.wait_span("the MCP call", named("tools/call echo"));
    assert_eq!(span["kind"], "client");
    // The client's call to the hub is the server span the relayed call is under.
    let served = collector.wait_span("the call to the hub", named("tools/call alpha__echo"));
    assert_eq!(served["kind"], "server");
    assert_eq!(attr(&served, "mcp.method.name"), "tools/call");
    assert_eq!(attr(&served, "gen_ai.tool.name"), "alpha__echo");
    assert_eq!(span["parent_span_id"], served["span_id"]);
    assert_eq!(span["trace_id"], served["trace_id"]);
    assert_eq!(attr(&span, "mcp.method.name"), "tools/call");
    assert_eq!(attr(&span, "gen_ai.tool.name"), "echo");
    assert_eq!(attr(&span, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(attr(&span, "hecate.mcp.server"), "alpha");
    assert_eq!(attr(&span, "network.transport"), "pipe");
    assert_eq!(attr(&span, "hecate.mcp.outcome"), "ok");
    let error = collector.wait_span(
        "the failing MCP call",
        named("tools/call test_error_handling"),
    );
    assert_eq!(attr(&error, "error.type"), "tool_error");
    assert_eq!(error["status"]["code"], "error");
    let error = collector.wait_span(
        "the failing call to the hub",
        named("tools/call alpha__test_error_handling"),
    );
    assert_eq!(attr(&error, "error.type"), "tool_error");
    let took = collector.wait_metric("the MCP call duration", |m| {
        m["name"] == "mcp.client.operation.duration"
            && m["attributes"]["gen_ai.tool.name"] == "echo"
    });
    assert_eq!(took["attributes"]["hecate.mcp.server"], "alpha");
}

/// A turn stopped over HTTP is a cancelled run whose metric and span say why
/// (`hecate.run.cancel_reason`: `requested`).
#[tokio::test]
async fn a_cancelled_turn_carries_its_cancel_reason() {
    let mut step = crate::support::http::slow_text(200, 40);
    step["repeat"] = json!(true);
    let server = ModelServer::start(Some(json!([step])));
    let collector = Collector::start();
    let mut home = Home::with_openai(&server);
    traced(&mut home, &collector);
    let s = serve(&home);
    let api = Api::new(&s);
    let id = api.create_session(json!({})).await;
    let turn = tokio::spawn({
        let api = api.clone();
        let id = id.clone();
        async move { api.say(&id, "a long answer").await }
    });
    // A hang guard, not a timing assertion.
    for i in 0.. {
        let stats = api.get("/hecate/v1/system/stats").await;
        if stats.body["data"]["turns_running"] == 1 {
            break;
        }
        assert!(i < 500, "the turn never ran: {}", stats.body);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let c = api.session_action(&id, "cancel").await;
    assert_eq!(c.status, 202, "{}", c.body);
    let done = turn.await.expect("join");
    assert_eq!(done.body["data"]["status"], "cancelled", "{}", done.body);

    let runs = collector.wait_metric("the cancelled run", |m| {
        m["name"] == "hecate.agent_chat.runs" && m["attributes"]["hecate.run.status"] == "cancelled"
    });
    assert_eq!(
        runs["attributes"]["hecate.run.cancel_reason"], "requested",
        "{runs}"
    );
    let span = collector.wait_span("the cancelled turn", named("agent_chat.run"));
    assert_eq!(
        attr(&span, "hecate.run.cancel_reason"),
        "requested",
        "{span}"
    );
}
