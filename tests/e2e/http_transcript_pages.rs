//! A turn's answer is that turn, and a long transcript is read a page at a time on
//! every face: `POST …/messages` answers the session header with the turn's own
//! messages, run and provider call; `GET …/sessions/{id}` and `GET …/messages` page
//! from either end with sequence cursors; `hecate sessions show` and MCP's
//! `get_transcript` take the same cursors; bad paging input is a stable 400.

use crate::support::common::{ModelServer, text};
use crate::support::http::{Api, serve_openai};
use crate::support::mcp::McpProc;
use serde_json::{Value, json};

/// Turns the long session runs (two messages each).
const TURNS: i64 = 30;

/// The sequences of the messages `holder` carries under `messages`.
fn sequences(messages: &Value) -> Vec<i64> {
    messages
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["sequence"].as_i64().expect("sequence"))
        .collect()
}

/// GET of the session with `query`, expected to answer 200.
async fn page(api: &Api, id: &str, query: &str) -> Value {
    let a = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}?{query}"))
        .await;
    assert_eq!(a.status, 200, "{query}: {}", a.body);
    a.body["data"].clone()
}

/// Runs [`TURNS`] turns, checking each answer holds only its own turn.
async fn long_session(api: &Api) -> String {
    let id = api.create_session(json!({"title": "pages"})).await;
    for i in 0..TURNS {
        let a = api.say(&id, &format!("turn {i}")).await;
        assert_eq!(a.status, 200, "{}", a.body);
        let data = &a.body["data"];
        assert_eq!(data["id"], id.as_str(), "the session header: {data}");
        assert_eq!(sequences(&data["messages"]), [2 * i, 2 * i + 1], "{data}");
        let answer = &data["messages"][1];
        assert_eq!(answer["role"], "assistant");
        assert_eq!(answer["content"], format!("echo: turn {i}"));
        let runs = data["runs"].as_array().expect("runs");
        assert_eq!(runs.len(), 1, "the turn's run only: {data}");
        assert_eq!(runs[0]["id"], answer["run_id"]);
        assert_eq!(data["latest_run_id"], answer["run_id"]);
        let calls = data["provider_calls"].as_array().expect("calls");
        assert_eq!(calls.len(), 1, "the turn's provider call only: {data}");
        assert_eq!(calls[0]["id"], answer["produced_by_call_id"]);
        assert_eq!(data["page"]["older"], i > 0, "{data}");
        assert_eq!(data["page"]["newer"], false, "{data}");
    }
    id
}

/// The parts of a transcript page a turn's answer and a read of the same two
/// messages must agree on (the page cursors differ by design).
fn turn_view(data: &Value) -> Value {
    json!({
        "header": data["id"], "status": data["status"], "updated_at": data["updated_at"],
        "turns_used": data["turns_used"], "provider": data["provider"], "model": data["model"],
        "last_activity_at": data["last_activity_at"], "capabilities": data["capabilities"],
        "messages": data["messages"], "runs": data["runs"],
        "provider_calls": data["provider_calls"], "segments": data["segments"],
        "latest_run_id": data["latest_run_id"],
    })
}

#[tokio::test]
async fn a_model_turns_answer_built_in_memory_is_what_the_store_then_shows() {
    // A model turn's answer is built from what the turn wrote, not read back:
    // each one must equal the stored window of the same two messages.
    let server = ModelServer::start(None);
    let (_home, _s, api) = serve_openai(&server);
    let id = api.create_session(json!({"title": "answers"})).await;
    for i in 0..3 {
        let a = api
            .say(&id, &format!("turn {i} with a few more words"))
            .await;
        assert_eq!(a.status, 200, "{}", a.body);
        let answer = &a.body["data"];
        let answer_msg = &answer["messages"][1];
        assert_eq!(answer_msg["status"], "completed", "{answer}");
        assert!(answer_msg["timing"].is_object(), "{answer}");
        assert!(answer_msg["usage"].is_object(), "{answer}");
        let stored = page(&api, &id, &format!("after_sequence={}&limit=2", 2 * i - 1)).await;
        assert_eq!(turn_view(answer), turn_view(&stored));
        assert_eq!(answer["page"]["older"], stored["page"]["older"]);
        assert_eq!(answer["page"]["newer"], stored["page"]["newer"]);
    }
}

