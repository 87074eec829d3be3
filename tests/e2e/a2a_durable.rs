//! The A2A server's tasks, conversations and push notification configs
//! outlive `hecate serve` (issue #33): after a SIGKILL and a restart on the
//! same data directory, an old task is still read and listed with its answer,
//! a message in its `contextId` continues the same session (the model is sent
//! the earlier turn), a push notification config set before is still listed,
//! and a task whose server was killed mid-turn is reported failed, not
//! working.

use crate::a2a_server::{a2a_home, answer_text, message, result, rpc};
use crate::support::agent::answer;
use crate::support::common::{ModelServer, workspace};
use crate::support::http::{Api, serve, slow_text};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn tasks_contexts_and_push_configs_outlive_a_killed_server() {
    let server = ModelServer::start(Some(json!([
        answer("The first answer."),
        answer("The second answer."),
        slow_text(200, 100)
    ])));
    let home = a2a_home(&server, "");
    let (_dir, ws) = workspace();

    let s = serve(&home);
    let api = Api::new(&s);
    let first = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("remember the word quokka", &ws, Some("durable-ctx"), None)}),
        )
        .await,
    );
    let task = &first["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task}");
    let task_id = task["id"].as_str().expect("id").to_string();
    let session = task["metadata"]["hecateSessionId"].clone();
    assert!(session.is_string(), "{task}");
    let config = result(
        &rpc(
            &api,
            "hecate",
            "CreateTaskPushNotificationConfig",
            json!({"taskId": task_id, "id": "kept", "url": "http://127.0.0.1:9/hook",
                   "token": "t-kept"}),
        )
        .await,
    );
    assert_eq!(config["id"], "kept");
    drop(api);
    drop(s); // SIGKILL, then reaped.

    let s = serve(&home);
    let api = Api::new(&s);
    // (a) The old task, completed, with its answer.
    let got = result(&rpc(&api, "hecate", "GetTask", json!({"id": task_id})).await);
    assert_eq!(got["status"]["state"], "TASK_STATE_COMPLETED", "{got}");
    assert_eq!(answer_text(&got), "The first answer.");
    assert_eq!(got["contextId"], "durable-ctx");
    assert_eq!(got["metadata"]["hecateSessionId"], session);
    assert_eq!(got["history"][0]["role"], "ROLE_USER", "{got}");
    // Another agent does not have it.
    let other = rpc(
        &api,
        "hecate:fix%2Fgpt-fixture",
        "GetTask",
        json!({"id": task_id}),
    )
    .await;
    assert_eq!(other.body["error"]["code"], -32001, "{}", other.body);
    // (b) Listed.
    let listed = result(
        &rpc(
            &api,
            "hecate",
            "ListTasks",
            json!({"contextId": "durable-ctx", "includeArtifacts": true}),
        )
        .await,
    );
    assert_eq!(listed["totalSize"], 1, "{listed}");
    assert_eq!(listed["tasks"][0]["id"], task_id.as_str());
    assert_eq!(answer_text(&listed["tasks"][0]), "The first answer.");
    // (d) The push config set before the restart.
    let configs = result(
        &rpc(
            &api,
            "hecate",
            "ListTaskPushNotificationConfigs",
            json!({"taskId": task_id}),
        )
        .await,
    );
    assert_eq!(
        configs["configs"],
        json!([{"id": "kept", "taskId": task_id, "url": "http://127.0.0.1:9/hook",
                "token": "t-kept"}]),
        "{configs}"
    );
    let rest = api
        .get(&format!(
            "/a2a/hecate/tasks/{task_id}/pushNotificationConfigs/kept"
        ))
        .await;
    assert_eq!(rest.status, 200, "{}", rest.body);
    // (c) The context goes on in the same session, with the earlier turn.
    let second = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("what was the word?", &ws, Some("durable-ctx"), None)}),
        )
        .await,
    );
    assert_eq!(second["task"]["status"]["state"], "TASK_STATE_COMPLETED");
    assert_eq!(second["task"]["metadata"]["hecateSessionId"], session);
    assert_eq!(answer_text(&second["task"]), "The second answer.");
    let asked = server.requests()[1].to_string();
    assert!(
        asked.contains("quokka") && asked.contains("The first answer."),
        "the second turn carries the first: {asked}"
    );
    let listed = result(
        &rpc(
            &api,
            "hecate",
            "ListTasks",
            json!({"contextId": "durable-ctx"}),
        )
        .await,
    );
    assert_eq!(listed["totalSize"], 2, "{listed}");
    assert_eq!(
        listed["tasks"][0]["id"], second["task"]["id"],
        "newest first"
    );

    // A task whose server is killed mid-turn.
    let started = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("talk slowly", &ws, Some("killed-ctx"), None),
                   "configuration": {"returnImmediately": true}}),
        )
        .await,
    );
    let killed = started["task"]["id"].as_str().expect("id").to_string();
    // Wait until the model streams (the turn is under way).
    let mut streaming = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = result(&rpc(&api, "hecate", "GetTask", json!({"id": killed})).await);
        assert_eq!(now["status"]["state"], "TASK_STATE_WORKING", "{now}");
        if now.get("artifacts").is_some() {
            streaming = true;
            break;
        }
    }
    assert!(streaming, "the slow answer never started");
    drop(api);
    drop(s);

    let s = serve(&home);
    let api = Api::new(&s);
    let after = result(&rpc(&api, "hecate", "GetTask", json!({"id": killed})).await);
    assert_eq!(after["status"]["state"], "TASK_STATE_FAILED", "{after}");
    let said = after["status"]["message"]["parts"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(said.contains("stopped"), "{after}");
    let failed = result(
        &rpc(
            &api,
            "hecate",
            "ListTasks",
            json!({"contextId": "killed-ctx"}),
        )
        .await,
    );
    assert_eq!(
        failed["tasks"][0]["status"]["state"], "TASK_STATE_FAILED",
        "{failed}"
    );
    let cancel = rpc(&api, "hecate", "CancelTask", json!({"id": killed})).await;
    assert_eq!(cancel.body["error"]["code"], -32002, "{}", cancel.body);
}
