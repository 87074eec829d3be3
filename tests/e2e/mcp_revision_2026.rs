//! Protocol revision 2026-07-28 on Hecate's MCP server, in raw JSON-RPC over
//! stdio (`hecate mcp`) and Streamable HTTP (`hecate mcp http`):
//! `server/discover`, stateless `tools/list` and `tools/call` carrying the
//! revision, capabilities and client in `_meta` without `initialize` (the
//! 2025-11-25 handshake still works beside them), `subscriptions/listen`
//! delivering a session's updates tagged with the stream's id, an approval
//! elicited through a multi round-trip call (`input_required`, then the retry
//! with `inputResponses` and `requestState`; over HTTP the call's progress
//! after the first round reaches the request that resumed it), a `traceparent` in `_meta`
//! parenting the server span, and the refusals of an unknown revision, of
//! malformed `_meta` and of a foreign `requestState`.

use crate::support::common::{Home, ModelServer};
use crate::support::mcp::{HttpEndpoint, McpProc, fixture_upstream};
use crate::support::otlp::{Collector, export_env};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const REVISION: &str = "2026-07-28";
const TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT_SPAN: &str = "b7ad6b7169203331";

/// The `_meta` of a 2026-07-28 request, with `capabilities`.
fn meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": REVISION,
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "raw-2026", "version": "1"},
    })
}

/// `params` with the `_meta` of a 2026-07-28 request added.
fn with_meta(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = meta(capabilities);
    params
}

/// A config with the fixture upstreams `fx` (auto) and `guarded` (require_approval).
fn fx_and_guarded() -> String {
    format!(
        "{}{}",
        fixture_upstream("fx", &[], ""),
        fixture_upstream(
            "guarded",
            &["--name", "guarded"],
            "policy = \"require_approval\"\n"
        )
    )
}

fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

/// The `_meta` subscription id of a notification.
fn subscription_of(n: &Value) -> &Value {
    &n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
}

#[test]
fn stdio_answers_discover_and_stateless_requests_without_initialize() {
    let mut home = Home::empty();
    let record = home.path("fx-record.jsonl");
    let record_arg = record.display().to_string();
    home.write_config(&fixture_upstream("fx", &["--record", &record_arg], ""));
    let collector = Collector::start();
    for (k, v) in export_env(&collector) {
        home.set(k, &v);
    }
    let mut mcp = McpProc::spawn(&home, &[]);
    let discover = mcp.request("server/discover", json!({"_meta": meta(json!({}))}));
    let result = &discover["result"];
    let versions = result["supportedVersions"].as_array().expect("versions");
    assert!(
        versions.contains(&json!(REVISION)) && versions.contains(&json!("2025-11-25")),
        "{discover}"
    );
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(result["capabilities"]["resources"]["subscribe"], true);
    assert!(
        result["capabilities"].get("tasks").is_none()
            && result["capabilities"].get("extensions").is_none(),
        "only what Hecate implements is advertised: {discover}"
    );

    let list = mcp.request("tools/list", json!({"_meta": meta(json!({}))}));
    let tools = names(&list);
    assert!(
        tools.contains(&"list_sessions".to_string()) && tools.contains(&"fx__echo".to_string()),
        "{list}"
    );
    let mut traced = meta(json!({}));
    traced["traceparent"] = json!(format!("00-{TRACE_ID}-{PARENT_SPAN}-01"));
    let call = mcp.request(
        "tools/call",
        json!({"name": "fx__echo", "arguments": {"message": "stateless"}, "_meta": traced}),
    );
    assert_eq!(call["result"]["content"][0]["text"], "stateless", "{call}");
    let own = mcp.request(
        "tools/call",
        with_meta(json!({"name": "list_sessions", "arguments": {}}), json!({})),
    );
    assert_eq!(
        own["result"]["structuredContent"]["sessions"],
        json!([]),
        "{own}"
    );
    mcp.close_and_wait(Duration::from_secs(30));

    // The caller's traceparent is the parent of the server span, and the
    // relayed call stays under that span.
    let served = collector.wait_span("the call to the hub", |s| {
        s["name"] == "tools/call fx__echo"
    });
    assert_eq!(served["kind"], "server");
    assert_eq!(served["trace_id"], TRACE_ID, "{served}");
    assert_eq!(served["parent_span_id"], PARENT_SPAN, "{served}");
    let relayed = collector.wait_span("the relayed call", |s| s["name"] == "tools/call echo");
    assert_eq!(relayed["trace_id"], TRACE_ID);
    assert_eq!(relayed["parent_span_id"], served["span_id"]);
    // The upstream got the trace context in its request's `_meta`: the same
    // trace, parented by the relayed call's span.
    let upstream = crate::support::mcp::records(&record)
        .into_iter()
        .find(|r| r["event"] == "call" && r["tool"] == "echo")
        .expect("the upstream recorded the call");
    let relayed_span = relayed["span_id"].as_str().expect("span id");
    assert_eq!(
        upstream["traceparent"],
        json!(format!("00-{TRACE_ID}-{relayed_span}-01")),
        "{upstream}"
    );
    let own = collector.wait_span("the untraced call", |s| {
        s["name"] == "tools/call list_sessions"
    });
    assert_ne!(
        own["trace_id"], TRACE_ID,
        "a call without traceparent starts its own trace"
    );
}

