//! Resources and prompts of `hecate mcp`: Hecate's own (`hecate://sessions`,
//! the `hecate://sessions/{id}` template with live updates to subscribers,
//! `hecate://adapters` with health) and an upstream's, passed through; prompts
//! that help an agent use Hecate and the upstream's, namespaced.

use crate::support::common::{Home, ModelServer};
use crate::support::mcp;
use crate::support::mcp::{
    HttpEndpoint, McpProc, fixture_upstream, records, uri_records, wait_uri_records,
};
use serde_json::{Value, json};
use std::time::Duration;

fn uris(list: &Value, key: &str, field: &str) -> Vec<String> {
    list["result"][key]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|r| r[field].as_str().map(str::to_string))
        .collect()
}

#[test]
fn own_resources_list_read_and_notify_subscribers_while_a_turn_runs() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let mut mcp = McpProc::start(&home, json!({}));
    let list = mcp.request("resources/list", json!({}));
    let listed = uris(&list, "resources", "uri");
    assert!(
        listed.contains(&"hecate://sessions".to_string())
            && listed.contains(&"hecate://adapters".to_string())
    );
    let templates = mcp.request("resources/templates/list", json!({}));
    assert!(
        uris(&templates, "resourceTemplates", "uriTemplate")
            .contains(&"hecate://sessions/{id}".to_string())
    );

    let created = mcp.call_ok("create_session", json!({"model": "fix/m1"}));
    let id = created["structuredContent"]["session"]["id"]
        .as_str()
        .expect("id")
        .to_string();
    let uri = format!("hecate://sessions/{id}");
    let sub = mcp.request("resources/subscribe", json!({"uri": uri}));
    assert_eq!(sub["result"], json!({}), "{sub}");
    mcp.call_ok(
        "send_message",
        json!({"session_id": id, "content": "watch me"}),
    );
    let update = mcp
        .wait_notification("notifications/resources/updated", Duration::from_secs(30))
        .expect("subscribers hear about the turn");
    assert_eq!(update["params"]["uri"], json!(uri));

    let read = mcp.request("resources/read", json!({"uri": uri}));
    let contents = &read["result"]["contents"][0];
    assert_eq!(contents["mimeType"], "application/json");
    let transcript: Value =
        serde_json::from_str(contents["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(transcript["messages"][1]["content"], "echo: watch me");

    let adapters = mcp.request("resources/read", json!({"uri": "hecate://adapters"}));
    let body: Value = serde_json::from_str(
        adapters["result"]["contents"][0]["text"]
            .as_str()
            .expect("text"),
    )
    .expect("JSON");
    assert!(
        body["adapters"]
            .as_array()
            .is_some_and(|a| a.iter().all(|x| x["status"].is_string()))
    );

    let missing = mcp.request(
        "resources/read",
        json!({"uri": "hecate://sessions/agent_chat_nope"}),
    );
    assert_eq!(missing["error"]["code"], -32002, "{missing}");

    mcp.request("resources/unsubscribe", json!({"uri": uri}));
}

#[test]
fn prompts_help_use_hecate_and_upstream_resources_and_prompts_pass_through() {
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    home.write_config(&fixture_upstream("up", &[], ""));
    let mut mcp = McpProc::start(&home, json!({}));

    let prompts = mcp.request("prompts/list", json!({}));
    let names = uris(&prompts, "prompts", "name");
    for n in [
        "delegate_task",
        "review_session",
        "hecate_overview",
        "up__test_prompt_with_arguments",
    ] {
        assert!(names.contains(&n.to_string()), "{n} in {names:?}");
    }
    let delegate = mcp.request("prompts/get", json!({"name": "delegate_task", "arguments": {"task": "fix the build", "target": "agent:codex"}}));
    let text = delegate["result"]["messages"][0]["content"]["text"]
        .as_str()
        .expect("text");
    assert!(
        text.contains("ask_agent")
            && text.contains("fix the build")
            && text.contains("agent:codex")
    );
    let missing_arg = mcp.request(
        "prompts/get",
        json!({"name": "delegate_task", "arguments": {}}),
    );
    assert_eq!(missing_arg["error"]["code"], -32602);

    let created = mcp.call_ok("create_session", json!({"model": "fix/m1"}));
    let id = created["structuredContent"]["session"]["id"].clone();
    let review = mcp.request(
        "prompts/get",
        json!({"name": "review_session", "arguments": {"session_id": id}}),
    );
    assert_eq!(
        review["result"]["messages"][0]["content"]["type"], "resource",
        "{review}"
    );

    let up = mcp.request(
        "prompts/get",
        json!({"name": "up__test_prompt_with_arguments", "arguments": {"arg1": "a", "arg2": "b"}}),
    );
    assert_eq!(
        up["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='a', arg2='b'"
    );

    let resources = mcp.request("resources/list", json!({}));
    assert!(uris(&resources, "resources", "uri").contains(&"test://static-text".to_string()));
    let text = mcp.request("resources/read", json!({"uri": "test://static-text"}));
    assert_eq!(
        text["result"]["contents"][0]["text"],
        "This is the content of the static text resource."
    );
    let templated = mcp.request("resources/read", json!({"uri": "test://template/42/data"}));
    assert!(
        templated["result"]["contents"][0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("42"))
    );
    let binary = mcp.request("resources/read", json!({"uri": "test://static-binary"}));
    assert_eq!(binary["result"]["contents"][0]["mimeType"], "image/png");
    let nowhere = mcp.request("resources/read", json!({"uri": "test://nowhere"}));
    assert!(nowhere.get("error").is_some(), "{nowhere}");
}

const WATCHED: &str = "test://watched-resource";

#[test]
fn upstream_resource_subscriptions_are_forwarded_upstream_and_released() {
    let home = Home::empty();
    let record = home.path("upstream-events.jsonl");
    let record_arg = record.to_string_lossy().to_string();
    home.write_config(&fixture_upstream("up", &["--record", &record_arg], ""));
    let mut mcp = McpProc::start(&home, json!({}));

    let sub = mcp.request("resources/subscribe", json!({"uri": WATCHED}));
    assert_eq!(sub["result"], json!({}), "{sub}");
    assert_eq!(
        uri_records(&record, "subscribe", WATCHED),
        1,
        "the upstream was subscribed before the answer"
    );
    let update = mcp
        .wait_notification("notifications/resources/updated", Duration::from_secs(30))
        .expect("the upstream's update reaches the subscriber");
    assert_eq!(update["params"]["uri"], WATCHED);

    let again = mcp.request("resources/subscribe", json!({"uri": WATCHED}));
    assert_eq!(again["result"], json!({}), "{again}");
    assert_eq!(
        uri_records(&record, "subscribe", WATCHED),
        1,
        "one upstream subscription per URI"
    );

    let unsub = mcp.request("resources/unsubscribe", json!({"uri": WATCHED}));
    assert_eq!(unsub["result"], json!({}), "{unsub}");
    assert_eq!(uri_records(&record, "unsubscribe", WATCHED), 1);
    let twice = mcp.request("resources/unsubscribe", json!({"uri": WATCHED}));
    assert_eq!(twice["result"], json!({}), "{twice}");
    assert_eq!(uri_records(&record, "unsubscribe", WATCHED), 1);

    let nowhere = mcp.request("resources/subscribe", json!({"uri": "test://nowhere"}));
    assert_eq!(nowhere["error"]["code"], -32002, "{nowhere}");
    let alive = mcp.request("resources/read", json!({"uri": "test://static-text"}));
    assert!(alive.get("result").is_some(), "the hub lives on: {alive}");

    let own = mcp.request("resources/subscribe", json!({"uri": "hecate://sessions"}));
    assert_eq!(own["result"], json!({}), "{own}");
    assert_eq!(
        records(&record)
            .iter()
            .filter(|r| r["event"] == "subscribe")
            .count(),
        1,
        "hecate:// resources stay local"
    );
}

/// The pids the fixture upstream recorded at each start.
fn upstream_pids(record: &std::path::Path) -> Vec<u64> {
    records(record)
        .iter()
        .filter(|e| e["event"] == "start")
        .filter_map(|e| e["pid"].as_u64())
        .collect()
}

/// Subscribes to the watched upstream resource, waits for one update, then
/// SIGKILLs the (first) upstream process and waits until it is gone.
fn follow_then_kill_upstream(mcp: &mut McpProc, record: &std::path::Path) {
    let sub = mcp.request("resources/subscribe", json!({"uri": WATCHED}));
    assert_eq!(sub["result"], json!({}), "{sub}");
    mcp.wait_notification("notifications/resources/updated", Duration::from_secs(30))
        .expect("the upstream's update reaches the subscriber");
    let first = upstream_pids(record)[0] as u32;
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &first.to_string()])
        .status()
        .expect("kill");
    assert!(killed.success());
    assert!(
        mcp::wait_gone(first, Duration::from_secs(10)),
        "the upstream died"
    );
}

