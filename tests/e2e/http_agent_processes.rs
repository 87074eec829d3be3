//! The supervised agent processes over HTTP: a session's fixture agent is listed
//! with its session, pid and idle time while it waits for the next prompt; a
//! kill stops its process group and takes it off the list; the session stays and
//! its next prompt starts a new process. Unknown sessions are 404.

use crate::support::child::process_alive;
use crate::support::common::{Home, git_workspace};
use crate::support::http::{Api, agent_processes_reach, create_agent_session, serve};
use serde_json::{Value, json};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

fn processes(list: &Value) -> Vec<Value> {
    list["data"].as_array().expect("data").clone()
}

#[tokio::test]
async fn a_live_agent_process_is_listed_and_killed() {
    let home = Home::empty();
    home.add_scripted_agent(
        &json!({"turns": [{"match": "hello", "actions": [{"text": "hi"}]}]}).to_string(),
        &[],
        "",
    );
    let s = serve(&home);
    let api = Api::new(&s);
    let ws = git_workspace();

    let empty = api.get("/hecate/v1/agent-adapters/processes").await;
    assert_eq!(empty.status, 200, "{}", empty.body);
    assert_eq!(empty.body["object"], "agent_processes");
    assert!(processes(&empty.body).is_empty());

    let id = create_agent_session(&api, "fixture", ws.path()).await;
    let said = api.say(&id, "hello").await;
    assert_eq!(said.status, 200, "{}", said.body);
    agent_processes_reach(&api, 1, WAIT).await;

    let list = api.get("/hecate/v1/agent-adapters/processes").await;
    let rows = processes(&list.body);
    assert_eq!(rows.len(), 1, "{}", list.body);
    let row = &rows[0];
    assert_eq!(row["session_id"], id.as_str());
    assert_eq!(row["adapter_id"], "fixture");
    assert_eq!(row["alive"], true);
    assert_eq!(row["turns"], 0);
    assert!(row["idle_ms"].is_u64(), "idle between turns: {row}");
    assert!(row["native_session_id"].is_string());
    assert!(row["started_at"].is_string());
    let pid = row["pid"].as_u64().expect("pid");
    assert!(process_alive(pid as i64), "the listed pid runs");

    let killed = api
        .post(
            &format!("/hecate/v1/agent-adapters/processes/{id}/kill"),
            json!({}),
        )
        .await;
    assert_eq!(killed.status, 200, "{}", killed.body);
    assert_eq!(killed.body["object"], "agent_process");
    assert_eq!(killed.body["data"]["pid"], pid);
    let deadline = tokio::time::Instant::now() + WAIT;
    while process_alive(pid as i64) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "pid {pid} outlived its kill"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let after = api.get("/hecate/v1/agent-adapters/processes").await;
    assert!(processes(&after.body).is_empty(), "{}", after.body);

    let again = api
        .post(
            &format!("/hecate/v1/agent-adapters/processes/{id}/kill"),
            json!({}),
        )
        .await;
    assert_eq!((again.status, again.error_type()), (404, "not_found"));
    let unknown = api
        .post("/hecate/v1/agent-adapters/processes/nope/kill", json!({}))
        .await;
    assert_eq!((unknown.status, unknown.error_type()), (404, "not_found"));

    // The session stays, and its next prompt starts a new process.
    let said = api.say(&id, "hello").await;
    assert_eq!(said.status, 200, "{}", said.body);
    let list = api.get("/hecate/v1/agent-adapters/processes").await;
    let rows = processes(&list.body);
    assert_eq!(rows.len(), 1, "{}", list.body);
    assert_ne!(rows[0]["pid"], pid, "a new process");
}
