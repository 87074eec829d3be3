//! Hecate as an A2A 1.0 server (`src/bridges/a2a/`), against the real
//! `hecate serve` with the fixture model: the cards, send over JSON-RPC, REST
//! and the seed's `/v1/agents/{name}/message:send`, streaming, get, list,
//! cancel, resubscribe, a `contextId` continued over two messages and isolated
//! between two agents, an approval answered through `input-required`, the
//! bearer token, the A2A errors of bad input, and a REST cancel whose body
//! arrives late leaving the connection usable.

use crate::support::agent::{WIRES, agent_home, answer, call, turn};
use crate::support::common::{Home, ModelServer, workspace};
use crate::support::http::{Answer, Api, Served, serve, slow_text};
use serde_json::{Value, json};
use std::path::Path;

/// Hecate's agent on the fixture model, by name.
const ON_MODEL: &str = "hecate:fix/gpt-fixture";
/// Its URL path segment.
pub(crate) const ON_MODEL_PATH: &str = "hecate:fix%2Fgpt-fixture";

/// A home whose default model is the fixture's, with the given approval policies.
pub(crate) fn a2a_home(server: &ModelServer, policies: &str) -> Home {
    let mut home = agent_home(server, WIRES[0], policies);
    home.set("HECATE_GATEWAY_DEFAULT_MODEL", WIRES[0].2);
    home
}

/// A user message saying `text` in `ws`, in `context` and for `task` when given.
pub(crate) fn message(text: &str, ws: &Path, context: Option<&str>, task: Option<&str>) -> Value {
    let mut m = json!({
        "messageId": uuid::Uuid::new_v4().to_string(),
        "role": "ROLE_USER",
        "parts": [{"text": text}],
        "metadata": {"workspace": ws},
    });
    if let Some(c) = context {
        m["contextId"] = json!(c);
    }
    if let Some(t) = task {
        m["taskId"] = json!(t);
    }
    m
}

/// A JSON-RPC call of `method` to agent path `agent`.
pub(crate) async fn rpc(api: &Api, agent: &str, method: &str, params: Value) -> Answer {
    api.post(
        &format!("/a2a/{agent}"),
        json!({"jsonrpc": "2.0", "id": "1", "method": method, "params": params}),
    )
    .await
}

/// The result of a successful JSON-RPC call.
pub(crate) fn result(a: &Answer) -> Value {
    assert_eq!(a.status, 200, "{}", a.body);
    assert!(a.body.get("error").is_none(), "{}", a.body);
    a.body["result"].clone()
}

