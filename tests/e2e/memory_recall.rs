//! Long-term recall against the real binary, with the fixture model server's
//! deterministic embeddings (a hashed bag of words): messages of a user's
//! sessions are found by meaning over HTTP, the CLI and MCP, never across users;
//! `recall = k` puts the nearest messages of the user's other sessions before a
//! model turn's prompt (and before the prompt of Hecate's agent and of an external
//! agent); bad fields are 400 naming the field; a down embeddings
//! provider degrades recall while chat goes on; pending batches are flushed when
//! `hecate serve` stops.

use crate::support::common::{Home, ModelServer, text, workspace};
use crate::support::http::{Api, serve};
use crate::support::mcp::McpProc;
use hecate::domain::recall::RECALL_HEADER;
use serde_json::{Value, json};

/// A home with the fixture as provider `fix` (chat and embeddings) and `[memory]`.
fn home_with_memory(server: &ModelServer, memory: &str) -> Home {
    let home = Home::with_openai(server);
    home.write_config(&format!("[memory]\n{memory}\n"));
    home
}

const MEMORY: &str =
    "embeddings = \"fix/hash-embed\"\ndimensions = 64\nbatch_size = 4\nbatch_delay_ms = 20";

/// The embeddings requests the fixture received.
fn embeddings_requests(server: &ModelServer) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .filter(|r| r["path"] == "/v1/embeddings")
        .collect()
}

/// The chat requests the fixture received.
fn chat_requests(server: &ModelServer) -> Vec<Value> {
    server
        .requests()
        .into_iter()
        .filter(|r| r["path"] == "/v1/chat/completions")
        .collect()
}

async fn session(api: &Api, extra: Value) -> String {
    let mut body = json!({"model": "fix/fixture-model"});
    body.as_object_mut()
        .expect("object")
        .extend(extra.as_object().cloned().unwrap_or_default());
    let a = api.post("/hecate/v1/agent-chat/sessions", body).await;
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["data"]["id"].as_str().expect("id").to_string()
}

async fn turn(api: &Api, id: &str, content: &str) {
    let a = api.say(id, content).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.body["data"]["status"], "completed", "{}", a.body);
}