#[test]
fn stdio_refuses_unknown_revisions_and_malformed_meta_and_keeps_the_old_handshake() {
    let home = Home::empty();
    let mut mcp = McpProc::spawn(&home, &[]);
    let mut unknown = meta(json!({}));
    unknown["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = mcp.request("tools/list", json!({"_meta": unknown}));
    assert_eq!(r["error"]["code"], -32022, "{r}");
    assert!(
        r["error"]["data"]["supported"]
            .as_array()
            .is_some_and(|v| v.contains(&json!(REVISION))),
        "{r}"
    );
    let r = mcp.request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": 5}}),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = mcp.request(
        "tools/list",
        json!({"_meta": {"io.modelcontextprotocol/protocolVersion": REVISION}}),
    );
    assert_eq!(r["error"]["code"], -32602, "capabilities are required: {r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("clientCapabilities")),
        "{r}"
    );
    let r = mcp.request("tools/list", json!({}));
    assert_eq!(r["error"]["code"], -32600, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("send initialize first") && m.contains("_meta")),
        "{r}"
    );
    // None of these started the lifecycle: a 2025-11-25 client still
    // handshakes on the same connection.
    let init = mcp.initialize(json!({}));
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
    assert!(names(&mcp.request("tools/list", json!({}))).contains(&"list_sessions".into()));
}

#[test]
fn stdio_listen_streams_a_sessions_updates_under_the_stream_id() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let mut mcp = McpProc::spawn(&home, &[]);
    let created = mcp.request(
        "tools/call",
        with_meta(
            json!({"name": "create_session", "arguments": {"model": "fix/m1"}}),
            json!({}),
        ),
    );
    let id = created["result"]["structuredContent"]["session"]["id"]
        .as_str()
        .expect("session id")
        .to_string();
    let uri = format!("hecate://sessions/{id}");
    let listen = mcp.send_request(
        "subscriptions/listen",
        with_meta(
            json!({"notifications": {
                "toolsListChanged": true,
                "resourceSubscriptions": [uri, "hecate://adapters"],
            }}),
            json!({}),
        ),
    );
    let ack = mcp
        .wait_notification(
            "notifications/subscriptions/acknowledged",
            Duration::from_secs(30),
        )
        .expect("the stream is acknowledged");
    assert_eq!(subscription_of(&ack), &json!(listen), "{ack}");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": [uri]}),
        "only the session is followed: {ack}"
    );
    let sent = mcp.request(
        "tools/call",
        with_meta(
            json!({"name": "send_message", "arguments": {"session_id": id, "content": "watch me"}}),
            json!({}),
        ),
    );
    assert_ne!(sent["result"]["isError"], true, "{sent}");
    let update = mcp
        .wait_notification("notifications/resources/updated", Duration::from_secs(30))
        .expect("the listener hears about the turn");
    assert_eq!(update["params"]["uri"], json!(uri));
    assert_eq!(subscription_of(&update), &json!(listen), "{update}");
    // Cancelling the stream ends it: later turns send no update.
    mcp.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": listen, "reason": "done"}}),
    );
    mcp.notifications.clear();
    let again = mcp.request(
        "tools/call",
        with_meta(
            json!({"name": "send_message", "arguments": {"session_id": id, "content": "unwatched"}}),
            json!({}),
        ),
    );
    assert_ne!(again["result"]["isError"], true, "{again}");
    assert!(
        mcp.wait_notification("notifications/resources/updated", Duration::from_secs(2))
            .is_none(),
        "no update after the stream was cancelled"
    );
}