/// The error code of a failed JSON-RPC call.
pub(crate) fn code(a: &Answer) -> i64 {
    a.body["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("no JSON-RPC error in {}", a.body))
}

/// The text of a task's answer artifact.
pub(crate) fn answer_text(task: &Value) -> String {
    task["artifacts"][0]["parts"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no answer artifact in {task}"))
        .to_string()
}

/// What the model was told in request `i`.
fn said(server: &ModelServer, i: usize) -> String {
    server.requests()[i].to_string()
}

/// The events of a streamed call (the data of each SSE event, as JSON).
pub(crate) async fn stream(api: &Api, path: &str, body: Value) -> Vec<Value> {
    api.post_sse(path, &[], &body)
        .await
        .into_iter()
        .map(|(_, data)| serde_json::from_str(&data).expect("event JSON"))
        .collect()
}

#[tokio::test]
async fn cards_describe_the_default_agent_and_each_agent_publicly() {
    let server = ModelServer::start_listing(Some(json!([])), "gpt-fixture");
    let mut home = a2a_home(&server, "");
    home.set("HECATE_TOKEN", "a2a-token");
    let s = serve(&home);
    let api = Api::new(&s);

    let card = api.get("/.well-known/agent-card.json").await;
    assert_eq!(card.status, 200, "{}", card.body);
    assert!(
        card.body["name"]
            .as_str()
            .is_some_and(|n| n.contains("gpt-fixture")),
        "{}",
        card.body
    );
    let ifaces = card.body["supportedInterfaces"]
        .as_array()
        .expect("interfaces");
    let bindings: Vec<&str> = ifaces
        .iter()
        .filter_map(|i| i["protocolBinding"].as_str())
        .collect();
    assert_eq!(bindings, ["JSONRPC", "HTTP+JSON"]);
    assert_eq!(ifaces[0]["url"], format!("{}/a2a/hecate", s.base));
    assert_eq!(ifaces[0]["protocolVersion"], "1.0");
    assert_eq!(card.body["capabilities"]["streaming"], true);
    assert_eq!(card.body["capabilities"]["pushNotifications"], true);
    assert_eq!(
        card.body["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["scheme"],
        "Bearer"
    );
    assert!(!card.body["skills"].as_array().expect("skills").is_empty());

    let listed = api.get("/a2a").await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let names: Vec<&str> = listed.body["agents"]
        .as_array()
        .expect("agents")
        .iter()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert!(names.contains(&"hecate"), "{names:?}");
    assert!(names.contains(&ON_MODEL), "{names:?}");

    let one = api
        .get(&format!("/a2a/{ON_MODEL_PATH}/.well-known/agent-card.json"))
        .await;
    assert_eq!(one.status, 200, "{}", one.body);
    assert_eq!(
        one.body["supportedInterfaces"][1]["url"],
        format!("{}/a2a/{ON_MODEL_PATH}", s.base)
    );
    let unknown = api.get("/a2a/nobody/.well-known/agent-card.json").await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert_eq!(
        unknown.body["error"]["details"][0]["reason"],
        "AGENT_NOT_FOUND"
    );

    // The operations need the token; the cards did not.
    let (_dir, ws) = workspace();
    let refused = rpc(&api, "hecate", "GetTask", json!({"id": "x"})).await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    assert_eq!(refused.header("www-authenticate"), Some("Bearer"));
    let seed = api
        .post(
            "/v1/agents/hecate/message:send",
            json!({"message": message("hi", &ws, None, None)}),
        )
        .await;
    assert_eq!(seed.status, 401, "{}", seed.body);
    let authed = Api::new(&s).with_token("a2a-token");
    let missing = rpc(&authed, "hecate", "GetTask", json!({"id": "x"})).await;
    assert_eq!(code(&missing), -32001, "{}", missing.body);
}

#[tokio::test]
async fn json_rpc_send_get_and_list_with_a_context_continued_over_two_messages() {
    let server = ModelServer::start(Some(json!([
        answer("The first answer."),
        answer("The second answer.")
    ])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();

    let first = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("remember the word kumquat", &ws, None, None)}),
        )
        .await,
    );
    let task = &first["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    assert_eq!(answer_text(task), "The first answer.");
    let context = task["contextId"].as_str().expect("context").to_string();
    let task_id = task["id"].as_str().expect("id").to_string();
    let session = task["metadata"]["hecateSessionId"].clone();
    assert_eq!(task["history"][0]["role"], "ROLE_USER");

    let got = result(&rpc(&api, "hecate", "GetTask", json!({"id": task_id})).await);
    assert_eq!(got["id"], task_id.as_str());
    assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED");
    let short = result(
        &rpc(
            &api,
            "hecate",
            "GetTask",
            json!({"id": task_id, "historyLength": 0}),
        )
        .await,
    );
    assert!(short.get("history").is_none(), "{short}");

    let second = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("what was the word?", &ws, Some(&context), None)}),
        )
        .await,
    );
    assert_eq!(second["task"]["contextId"], context.as_str());
    assert_eq!(second["task"]["metadata"]["hecateSessionId"], session);
    assert_ne!(second["task"]["id"], task_id.as_str());
    assert!(
        said(&server, 1).contains("kumquat"),
        "the second turn carries the first: {}",
        said(&server, 1)
    );

    let listed = result(&rpc(&api, "hecate", "ListTasks", json!({"contextId": context})).await);
    assert_eq!(listed["totalSize"], 2, "{listed}");
    assert_eq!(
        listed["tasks"][0]["id"], second["task"]["id"],
        "newest first"
    );
    assert!(listed["tasks"][0].get("artifacts").is_none(), "{listed}");
    let page = result(&rpc(&api, "hecate", "ListTasks", json!({"pageSize": 1})).await);
    assert_eq!(page["tasks"].as_array().map(Vec::len), Some(1));
    assert_eq!(page["nextPageToken"], "1");
    let none = result(
        &rpc(
            &api,
            "hecate",
            "ListTasks",
            json!({"status": "TASK_STATE_WORKING"}),
        )
        .await,
    );
    assert_eq!(none["totalSize"], 0);
}