fn texts(results: &Value) -> Vec<String> {
    results
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["text"].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn recall_finds_a_users_messages_by_meaning_over_http_the_cli_and_mcp() {
    let server = ModelServer::start(None);
    let home = home_with_memory(&server, MEMORY);
    let s = serve(&home);
    let api = Api::new(&s);

    let alice = session(&api, json!({"user": "alice"})).await;
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{alice}"))
        .await;
    assert_eq!(shown.body["data"]["user"], "alice", "{}", shown.body);
    assert_eq!(
        shown.body["data"]["recall"], 0,
        "[memory] recall defaults to 0"
    );
    turn(&api, &alice, "My cat is called Miso").await;
    turn(&api, &alice, "I drink green tea every morning").await;
    let bob = session(&api, json!({"user": "bob"})).await;
    turn(&api, &bob, "My cat is called Rex").await;

    let found = api
        .get("/hecate/v1/memory/search?query=what%20is%20my%20cat%20called&user=alice&k=2")
        .await;
    assert_eq!(found.status, 200, "{}", found.body);
    assert_eq!(found.body["object"], "memory_search");
    let data = &found.body["data"];
    assert_eq!(data["status"]["state"], "ready", "{data}");
    assert_eq!(data["status"]["embeddings"], "fix/hash-embed");
    assert_eq!(
        texts(&data["results"]),
        ["My cat is called Miso", "echo: My cat is called Miso"],
        "{data}"
    );
    assert_eq!(data["results"][0]["session_id"], alice.as_str());
    assert_eq!(data["results"][0]["role"], "user");
    assert_eq!(data["results"][0]["sequence"], 0);
    let top = data["results"][0]["score"].as_f64().expect("score");
    assert!(top > 0.5 && top <= 1.0, "{top}");

    // Bob's scope holds Bob's cat only; the shared scope holds nothing.
    let bobs = api
        .get("/hecate/v1/memory/search?query=cat&user=bob&k=10")
        .await;
    assert_eq!(
        texts(&bobs.body["data"]["results"]),
        ["My cat is called Rex", "echo: My cat is called Rex"]
    );
    let shared = api.get("/hecate/v1/memory/search?query=cat").await;
    assert_eq!(shared.body["data"]["results"], json!([]), "{}", shared.body);

    // Every message was embedded in batches of at most `batch_size`.
    let batches = embeddings_requests(&server);
    let inputs: usize = batches
        .iter()
        .map(|r| r["body"]["input"].as_array().map_or(1, Vec::len))
        .sum();
    assert!(
        batches
            .iter()
            .all(|r| r["body"]["input"].as_array().is_some_and(|i| i.len() <= 4)),
        "{batches:?}"
    );
    assert!(
        inputs >= 6,
        "six messages were indexed (and three queries asked)"
    );
    let status = api.get("/hecate/v1/memory/status").await;
    assert_eq!(status.body["data"]["state"], "ready");
    assert_eq!(status.body["data"]["indexed"], 6, "{}", status.body);
    assert_eq!(status.body["data"]["pending"], 0);

    // Bad fields are stable 400s naming the field; an unknown session is a 404.
    for (query, field) in [
        ("query=cat&k=0", "k"),
        ("query=cat&k=101", "k"),
        ("query=%20%20", "query"),
        ("k=3", "query"),
        ("query=cat&user=%07", "user"),
    ] {
        let bad = api.get(&format!("/hecate/v1/memory/search?{query}")).await;
        assert_eq!(bad.status, 400, "{query}: {}", bad.body);
        assert_eq!(bad.error_type(), "memory.request_invalid", "{query}");
        assert_eq!(bad.body["error"]["field"], field, "{query}: {}", bad.body);
    }
    let missing = api
        .get("/hecate/v1/memory/search?query=cat&session=agent_chat_nope")
        .await;
    assert_eq!(missing.status, 404, "{}", missing.body);
    let bad_recall = api
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({"model": "fix/fixture-model", "recall": 51}),
        )
        .await;
    assert_eq!(bad_recall.status, 400, "{}", bad_recall.body);
    assert_eq!(bad_recall.body["error"]["field"], "recall");

    // The CLI searches the same store.
    let cli = home.json(&[
        "memory", "search", "my cat", "--user", "alice", "--k", "1", "--format", "json",
    ]);
    assert_eq!(cli["object"], "memory_search");
    assert_eq!(texts(&cli["data"]["results"]), ["My cat is called Miso"]);
    let out = home.run(&["memory", "search", "tea", "--user", "alice", "--k", "0"]);
    assert_eq!(out.status.code(), Some(2), "{:?}", text(&out));
    assert!(
        text(&out).1.contains("memory.request_invalid"),
        "{:?}",
        text(&out)
    );

    // So does MCP, with the same shape.
    let mut mcp = McpProc::start(&home, json!({}));
    let listed = mcp.request("tools/list", json!({}));
    let tool = listed["result"]["tools"]
        .as_array()
        .and_then(|ts| ts.iter().find(|t| t["name"] == "search_memory").cloned())
        .expect("search_memory is listed");
    assert_eq!(tool["annotations"]["readOnlyHint"], true);
    let called = mcp.call_ok(
        "search_memory",
        json!({"query": "morning tea", "user": "alice", "k": 1}),
    );
    let out = &called["structuredContent"];
    assert_eq!(out["status"]["state"], "ready", "{called}");
    assert_eq!(
        texts(&out["results"]),
        ["I drink green tea every morning"],
        "{called}"
    );
    let refused = mcp.call("search_memory", json!({"query": "tea", "k": 0}));
    assert_eq!(refused["result"]["isError"], true, "{refused}");
    assert!(
        refused.to_string().contains("memory.request_invalid"),
        "{refused}"
    );
}

