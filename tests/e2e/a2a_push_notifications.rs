//! A2A push notifications of Hecate's server (`src/bridges/a2a/push/`), against
//! the real `hecate serve` with the fixture model and a local webhook receiver
//! that records what it is posted: a send with an inline config posts the task,
//! its answer and its completion with the config's token and authentication;
//! configs created, read, listed and deleted over JSON-RPC and HTTP+JSON (a
//! deleted one is posted nothing more); bad URLs and unknown tasks refused with
//! the A2A errors; and a webhook that is down or hangs neither delays nor fails
//! the turn.

use crate::a2a_server::{a2a_home, code, message, result, rpc};
use crate::support::agent::answer;
use crate::support::common::{ModelServer, workspace};
use crate::support::http::{Api, serve, slow_text};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One POST the receiver got.
#[derive(Debug, Clone)]
struct Post {
    path: String,
    headers: HeaderMap,
    body: Value,
}

impl Post {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// A local webhook receiver: every path records the POST and answers 200,
/// except `/hang`, which never answers in time.
struct Receiver {
    base: String,
    seen: Arc<Mutex<Vec<Post>>>,
}

impl Receiver {
    async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let app = Router::new().fallback(record).with_state(seen.clone());
        tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Self { base, seen }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// What `path` got so far.
    fn posts(&self, path: &str) -> Vec<Post> {
        self.seen
            .lock()
            .expect("lock")
            .iter()
            .filter(|p| p.path == path)
            .cloned()
            .collect()
    }

    /// What `path` got once it holds a post in state `state` (waiting up to 20 s).
    async fn until_state(&self, path: &str, state: &str) -> Vec<Post> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let posts = self.posts(path);
            if posts.iter().any(|p| state_of(&p.body) == Some(state)) {
                return posts;
            }
            assert!(
                Instant::now() < deadline,
                "{path} never got {state}: {posts:#?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn record(
    State(seen): State<Arc<Mutex<Vec<Post>>>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> &'static str {
    if uri.path() == "/hang" {
        tokio::time::sleep(Duration::from_secs(120)).await;
    }
    let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
    seen.lock().expect("lock").push(Post {
        path: uri.path().to_string(),
        headers,
        body,
    });
    "ok"
}

/// The task state a notification tells, when it tells one.
fn state_of(body: &Value) -> Option<&str> {
    body.pointer("/task/status/state")
        .or_else(|| body.pointer("/statusUpdate/status/state"))
        .and_then(Value::as_str)
}

/// The task a notification is about.
fn task_of(body: &Value) -> Option<&str> {
    body.pointer("/task/id")
        .or_else(|| body.pointer("/statusUpdate/taskId"))
        .or_else(|| body.pointer("/artifactUpdate/taskId"))
        .and_then(Value::as_str)
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    l.local_addr().expect("addr").port()
}

#[tokio::test]
async fn a_send_with_an_inline_config_posts_the_task_then_its_updates_with_the_token() {
    let server = ModelServer::start(Some(json!([slow_text(12, 20)])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let hooks = Receiver::start().await;
    let (_dir, ws) = workspace();

    let sent = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("tell me", &ws, None, None),
                   "configuration": {"taskPushNotificationConfig": {
                       "url": hooks.url("/inline"), "token": "tok-inline",
                       "authentication": {"scheme": "Bearer", "credentials": "cred-inline"}}}}),
        )
        .await,
    );
    let task = &sent["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    let id = task["id"].as_str().expect("id");

    let posts = hooks.until_state("/inline", "TASK_STATE_COMPLETED").await;
    let bodies: Vec<&Value> = posts.iter().map(|p| &p.body).collect();
    assert_eq!(
        state_of(bodies[0]),
        Some("TASK_STATE_WORKING"),
        "the task first: {bodies:#?}"
    );
    assert!(bodies[0].get("task").is_some(), "{bodies:#?}");
    assert_eq!(
        state_of(bodies[bodies.len() - 1]),
        Some("TASK_STATE_COMPLETED"),
        "{bodies:#?}"
    );
    let pieces: Vec<&Value> = bodies
        .iter()
        .filter_map(|b| b.get("artifactUpdate"))
        .collect();
    assert_eq!(pieces.len(), 1, "only the whole answer: {bodies:#?}");
    assert_eq!(pieces[0]["lastChunk"], true);
    assert_eq!(
        pieces[0]["artifact"]["parts"][0]["text"],
        (0..12)
            .map(|i| format!("w{i}"))
            .collect::<Vec<_>>()
            .join(" ")
    );
    for p in &posts {
        assert_eq!(task_of(&p.body), Some(id), "{:#?}", p.body);
        assert_eq!(p.header("x-a2a-notification-token"), Some("tok-inline"));
        assert_eq!(p.header("authorization"), Some("Bearer cred-inline"));
        assert_eq!(p.header("content-type"), Some("application/a2a+json"));
        assert_eq!(p.body.as_object().map(|o| o.len()), Some(1), "one key");
    }

    // The inline config is kept under the task's id.
    let got = result(
        &rpc(
            &api,
            "hecate",
            "GetTaskPushNotificationConfig",
            json!({"taskId": id, "id": id}),
        )
        .await,
    );
    assert_eq!(got["url"], hooks.url("/inline"));
    assert_eq!(got["taskId"], id);
    assert_eq!(got["token"], "tok-inline");
}

#[tokio::test]
async fn configs_are_created_read_listed_and_deleted_over_both_bindings() {
    let server = ModelServer::start(Some(json!([slow_text(60, 50)])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let hooks = Receiver::start().await;
    let (_dir, ws) = workspace();

    let started = api
        .post(
            "/a2a/hecate/message:send",
            json!({"message": message("slowly", &ws, None, None),
                   "configuration": {"returnImmediately": true}}),
        )
        .await;
    assert_eq!(started.status, 200, "{}", started.body);
    let id = started.body["task"]["id"].as_str().expect("id").to_string();

    // Create: over JSON-RPC, then over HTTP+JSON (the path names the task).
    let by_rpc = result(
        &rpc(
            &api,
            "hecate",
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "id": "by-rpc", "url": hooks.url("/rpc"), "token": "t-rpc"}),
        )
        .await,
    );
    assert_eq!(
        by_rpc,
        json!({"id": "by-rpc", "taskId": id, "url": hooks.url("/rpc"), "token": "t-rpc"})
    );
    let configs = format!("/a2a/hecate/tasks/{id}/pushNotificationConfigs");
    let by_rest = api
        .post(
            &configs,
            json!({"id": "by-rest", "url": hooks.url("/rest"), "token": "t-rest"}),
        )
        .await;
    assert_eq!(by_rest.status, 200, "{}", by_rest.body);
    assert_eq!(by_rest.body["taskId"], id.as_str());

    // Get and list over both.
    let got = api.get(&format!("{configs}/by-rpc")).await;
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.body, by_rpc);
    let got = result(
        &rpc(
            &api,
            "hecate",
            "GetTaskPushNotificationConfig",
            json!({"taskId": id, "id": "by-rest"}),
        )
        .await,
    );
    assert_eq!(got["url"], hooks.url("/rest"));
    let listed = api.get(&configs).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let ids: Vec<&str> = listed.body["configs"]
        .as_array()
        .expect("configs")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(ids, ["by-rpc", "by-rest"]);
    assert_eq!(listed.body["nextPageToken"], "");
    let listed = result(
        &rpc(
            &api,
            "hecate",
            "ListTaskPushNotificationConfigs",
            json!({"taskId": id}),
        )
        .await,
    );
    assert_eq!(listed["configs"].as_array().map(Vec::len), Some(2));