#[tokio::test]
async fn a_conversation_that_names_no_workspace_gets_a_directory_of_its_own() {
    let server = ModelServer::start(Some(json!([answer("One."), answer("Two.")])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let bare = |text: &str| {
        json!({"message": {
            "messageId": uuid::Uuid::new_v4().to_string(),
            "role": "ROLE_USER",
            "parts": [{"text": text}],
        }})
    };
    let mut dirs = Vec::new();
    for text in ["first conversation", "second conversation"] {
        let sent = result(&rpc(&api, "hecate", "SendMessage", bare(text)).await);
        let task = &sent["task"];
        assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
        let session = task["metadata"]["hecateSessionId"]
            .as_str()
            .expect("session id")
            .to_string();
        let got = api
            .get(&format!("/hecate/v1/agent-chat/sessions/{session}"))
            .await;
        assert_eq!(got.status, 200, "{}", got.body);
        let ws = std::path::PathBuf::from(
            got.body["data"]["workspace"]
                .as_str()
                .unwrap_or_else(|| panic!("a workspace in {}", got.body)),
        );
        // Hecate's own directory under its data directory, never the one
        // `hecate serve` was started in.
        let data = std::fs::canonicalize(home.data_dir()).expect("data dir");
        assert!(
            ws.starts_with(&data),
            "{} under {}",
            ws.display(),
            data.display()
        );
        assert_ne!(ws, std::env::current_dir().expect("cwd"));
        assert!(ws.is_dir(), "{} exists", ws.display());
        dirs.push((session, ws));
    }
    assert_ne!(dirs[0].1, dirs[1].1, "one directory per conversation");
    // Deleting the session removes the directory Hecate made for it.
    let (session, ws) = &dirs[0];
    let deleted = api
        .delete(&format!("/hecate/v1/agent-chat/sessions/{session}"))
        .await;
    assert!(deleted.status < 300, "{} {}", deleted.status, deleted.body);
    assert!(!ws.exists(), "{} is gone with its session", ws.display());
    assert!(dirs[1].1.is_dir(), "the other conversation keeps its own");
}

#[tokio::test]
async fn rest_and_the_seed_path_send_beside_the_gateway() {
    let server = ModelServer::start(Some(json!([
        answer("Over REST."),
        answer("Over the seed's path.")
    ])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();

    let rest = api
        .post(
            &format!("/a2a/{ON_MODEL_PATH}/message:send"),
            json!({"message": message("hello", &ws, None, None)}),
        )
        .await;
    assert_eq!(rest.status, 200, "{}", rest.body);
    assert_eq!(answer_text(&rest.body["task"]), "Over REST.");
    let id = rest.body["task"]["id"].as_str().expect("id").to_string();
    let got = api.get(&format!("/a2a/{ON_MODEL_PATH}/tasks/{id}")).await;
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.body["status"]["state"], "TASK_STATE_COMPLETED");
    let listed = api
        .get(&format!("/a2a/{ON_MODEL_PATH}/tasks?pageSize=5"))
        .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.body["totalSize"], 1);

    // The seed's form, with its snake_case context_id.
    let seed = api
        .post(
            "/v1/agents/hecate/message:send",
            json!({"message": {
                "message_id": "m-seed", "role": "ROLE_USER", "context_id": "seed-ctx",
                "parts": [{"text": "hello seed"}], "metadata": {"workspace": ws},
            }}),
        )
        .await;
    assert_eq!(seed.status, 200, "{}", seed.body);
    assert_eq!(seed.body["task"]["contextId"], "seed-ctx");
    assert_eq!(answer_text(&seed.body["task"]), "Over the seed's path.");
    // The gateway's own /v1 routes are untouched.
    let models = api.get("/v1/models").await;
    assert_eq!(models.status, 200, "{}", models.body);
    let stray = api.post("/v1/agents/hecate/other", json!({})).await;
    assert_eq!(stray.status, 404, "{}", stray.body);
}

#[tokio::test]
async fn streaming_sends_the_task_then_its_answer_and_a_resubscribe_follows_a_running_task() {
    let server = ModelServer::start(Some(json!([answer("Streamed answer."), slow_text(30, 60)])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();

    let events = stream(
        &api,
        "/a2a/hecate",
        json!({"jsonrpc": "2.0", "id": 9, "method": "SendStreamingMessage",
               "params": {"message": message("stream please", &ws, None, None)}}),
    )
    .await;
    assert!(events.len() >= 3, "{events:#?}");
    assert!(events.iter().all(|e| e["id"] == 9 && e["jsonrpc"] == "2.0"));
    assert_eq!(
        events[0]["result"]["task"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    let last = &events[events.len() - 1]["result"];
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{events:#?}"
    );
    let artifact = events
        .iter()
        .rev()
        .find_map(|e| e["result"].get("artifactUpdate"))
        .expect("an artifact event");
    assert_eq!(artifact["artifact"]["parts"][0]["text"], "Streamed answer.");
    assert_eq!(artifact["lastChunk"], true);

    // A slow answer: started without waiting, then followed by a resubscribe
    // over REST until it ends.
    let started = api
        .post(
            "/a2a/hecate/message:send",
            json!({"message": message("slowly", &ws, None, None),
                   "configuration": {"returnImmediately": true}}),
        )
        .await;
    assert_eq!(started.status, 200, "{}", started.body);
    assert_eq!(
        started.body["task"]["status"]["state"],
        "TASK_STATE_WORKING"
    );
    let id = started.body["task"]["id"].as_str().expect("id").to_string();
    let followed = api
        .post_sse(
            &format!("/a2a/hecate/tasks/{id}:subscribe"),
            &[],
            &json!({}),
        )
        .await;
    let followed: Vec<Value> = followed
        .into_iter()
        .map(|(_, d)| serde_json::from_str(&d).expect("json"))
        .collect();
    assert_eq!(followed[0]["task"]["id"], id.as_str(), "{followed:#?}");
    assert_eq!(
        followed[followed.len() - 1]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{followed:#?}"
    );
    // A finished task cannot be followed.
    let ended = rpc(&api, "hecate", "SubscribeToTask", json!({"id": id})).await;
    assert_eq!(code(&ended), -32004, "{}", ended.body);
}

#[tokio::test]
async fn cancel_stops_a_running_task_and_refuses_a_finished_one() {
    let server = ModelServer::start(Some(json!([slow_text(200, 100)])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let started = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("take your time", &ws, None, None),
                   "configuration": {"returnImmediately": true}}),
        )
        .await,
    );
    let id = started["task"]["id"].as_str().expect("id").to_string();
    let cancelled = result(&rpc(&api, "hecate", "CancelTask", json!({"id": id})).await);
    assert_eq!(
        cancelled["status"]["state"], "TASK_STATE_CANCELED",
        "{cancelled}"
    );
    let again = rpc(&api, "hecate", "CancelTask", json!({"id": id})).await;
    assert_eq!(code(&again), -32002, "{}", again.body);
    assert!(
        again.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("TASK_STATE_CANCELED")),
        "{}",
        again.body
    );
    let rest = api
        .post(&format!("/a2a/hecate/tasks/{id}:cancel"), json!({}))
        .await;
    assert_eq!(rest.status, 400, "{}", rest.body);
    assert_eq!(
        rest.body["error"]["details"][0]["reason"],
        "TASK_NOT_CANCELABLE"
    );
}

#[tokio::test]
async fn one_context_id_is_two_sessions_for_two_agents() {
    let server = ModelServer::start(Some(json!([
        answer("Agent one heard you."),
        answer("Agent two knows nothing.")
    ])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let one = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("the secret is papaya", &ws, Some("shared"), None)}),
        )
        .await,
    );
    let two = result(
        &rpc(
            &api,
            ON_MODEL_PATH,
            "SendMessage",
            json!({"message": message("what is the secret?", &ws, Some("shared"), None)}),
        )
        .await,
    );
    assert_eq!(one["task"]["contextId"], "shared");
    assert_eq!(two["task"]["contextId"], "shared");
    assert_ne!(
        one["task"]["metadata"]["hecateSessionId"],
        two["task"]["metadata"]["hecateSessionId"]
    );
    assert!(
        !said(&server, 1).contains("papaya"),
        "agent two saw agent one's message: {}",
        said(&server, 1)
    );
    // Each agent lists only its own tasks, and reads no task of the other.
    let listed = result(&rpc(&api, ON_MODEL_PATH, "ListTasks", json!({})).await);
    assert_eq!(listed["totalSize"], 1);
    let foreign = rpc(
        &api,
        ON_MODEL_PATH,
        "GetTask",
        json!({"id": one["task"]["id"]}),
    )
    .await;
    assert_eq!(code(&foreign), -32001, "{}", foreign.body);
}

#[tokio::test]
async fn an_approval_is_answered_through_input_required() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call(
            "file_write",
            json!({"path": "out.txt", "content": "written\n"})
        )]),
        answer("Wrote out.txt."),
    ])));
    let home = a2a_home(&server, "file_write");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();

    let asked = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("write out.txt", &ws, None, None)}),
        )
        .await,
    );
    let task = &asked["task"];
    assert_eq!(
        task["status"]["state"], "TASK_STATE_INPUT_REQUIRED",
        "{task}"
    );
    let parts = &task["status"]["message"]["parts"];
    assert!(
        parts[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("approve")),
        "{parts}"
    );
    assert!(
        parts[1]["data"]["approval"]["toolName"]
            .as_str()
            .is_some_and(|t| t.contains("file_write")),
        "{parts}"
    );
    let id = task["id"].as_str().expect("id").to_string();
    let context = task["contextId"].as_str().expect("ctx").to_string();
    assert!(!ws.join("out.txt").exists());

    // An answer that is not a decision is refused and leaves the task waiting.
    let vague = rpc(
        &api,
        "hecate",
        "SendMessage",
        json!({"message": message("hmm", &ws, Some(&context), Some(&id))}),
    )
    .await;
    assert_eq!(code(&vague), -32602, "{}", vague.body);

    let done = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("approve", &ws, Some(&context), Some(&id))}),
        )
        .await,
    );
    assert_eq!(done["task"]["id"], id.as_str());
    assert_eq!(
        done["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{done}"
    );
    assert_eq!(answer_text(&done["task"]), "Wrote out.txt.");
    assert_eq!(
        std::fs::read_to_string(ws.join("out.txt")).expect("written"),
        "written\n"
    );
    // A finished task takes no more messages.
    let late = rpc(
        &api,
        "hecate",
        "SendMessage",
        json!({"message": message("approve", &ws, Some(&context), Some(&id))}),
    )
    .await;
    assert_eq!(code(&late), -32602, "{}", late.body);
}