/// The answer of a decision form.
fn decision(action: &str, choice: &str) -> Value {
    if action == "accept" {
        json!({"action": "accept", "content": {"decision": choice}})
    } else {
        json!({"action": action})
    }
}

#[test]
fn stdio_asks_approvals_in_rounds_of_the_call() {
    let home = Home::empty();
    home.write_config(&fx_and_guarded());
    let mut mcp = McpProc::spawn(&home, &[]);
    let can_elicit = json!({"elicitation": {}});
    let call = |message: &str| {
        with_meta(
            json!({"name": "guarded__echo", "arguments": {"message": message}}),
            can_elicit.clone(),
        )
    };
    let first = mcp.request("tools/call", call("approved in rounds"));
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    let requests = result["inputRequests"].as_object().expect("input requests");
    assert_eq!(requests.len(), 1, "{first}");
    let (key, question) = requests.iter().next().expect("one question");
    assert_eq!(question["method"], "elicitation/create");
    assert!(
        question["params"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("guarded__echo")),
        "{question}"
    );
    let state = result["requestState"].as_str().expect("state").to_string();

    // A state this call does not hold is refused; the real one still waits.
    let mut foreign = call("approved in rounds");
    foreign["requestState"] = json!("0123456789abcdef");
    let r = mcp.request("tools/call", foreign);
    assert_eq!(r["error"]["code"], -32602, "{r}");

    let mut retry = call("approved in rounds");
    retry["requestState"] = json!(state);
    retry["inputResponses"] = json!({ key.clone(): decision("accept", "approve_once") });
    let done = mcp.request("tools/call", retry.clone());
    assert_eq!(done["result"]["resultType"], "complete", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "approved in rounds");
    let spent = mcp.request("tools/call", retry);
    assert_eq!(
        spent["error"]["code"], -32602,
        "a state is used once: {spent}"
    );

    // Declining the form rejects the call.
    let first = mcp.request("tools/call", call("declined"));
    let result = &first["result"];
    let key = result["inputRequests"]
        .as_object()
        .and_then(|q| q.keys().next().cloned())
        .expect("a question");
    let mut retry = call("declined");
    retry["requestState"] = result["requestState"].clone();
    retry["inputResponses"] = json!({ key: decision("decline", "") });
    let rejected = mcp.request("tools/call", retry);
    assert_eq!(rejected["result"]["isError"], true, "{rejected}");

    // A client that did not declare elicitation is not asked.
    let quiet = mcp.send_request(
        "tools/call",
        with_meta(
            json!({"name": "guarded__echo", "arguments": {"message": "nobody asked"}}),
            json!({}),
        ),
    );
    assert!(
        mcp.wait_id(&json!(quiet), Duration::from_secs(2)).is_none(),
        "without elicitation the call waits for an operator"
    );
}

fn tls() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A POST of a 2026-07-28 request to `url`, with the headers the revision asks for.
async fn post(url: &str, body: &Value) -> reqwest::Response {
    let method = body["method"].as_str().unwrap_or_default();
    let mut req = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", REVISION)
        .header("mcp-method", method);
    if let Some(name) = body["params"]["name"].as_str() {
        req = req.header("mcp-name", name);
    }
    req.json(body).send().await.expect("POST")
}

