//! MCP tools in Hecate's own agent (`agent_loop` tasks) against the real
//! `hecate serve`, the fixture model server and the fixture MCP server: a
//! task's Streamable HTTP server and a configured stdio server join the tool
//! catalog as `mcp__SERVER__tool`; `$VAR` secrets resolve from Hecate's
//! environment; `block` withholds a server's tools and `require_approval`
//! parks the run until the operator decides; a server that cannot start is a
//! run event and the loop goes on; `POST /hecate/v1/mcp/probe` and
//! `GET /hecate/v1/system/mcp/cache`.

use crate::support::agent::{
    WIRES, agent_home, agent_home_with, answer, approve, call, completed, count, create_and_start,
    data, events, mcp_task, reaches, run_completed, said, turn,
};
use crate::support::common::{ModelServer, workspace};
use crate::support::http::{Api, serve};
use crate::support::mcp::{fixture_upstream, fixtures_bin};
use serde_json::{Value, json};
use std::time::Duration;

/// The fixture MCP server over Streamable HTTP, killed on drop.
struct HttpFixture(std::process::Child, u16);

impl Drop for HttpFixture {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn http_fixture() -> HttpFixture {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let child = std::process::Command::new(fixtures_bin())
        .args(["mcp-server", "--listen", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn the HTTP fixture");
    let fixture = HttpFixture(child, port);
    for _ in 0..600 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return fixture;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the HTTP fixture never listened");
}

/// A task's stdio entry running the fixture MCP server.
fn fixture_entry(name: &str, extra: Value) -> Value {
    let mut e = json!({"name": name, "command": fixtures_bin(), "args": ["mcp-server"]});
    if let (Some(o), Some(x)) = (e.as_object_mut(), extra.as_object()) {
        o.extend(x.clone());
    }
    e
}

fn tool_names(request: &Value) -> Vec<String> {
    request["body"]["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| {
            t["function"]["name"]
                .as_str()
                .or(t["name"].as_str())
                .map(str::to_string)
        })
        .collect()
}

#[tokio::test]
async fn a_tasks_http_server_and_a_configured_stdio_server_join_the_loop_with_secrets_resolved() {
    let web = http_fixture();
    let server = ModelServer::start(Some(json!([
        turn(vec![
            call("mcp__web__echo", json!({"message": "over http"})),
            call("mcp__conf__echo", json!({"message": "over stdio"})),
            call("mcp__sec__env", json!({"names": ["SECRET_X"]})),
        ]),
        answer("both answered"),
    ])));
    let mut home = agent_home_with(&server, WIRES[0], "", &fixture_upstream("conf", &[], ""));
    home.set("AGENT_MCP_TOKEN", "tok-123");
    home.set("AGENT_MCP_SECRET", "s3cret-value");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let servers = json!([
        {"name": "web", "url": format!("http://127.0.0.1:{}/mcp", web.1),
         "headers": {"Authorization": "Bearer $AGENT_MCP_TOKEN"}},
        fixture_entry("sec", json!({"env": {"SECRET_X": "$AGENT_MCP_SECRET"}})),
    ]);
    let (task, run, _) = run_completed(&api, mcp_task(WIRES[0].2, &ws, servers)).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    let names = tool_names(&requests[0]);
    for n in [
        "read_file",
        "mcp__web__echo",
        "mcp__conf__echo",
        "mcp__sec__env",
    ] {
        assert!(names.contains(&n.to_string()), "{n} in {names:?}");
    }
    let echo = requests[0]["body"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["function"]["name"] == "mcp__web__echo")
        .expect("echo");
    assert_eq!(
        echo["function"]["parameters"]["required"],
        json!(["message"]),
        "the upstream's schema, verbatim: {echo}"
    );
    let second = said(&requests[1]);
    assert!(second.contains("over http"), "{second}");
    assert!(second.contains("over stdio"), "{second}");
    assert!(
        second.contains("s3cret-value"),
        "the $VAR reached the server"
    );
    let ev = events(&api, &task, &run).await;
    assert_eq!(count(&ev, "mcp.server.ready"), 3, "{ev:?}");
    assert_eq!(count(&ev, "tool.call.finished"), 3);
    let task_body = api.get(&format!("/hecate/v1/tasks/{task}")).await;
    assert!(
        !task_body.body.to_string().contains("s3cret-value"),
        "the task keeps the reference, not the value"
    );

    let cache = api.get("/hecate/v1/system/mcp/cache").await;
    assert_eq!(cache.status, 200, "{}", cache.body);
    assert_eq!(cache.body["object"], "mcp_cache_stats");
    let d = &cache.body["data"];
    assert_eq!(d["configured"], true);
    assert!(d["entries"].as_u64().expect("entries") >= 3, "{d}");
    assert_eq!(d["in_use"], 0, "the run released its connections: {d}");
    let conns = d["connections"].as_array().expect("connections");
    let web_conn = conns
        .iter()
        .find(|c| c["servers"] == json!(["web"]))
        .expect("web");
    assert_eq!(web_conn["transport"], "http");
    assert!(web_conn["tool_count"].as_u64().expect("count") > 5);
    assert!(web_conn["idle_ms"].is_u64());
    assert!(
        conns
            .iter()
            .any(|c| c["servers"] == json!(["conf"]) && c["transport"] == "stdio"),
        "{conns:?}"
    );
}

#[tokio::test]
async fn block_withholds_a_servers_tools_and_require_approval_parks_each_call() {
    let server = ModelServer::start(Some(json!([
        turn(vec![
            call("mcp__blk__echo", json!({"message": "never"})),
            call("mcp__ask__echo", json!({"message": "approved echo"})),
        ]),
        answer("done"),
    ])));
    let home = agent_home(&server, WIRES[1], "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let servers = json!([
        fixture_entry("blk", json!({"approval_policy": "block"})),
        fixture_entry("ask", json!({"approval_policy": "require_approval"})),
    ]);
    let (task, run) = create_and_start(&api, mcp_task(WIRES[1].2, &ws, servers)).await;
    reaches(&api, &task, &run, &["awaiting_approval"]).await;
    let names = tool_names(&server.requests()[0]);
    assert!(names.contains(&"mcp__ask__echo".to_string()), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("mcp__blk__")),
        "{names:?}"
    );
    let approvals = data(&api, &format!("/hecate/v1/tasks/{task}/approvals")).await;
    assert_eq!(approvals.len(), 1, "{approvals:?}");
    assert_eq!(approvals[0]["kind"], "agent_loop_tool_call");
    assert!(
        approvals[0]["reason"]
            .as_str()
            .expect("reason")
            .contains("mcp__ask__echo")
    );
    assert_eq!(server.requests().len(), 1);
    approve(&api, &task, approvals[0]["id"].as_str().expect("id")).await;
    completed(&api, &task, &run).await;
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "approving did not call the model again");
    let second = said(&requests[1]);
    assert!(
        second.contains("blocked by its MCP server's approval_policy"),
        "{second}"
    );
    assert!(second.contains("approved echo"), "{second}");
    let ev = events(&api, &task, &run).await;
    assert_eq!(
        count(&ev, "mcp.server.blocked"),
        2,
        "told each time the run's servers are brought up: before the approval and after it"
    );
    assert_eq!(count(&ev, "approval.requested"), 1);

    // Both calls are in the MCP audit log beside calls proxied for MCP clients.
    let rows = audit_rows(&home, 2).await;
    let of = |name: &str| {
        rows.iter()
            .find(|r| r["exposed_name"] == name)
            .unwrap_or_else(|| panic!("{name} in {rows:?}"))
            .clone()
    };
    let blocked = of("mcp__blk__echo");
    assert_eq!(
        (&blocked["server"], &blocked["tool"], &blocked["policy"]),
        (&json!("blk"), &json!("echo"), &json!("block"))
    );
    assert_eq!(
        (&blocked["decision"], &blocked["outcome"]),
        (&json!("blocked"), &json!("not_called"))
    );
    let asked = of("mcp__ask__echo");
    assert_eq!(asked["policy"], "require_approval");
    assert_eq!(
        (&asked["decision"], &asked["outcome"]),
        (&json!("approved"), &json!("ok"))
    );
    assert_eq!(asked["approval_id"], approvals[0]["id"]);
    assert_eq!(asked["argument_keys"], json!(["message"]));
    assert!(
        asked["client"].as_str().expect("client").contains(&run),
        "{asked}"
    );
}