#[tokio::test]
async fn bad_input_gets_the_a2a_errors() {
    let server = ModelServer::start(Some(json!([answer("ok")])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    expect_errors(&s, &api, &ws).await;
    assert!(
        server.requests().is_empty(),
        "no bad input reached the model"
    );
}

/// Each bad request and its error.
async fn expect_errors(s: &Served, api: &Api, ws: &Path) {
    let unknown = rpc(api, "nobody", "GetTask", json!({"id": "t"})).await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert!(
        unknown.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("nobody")),
        "{}",
        unknown.body
    );
    let unknown_rest = api
        .post(
            "/a2a/nobody/message:send",
            json!({"message": message("hi", ws, None, None)}),
        )
        .await;
    assert_eq!(unknown_rest.status, 404, "{}", unknown_rest.body);
    let model = rpc(
        api,
        "model:fix%2Fgpt-fixture",
        "GetTask",
        json!({"id": "t"}),
    )
    .await;
    assert_eq!(model.status, 404, "a model is not an agent: {}", model.body);

    let no_parts = rpc(
        api,
        "hecate",
        "SendMessage",
        json!({"message": {"messageId": "m", "role": "ROLE_USER"}}),
    )
    .await;
    assert_eq!(code(&no_parts), -32602, "{}", no_parts.body);
    let agent_role = rpc(
        api,
        "hecate",
        "SendMessage",
        json!({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}}),
    )
    .await;
    assert_eq!(code(&agent_role), -32602, "{}", agent_role.body);
    let empty = rpc(
        api,
        "hecate",
        "SendMessage",
        json!({"message": {"messageId": "m", "role": "ROLE_USER", "parts": []}}),
    )
    .await;
    assert_eq!(code(&empty), -32602, "{}", empty.body);
    let file = rpc(
        api,
        "hecate",
        "SendMessage",
        json!({"message": {"messageId": "m", "role": "ROLE_USER",
                           "parts": [{"url": "https://example.invalid/a.png", "mediaType": "image/png"}]}}),
    )
    .await;
    assert_eq!(code(&file), -32005, "{}", file.body);
    let missing = rpc(api, "hecate", "GetTask", json!({"id": "run_nope"})).await;
    assert_eq!(code(&missing), -32001, "{}", missing.body);
    let rest_missing = api.get("/a2a/hecate/tasks/run_nope").await;
    assert_eq!(rest_missing.status, 404, "{}", rest_missing.body);
    assert_eq!(
        rest_missing.body["error"]["details"][0]["reason"],
        "TASK_NOT_FOUND"
    );
    let method = rpc(api, "hecate", "message/send", json!({})).await;
    assert_eq!(code(&method), -32601, "{}", method.body);
    let push = rpc(
        api,
        "hecate",
        "CreateTaskPushNotificationConfig",
        json!({"taskId": "t", "url": "http://127.0.0.1:1/hook"}),
    )
    .await;
    assert_eq!(code(&push), -32001, "{}", push.body);

    let raw = crate::support::http::client()
        .post(format!("{}/a2a/hecate", s.base))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("send");
    let parsed: Value = raw.json().await.expect("json");
    assert_eq!(parsed["error"]["code"], -32700, "{parsed}");
    let old = crate::support::http::client()
        .post(format!("{}/a2a/hecate", s.base))
        .header("A2A-Version", "0.3")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "t"}}))
        .send()
        .await
        .expect("send");
    let old: Value = old.json().await.expect("json");
    assert_eq!(old["error"]["code"], -32009, "{old}");
}

