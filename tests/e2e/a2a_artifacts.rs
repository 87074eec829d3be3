//! The files a turn changed as A2A artifacts, against the real `hecate serve`
//! with the fixture model driving Hecate's agent in a Git workspace: each
//! changed file is an artifact named by its path, holding its unified diff as
//! a `text/x-diff` part with the path, line counts and created/deleted in its
//! metadata, after the answer artifact, on a send's task, on GetTask (both
//! bindings), as `artifactUpdate` events of a stream, and of a resubscribe.

use super::a2a_server::{a2a_home, answer_text, message, result, rpc, stream};
use crate::support::agent::{answer, call, turn};
use crate::support::common::{ModelServer, git_workspace};
use crate::support::http::{Api, serve, slow_text};
use serde_json::{Value, json};
use std::path::PathBuf;

/// A Git workspace (`a.txt` = "original\n" committed), canonical.
fn repo() -> (tempfile::TempDir, PathBuf) {
    let dir = git_workspace();
    let path = std::fs::canonicalize(dir.path()).expect("canonical");
    (dir, path)
}

/// The model's tool calls editing `a.txt` and creating `sub/b.txt`.
fn edits() -> Value {
    turn(vec![
        call(
            "file_edit",
            json!({"path": "a.txt", "old_string": "original", "new_string": "edited"}),
        ),
        call(
            "file_write",
            json!({"path": "sub/b.txt", "content": "one\ntwo\n"}),
        ),
    ])
}

/// The artifact with id `id` among `artifacts`.
fn artifact<'a>(artifacts: &'a Value, id: &str) -> &'a Value {
    artifacts
        .as_array()
        .and_then(|a| a.iter().find(|x| x["artifactId"] == id))
        .unwrap_or_else(|| panic!("no artifact {id} in {artifacts:#}"))
}

/// Checks the two files' artifacts of [`edits`] after the answer.
fn assert_file_artifacts(task: &Value) {
    let artifacts = &task["artifacts"];
    let ids: Vec<&str> = artifacts
        .as_array()
        .unwrap_or_else(|| panic!("no artifacts in {task:#}"))
        .iter()
        .filter_map(|a| a["artifactId"].as_str())
        .collect();
    assert_eq!(ids, ["answer", "file:a.txt", "file:sub/b.txt"], "{task:#}");
    let edited = artifact(artifacts, "file:a.txt");
    assert_eq!(edited["name"], "a.txt");
    let part = &edited["parts"][0];
    assert_eq!(part["mediaType"], "text/x-diff", "{edited:#}");
    let diff = part["text"].as_str().expect("diff text");
    assert!(
        diff.contains("-original") && diff.contains("+edited"),
        "{diff}"
    );
    assert_eq!(
        edited["metadata"],
        json!({"path": "a.txt", "status": "modified", "linesAdded": 1, "linesRemoved": 1,
               "created": false, "deleted": false}),
        "{edited:#}"
    );
    let created = artifact(artifacts, "file:sub/b.txt");
    assert_eq!(created["name"], "sub/b.txt");
    let diff = created["parts"][0]["text"].as_str().expect("diff text");
    assert!(diff.contains("+one") && diff.contains("+two"), "{diff}");
    assert_eq!(created["metadata"]["created"], true, "{created:#}");
    assert_eq!(created["metadata"]["linesAdded"], 2, "{created:#}");
    assert_eq!(created["metadata"]["linesRemoved"], 0, "{created:#}");
}

