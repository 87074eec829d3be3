//! The three layers of an `agent_loop` task's system prompt over the real
//! `hecate serve` and the fixture model, in both wire formats: the operator's
//! global layer (`[tasks] system_prompt`, Hecate's own when unset, left out when
//! empty), the execution profile's and the task's own are sent in that order,
//! none replacing another, and the run's stored conversation keeps each layer.

use crate::support::agent::{WIRES, agent_home_with, agent_task, answer, data, run_completed};
use crate::support::common::{ModelServer, workspace};
use crate::support::http::{Api, serve};
use serde_json::{Value, json};

/// The system prompt a recorded provider request carried, in either wire format.
fn system_of(request: &Value) -> String {
    let body = &request["body"];
    if let Some(s) = body["system"].as_str() {
        return s.to_string();
    }
    if let Some(blocks) = body["system"].as_array() {
        return blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join("");
    }
    body["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "system"))
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_string()
}

/// The stored conversation of a run.
async fn conversation(api: &Api, task: &str, run: &str) -> Value {
    let artifacts = data(
        api,
        &format!("/hecate/v1/tasks/{task}/runs/{run}/artifacts"),
    )
    .await;
    let text = artifacts
        .iter()
        .find(|a| a["kind"] == "agent_conversation")
        .and_then(|a| a["content"].as_str())
        .expect("a stored conversation");
    serde_json::from_str(text).expect("conversation JSON")
}

#[tokio::test]
async fn global_profile_and_task_layers_are_sent_in_order_and_kept_with_the_conversation() {
    for wire in WIRES {
        let server = ModelServer::start(Some(json!([answer("done")])));
        let home = agent_home_with(
            &server,
            wire,
            "",
            "[tasks]\nsystem_prompt = \"GLOBAL: follow the team rules.\"\n",
        );
        let s = serve(&home);
        let api = Api::new(&s);
        let (_dir, ws) = workspace();
        let body = agent_task(
            wire.2,
            &ws,
            json!({"execution_profile": "coding_agent", "system_prompt": "TASK: only touch docs/."}),
        );
        let (task, run, _) = run_completed(&api, body).await;

        let t = api.get(&format!("/hecate/v1/tasks/{task}")).await;
        let profile = t.body["data"]["profile_prompt"]
            .as_str()
            .expect("profile layer")
            .to_string();
        assert!(profile.contains("careful coding agent"), "{}", t.body);
        assert_eq!(t.body["data"]["system_prompt"], "TASK: only touch docs/.");

        let requests = server.requests();
        assert_eq!(
            system_of(&requests[0]),
            format!("GLOBAL: follow the team rules.\n\n{profile}\n\nTASK: only touch docs/."),
            "{wire:?}"
        );
        let c = conversation(&api, &task, &run).await;
        assert_eq!(
            c["system"],
            json!({"global": "GLOBAL: follow the team rules.", "profile": profile,
                   "task": "TASK: only touch docs/."}),
            "{wire:?}"
        );
    }
}

#[tokio::test]
async fn without_a_global_layer_set_hecates_own_leads_and_an_empty_one_is_left_out() {
    let wire = WIRES[0];
    // Unset: Hecate's own global layer, no profile layer for repo_local.
    let server = ModelServer::start(Some(json!([answer("done")])));
    let home = agent_home_with(&server, wire, "", "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let body = agent_task(wire.2, &ws, json!({"execution_profile": "repo_local"}));
    let (task, run, _) = run_completed(&api, body).await;
    let sent = system_of(&server.requests()[0]);
    assert!(sent.starts_with("You are Hecate's agent"), "{sent}");
    assert!(!sent.contains("\n\n"), "one layer only: {sent}");
    let c = conversation(&api, &task, &run).await;
    assert_eq!(
        (&c["system"]["profile"], &c["system"]["task"]),
        (&json!(""), &json!(""))
    );
    drop(s);

    // Set to "": the profile's and the task's layers alone.
    let server = ModelServer::start(Some(json!([answer("done")])));
    let home = agent_home_with(&server, wire, "", "[tasks]\nsystem_prompt = \"\"\n");
    let s = serve(&home);
    let api = Api::new(&s);
    let body = agent_task(
        wire.2,
        &ws,
        json!({"execution_profile": "coding_agent", "system_prompt": "Be brief."}),
    );
    run_completed(&api, body).await;
    let sent = system_of(&server.requests()[0]);
    assert!(sent.starts_with("You are a careful coding agent"), "{sent}");
    assert!(sent.ends_with("\n\nBe brief."), "{sent}");
    assert!(!sent.contains("Hecate's agent"), "{sent}");
}