#[tokio::test]
async fn a_task_waiting_for_an_approval_can_be_rejected_or_cancelled() {
    let write = |path: &str| {
        turn(vec![call(
            "file_write",
            json!({"path": path, "content": "no\n"}),
        )])
    };
    let server = ModelServer::start(Some(json!([
        write("rejected.txt"),
        answer("I did not write it."),
        write("cancelled.txt"),
    ])));
    let home = a2a_home(&server, "file_write");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();

    let asked = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("write rejected.txt", &ws, None, None)}),
        )
        .await,
    );
    let id = asked["task"]["id"].as_str().expect("id").to_string();
    assert_eq!(
        asked["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    // The decision as a data part, over REST.
    let rejected = api
        .post(
            "/a2a/hecate/message:send",
            json!({"message": {
                "messageId": "m-no", "role": "ROLE_USER", "taskId": id,
                "parts": [{"data": {"decision": "reject"}}],
            }}),
        )
        .await;
    assert_eq!(rejected.status, 200, "{}", rejected.body);
    assert_eq!(
        rejected.body["task"]["status"]["state"], "TASK_STATE_COMPLETED",
        "{}",
        rejected.body
    );
    assert_eq!(answer_text(&rejected.body["task"]), "I did not write it.");
    assert!(!ws.join("rejected.txt").exists());

    let asked = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("write cancelled.txt", &ws, None, None)}),
        )
        .await,
    );
    let id = asked["task"]["id"].as_str().expect("id").to_string();
    assert_eq!(
        asked["task"]["status"]["state"],
        "TASK_STATE_INPUT_REQUIRED"
    );
    let cancelled = result(&rpc(&api, "hecate", "CancelTask", json!({"id": id})).await);
    assert_eq!(
        cancelled["status"]["state"], "TASK_STATE_CANCELED",
        "{cancelled}"
    );
    assert!(!ws.join("cancelled.txt").exists());
}