#[tokio::test]
async fn recall_k_puts_the_users_nearest_messages_from_other_sessions_before_the_prompt() {
    let server = ModelServer::start(None);
    let home = home_with_memory(&server, MEMORY);
    let s = serve(&home);
    let api = Api::new(&s);

    let earlier = session(&api, json!({"user": "alice"})).await;
    turn(&api, &earlier, "My cat is called Miso").await;
    turn(&api, &earlier, "The car needs new tyres").await;
    let bobs = session(&api, json!({"user": "bob"})).await;
    turn(&api, &bobs, "My cat is called Rex").await;
    // Indexed before the next turn asks (the search waits for the queue).
    api.get("/hecate/v1/memory/search?query=cat&user=alice")
        .await;

    let now = session(&api, json!({"user": "alice", "recall": 1})).await;
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{now}"))
        .await;
    assert_eq!(shown.body["data"]["recall"], 1);
    turn(&api, &now, "Tell me about my cat").await;
    let request = chat_requests(&server)
        .into_iter()
        .rev()
        .find(|r| r.to_string().contains("Tell me about my cat"))
        .expect("the turn's request");
    let messages = request["body"]["messages"].as_array().expect("messages");
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert_eq!(messages[0]["role"], "system");
    let recalled = messages[0]["content"].as_str().expect("content");
    let date = &recalled[recalled.find("(user, ").map_or(0, |i| i + 7)..][..10];
    assert_eq!(
        recalled,
        format!("{RECALL_HEADER}\n[1] (user, {date}) My cat is called Miso")
    );
    assert_eq!(
        messages[1],
        json!({"role": "user", "content": "Tell me about my cat"})
    );

    // The session's own transcript is history, never recalled into itself.
    turn(&api, &now, "Tell me about my cat again").await;
    let again = chat_requests(&server)
        .into_iter()
        .rev()
        .find(|r| r.to_string().contains("my cat again"))
        .expect("the second request");
    let system = again["body"]["messages"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["role"] == "system"))
        .and_then(|m| m["content"].as_str())
        .expect("a recalled-messages system message");
    assert!(system.contains("My cat is called Miso"), "{again}");
    assert!(!system.contains("Tell me about my cat"), "{again}");
    assert!(
        !again.to_string().contains("Rex"),
        "another user's memory: {again}"
    );

    // No recall (the default): no system message.
    let plain = session(&api, json!({"user": "alice"})).await;
    turn(&api, &plain, "Anything about my cat").await;
    let request = chat_requests(&server)
        .into_iter()
        .rev()
        .find(|r| r.to_string().contains("Anything about my cat"))
        .expect("request");
    assert_eq!(
        request["body"]["messages"],
        json!([{"role": "user", "content": "Anything about my cat"}])
    );
}

#[tokio::test]
async fn recall_reaches_hecate_agent_and_external_agent_turns_before_the_prompt() {
    let server = ModelServer::start(None);
    let home = home_with_memory(&server, MEMORY);
    home.add_fixture_agent("fixture", &[]);
    let s = serve(&home);
    let api = Api::new(&s);
    let earlier = session(&api, json!({"user": "alice"})).await;
    turn(&api, &earlier, "My cat is called Miso").await;
    // Indexed before the next turns ask (the search waits for the queue).
    api.get("/hecate/v1/memory/search?query=cat&user=alice")
        .await;
    let (_dir, ws) = workspace();
    let ws = ws.display().to_string();

    // Hecate's agent: the task's prompt starts with the recalled messages.
    let agent = session(
        &api,
        json!({"user": "alice", "recall": 1, "runtime_kind": "agent", "workspace": ws}),
    )
    .await;
    turn(&api, &agent, "Tell me about my cat").await;
    let request = chat_requests(&server)
        .into_iter()
        .rev()
        .find(|r| r.to_string().contains("Tell me about my cat"))
        .expect("the agent's model request");
    let user = request["body"]["messages"]
        .as_array()
        .and_then(|ms| ms.iter().rev().find(|m| m["role"] == "user"))
        .map(|m| m["content"].to_string())
        .expect("the user message");
    assert!(user.contains(RECALL_HEADER), "{user}");
    assert!(user.contains("My cat is called Miso"), "{user}");
    assert!(
        user.find("Miso") < user.find("Tell me about my cat"),
        "recalled first: {user}"
    );

    // An external agent: a text block before the prompt (the fixture agent
    // echoes every text block of its prompt).
    let created = api
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({"runtime_kind": "external_agent", "adapter_id": "fixture",
                   "workspace": ws, "user": "alice", "recall": 1}),
        )
        .await;
    assert_eq!(created.status, 200, "{}", created.body);
    let ext = created.body["data"]["id"].as_str().expect("id").to_string();
    let a = api.say(&ext, "What is my cat called").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let answer = a.body["data"]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .expect("answer")
        .to_string();
    assert!(answer.starts_with("echo: "), "{answer}");
    assert!(answer.contains(RECALL_HEADER), "{answer}");
    assert!(answer.contains("My cat is called Miso"), "{answer}");
    assert!(answer.ends_with("What is my cat called"), "{answer}");
    // The session keeps what the user said, not the recalled context.
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{ext}"))
        .await;
    let asked = shown.body["data"]["messages"][0]["content"].clone();
    assert_eq!(asked, "What is my cat called");
}

