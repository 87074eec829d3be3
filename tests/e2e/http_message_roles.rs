//! A transcript read by role: `role=` on `GET …/messages` and `GET
//! …/sessions/{id}` keeps only the named roles, pages them with the same
//! sequence cursors (the page's `older` and `newer` count only those roles),
//! takes several roles comma-separated, and answers an unknown role with 400
//! `invalid_request` naming `role`. `hecate sessions show --role` and MCP's
//! `get_transcript` take the same filter.

use crate::support::common::{ModelServer, text};
use crate::support::http::{Api, serve_openai};
use crate::support::mcp::McpProc;
use serde_json::{Value, json};

/// The sequences of the messages under `data.messages` (or `data` for a list).
fn sequences(messages: &Value) -> Vec<i64> {
    messages
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| m["sequence"].as_i64().expect("sequence"))
        .collect()
}

/// `GET …/messages?query`, expected to answer 200: (sequences, page).
async fn messages(api: &Api, id: &str, query: &str) -> (Vec<i64>, Value) {
    let a = api
        .get(&format!(
            "/hecate/v1/agent-chat/sessions/{id}/messages?{query}"
        ))
        .await;
    assert_eq!(a.status, 200, "{query}: {}", a.body);
    (sequences(&a.body["data"]), a.body["page"].clone())
}

fn flags(page: &Value) -> (bool, bool) {
    (
        page["older"].as_bool().expect("older"),
        page["newer"].as_bool().expect("newer"),
    )
}

#[tokio::test]
async fn a_transcript_pages_by_role_and_refuses_an_unknown_one() {
    let server = ModelServer::start(None);
    let (home, _s, api) = serve_openai(&server);
    let id = api.create_session(json!({"title": "roles"})).await;
    for i in 0..3 {
        let a = api.say(&id, &format!("turn {i}")).await;
        assert_eq!(a.status, 200, "{}", a.body);
    }
    // user 0, 2, 4; assistant 1, 3, 5.
    let (seqs, page) = messages(&api, &id, "role=assistant").await;
    assert_eq!(seqs, [1, 3, 5]);
    assert_eq!(flags(&page), (false, false), "{page}");
    let a = api
        .get(&format!(
            "/hecate/v1/agent-chat/sessions/{id}/messages?role=assistant"
        ))
        .await;
    assert!(
        a.body["data"]
            .as_array()
            .expect("data")
            .iter()
            .all(|m| m["role"] == "assistant"),
        "{}",
        a.body
    );

    // Backwards a page of two users at a time.
    let (seqs, page) = messages(&api, &id, "role=user&limit=2").await;
    assert_eq!(seqs, [2, 4]);
    assert_eq!(flags(&page), (true, false), "user 0 is older: {page}");
    let (seqs, page) = messages(&api, &id, "role=user&limit=2&before_sequence=2").await;
    assert_eq!(seqs, [0]);
    assert_eq!(flags(&page), (false, true), "{page}");

    // Forwards, one assistant at a time.
    let (seqs, page) = messages(&api, &id, "role=assistant&limit=1&after_sequence=1").await;
    assert_eq!(seqs, [3]);
    assert_eq!(flags(&page), (true, true), "{page}");
    let (seqs, page) = messages(&api, &id, "role=assistant&after_sequence=5").await;
    assert!(seqs.is_empty());
    assert_eq!(flags(&page), (true, false), "{page}");

    // Several roles, and the whole session's page of one role.
    let (seqs, _) = messages(&api, &id, "role=user,%20assistant").await;
    assert_eq!(seqs, (0..6).collect::<Vec<_>>());
    let (seqs, page) = messages(&api, &id, "role=system").await;
    assert!(seqs.is_empty());
    assert_eq!(flags(&page), (false, false), "{page}");
    let whole = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}?role=user"))
        .await;
    assert_eq!(whole.status, 200, "{}", whole.body);
    assert_eq!(sequences(&whole.body["data"]["messages"]), [0, 2, 4]);

    for path in [
        format!("/hecate/v1/agent-chat/sessions/{id}/messages?role=robot"),
        format!("/hecate/v1/agent-chat/sessions/{id}/messages?role=user,Assistant"),
        format!("/hecate/v1/agent-chat/sessions/{id}?role=tools"),
    ] {
        let bad = api.get(&path).await;
        assert_eq!(bad.status, 400, "{path}: {}", bad.body);
        assert_eq!(bad.error_type(), "invalid_request", "{path}: {}", bad.body);
        assert_eq!(bad.body["error"]["field"], "role", "{path}: {}", bad.body);
    }

    // The CLI and MCP read the same store with the same filter.
    let shown = home.json(&[
        "sessions",
        "show",
        &id,
        "--role",
        "assistant",
        "--limit",
        "2",
        "--format",
        "json",
    ]);
    let data = if shown["data"].is_object() {
        &shown["data"]
    } else {
        &shown
    };
    assert_eq!(sequences(&data["messages"]), [3, 5], "{data}");
    let out = home.run(&["sessions", "show", &id, "--role", "robot"]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("role \"robot\""), "{stderr}");
    let mut mcp = McpProc::start(&home, json!({}));
    let t = mcp.call_ok(
        "get_transcript",
        json!({"session_id": id, "role": "user", "after_sequence": 0}),
    );
    let out = &t["structuredContent"];
    assert_eq!(sequences(&out["messages"]), [2, 4], "{out}");
    assert_eq!(flags(&out["page"]), (true, false), "{out}");
}