/// The JSON-RPC messages of an SSE or JSON answer.
async fn messages(r: reqwest::Response) -> Vec<Value> {
    let json = r
        .headers()
        .get("content-type")
        .and_then(|c| c.to_str().ok())
        .is_some_and(|c| c.starts_with("application/json"));
    let text = r.text().await.expect("body");
    if json {
        return vec![serde_json::from_str(&text).expect("JSON body")];
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// The response (not a notification) among an answer's messages.
async fn response(r: reqwest::Response) -> Value {
    messages(r)
        .await
        .into_iter()
        .find(|m| m.get("id").is_some() && m.get("method").is_none())
        .expect("a response")
}

fn rpc(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The response to a stateless `tools/call` of `name` with `arguments` (no
/// client capabilities) over HTTP.
async fn stateless_call(url: &str, name: &str, arguments: Value) -> Value {
    let params = with_meta(json!({"name": name, "arguments": arguments}), json!({}));
    response(post(url, &rpc(1, "tools/call", params)).await).await
}

#[tokio::test]
async fn http_answers_discover_stateless_calls_and_rounds_and_refuses_bad_meta() {
    tls();
    let home = Home::empty();
    home.write_config(&fx_and_guarded());
    let ep = HttpEndpoint::start(&home);
    let url = ep.url.as_str();
    let discover = response(
        post(
            url,
            &rpc(1, "server/discover", json!({"_meta": meta(json!({}))})),
        )
        .await,
    )
    .await;
    assert!(
        discover["result"]["supportedVersions"]
            .as_array()
            .is_some_and(|v| v.contains(&json!(REVISION))),
        "{discover}"
    );
    let list = response(
        post(
            url,
            &rpc(2, "tools/list", json!({"_meta": meta(json!({}))})),
        )
        .await,
    )
    .await;
    assert!(
        names(&list).contains(&"guarded__echo".to_string()),
        "{list}"
    );
    let echo = response(
        post(
            url,
            &rpc(
                3,
                "tools/call",
                with_meta(
                    json!({"name": "fx__echo", "arguments": {"message": "over http"}}),
                    json!({}),
                ),
            ),
        )
        .await,
    )
    .await;
    assert_eq!(echo["result"]["content"][0]["text"], "over http", "{echo}");

    // An approval in rounds: each round is a request of its own.
    let call = |id: i64| {
        rpc(
            id,
            "tools/call",
            with_meta(
                json!({"name": "guarded__echo", "arguments": {"message": "approved over http"}}),
                json!({"elicitation": {}}),
            ),
        )
    };
    let first = response(post(url, &call(4)).await).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let key = first["result"]["inputRequests"]
        .as_object()
        .and_then(|q| q.keys().next().cloned())
        .expect("a question");
    let mut retry = call(5);
    retry["params"]["requestState"] = first["result"]["requestState"].clone();
    retry["params"]["inputResponses"] = json!({ key: decision("accept", "approve_once") });
    let done = response(post(url, &retry).await).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "approved over http",
        "{done}"
    );

    // Bad input: an unknown revision, missing capabilities, a header that
    // does not match `_meta`.
    let mut unknown = meta(json!({}));
    unknown["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2099-01-01")
        .header("mcp-method", "tools/list")
        .json(&rpc(6, "tools/list", json!({"_meta": unknown})))
        .send()
        .await
        .expect("POST");
    assert_eq!(r.status(), 400);
    let body = response(r).await;
    assert_eq!(body["error"]["code"], -32022, "{body}");
    let r = post(
        url,
        &rpc(
            7,
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": REVISION}}),
        ),
    )
    .await;
    assert_eq!(r.status(), 400);
    assert_eq!(response(r).await["error"]["code"], -32602);
    let r = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-11-25")
        .header("mcp-method", "tools/list")
        .json(&rpc(8, "tools/list", json!({"_meta": meta(json!({}))})))
        .send()
        .await
        .expect("POST");
    assert_eq!(r.status(), 400);
    assert_eq!(response(r).await["error"]["code"], -32020);
}

/// Reads `stream` until a message satisfies `want` (or the deadline passes).
async fn read_until(
    stream: &mut reqwest::Response,
    buf: &mut String,
    deadline: Instant,
    want: impl Fn(&Value) -> bool,
) -> Option<Value> {
    loop {
        while let Some(end) = buf.find("\n\n") {
            let event: String = buf.drain(..end + 2).collect();
            for line in event.lines() {
                if let Some(data) = line.strip_prefix("data:")
                    && let Ok(v) = serde_json::from_str::<Value>(data.trim())
                    && want(&v)
                {
                    return Some(v);
                }
            }
        }
        let left = deadline.checked_duration_since(Instant::now())?;
        match tokio::time::timeout(left, stream.chunk()).await {
            Ok(Ok(Some(bytes))) => buf.push_str(&String::from_utf8_lossy(&bytes)),
            _ => return None,
        }
    }
}

#[tokio::test]
async fn http_listen_streams_a_sessions_updates_on_the_listen_response() {
    tls();
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let ep = HttpEndpoint::start(&home);
    let url = ep.url.as_str();
    let created = stateless_call(url, "create_session", json!({"model": "fix/m1"})).await;
    let id = created["result"]["structuredContent"]["session"]["id"]
        .as_str()
        .expect("session id")
        .to_string();
    let uri = format!("hecate://sessions/{id}");
    let mut stream = post(
        url,
        &rpc(
            41,
            "subscriptions/listen",
            with_meta(
                json!({"notifications": {"resourceSubscriptions": [uri]}}),
                json!({}),
            ),
        ),
    )
    .await;
    assert_eq!(stream.status(), 200);
    let mut buf = String::new();
    let deadline = Instant::now() + Duration::from_secs(30);
    let ack = read_until(&mut stream, &mut buf, deadline, |m| {
        m["method"] == "notifications/subscriptions/acknowledged"
    })
    .await
    .expect("the stream is acknowledged");
    assert_eq!(subscription_of(&ack), &json!(41), "{ack}");
    let sent = response(
        post(
            url,
            &rpc(
                2,
                "tools/call",
                with_meta(
                    json!({"name": "send_message", "arguments": {"session_id": id, "content": "watch me"}}),
                    json!({}),
                ),
            ),
        )
        .await,
    )
    .await;
    assert_ne!(sent["result"]["isError"], true, "{sent}");
    let update = read_until(&mut stream, &mut buf, deadline, |m| {
        m["method"] == "notifications/resources/updated"
    })
    .await
    .expect("the listener hears about the turn");
    assert_eq!(update["params"]["uri"], json!(uri));
    assert_eq!(subscription_of(&update), &json!(41));
}

/// A fixture ACP agent that asks before writing, then reports the write
/// finished and answers.
const ASKING_AGENT: &str = r#"{"turns":[
 {"match":"write","actions":[
   {"tool_call":{"id":"t1","title":"Write b.txt","kind":"edit","status":"pending"}},
   {"request_permission":{"tool_call_id":"t1","title":"Write b.txt","kind":"edit",
     "on_allow":[{"fs_write":{"path":"b.txt","content":"new file\n"}}],
     "on_reject":[{"text":"not writing. "}]}},
   {"tool_call_update":{"id":"t1","status":"completed"}},
   {"text":"done"}]}
]}"#;

/// The progress notifications among `messages`, with their tokens.
fn progress_tokens(messages: &[Value]) -> Vec<Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/progress")
        .map(|m| m["params"]["progressToken"].clone())
        .collect()
}

