//! Sessions created over HTTP are the same store rows the CLI sees: a session made
//! with `POST /hecate/v1/agent-chat/sessions` continues with `hecate chat --session`
//! and is listed by `hecate sessions list`, and the CLI's turn shows up over HTTP,
//! on an open stream too (the feed notices changes other processes store).

use crate::support::common::{Home, ModelServer, text};
use crate::support::http::{Api, data, last_message, message_contents, serve};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn a_session_created_over_http_continues_in_the_cli_and_back() {
    let server = ModelServer::start(Some(json!([
        {"match": {"contains": "from http"}, "text": "answer one"},
        {"match": {"contains": "from the cli"}, "text": "answer two"}
    ])));
    let home = Home::with_openai(&server);
    let s = serve(&home);
    let api = Api::new(&s);
    let id = api.create_session(json!({"title": "shared"})).await;
    let a = api.say(&id, "question from http").await;
    assert_eq!(a.status, 200, "{}", a.body);

    let mut sse = api.stream(&id, None).await;
    sse.next(Duration::from_secs(30))
        .await
        .expect("initial snapshot");

    let out = home.run(&["chat", "--session", &id, "question from the cli"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "answer two");
    // The CLI sent the history that was written over HTTP.
    let reqs = server.requests();
    assert_eq!(
        message_contents(&reqs[1]["body"]),
        ["question from http", "answer one", "question from the cli"]
    );

    let listed = home.json(&["sessions", "list", "--format", "json"]);
    let rows = listed["data"].as_array().expect("rows");
    let row = rows
        .iter()
        .find(|r| r["id"] == id.as_str())
        .expect("listed");
    assert_eq!(row["title"], "shared");
    assert_eq!(row["message_count"], 4);
    let plain = text(&home.run(&["sessions", "list"])).0;
    assert!(plain.contains(&id), "{plain}");

    // The stream, open in the serving process, sees the turn the CLI process ran.
    let events = sse.until_done(Duration::from_secs(30)).await;
    let done = events.last().expect("events");
    assert_eq!(done.event, "done");
    assert_eq!(last_message(&data(done))["content"], "answer two");

    let got = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(
        message_contents(&got.body["data"]),
        [
            "question from http",
            "answer one",
            "question from the cli",
            "answer two"
        ]
    );
    assert_eq!(got.body["data"]["turns_used"], 2);
}
