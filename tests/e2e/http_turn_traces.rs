//! A model turn leaves the same trace record a `/v1` request does: the request id
//! on its assistant message finds it in `GET /hecate/v1/traces`, answered or
//! failed, with its provider, model, tokens and route; an external agent's session
//! lists only the model calls the agent made itself, not these. The answer's
//! `timing` splits its run into the model's call and Hecate's overhead. A turn
//! refused before it starts leaves a failed trace under its envelope's request id.

use crate::support::common::{Home, ModelServer};
use crate::support::http::{Api, last_message, serve};
use serde_json::{Value, json};

/// The traces `GET /hecate/v1/traces?request_id=…` lists.
async fn traces_of(api: &Api, request_id: &str) -> Vec<Value> {
    let a = api
        .get(&format!("/hecate/v1/traces?request_id={request_id}"))
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["data"].as_array().cloned().expect("traces")
}

#[tokio::test]
async fn a_chat_turns_request_id_finds_its_trace_answered_or_failed() {
    let fix = ModelServer::start(None);
    let mut home = Home::with_openai(&fix);
    home.set("PROVIDER_DEAD_KIND", "openai");
    home.set("PROVIDER_DEAD_BASE_URL", "http://127.0.0.1:9/v1");
    home.set("PROVIDER_DEAD_MODELS", "fixture-model");
    let served = serve(&home);
    let api = Api::new(&served);

    let id = api.create_session(json!({})).await;
    let a = api.say(&id, "trace me").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let answer = last_message(&a.body);
    let request_id = answer["request_id"]
        .as_str()
        .expect("request id")
        .to_string();
    let found = traces_of(&api, &request_id).await;
    assert_eq!(found.len(), 1, "{found:?}");
    let t = &found[0];
    assert_eq!(t["client_format"], "agent_chat");
    assert_eq!(t["status"], "completed");
    assert_eq!(t["provider"], "fix");
    assert_eq!(t["model"], "fixture-model");
    assert_eq!(t["session_id"], id.as_str());
    // Without an exporter the turn has no trace id; with one, the same.
    assert_eq!(t["trace_id"], answer["trace_id"].as_str().unwrap_or(""));
    assert_eq!(t["total_tokens"], answer["usage"]["total_tokens"], "{t}");
    assert_eq!(t["route_candidates"][0]["outcome"], "selected", "{t}");
    // Its timing: the provider call and the rest of the run, which add up.
    let timing = &answer["timing"];
    assert_eq!(timing["turn_count"], 1, "{answer}");
    assert_eq!(timing["tool_count"], 0, "{timing}");
    let ms = |k: &str| {
        timing[k]
            .as_i64()
            .unwrap_or_else(|| panic!("{k}: {timing}"))
    };
    assert_eq!(
        ms("total_ms"),
        ms("model_ms") + ms("overhead_ms"),
        "{timing}"
    );
    assert_eq!((ms("queue_ms"), ms("tool_ms")), (0, 0), "{timing}");
    assert!(["model", "overhead"].contains(&timing["bottleneck"].as_str().unwrap_or("")));
    // The session's traces list it too.
    let listed = api.get(&format!("/hecate/v1/traces?session_id={id}")).await;
    assert!(
        listed.body["data"]
            .as_array()
            .is_some_and(|ts| ts.iter().any(|x| x["request_id"] == request_id.as_str())),
        "{}",
        listed.body
    );

    // A turn whose provider cannot be reached fails, and its trace says why.
    let dead = api
        .create_session(json!({"model": "dead/fixture-model"}))
        .await;
    let a = api.say(&dead, "nobody home").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let answer = last_message(&a.body);
    assert_eq!(answer["status"], "failed", "{answer}");
    let request_id = answer["request_id"].as_str().expect("request id");
    let found = traces_of(&api, request_id).await;
    assert_eq!(found.len(), 1, "{found:?}");
    let t = &found[0];
    assert_eq!(t["status"], "failed");
    assert_eq!(t["provider"], "dead");
    assert_eq!(t["error_type"], answer["error"], "{t} vs {answer}");
    assert_eq!(t["route_candidates"][0]["outcome"], "failed", "{t}");
    assert!(
        t["error_message"].as_str().is_some_and(|m| !m.is_empty()),
        "{t}"
    );

    // A turn refused before it starts answers an error envelope; its request
    // id finds a failed trace saying why.
    let r = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/messages"),
            json!({"content": "wrong model", "model": "nobody/serves-this"}),
        )
        .await;
    assert!(r.status >= 400, "{}", r.body);
    let request_id = r.body["error"]["request_id"]
        .as_str()
        .expect("the envelope's request id");
    let mut found = Vec::new();
    for _ in 0..100 {
        // Stored just after the answer, by the deferred writer.
        found = traces_of(&api, request_id).await;
        if !found.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(found.len(), 1, "{found:?}");
    let t = &found[0];
    assert_eq!(t["status"], "failed", "{t}");
    assert_eq!(t["client_format"], "agent_chat", "{t}");
    assert_eq!(t["session_id"], id.as_str(), "{t}");
    assert_eq!(
        t["error_type"], r.body["error"]["type"],
        "{t} vs {}",
        r.body
    );
    assert_eq!(t["requested_model"], "nobody/serves-this", "{t}");
}