/// `params` (a `tools/call`'s, with `_meta`) under progress token `token` as
/// request `id`.
fn call_with_token(id: i64, mut params: Value, token: &str) -> Value {
    params["_meta"]["progressToken"] = json!(token);
    rpc(id, "tools/call", params)
}

/// Makes a call in two rounds over HTTP: the first (token `round-1`) must ask
/// one question, which the second (token `round-2`, its params changed by
/// `second`) answers by approving once. Answers the messages of each round,
/// each ending with its response.
async fn approved_in_two_rounds(
    url: &str,
    params: Value,
    second: impl FnOnce(&mut Value),
) -> (Vec<Value>, Vec<Value>) {
    let first = messages(post(url, &call_with_token(1, params.clone(), "round-1")).await).await;
    let asked = first.last().expect("an answer");
    assert_eq!(
        asked["result"]["resultType"], "input_required",
        "{first:#?}"
    );
    let key = asked["result"]["inputRequests"]
        .as_object()
        .and_then(|q| q.keys().next().cloned())
        .expect("a question");
    let mut retry = call_with_token(2, params, "round-2");
    second(&mut retry["params"]);
    retry["params"]["requestState"] = asked["result"]["requestState"].clone();
    retry["params"]["inputResponses"] = json!({ key: decision("accept", "approve_once") });
    let second = messages(post(url, &retry).await).await;
    (first, second)
}