/// After an upstream restart: drops the updates already on their way (the dead
/// upstream's, read until the stream is quiet or updates clearly flow again),
/// then waits for three more — from the subscription taken out again (and the
/// keeper's own "may have changed" update).
fn updates_flow_again(mcp: &mut McpProc) {
    let draining = std::time::Instant::now();
    while draining.elapsed() < Duration::from_secs(5)
        && mcp
            .wait_notification(
                "notifications/resources/updated",
                Duration::from_millis(300),
            )
            .is_some()
    {}
    for n in 0..3 {
        mcp.wait_notification("notifications/resources/updated", Duration::from_secs(30))
            .unwrap_or_else(|| panic!("update {n} after the renewal; stderr:\n{}", mcp.stderr()));
    }
}

/// The fixture MCP server over Streamable HTTP, killed when dropped (also when
/// the test fails, so no server outlives it).
struct HttpFixture(std::process::Child);

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts the fixture MCP server over Streamable HTTP on `port`, recording to
/// `record`; waits until it accepts connections.
fn http_fixture(port: u16, record: &std::path::Path) -> HttpFixture {
    let child = std::process::Command::new(mcp::fixtures_bin())
        .args([
            "mcp-server",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--record",
        ])
        .arg(record)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn the HTTP fixture");
    let fixture = HttpFixture(child);
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP fixture listens"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    fixture
}

