//! Upstream MCP servers aggregated by `hecate mcp`: namespaced tools with their
//! schemas verbatim, progress/logging/cancellation/list changes passed through,
//! policies (block, require_approval through elicitation or an operator) with an
//! audit record of every call, sanitized environments with `$VAR` secrets,
//! faults (crash, hang, no initialize, failed start) that become tool errors
//! while the hub lives, no orphan processes, and 100 concurrent calls.

use crate::support::common::Home;
use crate::support::mcp::{McpProc, first_text, fixture_upstream, wait_gone};
use crate::support::{child, mcp};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn records(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn wait_record(path: &std::path::Path, event: &str) -> Option<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        if let Some(r) = records(path).into_iter().find(|r| r["event"] == event) {
            return Some(r);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    None
}

#[test]
fn tools_are_namespaced_with_schemas_verbatim_and_their_origin_in_meta() {
    let home = Home::empty();
    home.write_config(&format!(
        "{}{}",
        fixture_upstream("alpha", &[], ""),
        fixture_upstream("beta", &["--name", "beta-server"], "")
    ));
    let mut mcp = McpProc::start(&home, json!({}));
    let list = mcp.request("tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().expect("tools").clone();
    let names: Vec<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
    assert!(
        names.contains(&"alpha__echo") && names.contains(&"beta__echo"),
        "{names:?}"
    );
    assert!(
        names.contains(&"list_sessions"),
        "Hecate's own tools are listed too"
    );
    assert!(names.iter().all(|n| n.len() <= 64));
    let schema_tool = tools
        .iter()
        .find(|t| t["name"] == "alpha__json_schema_2020_12_tool")
        .expect("tool");
    let schema = &schema_tool["inputSchema"];
    assert_eq!(
        schema["$schema"],
        "https://json-schema.org/draft/2020-12/schema"
    );
    assert_eq!(schema["additionalProperties"], false);
    assert_eq!(schema["properties"]["address"]["$ref"], "#/$defs/address");
    assert!(schema["$defs"]["address"].is_object());
    assert_eq!(
        schema_tool["_meta"]["hecate/upstream"],
        json!({"server": "alpha", "name": "json_schema_2020_12_tool"})
    );

    let a = mcp.call_ok("alpha__echo", json!({"message": "to alpha"}));
    assert_eq!(first_text(&a), "to alpha");
    let b = mcp.call_ok("beta__echo", json!({"message": "to beta"}));
    assert_eq!(first_text(&b), "to beta");
    let err = mcp.call("alpha__test_error_handling", json!({}));
    assert_eq!(
        err["result"]["isError"], true,
        "upstream tool errors pass through: {err}"
    );
    assert_eq!(
        first_text(&err["result"]),
        "This intentionally returns an error for testing".replace("This", "This tool")
    );
    let mixed = mcp.call_ok("alpha__test_multiple_content_types", json!({}));
    let kinds: Vec<&str> = mixed["content"]
        .as_array()
        .expect("content")
        .iter()
        .filter_map(|c| c["type"].as_str())
        .collect();
    assert_eq!(kinds, ["text", "image", "resource"]);
}

#[test]
fn progress_logging_cancellation_and_list_changes_pass_through() {
    let home = Home::empty();
    let rec = home.path("alpha.jsonl");
    home.write_config(&fixture_upstream(
        "alpha",
        &["--record", &rec.display().to_string()],
        "",
    ));
    let mut mcp = McpProc::start(&home, json!({}));
    let r = mcp.request(
        "tools/call",
        json!({"name": "alpha__test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "tok-1"}}),
    );
    assert_ne!(r["result"]["isError"], true, "{r}");
    let progress: Vec<Value> = mcp
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .cloned()
        .collect();
    assert_eq!(
        progress.len(),
        3,
        "every upstream progress arrives before the result: {progress:?}"
    );
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "tok-1")
    );
    assert_eq!(progress[2]["params"]["progress"], 100.0);
    assert_eq!(progress[2]["params"]["total"], 100.0);

    mcp.notifications.clear();
    mcp.call_ok("alpha__test_tool_with_logging", json!({}));
    let logs: Vec<Value> = mcp
        .notifications
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .cloned()
        .collect();
    assert_eq!(logs.len(), 3, "{logs:?}");
    assert_eq!(logs[0]["params"]["data"], "Tool execution started");

    let id = mcp.send_request(
        "tools/call",
        json!({"name": "alpha__slow", "arguments": {"ms": 60000}, "_meta": {"progressToken": 9}}),
    );
    assert!(
        mcp.wait_notification("notifications/progress", Duration::from_secs(30))
            .is_some()
    );
    mcp.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": id}}));
    assert!(
        wait_record(&rec, "cancelled").is_some(),
        "the upstream saw the cancellation"
    );

    mcp.notifications.clear();
    mcp.call_ok("alpha__add_tool", json!({}));
    assert!(
        mcp.wait_notification("notifications/tools/list_changed", Duration::from_secs(30))
            .is_some(),
        "tools/list_changed is relayed"
    );
    assert!(
        mcp.tool_names()
            .contains(&"alpha__dynamic_tool".to_string())
    );
    assert_eq!(
        first_text(&mcp.call_ok("alpha__dynamic_tool", json!({}))),
        "dynamic"
    );
}

#[test]
fn policies_are_enforced_by_the_engine_and_every_call_is_audited() {
    let home = Home::empty();
    home.write_config(&format!(
        "{}{}",
        fixture_upstream(
            "open",
            &[],
            "[mcp_servers.open.tools]\ntest_error_handling = \"block\"\n"
        ),
        fixture_upstream("guarded", &[], "policy = \"require_approval\"\n")
    ));
    let mut mcp = McpProc::start(&home, json!({"elicitation": {}}));
    let names = mcp.tool_names();
    assert!(
        !names.contains(&"open__test_error_handling".to_string()),
        "blocked tools are hidden"
    );
    assert!(names.contains(&"guarded__echo".to_string()));
    let blocked = mcp.call("open__test_error_handling", json!({}));
    assert_eq!(blocked["result"]["isError"], true, "{blocked}");
    assert!(first_text(&blocked["result"]).contains("blocked"));

    let mut asked = 0;
    let approved = mcp.request_with(
        "tools/call",
        json!({"name": "guarded__echo", "arguments": {"message": "allowed"}}),
        &mut |method, params| {
            assert_eq!(method, "elicitation/create");
            assert!(
                params["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("guarded__echo"))
            );
            asked += 1;
            json!({"action": "accept", "content": {"decision": "approve_once"}})
        },
    );
    assert_eq!(asked, 1);
    assert_eq!(first_text(&approved["result"]), "allowed");
    let rejected = mcp.request_with(
        "tools/call",
        json!({"name": "guarded__echo", "arguments": {"message": "no"}}),
        &mut |_, _| json!({"action": "decline"}),
    );
    assert_eq!(rejected["result"]["isError"], true, "{rejected}");
    mcp.call_ok("open__echo", json!({"message": "plain"}));

    let calls = home.json(&["mcp", "calls", "--format", "json"]);
    let rows = calls["data"].as_array().expect("rows");
    let find = |tool: &str, decision: &str| {
        rows.iter()
            .any(|r| r["exposed_name"] == tool && r["decision"] == decision)
    };
    assert!(
        find("open__test_error_handling", "allowed")
            || rows
                .iter()
                .any(|r| r["exposed_name"] == "open__test_error_handling"),
        "{calls}"
    );
    assert!(find("guarded__echo", "approved"), "{calls}");
    assert!(find("guarded__echo", "rejected"), "{calls}");
    assert!(find("open__echo", "allowed"), "{calls}");
    let ok = rows
        .iter()
        .find(|r| r["exposed_name"] == "open__echo")
        .expect("row");
    assert_eq!(ok["outcome"], "ok");
    assert_eq!(ok["argument_keys"], json!(["message"]));
    assert!(
        ok["client"]
            .as_str()
            .is_some_and(|c| c.contains("hecate-e2e") && c.contains("stdio"))
    );
    assert!(
        !calls.to_string().contains("plain"),
        "argument values are not stored"
    );
}

#[test]
fn without_elicitation_an_operator_answers_the_approval_from_another_process() {
    let home = Home::empty();
    home.write_config(&fixture_upstream(
        "guarded",
        &[],
        "policy = \"require_approval\"\n",
    ));
    let mut mcp = McpProc::start(&home, json!({}));
    let id = mcp.send_request(
        "tools/call",
        json!({"name": "guarded__echo", "arguments": {"message": "by operator"}}),
    );
    let deadline = Instant::now() + Duration::from_secs(30);
    let approval_id = loop {
        let list = home.json(&["approvals", "list", "--format", "json"]);
        if let Some(a) = list["data"].as_array().and_then(|a| a.first().cloned()) {
            break a["id"].as_str().expect("id").to_string();
        }
        assert!(Instant::now() < deadline, "no pending approval appeared");
        std::thread::sleep(Duration::from_millis(100));
    };
    home.approve(&approval_id);
    let r = mcp.wait_response(id, &mut |m, _| panic!("unexpected {m}"));
    assert_eq!(first_text(&r["result"]), "by operator");
}

#[test]
fn faults_become_tool_errors_within_their_timeout_and_the_hub_lives() {
    let home = Home::empty();
    home.write_config(&format!(
        "{}{}{}{}",
        fixture_upstream("crashy", &[], ""),
        fixture_upstream("hangs", &[], "timeout_ms = 1500\n"),
        fixture_upstream("mute", &["--hang-initialize"], "timeout_ms = 1500\n"),
        fixture_upstream("dead", &["--exit-at-start", "4"], "")
    ));
    let mut mcp = McpProc::start(&home, json!({}));
    let names = mcp.tool_names();
    assert!(names.contains(&"crashy__echo".to_string()));
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("mute__") || n.starts_with("dead__"))
    );
    let status = mcp.call_ok("upstream_status", json!({}));
    let servers = status["structuredContent"]["servers"]
        .as_array()
        .expect("servers")
        .clone();
    let dead = servers.iter().find(|s| s["name"] == "dead").expect("dead");
    assert!(
        dead["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("failing at start-up")),
        "start-up errors carry the stderr tail: {dead}"
    );
    let mute = servers.iter().find(|s| s["name"] == "mute").expect("mute");
    assert!(
        mute["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("initialize")),
        "{mute}"
    );

    let crash = mcp.call("crashy__crash", json!({}));
    assert_eq!(crash["result"]["isError"], true, "{crash}");
    assert!(
        first_text(&crash["result"]).contains("crashing mid-call"),
        "{crash}"
    );
    assert_eq!(
        first_text(&mcp.call_ok("crashy__echo", json!({"message": "back"}))),
        "back",
        "evicted and respawned"
    );

    let hang = mcp.call("hangs__hang", json!({}));
    assert_eq!(hang["result"]["isError"], true);
    assert!(first_text(&hang["result"]).contains("1500"), "{hang}");
    assert_eq!(
        first_text(&mcp.call_ok("hangs__echo", json!({"message": "alive"}))),
        "alive"
    );
    assert_eq!(mcp.request("ping", json!({}))["result"], json!({}));
}

#[test]
fn children_get_a_sanitized_environment_with_secrets_resolved_at_spawn() {
    let mut home = Home::empty();
    home.set("MY_SECRET", "s3cret");
    home.set("OPENAI_API_KEY", "leak-1");
    home.set("HECATE_TOKEN", "leak-2");
    home.write_config(&format!(
        "{}{}",
        fixture_upstream(
            "envy",
            &[],
            "env = { TOKEN = \"$MY_SECRET\", MIXED = \"pre-${MY_SECRET}-post\" }\n"
        ),
        fixture_upstream("broken", &[], "env = { TOKEN = \"$NOT_SET_ANYWHERE\" }\n")
    ));
    let mut mcp = McpProc::start(&home, json!({}));
    let r = mcp.call_ok(
        "envy__env",
        json!({"names": ["TOKEN", "MIXED", "OPENAI_API_KEY", "HECATE_TOKEN", "PATH", "MY_SECRET"]}),
    );
    let env = &r["structuredContent"];
    assert_eq!(env["TOKEN"], "s3cret");
    assert_eq!(env["MIXED"], "pre-s3cret-post");
    assert_eq!(env["OPENAI_API_KEY"], Value::Null);
    assert_eq!(env["HECATE_TOKEN"], Value::Null);
    assert_eq!(
        env["MY_SECRET"],
        Value::Null,
        "only the reference's value is passed, not the variable"
    );
    assert!(env["PATH"].is_string());
    let status = mcp.call_ok("upstream_status", json!({}));
    let broken = status["structuredContent"]["servers"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == "broken").cloned())
        .expect("broken");
    assert!(
        broken["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("NOT_SET_ANYWHERE")),
        "{broken}"
    );
    assert!(!status.to_string().contains("s3cret"));
}

#[test]
fn no_child_or_grandchild_outlives_the_hub() {
    let home = Home::empty();
    let rec = home.path("gc.jsonl");
    home.write_config(&fixture_upstream(
        "gc",
        &["--spawn-grandchild", "--record", &rec.display().to_string()],
        "",
    ));
    let mut mcp = McpProc::start(&home, json!({}));
    mcp.call_ok("gc__echo", json!({"message": "up"}));
    let grandchild = wait_record(&rec, "grandchild").expect("grandchild")["pid"]
        .as_u64()
        .expect("pid") as u32;
    let child = wait_record(&rec, "start").expect("start")["pid"]
        .as_u64()
        .expect("pid") as u32;
    assert!(child::process_alive(grandchild));
    let status = mcp.close_and_wait(Duration::from_secs(30));
    assert!(status.is_some_and(|s| s.success()));
    assert!(
        wait_gone(child, Duration::from_secs(10)),
        "the upstream died with the hub"
    );
    assert!(
        wait_gone(grandchild, Duration::from_secs(10)),
        "its process group died too"
    );
}

#[test]
fn a_hundred_concurrent_calls_across_two_upstreams_with_the_same_tool_names() {
    let home = Home::empty();
    // `three` runs exactly what `one` runs: the pool key excludes the alias, so
    // they share one connection.
    home.write_config(&format!(
        "{}{}{}",
        fixture_upstream("one", &["--name", "first"], ""),
        fixture_upstream("two", &["--name", "second"], ""),
        fixture_upstream("three", &["--name", "first"], "")
    ));
    let mut mcp = McpProc::start(&home, json!({}));
    let mut ids = Vec::new();
    for i in 0..100 {
        let tool = ["one__echo", "two__echo", "three__echo"][i % 3];
        let id = mcp.send_request(
            "tools/call",
            json!({"name": tool, "arguments": {"message": format!("m{i}")}}),
        );
        ids.push((id, format!("m{i}")));
    }
    for (id, expected) in ids {
        let r = mcp.wait_response(id, &mut |m, _| panic!("unexpected {m}"));
        assert_eq!(first_text(&r["result"]), expected, "{r}");
    }
    let stats = mcp.call_ok("upstream_status", json!({}));
    assert_eq!(stats["structuredContent"]["pool"]["entries"], 2);
    assert_eq!(stats["structuredContent"]["pool"]["in_use"], 0);
}

#[test]
fn probe_lists_an_upstreams_tools_without_the_pool() {
    let home = Home::empty();
    let fixtures = mcp::fixtures_bin();
    let out = home.json(&[
        "mcp",
        "probe",
        "--format",
        "json",
        "--",
        &fixtures,
        "mcp-server",
        "--name",
        "probed",
    ]);
    assert_eq!(out["object"], "mcp_probe");
    assert_eq!(out["data"]["server"]["name"], "probed");
    let names: Vec<&str> = out["data"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert!(
        names.contains(&"echo") && names.contains(&"test_simple_text"),
        "un-namespaced: {names:?}"
    );
    let bad = home.run(&[
        "mcp",
        "probe",
        "--",
        &fixtures,
        "mcp-server",
        "--exit-at-start",
        "2",
    ]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("failing at start-up"));
    let none = home.run(&["mcp", "probe"]);
    assert!(!none.status.success());
}

#[test]
fn mcp_pool_idle_ttl_closes_idle_upstreams_but_not_subscribed_ones() {
    let home = Home::empty();
    let record = home.path("pool-events.jsonl");
    let rec = record.to_string_lossy().to_string();
    home.write_config(&format!(
        "{}[mcp_pool]\nidle_ttl_secs = 1\nping_interval_secs = 0\n",
        fixture_upstream("up", &["--record", &rec], "")
    ));
    let mut mcp = McpProc::start(&home, json!({}));
    let watched = "test://watched-resource";
    let sub = mcp.request("resources/subscribe", json!({"uri": watched}));
    assert_eq!(sub["result"], json!({}), "{sub}");
    let pid = wait_record(&record, "start").expect("the upstream started")["pid"]
        .as_u64()
        .expect("pid") as u32;
    // The fixture ticks every 200 ms: ten updates span more than the 1 s TTL
    // plus a sweep, during which the subscription's lease keeps it open.
    for _ in 0..10 {
        let u = mcp
            .wait_notification("notifications/resources/updated", Duration::from_secs(30))
            .expect("updates keep coming while subscribed");
        assert_eq!(u["params"]["uri"], watched);
    }
    assert_eq!(
        records(&record)
            .iter()
            .filter(|r| r["event"] == "start")
            .count(),
        1,
        "the subscribed upstream was not closed and restarted"
    );
    let status = mcp.call_ok("upstream_status", json!({}));
    assert_eq!(status["structuredContent"]["pool"]["in_use"], 1, "{status}");

    mcp.request("resources/unsubscribe", json!({"uri": watched}));
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut entries = Value::Null;
    while Instant::now() < deadline {
        let status = mcp.call_ok("upstream_status", json!({}));
        entries = status["structuredContent"]["pool"]["entries"].clone();
        if entries == json!(0) {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(entries, json!(0), "the idle TTL closed the connection");
    assert!(
        wait_gone(pid, Duration::from_secs(30)),
        "the idle upstream process was stopped"
    );
}

#[test]
fn a_tool_that_says_it_is_destructive_asks_unless_the_config_says_otherwise() {
    let home = Home::empty();
    home.write_config(&format!(
        "{}{}{}",
        // No policy: echo calls itself destructive, so it asks; others do not.
        fixture_upstream("hinted", &["--destructive", "echo"], ""),
        // A server policy set in the config wins over the hint.
        fixture_upstream("trusted", &["--destructive", "echo"], "policy = \"auto\"\n"),
        // So does a per-tool one.
        fixture_upstream(
            "pinned",
            &["--destructive", "echo"],
            "[mcp_servers.pinned.tools]\necho = \"auto\"\n"
        ),
    ));
    let mut mcp = McpProc::start(&home, json!({"elicitation": {}}));
    let mut asked = 0;
    let approved = mcp.request_with(
        "tools/call",
        json!({"name": "hinted__echo", "arguments": {"message": "asked first"}}),
        &mut |method, params| {
            assert_eq!(method, "elicitation/create");
            assert!(
                params["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("hinted__echo")),
                "{params}"
            );
            asked += 1;
            json!({"action": "accept", "content": {"decision": "approve_once"}})
        },
    );
    assert_eq!(asked, 1, "the destructive tool asked");
    assert_eq!(first_text(&approved["result"]), "asked first");
    let declined = mcp.request_with(
        "tools/call",
        json!({"name": "hinted__echo", "arguments": {"message": "no"}}),
        &mut |_, _| json!({"action": "decline"}),
    );
    assert_eq!(declined["result"]["isError"], true, "{declined}");
    // Tools without the hint, and hinted tools the config allows, run at once.
    for name in ["hinted__test_simple_text", "trusted__echo", "pinned__echo"] {
        let args = if name.ends_with("echo") {
            json!({"message": "plain"})
        } else {
            json!({})
        };
        let answer = mcp.request_with(
            "tools/call",
            json!({"name": name, "arguments": args}),
            &mut |method, _| panic!("{name} asked ({method})"),
        );
        assert_ne!(answer["result"]["isError"], true, "{name}: {answer}");
    }
    // `hecate mcp servers` shows the policy that applies to each tool.
    let servers = home.json(&["mcp", "servers", "--format", "json"]);
    let policy_of = |exposed: &str| {
        servers["data"]["servers"]
            .as_array()
            .expect("servers")
            .iter()
            .flat_map(|s| s["tools"].as_array().cloned().unwrap_or_default())
            .find(|t| t["name"] == exposed)
            .map(|t| t["policy"].clone())
            .unwrap_or_else(|| panic!("no tool {exposed}: {servers}"))
    };
    assert_eq!(policy_of("hinted__echo"), "require_approval");
    assert_eq!(policy_of("hinted__test_simple_text"), "auto");
    assert_eq!(policy_of("trusted__echo"), "auto");
    assert_eq!(policy_of("pinned__echo"), "auto");
}