/// [`approved_in_two_rounds`], with the progress of each round checked to
/// carry that round's token only, and the second round to carry some.
/// Answers the second round's messages.
async fn two_rounds(url: &str, params: Value) -> Vec<Value> {
    let (first, second) = approved_in_two_rounds(url, params, |_| {}).await;
    // What the call did after the approval streams on the second round's
    // response, under its token.
    let tokens = progress_tokens(&second);
    assert!(
        !tokens.is_empty() && tokens.iter().all(|t| t == "round-2"),
        "progress after the approval goes to the round waiting for it: {second:#?}"
    );
    assert!(
        progress_tokens(&first).iter().all(|t| t == "round-1"),
        "{first:#?}"
    );
    second
}

#[tokio::test]
async fn http_progress_of_a_call_in_rounds_reaches_the_round_the_client_waits_on() {
    tls();
    let home = Home::empty();
    std::fs::write(home.path("script.json"), ASKING_AGENT).expect("script");
    let script = home.path("script.json").display().to_string();
    let state = home.path("agent-state").display().to_string();
    home.add_fixture_agent("fixture", &["--script", &script, "--state-dir", &state]);
    let ws = tempfile::tempdir().expect("workspace");
    let ep = HttpEndpoint::start(&home);
    let url = ep.url.as_str();
    let params = with_meta(
        json!({"name": "ask_agent", "arguments": {
            "target": "agent:fixture", "prompt": "please write", "workspace": ws.path()}}),
        json!({"elicitation": {}}),
    );
    let second = two_rounds(url, params).await;
    let done = second.last().expect("an answer");
    assert_eq!(
        done["result"]["structuredContent"]["status"], "completed",
        "{second:#?}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("b.txt")).expect("written"),
        "new file\n"
    );
}

#[tokio::test]
async fn http_progress_of_a_waiting_task_start_follows_its_rounds() {
    tls();
    let home = Home::empty();
    let ep = HttpEndpoint::start(&home);
    let url = ep.url.as_str();
    let created = stateless_call(
        url,
        "create_task",
        json!({"execution_kind": "shell", "shell_command": "echo gated output"}),
    )
    .await;
    let task = created["result"]["structuredContent"]["task"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("a task: {created}"))
        .to_string();
    let params = with_meta(
        json!({"name": "start_task", "arguments": {"task_id": task, "wait": true}}),
        json!({"elicitation": {}}),
    );
    let second = two_rounds(url, params).await;
    let done = second.last().expect("an answer");
    assert_eq!(
        done["result"]["structuredContent"]["run"]["status"], "completed",
        "{second:#?}"
    );
}

/// The log messages on each round of a guarded upstream call to
/// `test_tool_with_logging` (three at `info`, sent after the approval), the
/// first round asking for `first_level`, the second for `second_level`.
async fn logs_by_round(
    url: &str,
    first_level: &str,
    second_level: &str,
) -> (usize, usize, Vec<Value>) {
    let mut params = with_meta(
        json!({"name": "guarded__test_tool_with_logging", "arguments": {}}),
        json!({"elicitation": {}}),
    );
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!(first_level);
    let second_level = second_level.to_string();
    let (first, second) = approved_in_two_rounds(url, params, move |p| {
        p["_meta"]["io.modelcontextprotocol/logLevel"] = json!(second_level);
    })
    .await;
    let logs = |round: &[Value]| {
        round
            .iter()
            .filter(|m| m["method"] == "notifications/message")
            .count()
    };
    (logs(&first), logs(&second), second)
}

#[tokio::test]
async fn http_log_messages_of_an_upstream_call_in_rounds_reach_the_round_the_client_waits_on() {
    tls();
    let home = Home::empty();
    home.write_config(&fx_and_guarded());
    let ep = HttpEndpoint::start(&home);
    // The upstream runs after the approval, so its three log messages stream
    // on the second round's response, not on the first's closed one, at the
    // level the second round asked for.
    let (first, second, messages) = logs_by_round(ep.url.as_str(), "error", "debug").await;
    assert_eq!((first, second), (0, 3), "{messages:#?}");
    assert_eq!(
        messages.last().expect("an answer")["result"]["content"][0]["text"],
        "Tool with logging executed successfully",
        "{messages:#?}"
    );
    let (first, second, messages) = logs_by_round(ep.url.as_str(), "debug", "error").await;
    assert_eq!((first, second), (0, 0), "{messages:#?}");
}
