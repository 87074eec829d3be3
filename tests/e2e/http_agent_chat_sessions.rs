//! The Agent Chat resources over real HTTP: create, list, read, send (including
//! failed turns), busy, cancel, close, delete, and the system stats.

use crate::support::common::ModelServer;
use crate::support::http::{Api, last_message, serve_openai, slow_text};
use serde_json::{Value, json};
use std::time::Duration;

async fn wait_running(api: &Api, id: &str) -> Value {
    for _ in 0..500 {
        let a = api
            .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
            .await;
        if a.body["data"]["status"] == "running" && last_message(&a.body)["status"] == "running" {
            return a.body;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("session {id} never showed a running turn");
}

#[tokio::test]
async fn a_turn_records_messages_runs_calls_segments_and_activities() {
    let server = ModelServer::start(Some(json!([{
        "thinking": "let me think",
        "text": "hello there friend",
        "usage": {"input_tokens": 11, "output_tokens": 4}
    }])));
    let (_home, _s, api) = serve_openai(&server);

    let a = api
        .post_session(json!({
            "runtime_kind": "model",
            "provider": "fix",
            "model": "fixture-model",
            "title": "HTTP chat",
            "system_prompt": "be brief",
            "max_turns_per_session": 5,
            "idle_timeout_ms": 600000
        }))
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["object"], "agent_chat_session");
    let created = &a.body["data"];
    let id = created["id"].as_str().expect("id").to_string();
    assert!(id.starts_with("agent_chat_"));
    assert_eq!(created["title"], "HTTP chat");
    assert_eq!(created["status"], "idle");
    assert_eq!(created["runtime_kind"], "model");
    assert_eq!(created["provider"], "fix");
    assert_eq!(created["model"], "fixture-model");
    assert_eq!(created["max_turns_per_session"], 5);
    assert_eq!(created["idle_timeout_ms"], 600000);
    assert_eq!(created["messages"], json!([]));

    let a = api
        .send(
            api.request(
                reqwest::Method::POST,
                &format!("/hecate/v1/agent-chat/sessions/{id}/messages"),
            )
            .header("x-request-id", "req-http-test-1")
            .json(&json!({"content": "say hello"})),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let data = &a.body["data"];
    assert_eq!(data["status"], "completed");
    assert_eq!(data["turns_used"], 1);
    let messages = data["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[0]["content"], "say hello");
    assert_eq!(messages[0]["sequence"], 0);
    let reply = &messages[1];
    assert_eq!(reply["role"], "assistant");
    assert_eq!(reply["sequence"], 1);
    assert_eq!(reply["content"], "hello there friend");
    assert_eq!(reply["status"], "completed");
    assert_eq!(reply["runtime_kind"], "model");
    assert_eq!(reply["provider"], "fix");
    assert_eq!(reply["model"], "fixture-model");
    assert_eq!(reply["segment_id"], messages[0]["segment_id"]);
    assert_eq!(reply["request_id"], "req-http-test-1");
    assert!(
        reply["run_id"]
            .as_str()
            .is_some_and(|r| r.starts_with("run_"))
    );
    assert!(reply["started_at"].is_string() && reply["completed_at"].is_string());
    assert!(reply["duration_ms"].is_i64());
    assert_eq!(reply["usage"]["prompt_tokens"], 11);
    assert_eq!(reply["content_blocks"][0]["type"], "thinking");
    let kinds: Vec<&str> = reply["activities"]
        .as_array()
        .expect("activities")
        .iter()
        .filter_map(|a| a["type"].as_str())
        .collect();
    assert_eq!(kinds, ["thinking", "final_answer", "run_result"]);
    assert_eq!(data["runs"][0]["id"], reply["run_id"]);
    assert_eq!(data["runs"][0]["status"], "completed");
    assert_eq!(data["latest_run_id"], reply["run_id"]);
    assert_eq!(
        data["provider_calls"][0]["id"],
        reply["produced_by_call_id"]
    );
    assert_eq!(data["segments"].as_array().map(Vec::len), Some(1));
    assert_eq!(data["segments"][0]["message_count"], 2);
    // The provider saw the system prompt.
    assert_eq!(
        server.requests()[0]["body"]["messages"][0]["content"],
        "be brief"
    );

    let got = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(got.status, 200);
    assert_eq!(got.body["data"], a.body["data"]);

    let other = api.create_session(json!({"title": "second"})).await;
    let list = api.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(list.body["object"], "agent_chat_sessions");
    let rows = list.body["data"].as_array().expect("rows");
    assert_eq!(rows.len(), 2);
    let row = rows.iter().find(|r| r["id"] == id.as_str()).expect("row");
    assert_eq!(row["message_count"], 2);
    assert_eq!(row["provider_call_count"], 1);
    assert!(row.get("messages").is_none());
    let one = api.get("/hecate/v1/agent-chat/sessions?limit=1").await;
    assert_eq!(one.body["data"].as_array().map(Vec::len), Some(1));
    let bad = api.get("/hecate/v1/agent-chat/sessions?limit=lots").await;
    assert_eq!(bad.status, 400);
    assert_eq!(bad.error_type(), "invalid_request");

    let stats = api.get("/hecate/v1/system/stats").await;
    assert_eq!(stats.body["object"], "system_stats");
    let st = &stats.body["data"];
    assert_eq!(st["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(st["turns_running"], 0);
    assert_eq!(st["pending_approvals"], 0);
    assert_eq!(st["approval_mode"], "prompt");
    assert_eq!(st["mcp_pool"]["configured"], false);
    assert_eq!(st["store"]["backend"], "sqlite");
    assert!(st["store"]["size_bytes"].as_u64().is_some_and(|n| n > 0));
    assert!(st["uptime_ms"].is_u64());
    assert_eq!(st["queue_backend"], "sqlite");
    assert_eq!(
        (&st["queue_depth"], &st["queue_leased"]),
        (&json!(0), &json!(0))
    );
    assert!(st.get("queue_capacity").is_none(), "unbounded: {st}");
    assert!(st["worker_count"].is_u64(), "{st}");
    assert_eq!(st["task_runs_executing"], 0);
    assert_eq!(st["gateway"]["requests"], 0, "no /v1 request yet: {st}");

    let d = api
        .delete(&format!("/hecate/v1/agent-chat/sessions/{other}"))
        .await;
    assert_eq!(d.status, 200);
    assert_eq!(d.body["data"]["deleted"], true);
    let d = api
        .delete(&format!("/hecate/v1/agent-chat/sessions/{other}"))
        .await;
    assert_eq!(d.status, 404);
    let g = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{other}"))
        .await;
    assert_eq!(g.status, 404);
}

#[tokio::test]
async fn a_failed_turn_answers_200_with_a_failed_assistant_message() {
    let server = ModelServer::start(Some(json!([
        {"status": 500, "error_message": "upstream exploded"}
    ])));
    let (_home, _s, api) = serve_openai(&server);
    let id = api.create_session(json!({})).await;
    let a = api.say(&id, "will fail").await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["data"]["status"], "failed");
    let reply = last_message(&a.body);
    assert_eq!(reply["role"], "assistant");
    assert_eq!(reply["status"], "failed");
    assert!(
        reply["error"].as_str().is_some_and(|e| !e.is_empty()),
        "{reply}"
    );
    assert!(
        reply["error_message"]
            .as_str()
            .is_some_and(|m| m.contains("upstream exploded")),
        "{reply}"
    );
    let kinds: Vec<&str> = reply["activities"]
        .as_array()
        .expect("activities")
        .iter()
        .filter_map(|a| a["status"].as_str())
        .collect();
    assert_eq!(kinds.last(), Some(&"failed"));
    assert_eq!(a.body["data"]["runs"][0]["status"], "failed");
}

#[tokio::test]
async fn busy_sessions_refuse_a_second_turn_and_cancel_and_close_stop_the_running_one() {
    let mut step = slow_text(200, 40);
    step["repeat"] = json!(true);
    let server = ModelServer::start(Some(json!([step])));
    let (_home, _s, api) = serve_openai(&server);
    let id = api.create_session(json!({})).await;

    let first = tokio::spawn({
        let api = api.clone();
        let id = id.clone();
        async move { api.say(&id, "long answer please").await }
    });
    let running = wait_running(&api, &id).await;
    assert!(
        last_message(&running)["id"]
            .as_str()
            .is_some_and(|m| m.starts_with("pending_run_"))
    );
    let stats = api.get("/hecate/v1/system/stats").await;
    assert_eq!(stats.body["data"]["turns_running"], 1);

    let busy = api.say(&id, "me too").await;
    assert_eq!(busy.status, 409, "{}", busy.body);
    assert_eq!(busy.error_type(), "agent_chat.agent_session_busy");

    let c = api.session_action(&id, "cancel").await;
    assert_eq!(c.status, 202, "{}", c.body);
    assert_eq!(c.body["data"]["status"], "cancelling");
    let done = first.await.expect("join");
    assert_eq!(done.status, 200);
    assert_eq!(done.body["data"]["status"], "cancelled");
    let reply = last_message(&done.body);
    assert_eq!(reply["status"], "cancelled");
    assert_eq!(reply["error"], "cancelled");

    // Close with nothing running returns the session as it is.
    let closed = api.session_action(&id, "close").await;
    assert_eq!(closed.status, 200, "{}", closed.body);
    assert_eq!(closed.body["data"]["status"], "cancelled");

    // Close during a turn cancels it and waits for it to settle.
    let second = tokio::spawn({
        let api = api.clone();
        let id = id.clone();
        async move { api.say(&id, "another long one").await }
    });
    wait_running(&api, &id).await;
    let closed = api.session_action(&id, "close").await;
    assert_eq!(closed.status, 200, "{}", closed.body);
    assert_eq!(closed.body["data"]["status"], "cancelled");
    assert_eq!(last_message(&closed.body)["status"], "cancelled");
    // The cancelled turn answers its own prompt and partial answer; the session
    // holds both turns.
    let done = second.await.expect("join");
    assert_eq!(
        done.body["data"]["messages"].as_array().map(Vec::len),
        Some(2)
    );
    let whole = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(
        whole.body["data"]["messages"].as_array().map(Vec::len),
        Some(4)
    );
}