#[tokio::test]
async fn a_turns_answer_is_the_turn_and_the_transcript_pages_from_either_end() {
    let server = ModelServer::start(None);
    let (_home, _s, api) = serve_openai(&server);
    let id = long_session(&api).await;
    let last = 2 * TURNS - 1;

    // The default page is the newest 200: the whole of this session.
    let whole = page(&api, &id, "").await;
    assert_eq!(
        sequences(&whole["messages"]),
        (0..=last).collect::<Vec<_>>()
    );
    assert_eq!(
        whole["page"],
        json!({"older": false, "newer": false, "first_sequence": 0, "last_sequence": last})
    );
    assert_eq!(whole["runs"].as_array().map(Vec::len), Some(TURNS as usize));

    // Backwards from the end, 25 at a time, each page naming the next cursor.
    let newest = page(&api, &id, "limit=25").await;
    assert_eq!(
        sequences(&newest["messages"]),
        (last - 24..=last).collect::<Vec<_>>()
    );
    assert_eq!(newest["page"]["older"], true);
    assert_eq!(newest["page"]["newer"], false);
    // Only the runs of the messages held (the first one is the tail of a turn).
    let held: Vec<&Value> = newest["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| &m["run_id"])
        .collect();
    let runs = newest["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 13, "{newest}");
    assert!(runs.iter().all(|r| held.contains(&&r["id"])), "{newest}");
    let cursor = newest["page"]["first_sequence"].as_i64().expect("cursor");
    let middle = page(&api, &id, &format!("limit=25&before_sequence={cursor}")).await;
    assert_eq!(
        sequences(&middle["messages"]),
        (last - 49..=last - 25).collect::<Vec<_>>()
    );
    assert_eq!(middle["page"]["older"], true);
    assert_eq!(middle["page"]["newer"], true);
    let cursor = middle["page"]["first_sequence"].as_i64().expect("cursor");
    let oldest = page(&api, &id, &format!("limit=25&before_sequence={cursor}")).await;
    assert_eq!(sequences(&oldest["messages"]), (0..=9).collect::<Vec<_>>());
    assert_eq!(oldest["page"]["older"], false);
    assert_eq!(oldest["page"]["newer"], true);

    // Forwards from a cursor, and the message list without the header.
    let tail = page(&api, &id, "limit=25&after_sequence=49").await;
    assert_eq!(
        sequences(&tail["messages"]),
        (50..=last).collect::<Vec<_>>()
    );
    assert_eq!(tail["page"]["older"], true);
    assert_eq!(tail["page"]["newer"], false);
    let listed = api
        .get(&format!(
            "/hecate/v1/agent-chat/sessions/{id}/messages?after_sequence=-1&limit=5"
        ))
        .await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert_eq!(listed.body["object"], "agent_chat_messages");
    assert_eq!(sequences(&listed.body["data"]), [0, 1, 2, 3, 4]);
    assert_eq!(
        listed.body["page"],
        json!({"older": false, "newer": true, "first_sequence": 0, "last_sequence": 4})
    );
    // Past either end: an empty page that says where the messages are.
    let before_all = page(&api, &id, "before_sequence=0").await;
    assert_eq!(sequences(&before_all["messages"]), Vec::<i64>::new());
    assert_eq!(before_all["page"], json!({"older": false, "newer": true}));
    let after_all = page(&api, &id, &format!("after_sequence={last}")).await;
    assert_eq!(after_all["page"], json!({"older": true, "newer": false}));
    // The extremes of the cursors' range are pages too, not overflows.
    let lowest = page(&api, &id, &format!("before_sequence={}", i64::MIN)).await;
    assert_eq!(lowest["page"], json!({"older": false, "newer": true}));
    let highest = page(&api, &id, &format!("after_sequence={}", i64::MAX)).await;
    assert_eq!(highest["page"], json!({"older": true, "newer": false}));
    let below = page(&api, &id, &format!("after_sequence={}", i64::MIN)).await;
    assert_eq!(sequences(&below["messages"])[0], 0);

    // Bad paging input is a 400 naming the problem; an unknown session a 404.
    for query in [
        "limit=0",
        "limit=1001",
        "before_sequence=4&after_sequence=2",
        "before_sequence=soon",
    ] {
        for path in [
            format!("/hecate/v1/agent-chat/sessions/{id}?{query}"),
            format!("/hecate/v1/agent-chat/sessions/{id}/messages?{query}"),
        ] {
            let bad = api.get(&path).await;
            assert_eq!(bad.status, 400, "{path}: {}", bad.body);
            assert_eq!(bad.error_type(), "invalid_request", "{path}: {}", bad.body);
        }
    }
    let missing = api
        .get("/hecate/v1/agent-chat/sessions/agent_chat_missing/messages")
        .await;
    assert_eq!(missing.status, 404, "{}", missing.body);
}

#[tokio::test]
async fn the_cli_and_mcp_read_the_same_pages() {
    let server = ModelServer::start(None);
    let (home, _s, api) = serve_openai(&server);
    let id = long_session(&api).await;
    let last = 2 * TURNS - 1;

    let shown = home.json(&["sessions", "show", &id, "--limit", "4", "--format", "json"]);
    let data = if shown["data"].is_object() {
        &shown["data"]
    } else {
        &shown
    };
    assert_eq!(
        sequences(&data["messages"]),
        (last - 3..=last).collect::<Vec<_>>()
    );
    assert_eq!(data["page"], json!({"older": true, "newer": false}));
    let out = home.run(&["sessions", "show", &id, "--limit", "2", "--before", "10"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("#8 user"), "{stdout}");
    assert!(stdout.contains("#9 assistant"), "{stdout}");
    assert!(!stdout.contains("#10 "), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "older messages: hecate sessions show {id} --before 8"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "newer messages: hecate sessions show {id} --after 9"
        )),
        "{stdout}"
    );
    let both = home.run(&["sessions", "show", &id, "--before", "4", "--after", "2"]);
    assert!(!both.status.success(), "both cursors must be refused");
    let zero = home.run(&["sessions", "show", &id, "--limit", "0"]);
    let (_, stderr) = text(&zero);
    assert!(!zero.status.success());
    assert!(
        stderr.contains("limit must be between 1 and 1000"),
        "{stderr}"
    );

    let mut mcp = McpProc::start(&home, json!({}));
    let t = mcp.call_ok(
        "get_transcript",
        json!({"session_id": id, "limit": 4, "before_sequence": 10}),
    );
    let out = &t["structuredContent"];
    assert_eq!(sequences(&out["messages"]), [6, 7, 8, 9]);
    assert_eq!(
        out["page"],
        json!({"older": true, "newer": true, "first_sequence": 6, "last_sequence": 9})
    );
    let newest = mcp.call_ok("get_transcript", json!({"session_id": id, "last": 2}));
    assert_eq!(
        sequences(&newest["structuredContent"]["messages"]),
        [last - 1, last]
    );
    let bad = mcp.call(
        "get_transcript",
        json!({"session_id": id, "before_sequence": 4, "after_sequence": 2}),
    );
    assert_eq!(bad["result"]["isError"], true, "{bad}");
    assert!(bad.to_string().contains("cannot be combined"), "{bad}");
}

/// A stream snapshot is the newest page, as `GET …/{id}` answers it, so its size
/// does not grow with the session.
#[tokio::test]
async fn a_stream_snapshot_is_the_newest_page() {
    let server = ModelServer::start(None);
    let (_home, _s, api) = serve_openai(&server);
    let id = api.create_session(json!({"title": "long"})).await;
    for i in 0..105 {
        assert_eq!(api.say(&id, &format!("turn {i}")).await.status, 200);
    }
    let mut sse = api.stream(&id, None).await;
    let first = sse
        .next(std::time::Duration::from_secs(30))
        .await
        .expect("a snapshot");
    assert_eq!(first.event, "snapshot");
    let snapshot = crate::support::http::data(&first)["data"].clone();
    let got = page(&api, &id, "").await;
    assert_eq!(
        sequences(&snapshot["messages"]),
        (10..210).collect::<Vec<_>>()
    );
    assert_eq!(
        sequences(&snapshot["messages"]),
        sequences(&got["messages"])
    );
    assert_eq!(snapshot["page"], got["page"], "{}", snapshot["page"]);
    assert_eq!(snapshot["page"]["older"], true);
}