/// The MCP audit log as `hecate mcp calls` prints it, once it holds at least
/// `n` records (the server writes them in batches off the call path).
async fn audit_rows(home: &crate::support::common::Home, n: usize) -> Vec<Value> {
    for _ in 0..100 {
        let calls = home.json(&["mcp", "calls", "--format", "json"]);
        let rows = calls["data"].as_array().cloned().unwrap_or_default();
        if rows.len() >= n {
            return rows;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the audit log never held {n} records");
}

#[tokio::test]
async fn a_server_that_cannot_start_is_a_run_event_and_the_loop_goes_on_without_it() {
    let server = ModelServer::start(Some(json!([
        turn(vec![call("mcp__gone__echo", json!({"message": "x"}))]),
        answer("carried on"),
    ])));
    let home = agent_home(&server, WIRES[0], "");
    let s = serve(&home);
    let api = Api::new(&s);
    let (_dir, ws) = workspace();
    let servers = json!([
        {"name": "gone", "command": fixtures_bin(), "args": ["mcp-server", "--exit-at-start", "3"]},
        fixture_entry("nokey", json!({"env": {"K": "$AGENT_MCP_UNSET_VARIABLE"}})),
    ]);
    let (task, run, _) = run_completed(&api, mcp_task(WIRES[0].2, &ws, servers)).await;
    let names = tool_names(&server.requests()[0]);
    assert!(!names.iter().any(|n| n.starts_with("mcp__")), "{names:?}");
    let ev = events(&api, &task, &run).await;
    let failed: Vec<&Value> = ev
        .iter()
        .filter(|e| e["type"] == "mcp.server.failed")
        .collect();
    assert_eq!(failed.len(), 2, "{ev:?}");
    let gone = failed
        .iter()
        .find(|e| e["data"]["server"] == "gone")
        .expect("gone");
    assert_eq!(gone["data"]["stage"], "start");
    assert!(
        gone["data"]["error"]
            .as_str()
            .expect("error")
            .contains("failing at start-up"),
        "the stderr tail is kept: {gone}"
    );
    let nokey = failed
        .iter()
        .find(|e| e["data"]["server"] == "nokey")
        .expect("nokey");
    assert!(
        nokey["data"]["error"]
            .as_str()
            .expect("error")
            .contains("AGENT_MCP_UNSET_VARIABLE")
    );
    assert!(said(&server.requests()[1]).contains("unknown tool"));

    let bad = api
        .post(
            "/hecate/v1/tasks",
            mcp_task(
                WIRES[0].2,
                &ws,
                json!([{"name": "x", "approval_policy": "sometimes", "command": "y"}]),
            ),
        )
        .await;
    assert_eq!(
        (bad.status, bad.error_type()),
        (400, "invalid_request"),
        "{}",
        bad.body
    );
    assert_eq!(bad.body["error"]["field"], "mcp_servers[0].approval_policy");
}

#[tokio::test]
async fn the_probe_lists_a_servers_tools_or_names_the_stage_that_failed() {
    let home = crate::support::common::Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let ok = api
        .post(
            "/hecate/v1/mcp/probe",
            json!({"command": fixtures_bin(), "args": ["mcp-server"]}),
        )
        .await;
    assert_eq!(ok.status, 200, "{}", ok.body);
    assert_eq!(ok.body["object"], "mcp_probe");
    assert_eq!(ok.body["data"]["name"], "probe");
    let tools = ok.body["data"]["tools"].as_array().expect("tools");
    let echo = tools.iter().find(|t| t["name"] == "echo").expect("echo");
    assert_eq!(echo["input_schema"]["required"], json!(["message"]));
    let web = http_fixture();
    let over_http = api
        .post(
            "/hecate/v1/mcp/probe",
            json!({"name": "web", "url": format!("http://127.0.0.1:{}/mcp", web.1)}),
        )
        .await;
    assert_eq!(over_http.status, 200, "{}", over_http.body);
    assert_eq!(over_http.body["data"]["name"], "web");

    let cases = [
        (
            json!({"command": fixtures_bin(), "args": ["mcp-server", "--exit-at-start", "4"]}),
            Some("start"),
        ),
        (
            json!({"command": fixtures_bin(), "args": ["mcp-server"], "env": {"K": "$AGENT_MCP_PROBE_UNSET"}}),
            Some("resolve"),
        ),
        (json!({"name": "nothing"}), None),
    ];
    for (body, stage) in cases {
        let bad = api.post("/hecate/v1/mcp/probe", body.clone()).await;
        assert_eq!(
            (bad.status, bad.error_type()),
            (400, "invalid_request"),
            "{body}: {}",
            bad.body
        );
        if let Some(stage) = stage {
            assert_eq!(bad.body["error"]["stage"], stage, "{}", bad.body);
        }
    }
    let cache = api.get("/hecate/v1/system/mcp/cache").await;
    assert_eq!(cache.body["data"]["entries"], 0, "probes bypass the pool");
}
