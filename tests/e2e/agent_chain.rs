//! Chains of `agent_loop` runs over real HTTP and the CLI against the real
//! `hecate serve` and the fixture model server: retry-from-turn N (the
//! conversation cut before the Nth model turn, that turn taken again; an N out
//! of range is 400), continue with a follow-up prompt, resume (the history
//! hydrated as it was), each new run linked by `run.resumed_from_event` and
//! carrying the chain's cost.

use crate::support::agent::{
    WIRES, agent_home, agent_task, answer, call, create_and_start, data, events, reaches, said,
    turn,
};
use crate::support::common::{ModelServer, workspace};
use crate::support::http::{Api, serve};
use serde_json::{Value, json};

const ENDED: [&str; 3] = ["completed", "failed", "cancelled"];

async fn final_answer(api: &Api, task: &str, run: &str) -> String {
    data(
        api,
        &format!("/hecate/v1/tasks/{task}/runs/{run}/artifacts"),
    )
    .await
    .iter()
    .find(|a| a["kind"] == "final_answer")
    .and_then(|a| a["content"].as_str())
    .unwrap_or_default()
    .to_string()
}

async fn link(api: &Api, task: &str, run: &str) -> Value {
    events(api, task, run)
        .await
        .into_iter()
        .find(|e| e["type"] == "run.resumed_from_event")
        .expect("run.resumed_from_event")["data"]
        .clone()
}

#[tokio::test]
async fn retry_from_turn_continue_and_resume_carry_the_conversation_on() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call("read_file", json!({"path": "notes.txt"}))]),
        answer("first"),
        answer("second take"),
        answer("continued"),
        answer("from the top"),
    ])));
    let home = agent_home(&server, WIRES[0], "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    std::fs::write(ws.join("notes.txt"), "hello world\n").expect("seed");
    let (task, first) = create_and_start(&api, agent_task(WIRES[0].2, &ws, json!({}))).await;
    let done = reaches(&api, &task, &first, &ENDED).await;
    assert_eq!(done["status"], "completed", "{done}");
    let base = format!("/hecate/v1/tasks/{task}/runs/{first}");

    for bad in [0, 3] {
        let r = api
            .post(&format!("{base}/retry-from-turn"), json!({"turn": bad}))
            .await;
        assert_eq!(
            (r.status, r.error_type()),
            (400, "invalid_request"),
            "turn {bad}: {}",
            r.body
        );
        assert_eq!(r.body["error"]["turns"], 2, "{}", r.body);
    }
    let r = api
        .post(
            &format!("{base}/retry-from-turn"),
            json!({"turn": 2, "reason": "again"}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let second = r.body["data"]["id"].as_str().expect("run").to_string();
    let done = reaches(&api, &task, &second, &ENDED).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["prior_cost_micros_usd"], 220,
        "the chain's cost is carried"
    );
    assert_eq!(final_answer(&api, &task, &second).await, "second take");
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "only the retried turn called the model");
    let retried = said(&requests[2]);
    assert!(
        retried.contains("hello world"),
        "earlier turns are context: {retried}"
    );
    assert!(
        !retried.contains("first"),
        "the cut turn is gone: {retried}"
    );
    let steps = data(
        &api,
        &format!("/hecate/v1/tasks/{task}/runs/{second}/steps"),
    )
    .await;
    assert_eq!(steps.len(), 1);
    assert_eq!(steps[0]["index"], 1, "step indices restart");
    let l = link(&api, &task, &second).await;
    assert_eq!(
        (
            l["mode"].as_str(),
            l["turn"].as_u64(),
            l["source_run_id"].as_str()
        ),
        (Some("retry_from_turn"), Some(2), Some(first.as_str())),
        "{l}"
    );

    let empty = api
        .post(
            &format!("/hecate/v1/tasks/{task}/runs/{second}/continue"),
            json!({"prompt": "  "}),
        )
        .await;
    assert_eq!(empty.status, 400, "{}", empty.body);
    let r = api
        .post(
            &format!("/hecate/v1/tasks/{task}/runs/{second}/continue"),
            json!({"prompt": "now say more"}),
        )
        .await;
    assert_eq!(r.status, 202, "{}", r.body);
    let third = r.body["data"]["id"].as_str().expect("run").to_string();
    let done = reaches(&api, &task, &third, &ENDED).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(final_answer(&api, &task, &third).await, "continued");
    let continued = said(&server.requests()[3]);
    assert!(
        continued.contains("second take") && continued.contains("now say more"),
        "{continued}"
    );
    assert_eq!(link(&api, &task, &third).await["mode"], "continue");

    let r = api.post(&format!("{base}/resume"), json!({})).await;
    assert_eq!(r.status, 202, "{}", r.body);
    let fourth = r.body["data"]["id"].as_str().expect("run").to_string();
    let done = reaches(&api, &task, &fourth, &ENDED).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        final_answer(&api, &task, &fourth).await,
        "first",
        "a resumed run goes on from the hydrated history, which already ends in an answer"
    );
    assert_eq!(server.requests().len(), 4, "no model call was repeated");

    let out = home.run(&["tasks", "retry-from-turn", &task, &first, "--turn", "7"]);
    assert!(!out.status.success(), "an out-of-range turn fails");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("out of range"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = home.json(&[
        "tasks",
        "retry-from-turn",
        &task,
        &first,
        "--turn",
        "1",
        "--format",
        "json",
    ]);
    let fifth = out["data"]["id"].as_str().expect("run").to_string();
    let done = reaches(&api, &task, &fifth, &ENDED).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(final_answer(&api, &task, &fifth).await, "from the top");
    let top = said(&server.requests()[4]);
    assert!(!top.contains("hello world"), "{top}");
}