#[test]
fn a_subscription_on_an_http_upstream_is_taken_out_again_after_it_restarts() {
    let home = Home::empty();
    let record = home.path("upstream-events.jsonl");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let first = http_fixture(port, &record);
    home.write_config(&format!(
        "[mcp_servers.up]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"
    ));
    let mut mcp = McpProc::start(&home, json!({}));
    let sub = mcp.request("resources/subscribe", json!({"uri": WATCHED}));
    assert_eq!(sub["result"], json!({}), "{sub}");
    mcp.wait_notification("notifications/resources/updated", Duration::from_secs(30))
        .expect("the upstream's update reaches the subscriber");

    // The restarted server knows neither the session nor the subscription;
    // rmcp's client does not report the old session gone.
    drop(first);
    let _second = http_fixture(port, &record);
    assert!(
        wait_uri_records(&record, "subscribe", WATCHED, 2, Duration::from_secs(90)),
        "the keeper sent the subscription again to the restarted upstream: {:?}; stderr:\n{}",
        records(&record),
        mcp.stderr()
    );
    assert_eq!(upstream_pids(&record).len(), 2, "{:?}", records(&record));
    updates_flow_again(&mut mcp);
}

#[test]
fn renewal_keeps_retrying_while_the_upstream_cannot_start() {
    let home = Home::empty();
    let record = home.path("upstream-events.jsonl");
    let starts = home.path("starts.txt");
    // Starts 2 to 5 fail: the keeper's first two attempts (each the pool's
    // start plus its one retry) find the upstream down; the third succeeds.
    let wrapper = home.path("flaky-upstream.sh");
    std::fs::write(
        &wrapper,
        "#!/bin/sh\nn=$(($(cat \"$1\" 2>/dev/null || echo 0) + 1))\necho $n > \"$1\"\n\
         if [ $n -ge 2 ] && [ $n -le 5 ]; then echo \"down for maintenance ($n)\" >&2; exit 1; fi\n\
         shift\nexec \"$@\"\n",
    )
    .expect("wrapper");
    std::fs::set_permissions(
        &wrapper,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .expect("chmod");
    home.write_config(&format!(
        "[mcp_pool]\nretry_delay_ms = 0\n\n[mcp_servers.up]\ncommand = {:?}\nargs = {}\n",
        wrapper.to_string_lossy(),
        serde_json::to_string(&[
            starts.to_string_lossy().to_string(),
            mcp::fixtures_bin(),
            "mcp-server".into(),
            "--record".into(),
            record.to_string_lossy().to_string(),
        ])
        .expect("args")
    ));
    let mut mcp = McpProc::start(&home, json!({}));
    follow_then_kill_upstream(&mut mcp, &record);

    assert!(
        wait_uri_records(&record, "subscribe", WATCHED, 2, Duration::from_secs(60)),
        "the keeper subscribed again once the upstream could start: {:?}; stderr:\n{}",
        records(&record),
        mcp.stderr()
    );
    let attempts: u32 = std::fs::read_to_string(&starts)
        .expect("starts")
        .trim()
        .parse()
        .expect("a count");
    assert_eq!(
        attempts, 6,
        "two failed renewals (two starts each), then one that worked"
    );
    assert!(
        mcp.stderr()
            .contains("could not renew an upstream resource subscription"),
        "the failures are logged: {}",
        mcp.stderr()
    );
    let update = mcp.wait_notification("notifications/resources/updated", Duration::from_secs(30));
    assert!(update.is_some(), "updates flow again");
}

#[test]
fn an_upstream_subscription_is_renewed_after_the_upstream_crashes() {
    let home = Home::empty();
    let record = home.path("upstream-events.jsonl");
    let record_arg = record.to_string_lossy().to_string();
    home.write_config(&fixture_upstream("up", &["--record", &record_arg], ""));
    let mut mcp = McpProc::start(&home, json!({}));
    follow_then_kill_upstream(&mut mcp, &record);

    assert!(
        wait_uri_records(&record, "subscribe", WATCHED, 2, Duration::from_secs(30)),
        "the keeper subscribed again on a fresh upstream: {:?}",
        records(&record)
    );
    let pids = upstream_pids(&record);
    assert_eq!(pids.len(), 2, "one restart: {pids:?}");
    assert_ne!(pids[1], pids[0]);
    updates_flow_again(&mut mcp);
    let alive = mcp.request("resources/read", json!({"uri": WATCHED}));
    assert!(alive.get("result").is_some(), "{alive}");

    let unsub = mcp.request("resources/unsubscribe", json!({"uri": WATCHED}));
    assert_eq!(unsub["result"], json!({}), "{unsub}");
    assert_eq!(
        uri_records(&record, "unsubscribe", WATCHED),
        1,
        "the renewed subscription is the one released"
    );
}

/// An rmcp client that collects the URIs of `notifications/resources/updated`.
#[derive(Clone)]
struct Watcher(tokio::sync::mpsc::UnboundedSender<String>);

impl rmcp::ClientHandler for Watcher {
    async fn on_resource_updated(
        &self,
        params: rmcp::model::ResourceUpdatedNotificationParam,
        _context: rmcp::service::NotificationContext<rmcp::RoleClient>,
    ) {
        let _ = self.0.send(params.uri);
    }
}

type Client = rmcp::service::RunningService<rmcp::RoleClient, Watcher>;

async fn watcher(url: &str) -> (Client, tokio::sync::mpsc::UnboundedReceiver<String>) {
    use rmcp::ServiceExt;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let client = Watcher(tx)
        .serve(rmcp::transport::StreamableHttpClientTransport::from_uri(
            url,
        ))
        .await
        .expect("connect");
    (client, rx)
}

async fn next_update(rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>) -> String {
    tokio::time::timeout(Duration::from_secs(30), rx.recv())
        .await
        .expect("an update within 30 s")
        .expect("the client is alive")
}

async fn wait_count(record: &std::path::Path, event: &str, n: usize) -> bool {
    let path = record.to_path_buf();
    let event = event.to_string();
    tokio::task::spawn_blocking(move || {
        wait_uri_records(&path, &event, WATCHED, n, Duration::from_secs(30))
    })
    .await
    .expect("wait")
}

#[allow(deprecated)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_sessions_share_one_upstream_subscription_released_when_the_last_leaves() {
    use rmcp::model::{SubscribeRequestParams, UnsubscribeRequestParams};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let home = Home::empty();
    let record = home.path("upstream-events.jsonl");
    let record_arg = record.to_string_lossy().to_string();
    home.write_config(&fixture_upstream("fx", &["--record", &record_arg], ""));
    let ep = HttpEndpoint::start(&home);

    let (a, mut a_updates) = watcher(&ep.url).await;
    let (b, mut b_updates) = watcher(&ep.url).await;
    a.subscribe(SubscribeRequestParams::new(WATCHED))
        .await
        .expect("a subscribes");
    b.subscribe(SubscribeRequestParams::new(WATCHED))
        .await
        .expect("b subscribes");
    assert_eq!(
        uri_records(&record, "subscribe", WATCHED),
        1,
        "two sessions, one upstream subscription"
    );
    assert_eq!(next_update(&mut a_updates).await, WATCHED);
    assert_eq!(next_update(&mut b_updates).await, WATCHED);

    a.unsubscribe(UnsubscribeRequestParams::new(WATCHED))
        .await
        .expect("a unsubscribes");
    assert_eq!(
        uri_records(&record, "unsubscribe", WATCHED),
        0,
        "b still follows the resource"
    );
    b.cancel().await.expect("b disconnects");
    assert!(
        wait_count(&record, "unsubscribe", 1).await,
        "the last session leaving unsubscribes upstream: {:?}",
        records(&record)
    );

    let (one, mut one_updates) = watcher(&format!("{}/fx", ep.url)).await;
    one.subscribe(SubscribeRequestParams::new(WATCHED))
        .await
        .expect("the passthrough subscribes");
    assert_eq!(uri_records(&record, "subscribe", WATCHED), 2);
    assert_eq!(next_update(&mut one_updates).await, WATCHED);
    let missing = one
        .subscribe(SubscribeRequestParams::new("test://nowhere"))
        .await;
    assert!(missing.is_err(), "{missing:?}");
    one.unsubscribe(UnsubscribeRequestParams::new(WATCHED))
        .await
        .expect("the passthrough unsubscribes");
    assert_eq!(uri_records(&record, "unsubscribe", WATCHED), 2);
    let listed = one.list_all_resources().await.expect("still serving");
    assert!(listed.iter().any(|r| r.uri == WATCHED));
    one.cancel().await.expect("close");
    a.cancel().await.expect("close");
}
