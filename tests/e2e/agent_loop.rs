//! Hecate's own agent (`agent_loop` tasks) over real HTTP against the real
//! `hecate serve`, with the fixture model server scripted with tool-calling
//! turns in both wire formats (OpenAI Chat Completions and Anthropic Messages):
//! a loop that reads, edits (a patch), runs a command and answers; approval
//! gates (approve without another model call, reject as a refusal the model
//! sees); tool errors the loop goes on after; the turn limit and the budget;
//! a SIGKILLed worker whose run is resumed without repeating a tool call; the
//! plan the model shares; a bare model found through a provider's model list.

use crate::support::agent::{
    WIRES, agent_home, agent_task, answer, approve, assert_said, call, completed, count,
    create_and_start, data, events, reaches, read_edit_run, run_completed, run_to_end, said, turn,
};
use crate::support::common::{ModelServer, workspace};
use crate::support::http::{Answer, Api, Served, serve, serve_args};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

#[tokio::test]
async fn a_loop_reads_edits_runs_a_command_and_answers_in_both_wire_formats() {
    for wire in WIRES {
        let server = ModelServer::start(Some(read_edit_run("All done.")));
        let home = agent_home(&server, wire, "");
        let s = serve(&home);
        let api = Api::new(&s);
        let (_dir, ws) = workspace();
        std::fs::write(ws.join("notes.txt"), "hello world\n").expect("seed");
        let (task, run, done) = run_to_end(&api, agent_task(wire.2, &ws, json!({}))).await;
        assert_eq!(done["status"], "completed", "{wire:?}: {done}");
        assert_eq!(
            done["provider"],
            wire.2.split('/').next().expect("p").to_lowercase()
        );
        assert_eq!(done["model"], wire.2.split('/').nth(1).expect("m"));
        assert_eq!(
            done["total_cost_micros_usd"], 440,
            "4 turns of 110 tokens at 1 micro-USD"
        );
        assert_eq!(
            std::fs::read_to_string(ws.join("notes.txt")).expect("read"),
            "hello agent\n"
        );
        let steps = data(&api, &format!("/hecate/v1/tasks/{task}/runs/{run}/steps")).await;
        let kinds: Vec<&str> = steps
            .iter()
            .map(|s| s["kind"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(
            kinds,
            ["model", "tool", "model", "tool", "model", "tool", "model"]
        );
        assert_eq!(steps[1]["input"]["tool"], "read_file");
        assert_eq!(steps[5]["exit_code"], 0);
        let patches = data(&api, &format!("/hecate/v1/tasks/{task}/runs/{run}/patches")).await;
        assert_eq!(patches.len(), 1, "{patches:?}");
        assert_eq!(
            (patches[0]["path"].as_str(), patches[0]["status"].as_str()),
            (Some("notes.txt"), Some("applied"))
        );
        let artifacts = data(
            &api,
            &format!("/hecate/v1/tasks/{task}/runs/{run}/artifacts"),
        )
        .await;
        let of = |kind: &str| artifacts.iter().find(|a| a["kind"] == kind).cloned();
        assert_eq!(of("final_answer").expect("answer")["content"], "All done.");
        let conversation: Value = serde_json::from_str(
            of("agent_conversation").expect("conversation")["content"]
                .as_str()
                .expect("text"),
        )
        .expect("conversation JSON");
        assert_eq!(conversation["turns"], 4);
        assert_eq!(
            conversation["entries"].as_array().expect("entries").len(),
            8
        );
        let ev = events(&api, &task, &run).await;
        assert_eq!(count(&ev, "turn.completed"), 4);
        assert_eq!(count(&ev, "tool.call.finished"), 3);
        assert_eq!(count(&ev, "tool.file.applied"), 1);
        let last_turn = ev
            .iter()
            .rev()
            .find(|e| e["type"] == "turn.completed")
            .expect("turn");
        assert_eq!(last_turn["data"]["cost_micros_usd"], 110);
        assert_eq!(last_turn["data"]["total_cost_micros_usd"], 440);
        assert_eq!(last_turn["data"]["usage"]["prompt_tokens"], 100);
        let requests = server.requests();
        assert_eq!(requests.len(), 4, "{wire:?}");
        let tools = requests[0]["body"]["tools"].as_array().expect("tools");
        assert_eq!(tools.len(), 8, "the built-ins, update_plan included");
        assert_said(&requests[1], "hello world");
        assert_said(&requests[3], "exit code 0");
        assert!(said(&requests[3]).contains("hello agent"));
    }
}

#[tokio::test]
async fn an_approved_call_runs_without_another_model_call_and_a_rejected_one_is_refused() {
    for wire in WIRES {
        let server = ModelServer::start(Some(json!([
            turn(vec![call(
                "shell_exec",
                json!({"command": "echo approved > out.txt"})
            )]),
            turn(vec![call(
                "file_write",
                json!({"path": "no.txt", "content": "x"})
            )]),
            answer("finished"),
        ])));
        let home = agent_home(&server, wire, "shell_exec,file_write");
        let s = serve(&home);
        let api = Api::new(&s);
        let (_dir, ws) = workspace();
        let (task, run) = create_and_start(&api, agent_task(wire.2, &ws, json!({}))).await;
        reaches(&api, &task, &run, &["awaiting_approval"]).await;
        let approvals = data(&api, &format!("/hecate/v1/tasks/{task}/approvals")).await;
        assert_eq!(approvals.len(), 1);
        assert_eq!(approvals[0]["kind"], "agent_loop_tool_call");
        assert!(
            approvals[0]["reason"]
                .as_str()
                .expect("reason")
                .contains("shell_exec")
        );
        assert_eq!(server.requests().len(), 1);
        assert!(
            !ws.join("out.txt").exists(),
            "nothing ran before the approval"
        );
        approve(&api, &task, approvals[0]["id"].as_str().expect("id")).await;
        reaches(&api, &task, &run, &["awaiting_approval"]).await;
        let approvals = data(&api, &format!("/hecate/v1/tasks/{task}/approvals")).await;
        let pending: Vec<&Value> = approvals
            .iter()
            .filter(|a| a["status"] == "pending")
            .collect();
        assert_eq!(pending.len(), 1, "{approvals:?}");
        assert!(ws.join("out.txt").exists(), "the approved call ran");
        let requests = server.requests();
        assert_eq!(
            requests.len(),
            2,
            "approving called the model only after the tool ran"
        );
        assert_said(&requests[1], "exit code 0");
        let id = pending[0]["id"].as_str().expect("id");
        let no = api
            .post(
                &format!("/hecate/v1/tasks/{task}/approvals/{id}/resolve"),
                json!({"decision": "reject", "note": "not that file"}),
            )
            .await;
        assert_eq!(no.status, 200, "{}", no.body);
        completed(&api, &task, &run).await;
        assert!(!ws.join("no.txt").exists(), "the rejected call never ran");
        let requests = server.requests();
        assert_eq!(requests.len(), 3);
        assert_said(&requests[2], "refused by the operator: not that file");
        let ev = events(&api, &task, &run).await;
        assert_eq!(count(&ev, "approval.requested"), 2);
        assert_eq!(count(&ev, "tool.call.refused"), 1);
        assert_eq!(count(&ev, "turn.completed"), 3);
    }
}

#[tokio::test]
async fn unknown_tools_bad_arguments_and_paths_outside_the_workspace_are_results_the_loop_goes_on_after()
 {
    let server = ModelServer::start(Some(json!([
        turn(vec![
            call("teleport", json!({})),
            call("read_file", json!({"path": "../../../etc/passwd"}))
        ]),
        turn(vec![
            call("read_file", json!({"file": "x"})),
            call(
                "file_write",
                json!({"path": "/etc/hecate.txt", "content": "x"})
            )
        ]),
        answer("gave up"),
    ])));
    let home = agent_home(&server, WIRES[1], "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let (task, run, _) = run_completed(&api, agent_task(WIRES[1].2, &ws, json!({}))).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let second = said(&requests[1]);
    assert!(second.contains("unknown tool \\\"teleport\\\""), "{second}");
    assert!(second.contains("climbs above the root"), "{second}");
    assert!(third_outside(&requests[2]), "{}", said(&requests[2]));
    let third = said(&requests[2]);
    assert!(
        third.contains("malformed arguments for read_file"),
        "{third}"
    );
    assert!(third.matches("\"is_error\":true").count() >= 2, "{third}");
    let steps = data(&api, &format!("/hecate/v1/tasks/{task}/runs/{run}/steps")).await;
    let tool_errors = steps
        .iter()
        .filter(|s| s["error_type"] == "tool_error")
        .count();
    assert_eq!(tool_errors, 4, "{steps:?}");
    assert!(!Path::new("/etc/hecate.txt").exists());
}

#[tokio::test]
async fn the_turn_limit_and_the_budget_stop_the_run_with_stable_reasons() {
    let looping = json!([{"repeat": true, "tool_calls": [{"name": "list_dir", "arguments": {}}],
                           "usage": {"input_tokens": 1000, "output_tokens": 0}}]);
    let server = ModelServer::start(Some(looping.clone()));
    let home = agent_home(&server, WIRES[0], "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let (_, _, done) = run_to_end(&api, agent_task(WIRES[0].2, &ws, json!({"max_turns": 3}))).await;
    assert_eq!(
        (done["status"].as_str(), done["error_type"].as_str()),
        (Some("failed"), Some("max_turns_exceeded")),
        "{done}"
    );
    assert_eq!(server.requests().len(), 3);

    let server = ModelServer::start(Some(looping));
    let home = agent_home(&server, WIRES[0], "");
    let s: Served = serve(&home);
    let api = Api::new(&s);
    let (task, run, done) = run_to_end(
        &api,
        agent_task(WIRES[0].2, &ws, json!({"budget_micros_usd": 1500})),
    )
    .await;
    assert_eq!(
        (done["status"].as_str(), done["error_type"].as_str()),
        (Some("failed"), Some("budget_exceeded")),
        "{done}"
    );
    assert_eq!(done["total_cost_micros_usd"], 2000);
    assert_eq!(
        server.requests().len(),
        2,
        "the second turn's tool calls were not run"
    );
    let steps = data(&api, &format!("/hecate/v1/tasks/{task}/runs/{run}/steps")).await;
    assert_eq!(steps.len(), 3, "model, tool, model: {steps:?}");

    let (task, _) = start_without_a_model(
        &api,
        json!({"execution_kind": "agent_loop", "prompt": "hi"}),
    )
    .await;
    let runs = data(&api, &format!("/hecate/v1/tasks/{task}/runs")).await;
    assert!(runs.is_empty(), "no run was created");
}

#[tokio::test]
async fn a_sigkilled_workers_loop_resumes_elsewhere_without_repeating_a_tool_call() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call(
            "shell_exec",
            json!({"command": "echo one >> count.txt"})
        )]),
        turn(vec![call(
            "shell_exec",
            json!({"command": "echo two >> count.txt; sleep 30"})
        )]),
        answer("recovered"),
    ])));
    let mut home = agent_home(&server, WIRES[0], "");
    home.set("HECATE_TASK_QUEUE_LEASE_SECONDS", "2");
    home.set("HECATE_TASK_DEFAULT_MODEL", WIRES[0].2);
    let args = ["serve", "--listen", "127.0.0.1:0"];
    let mut a = serve_args(&home, &args);
    let api = Api::new(&a);
    let (_dir, ws) = workspace();
    let mut body = agent_task(WIRES[0].2, &ws, json!({}));
    body["requested_model"] = json!("");
    let (task, run) = create_and_start(&api, body).await;
    for _ in 0..300 {
        let lines = std::fs::read_to_string(ws.join("count.txt")).unwrap_or_default();
        if lines.lines().count() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = a.child.kill();
    let _ = a.child.wait();
    let b = serve_args(&home, &args);
    let api = Api::new(&b);
    completed(&api, &task, &run).await;
    assert_eq!(
        std::fs::read_to_string(ws.join("count.txt")).expect("count"),
        "one\ntwo\n",
        "no tool call ran twice"
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_said(&requests[2], "interrupted");
    let ev = events(&api, &task, &run).await;
    assert_eq!(count(&ev, "gap.run_disconnected"), 1);
    assert_eq!(count(&ev, "tool.call.interrupted"), 1);
}

#[tokio::test]
async fn a_shared_plan_is_a_task_event_and_a_malformed_one_is_a_tool_error() {
    let entries = json!([
        {"content": "Read the notes", "priority": "high", "status": "in_progress"},
        {"content": "Answer", "priority": "low", "status": "pending"}
    ]);
    let server = ModelServer::start(Some(json!([
        turn(vec![call("update_plan", json!({"entries": entries}))]),
        turn(vec![call(
            "update_plan",
            json!({"entries": [{"content": "x", "priority": "urgent", "status": "pending"}]})
        )]),
        answer("Planned."),
    ])));
    let home = agent_home(&server, WIRES[0], "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let (task, run, _) = run_completed(&api, agent_task(WIRES[0].2, &ws, json!({}))).await;
    let ev = events(&api, &task, &run).await;
    let plans: Vec<&Value> = ev.iter().filter(|e| e["type"] == "agent.plan").collect();
    assert_eq!(
        plans.len(),
        1,
        "only the well-formed plan is shared: {ev:#?}"
    );
    assert_eq!(plans[0]["data"]["entries"], entries);
    let finished: Vec<&Value> = ev
        .iter()
        .filter(|e| e["type"] == "tool.call.finished")
        .collect();
    assert_eq!(finished[0]["data"]["is_error"], false);
    assert_eq!(
        finished[0]["data"]["tool_call_id"],
        plans[0]["data"]["tool_call_id"]
    );
    assert_eq!(finished[1]["data"]["is_error"], true);
    let requests = server.requests();
    assert!(said(&requests[1]).contains("plan updated: 0 of 2 done; now: Read the notes"));
    assert_said(&requests[2], "malformed arguments for update_plan");
}

#[tokio::test]
async fn a_bare_model_only_a_providers_model_list_names_runs_the_loop() {
    let server = ModelServer::start_listing(
        Some(json!([answer("Found by its listing.")])),
        "listed-model",
    );
    let other = ModelServer::start_listing(None, "other-model");
    let mut home = agent_home(&server, WIRES[0], "");
    home.set("PROVIDER_OTHER_BASE_URL", &format!("{}/v1", other.base));
    home.set("PROVIDER_OTHER_KIND", "openai");
    home.set("PROVIDER_OTHER_API_KEY", "test-key");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let (_, _, done) = run_completed(&api, agent_task("listed-model", &ws, json!({}))).await;
    assert_eq!(
        (&done["provider"], &done["model"]),
        (&json!("fix"), &json!("listed-model"))
    );
    assert_eq!(server.requests()[0]["body"]["model"], "listed-model");
    // A model no provider declares or lists is refused before a run exists.
    let (_, r) = start_without_a_model(&api, agent_task("unlisted-model", &ws, json!({}))).await;
    assert!(r.body.to_string().contains("model_not_found"), "{}", r.body);
}

/// Creates a task of `body` and asserts that starting it is refused with 422
/// `model_not_configured`; answers the task id and the refusal.
async fn start_without_a_model(api: &Api, body: Value) -> (String, Answer) {
    let a = api.post("/hecate/v1/tasks", body).await;
    let task = a.body["data"]["id"].as_str().expect("id").to_string();
    let r = api
        .post(&format!("/hecate/v1/tasks/{task}/start"), json!({}))
        .await;
    assert_eq!(
        (r.status, r.error_type()),
        (422, "model_not_configured"),
        "{}",
        r.body
    );
    (task, r)
}

/// Whether a request tells the model a write outside the workspace was refused.
fn third_outside(request: &Value) -> bool {
    said(request).contains("outside the session workspace")
}

/// A home whose providers `a` (on `fa`) and `b` (on `fb`) both serve `m`.
fn two_providers_serving_m(fa: &ModelServer, fb: &ModelServer) -> crate::support::common::Home {
    let mut home = agent_home(fa, ("A", "openai", "a/m"), "");
    home.set("PROVIDER_A_MODELS", "m");
    home.set("PROVIDER_B_BASE_URL", &format!("{}/v1", fb.base));
    home.set("PROVIDER_B_KIND", "openai");
    home.set("PROVIDER_B_API_KEY", "test-key");
    home.set("PROVIDER_B_MODELS", "m");
    home
}

#[tokio::test]
async fn a_turn_a_provider_fails_goes_to_the_next_one_serving_the_model_and_stays_there() {
    let fa = ModelServer::start(Some(json!([
        {"repeat": true, "status": 503, "error_message": "overloaded"}
    ])));
    let fb = ModelServer::start(Some(json!([
        turn(vec![call("read_file", json!({"path": "notes.txt"}))]),
        answer("The notes say hello."),
    ])));
    let home = two_providers_serving_m(&fa, &fb);
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    std::fs::write(ws.join("notes.txt"), "hello\n").expect("seed");
    let (task, run, done) = run_completed(&api, agent_task("m", &ws, json!({}))).await;
    assert_eq!(
        (&done["provider"], &done["model"]),
        (&json!("b"), &json!("m")),
        "the run names the provider that answered"
    );
    let evs = events(&api, &task, &run).await;
    let failovers: Vec<&Value> = evs
        .iter()
        .filter(|e| e["type"] == "turn.failover")
        .collect();
    assert_eq!(failovers.len(), 1, "{evs:?}");
    let f = &failovers[0]["data"];
    assert_eq!(f["from"], json!({"provider": "a", "model": "m"}), "{f}");
    assert_eq!(f["to"], json!({"provider": "b", "model": "m"}), "{f}");
    assert_eq!(f["turn"], 1, "{f}");
    assert!(
        f["message"].as_str().is_some_and(|m| m.contains("503")),
        "{f}"
    );
    let answered: Vec<&Value> = evs
        .iter()
        .filter(|e| e["type"] == "turn.completed")
        .map(|e| &e["data"]["provider"])
        .collect();
    assert_eq!(answered, [&json!("b"), &json!("b")], "{evs:?}");
    assert_eq!(fa.requests().len(), 1, "the second turn goes to b first");
    assert_eq!(fb.requests().len(), 2);

    // Each model turn is traced like a `/v1` request, under the request id on
    // its step: the first lists the failed provider and the one that answered.
    let steps = data(&api, &format!("/hecate/v1/tasks/{task}/runs/{run}/steps")).await;
    let model_steps: Vec<&Value> = steps.iter().filter(|s| s["kind"] == "model").collect();
    assert_eq!(model_steps.len(), 2, "{steps:?}");
    let first = model_steps[0]["input"]["request_id"]
        .as_str()
        .expect("the model step's request id");
    let mut found = Value::Null;
    for _ in 0..100 {
        // Traces are stored just after the turn, by the deferred writer.
        let t = api
            .get(&format!("/hecate/v1/traces?request_id={first}"))
            .await;
        found = t.body["data"][0].clone();
        if !found.is_null() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(found["client_format"], "agent_loop", "{found}");
    assert_eq!(found["status"], "completed", "{found}");
    assert_eq!(
        (&found["provider"], &found["model"]),
        (&json!("b"), &json!("m"))
    );
    let route: Vec<(&Value, &Value)> = found["route_candidates"]
        .as_array()
        .expect("route")
        .iter()
        .map(|c| (&c["provider"], &c["outcome"]))
        .collect();
    assert_eq!(
        route,
        [
            (&json!("a"), &json!("failed")),
            (&json!("b"), &json!("selected"))
        ],
        "{found}"
    );
    assert!(
        found["total_tokens"].as_u64().is_some_and(|t| t > 0),
        "{found}"
    );

    // A request the provider refuses (400) is the request's fault: no failover.
    let fa = ModelServer::start(Some(json!([
        {"repeat": true, "status": 400, "error_message": "bad request"}
    ])));
    let fb = ModelServer::start(None);
    let home = two_providers_serving_m(&fa, &fb);
    let s = serve(&home);
    let api = Api::new(&s);
    let (task, run, done) = run_to_end(&api, agent_task("m", &ws, json!({}))).await;
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(count(&events(&api, &task, &run).await, "turn.failover"), 0);
    assert!(fb.requests().is_empty(), "b was not asked");
}

/// The agent loop and `/v1` share what they learn of a provider: a 429 the
/// gateway met makes the next agent turn pass the provider over (a skipped
/// `turn.failover`, the provider not asked), and a 429 an agent turn met makes
/// `/v1` skip it (`provider_rate_limited` on the trace).
#[tokio::test]
async fn the_agent_loop_and_the_gateway_skip_a_provider_either_of_them_found_rate_limited() {
    let throttled = || {
        ModelServer::start(Some(json!([
            {"repeat": true, "status": 429, "error_message": "slow down", "retry_after": "120"}
        ])))
    };
    let fine = || ModelServer::start(Some(json!([{"text": "from b", "repeat": true}])));
    let (_dir, ws) = workspace();

    // The gateway learns first.
    let (fa, fb) = (throttled(), fine());
    let home = two_providers_serving_m(&fa, &fb);
    let s = serve(&home);
    let api = Api::new(&s);
    let r = api
        .post(
            "/v1/chat/completions",
            json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(fa.requests().len(), 1, "the gateway asked a, then b");
    let (task, run, done) = run_completed(&api, agent_task("m", &ws, json!({}))).await;
    assert_eq!(done["provider"], "b", "{done}");
    let evs = events(&api, &task, &run).await;
    let failovers: Vec<&Value> = evs
        .iter()
        .filter(|e| e["type"] == "turn.failover")
        .map(|e| &e["data"])
        .collect();
    assert_eq!(failovers.len(), 1, "{evs:?}");
    assert_eq!(failovers[0]["skipped"], true, "{}", failovers[0]);
    assert_eq!(
        failovers[0]["reason"], "provider_rate_limited",
        "{}",
        failovers[0]
    );
    assert_eq!(failovers[0]["to"]["provider"], "b", "{}", failovers[0]);
    assert_eq!(fa.requests().len(), 1, "the agent turn did not ask a");

    // The agent loop learns first.
    let (fa, fb) = (throttled(), fine());
    let home = two_providers_serving_m(&fa, &fb);
    let s = serve(&home);
    let api = Api::new(&s);
    run_completed(&api, agent_task("m", &ws, json!({}))).await;
    assert_eq!(fa.requests().len(), 1);
    let r = api
        .send(
            api.request(reqwest::Method::POST, "/v1/chat/completions")
                .header("x-request-id", "after-agent")
                .json(&json!({"model": "m", "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(fa.requests().len(), 1, "/v1 did not ask a");
    let t = api.get("/hecate/v1/traces?request_id=after-agent").await;
    let candidates = &t.body["data"][0]["route_candidates"];
    assert_eq!(candidates[0]["provider"], "a", "{candidates}");
    assert_eq!(
        candidates[0]["skip_reason"], "provider_rate_limited",
        "{candidates}"
    );
    assert_eq!(candidates[1]["outcome"], "selected", "{candidates}");
}