/// With a token set, named API keys open the A2A routes by role: a read key
/// gets and lists tasks but may not send or read push notification configs
/// (403 `PERMISSION_DENIED`), an operator key does both; the cards stay public
/// and an unknown key is 401.
#[tokio::test]
async fn named_api_keys_open_the_a2a_routes_by_role() {
    let server = ModelServer::start(Some(json!([answer("Sent with a key.")])));
    let mut home = a2a_home(&server, "");
    home.set("HECATE_TOKEN", "a2a-admin-token");
    let key = |name: &str, scope: &str| -> String {
        let v = home.json(&["keys", "create", name, "--scope", scope, "--format", "json"]);
        v["token"].as_str().expect("token").to_string()
    };
    let (reader, operator) = (key("a2a-reader", "read"), key("a2a-op", "operator"));
    let s = serve(&home);
    let (_dir, ws) = workspace();
    let send = |api: Api| {
        let body = json!({"message": message("hello", &ws, None, None)});
        async move {
            api.post(&format!("/a2a/{ON_MODEL_PATH}/message:send"), body)
                .await
        }
    };

    let a = send(Api::new(&s).with_token(&reader)).await;
    assert_eq!(a.status, 403, "{}", a.body);
    assert_eq!(a.body["error"]["status"], "PERMISSION_DENIED", "{}", a.body);
    let a = send(Api::new(&s).with_token(&operator)).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(answer_text(&a.body["task"]), "Sent with a key.");
    let listed = Api::new(&s)
        .with_token(&reader)
        .get(&format!("/a2a/{ON_MODEL_PATH}/tasks"))
        .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.body["totalSize"], 1, "{}", listed.body);
    // Push notification configs hold webhook secrets: even reading them is an
    // operator's.
    let task = listed.body["tasks"][0]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let configs = format!("/a2a/{ON_MODEL_PATH}/tasks/{task}/pushNotificationConfigs");
    let a = Api::new(&s).with_token(&reader).get(&configs).await;
    assert_eq!(a.status, 403, "{}", a.body);
    let a = Api::new(&s).with_token(&operator).get(&configs).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["configs"], json!([]), "{}", a.body);
    let a = send(Api::new(&s).with_token("key_0000.nope")).await;
    assert_eq!(a.status, 401, "{}", a.body);
    assert_eq!(a.body["error"]["status"], "UNAUTHENTICATED", "{}", a.body);
    let card = Api::new(&s).get("/.well-known/agent-card.json").await;
    assert_eq!(card.status, 200, "the card is public: {}", card.body);
}