#[tokio::test]
async fn a_sends_task_and_get_carry_each_changed_file_with_its_diff() {
    let server = ModelServer::start(Some(json!([edits(), answer("Edited two files.")])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = repo();

    let sent = result(
        &rpc(
            &api,
            "hecate",
            "SendMessage",
            json!({"message": message("edit the files", &ws, None, None)}),
        )
        .await,
    );
    let task = &sent["task"];
    assert_eq!(task["status"]["state"], "TASK_STATE_COMPLETED", "{task:#}");
    assert_eq!(answer_text(task), "Edited two files.");
    assert_file_artifacts(task);
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).expect("a.txt"),
        "edited\n"
    );

    let id = task["id"].as_str().expect("id");
    let got = result(&rpc(&api, "hecate", "GetTask", json!({"id": id})).await);
    assert_file_artifacts(&got);
    let rest = api.get(&format!("/a2a/hecate/tasks/{id}")).await;
    assert_eq!(rest.status, 200, "{}", rest.body);
    assert_file_artifacts(&rest.body);
}

#[tokio::test]
async fn a_stream_and_a_resubscribe_carry_the_changed_files_before_the_end() {
    let server = ModelServer::start(Some(json!([
        edits(),
        answer("Edited two files."),
        turn(vec![call(
            "file_write",
            json!({"path": "later.txt", "content": "late\n"}),
        )]),
        slow_text(20, 50),
    ])));
    let home = a2a_home(&server, "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = repo();

    let events = stream(
        &api,
        "/a2a/hecate",
        json!({"jsonrpc": "2.0", "id": 3, "method": "SendStreamingMessage",
               "params": {"message": message("edit the files", &ws, None, None)}}),
    )
    .await;
    let results: Vec<&Value> = events.iter().map(|e| &e["result"]).collect();
    let files: Vec<&Value> = results
        .iter()
        .filter_map(|r| r.get("artifactUpdate"))
        .filter(|u| {
            u["artifact"]["artifactId"]
                .as_str()
                .is_some_and(|id| id.starts_with("file:"))
        })
        .collect();
    assert_eq!(files.len(), 2, "{events:#?}");
    assert_eq!(files[0]["artifact"]["name"], "a.txt");
    assert_eq!(files[0]["lastChunk"], true);
    assert_eq!(files[0]["append"], false);
    assert_eq!(files[1]["artifact"]["metadata"]["created"], true);
    let last = results.last().expect("events");
    assert_eq!(
        last["statusUpdate"]["status"]["state"], "TASK_STATE_COMPLETED",
        "the files come before the end: {events:#?}"
    );
    let context = results[0]["task"]["contextId"].as_str().expect("context");

    // The next task of the conversation, followed by a resubscribe over REST.
    let started = api
        .post(
            "/a2a/hecate/message:send",
            json!({"message": message("one more file", &ws, Some(context), None),
                   "configuration": {"returnImmediately": true}}),
        )
        .await;
    assert_eq!(started.status, 200, "{}", started.body);
    let id = started.body["task"]["id"].as_str().expect("id").to_string();
    let followed = stream(
        &api,
        &format!("/a2a/hecate/tasks/{id}:subscribe"),
        json!({}),
    )
    .await;
    let update = followed
        .iter()
        .find_map(|e| {
            e.get("artifactUpdate")
                .filter(|u| u["artifact"]["artifactId"] == "file:later.txt")
        })
        .unwrap_or_else(|| panic!("no file artifact in {followed:#?}"));
    let diff = update["artifact"]["parts"][0]["text"]
        .as_str()
        .expect("diff");
    assert!(diff.contains("+late"), "{diff}");
    assert_eq!(update["artifact"]["metadata"]["path"], "later.txt");
    assert_eq!(
        followed[followed.len() - 1]["statusUpdate"]["status"]["state"],
        "TASK_STATE_COMPLETED",
        "{followed:#?}"
    );
    // Only this turn's changes: the first turn's files are not this task's.
    let got = api.get(&format!("/a2a/hecate/tasks/{id}")).await;
    let ids: Vec<&str> = got.body["artifacts"]
        .as_array()
        .expect("artifacts")
        .iter()
        .filter_map(|a| a["artifactId"].as_str())
        .collect();
    assert_eq!(ids, ["answer", "file:later.txt"], "{}", got.body);
}