    // Delete over JSON-RPC (twice: it is idempotent); the deleted webhook is
    // posted nothing, the other one the task's end.
    for _ in 0..2 {
        let deleted = rpc(
            &api,
            "hecate",
            "DeleteTaskPushNotificationConfig",
            json!({"taskId": id, "id": "by-rpc"}),
        )
        .await;
        assert_eq!(result(&deleted), Value::Null);
    }
    let gone = rpc(
        &api,
        "hecate",
        "GetTaskPushNotificationConfig",
        json!({"taskId": id, "id": "by-rpc"}),
    )
    .await;
    assert_eq!(code(&gone), -32001, "{}", gone.body);
    let posts = hooks.until_state("/rest", "TASK_STATE_COMPLETED").await;
    assert!(
        posts
            .iter()
            .all(|p| p.header("x-a2a-notification-token") == Some("t-rest")),
        "{posts:#?}"
    );
    assert!(hooks.posts("/rpc").is_empty(), "{:#?}", hooks.posts("/rpc"));

    // Delete over HTTP+JSON; the config outlived its task until then.
    let deleted = api.delete(&format!("{configs}/by-rest")).await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    assert_eq!(deleted.body, json!({}));
    let listed = api.get(&configs).await;
    assert_eq!(listed.body["configs"], json!([]), "{}", listed.body);
}