#[tokio::test]
async fn a_down_embeddings_provider_degrades_recall_and_chat_goes_on() {
    let server = ModelServer::start(None);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a port")
        .port();
    let home = home_with_memory(
        &server,
        &format!(
            "embeddings = \"down/embed\"\nrecall = 3\n\n[providers.down]\nkind = \"openai\"\nbase_url = \"http://127.0.0.1:{closed}/v1\""
        ),
    );
    let s = serve(&home);
    let api = Api::new(&s);

    let id = session(&api, json!({})).await;
    let shown = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(
        shown.body["data"]["recall"], 3,
        "[memory] recall is the default"
    );
    turn(&api, &id, "My cat is called Miso").await;
    turn(&api, &id, "What is my cat called?").await;
    let transcript = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(
        transcript.body["data"]["messages"].as_array().map(Vec::len),
        Some(4),
        "every message is stored: {}",
        transcript.body
    );

    let found = api.get("/hecate/v1/memory/search?query=cat").await;
    assert_eq!(found.status, 200, "degraded, not failed: {}", found.body);
    let status = &found.body["data"]["status"];
    assert_eq!(status["state"], "degraded", "{status}");
    assert_eq!(status["reason"], "embeddings_unavailable");
    assert!(
        status["message"]
            .as_str()
            .is_some_and(|m| m.contains("down/embed")),
        "{status}"
    );
    assert_eq!(found.body["data"]["results"], json!([]));
    let live = api.get("/hecate/v1/memory/status").await;
    assert_eq!(live.body["data"]["state"], "degraded", "{}", live.body);
    assert!(
        live.body["data"]["pending"]
            .as_u64()
            .is_some_and(|p| p >= 1),
        "{}",
        live.body
    );

    let out = home.run(&["memory", "search", "cat"]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(
        text(&out)
            .1
            .contains("recall degraded (embeddings_unavailable)"),
        "{:?}",
        text(&out)
    );
    assert_eq!(text(&out).0, "no results\n");
    let status = home.json(&["memory", "status", "--format", "json"]);
    assert_eq!(status["data"]["state"], "degraded", "{status}");

    let mut mcp = McpProc::start(&home, json!({}));
    let called = mcp.call_ok("search_memory", json!({"query": "cat"}));
    assert_eq!(
        called["structuredContent"]["status"]["state"], "degraded",
        "{called}"
    );

    // Without [memory] embeddings recall says how to turn it on.
    let off = Home::with_openai(&server);
    let s2 = serve(&off);
    let api2 = Api::new(&s2);
    let found = api2.get("/hecate/v1/memory/search?query=cat").await;
    assert_eq!(found.status, 200, "{}", found.body);
    assert_eq!(
        found.body["data"]["status"]["reason"],
        "embeddings_not_configured"
    );
}

#[tokio::test]
async fn pending_batches_are_embedded_when_serve_stops() {
    let server = ModelServer::start(None);
    // Batches wait a minute to fill: only the shutdown flush sends this one.
    let home = home_with_memory(
        &server,
        "embeddings = \"fix/hash-embed\"\ndimensions = 64\nbatch_size = 100\nbatch_delay_ms = 60000",
    );
    let mut s = serve(&home);
    let api = Api::new(&s);
    let id = session(&api, json!({})).await;
    turn(&api, &id, "Remember the lighthouse keeper").await;
    let status = api.get("/hecate/v1/memory/status").await;
    assert_eq!(status.body["data"]["pending"], 2, "{}", status.body);
    assert!(embeddings_requests(&server).is_empty());

    // SIGTERM: serve shuts down gracefully and flushes.
    let exited = s.stop_gracefully();
    assert!(exited.is_some_and(|st| st.success()), "{exited:?}");
    let sent = embeddings_requests(&server);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert_eq!(
        sent[0]["body"]["input"],
        json!([
            "Remember the lighthouse keeper",
            "echo: Remember the lighthouse keeper"
        ])
    );
    let cli = home.json(&["memory", "search", "lighthouse", "--format", "json"]);
    assert_eq!(
        cli["data"]["results"].as_array().map(Vec::len),
        Some(2),
        "{cli}"
    );
}
