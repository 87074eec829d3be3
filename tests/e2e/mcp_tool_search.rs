//! `search_tools` and `[mcp] tool_loading = "search"` over the real `hecate
//! mcp` with two fixture upstreams: the search finds tools by the words of
//! their names, descriptions and servers, best first, and answers names that
//! `tools/call` takes; in search mode `tools/list` holds Hecate's own tools only
//! while upstream tools stay callable; bad arguments are tool errors naming the
//! field, and a bad mode stops `hecate mcp` with a clear message.

use crate::support::common::{Home, text};
use crate::support::mcp::{McpProc, first_text, fixture_upstream};
use serde_json::{Value, json};

/// Two upstreams, `alpha` and `beta`, both the fixture server; `extra` TOML after.
fn home(extra: &str) -> Home {
    let home = Home::empty();
    home.write_config(&format!(
        "{}{}{extra}",
        fixture_upstream("alpha", &[], ""),
        fixture_upstream("beta", &[], "")
    ));
    home
}

/// The structured answer of a successful `search_tools` call.
fn search(mcp: &mut McpProc, args: Value) -> Value {
    let r = mcp.call("search_tools", args);
    assert_ne!(r["result"]["isError"], true, "{r}");
    r["result"]["structuredContent"].clone()
}

fn found_names(out: &Value) -> Vec<String> {
    out["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn search_finds_tools_best_first_and_answers_callable_names() {
    let home = home("");
    let mut mcp = McpProc::start(&home, json!({}));
    let names = mcp.tool_names();
    assert!(names.contains(&"search_tools".to_string()), "{names:?}");
    assert!(
        names.contains(&"alpha__echo".to_string()),
        "all tools listed by default"
    );

    let out = search(&mut mcp, json!({"query": "echo"}));
    assert_eq!(found_names(&out), ["alpha__echo", "beta__echo"], "{out}");
    assert_eq!(out["matched"], 2);
    let listed_upstream = names.iter().filter(|n| n.contains("__")).count();
    assert_eq!(out["catalog_size"], listed_upstream, "{out}");
    let echo = &out["tools"][0];
    assert_eq!(
        (&echo["server"], &echo["tool"]),
        (&json!("alpha"), &json!("echo"))
    );
    assert_eq!(
        echo["input_schema"]["required"],
        json!(["message"]),
        "{echo}"
    );
    assert_eq!(echo["policy"], "auto");
    // The name it answers is the one tools/call takes.
    let r = mcp.call_ok("alpha__echo", json!({"message": "found"}));
    assert_eq!(first_text(&r), "found");

    // Every word must match; a server narrows; the limit cuts but counts all.
    let out = search(&mut mcp, json!({"query": "simple text"}));
    assert_eq!(
        found_names(&out),
        ["alpha__test_simple_text", "beta__test_simple_text"]
    );
    let out = search(&mut mcp, json!({"query": "echo", "server": "beta"}));
    assert_eq!(found_names(&out), ["beta__echo"]);
    let out = search(&mut mcp, json!({"query": "test", "limit": 1}));
    assert_eq!(found_names(&out).len(), 1);
    assert!(out["matched"].as_u64().expect("matched") > 1, "{out}");
    let out = search(&mut mcp, json!({"query": "nothing-like-this"}));
    assert_eq!((found_names(&out).len(), &out["matched"]), (0, &json!(0)));

    // Bad arguments are tool errors that name the field.
    for (args, field) in [
        (json!({"query": "  "}), "query"),
        (json!({"query": "echo", "limit": 0}), "limit"),
        (json!({"query": "echo", "limit": 51}), "limit"),
        (json!({"query": "echo", "server": "gamma"}), "gamma"),
    ] {
        let r = mcp.call("search_tools", args.clone());
        assert_eq!(r["result"]["isError"], true, "{args}: {r}");
        assert!(first_text(&r["result"]).contains(field), "{args}: {r}");
    }
}

#[test]
fn in_search_mode_only_hecates_tools_are_listed_and_upstream_ones_stay_callable() {
    let home = home("[mcp]\ntool_loading = \"search\"\n");
    let mut mcp = McpProc::start(&home, json!({}));
    let names = mcp.tool_names();
    assert!(names.contains(&"search_tools".to_string()), "{names:?}");
    assert!(names.contains(&"list_sessions".to_string()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("alpha__") || n.starts_with("beta__")),
        "no upstream tool listed: {names:?}"
    );
    let out = search(&mut mcp, json!({"query": "echo"}));
    assert!(out["catalog_size"].as_u64().expect("size") > 20, "{out}");
    let name = found_names(&out)[0].clone();
    let r = mcp.call_ok(&name, json!({"message": "called by its found name"}));
    assert_eq!(first_text(&r), "called by its found name");
}

#[test]
fn an_unknown_tool_loading_mode_stops_hecate_mcp_with_a_clear_message() {
    let home = home("[mcp]\ntool_loading = \"lazy\"\n");
    let out = home
        .cmd(&["mcp"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run");
    assert!(!out.status.success());
    let (_, stderr) = text(&out);
    assert!(
        stderr.contains("tool_loading") && stderr.contains("lazy"),
        "{stderr}"
    );
    // The environment overrides the file.
    let mut cmd = home.cmd(&["mcp"]);
    cmd.env("HECATE_MCP_TOOL_LOADING", "search");
    let mut mcp = McpProc::spawn_command(&home, cmd);
    mcp.initialize(json!({}));
    let names = mcp.tool_names();
    assert!(names.contains(&"search_tools".to_string()), "{names:?}");
    assert!(!names.iter().any(|n| n.contains("__")), "{names:?}");
}