#[tokio::test]
async fn bad_urls_and_unknown_tasks_are_refused() {
    let server = ModelServer::start(Some(json!([answer("ok")])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();

    // An inline config with a bad URL refuses the send before anything runs.
    let refused = rpc(
        &api,
        "hecate",
        "SendMessage",
        json!({"message": message("hi", &ws, None, None),
               "configuration": {"taskPushNotificationConfig": {"url": "ftp://h/x"}}}),
    )
    .await;
    assert_eq!(code(&refused), -32602, "{}", refused.body);
    assert!(server.requests().is_empty(), "no turn ran");

    let done = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("hi", &ws, None, None)}),
        )
        .await,
    );
    let id = done["task"]["id"].as_str().expect("id").to_string();
    for url in [
        "ftp://example.com/hook",
        "file:///etc/passwd",
        "not a url",
        "",
        "http://user:secret@127.0.0.1/hook",
        "http://169.254.169.254/latest/meta-data",
    ] {
        let bad = rpc(
            &api,
            "hecate",
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "url": url}),
        )
        .await;
        assert_eq!(code(&bad), -32602, "{url}: {}", bad.body);
    }
    let bad_rest = api
        .post(
            &format!("/a2a/hecate/tasks/{id}/pushNotificationConfigs"),
            json!({"url": "gopher://h/x"}),
        )
        .await;
    assert_eq!(bad_rest.status, 400, "{}", bad_rest.body);
    assert_eq!(
        bad_rest.body["error"]["details"][0]["reason"],
        "INVALID_PARAMS"
    );
    let no_task = rpc(
        &api,
        "hecate",
        "CreateTaskPushNotificationConfig",
        json!({"url": "http://127.0.0.1:1/hook"}),
    )
    .await;
    assert_eq!(code(&no_task), -32602, "{}", no_task.body);

    // Unknown tasks, another agent's task, an unknown config.
    let unknown = rpc(
        &api,
        "hecate",
        "CreateTaskPushNotificationConfig",
        json!({"taskId": "run_nope", "url": "http://127.0.0.1:1/hook"}),
    )
    .await;
    assert_eq!(code(&unknown), -32001, "{}", unknown.body);
    let other_agent = rpc(
        &api,
        "hecate:fix%2Fgpt-fixture",
        "ListTaskPushNotificationConfigs",
        json!({"taskId": id}),
    )
    .await;
    assert_eq!(code(&other_agent), -32001, "{}", other_agent.body);
    let rest_unknown = api
        .get("/a2a/hecate/tasks/run_nope/pushNotificationConfigs")
        .await;
    assert_eq!(rest_unknown.status, 404, "{}", rest_unknown.body);
    assert_eq!(
        rest_unknown.body["error"]["details"][0]["reason"],
        "TASK_NOT_FOUND"
    );
    let no_config = api
        .get(&format!(
            "/a2a/hecate/tasks/{id}/pushNotificationConfigs/none"
        ))
        .await;
    assert_eq!(no_config.status, 404, "{}", no_config.body);
    let deleted = rpc(
        &api,
        "hecate",
        "DeleteTaskPushNotificationConfig",
        json!({"taskId": "run_nope", "id": "x"}),
    )
    .await;
    assert_eq!(code(&deleted), -32001, "{}", deleted.body);
    assert_eq!(server.requests().len(), 1, "only the good send ran");
}

#[tokio::test]
async fn a_webhook_that_is_down_or_hangs_neither_delays_nor_fails_the_turn() {
    let server = ModelServer::start(Some(json!([
        answer("Done despite the webhooks."),
        answer("Still fine.")
    ])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let hooks = Receiver::start().await;
    let (_dir, ws) = workspace();
    let down = format!("http://127.0.0.1:{}/down", closed_port());

    let started = Instant::now();
    let sent = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("go", &ws, None, None),
                   "configuration": {"taskPushNotificationConfig": {"url": hooks.url("/hang")}}}),
        )
        .await,
    );
    assert_eq!(sent["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    let id = sent["task"]["id"].as_str().expect("id").to_string();
    let more = result(
        &rpc(
            &api,
            "hecate",
            "CreateTaskPushNotificationConfig",
            json!({"taskId": id, "id": "down", "url": down}),
        )
        .await,
    );
    assert_eq!(more["id"], "down");
    let second = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("again", &ws, Some(sent["task"]["contextId"].as_str().expect("context")), None),
                   "configuration": {"taskPushNotificationConfig": {"url": down}}}),
        )
        .await,
    );
    assert_eq!(second["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    // A hanging webhook is given 10 s an attempt and a dead one is retried
    // with pauses; neither is waited for.
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "the sends waited for the webhooks: {:?}",
        started.elapsed()
    );
    let got = result(&rpc(&api, "hecate", "GetTask", json!({"id": id})).await);
    assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED");
}