/// The official SDKs send a body with `POST tasks/{id}:cancel`; answering it
/// keeps the connection usable for the client's next request (a body left
/// unread closed it, and a client reusing the connection saw "server
/// disconnected").
#[tokio::test]
async fn a_rest_cancel_with_a_body_leaves_the_connection_open() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = ModelServer::start(Some(json!([])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let host = s.base.trim_start_matches("http://").to_string();
    let mut conn = tokio::net::TcpStream::connect(&host)
        .await
        .expect("connect");
    let body = r#"{"id":"run_nope","metadata":{}}"#;
    // The head first and the body a moment later, as a client's separate
    // writes may arrive; then the next request on the same connection.
    let head = format!(
        "POST /a2a/hecate/tasks/run_nope:cancel HTTP/1.1\r\nHost: {host}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    conn.write_all(head.as_bytes())
        .await
        .expect("write the head");
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let rest = format!("{body}GET /.well-known/agent-card.json HTTP/1.1\r\nHost: {host}\r\n\r\n");
    let _ = conn.write_all(rest.as_bytes()).await;
    let mut seen = Vec::new();
    let mut buf = [0u8; 8192];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !String::from_utf8_lossy(&seen).contains("supportedInterfaces") {
        assert!(std::time::Instant::now() < deadline, "no second answer");
        let read = tokio::time::timeout(std::time::Duration::from_secs(10), conn.read(&mut buf))
            .await
            .expect("an answer in time")
            .expect("read");
        assert!(
            read > 0,
            "the connection closed after: {}",
            String::from_utf8_lossy(&seen)
        );
        seen.extend_from_slice(&buf[..read]);
    }
    let text = String::from_utf8_lossy(&seen);
    assert!(text.starts_with("HTTP/1.1 404"), "{text}");
    assert!(text.contains("TASK_NOT_FOUND"), "{text}");
}
