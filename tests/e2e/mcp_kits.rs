//! The MCP integration kits in `bridges/` (Claude Desktop, Cursor, Claude Code,
//! Zed): each file parses, names `hecate mcp`, and what it says starts a working
//! MCP server (with `hecate` resolved to the built binary).

use crate::support::common::Home;
use crate::support::mcp::McpProc;
use serde_json::{Value, json};
use std::path::PathBuf;

fn kit(path: &str, key: &str) -> Value {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("bridges")
        .join(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let v: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path} is not JSON: {e}"));
    v[key]["hecate"].clone()
}

#[test]
fn every_kit_launches_a_working_hecate_mcp() {
    for (path, key) in [
        ("claude-desktop/claude_desktop_config.json", "mcpServers"),
        ("cursor/mcp.json", "mcpServers"),
        ("claude-code/.mcp.json", "mcpServers"),
        ("zed-mcp/settings.json", "context_servers"),
    ] {
        let entry = kit(path, key);
        assert_eq!(entry["command"], "hecate", "{path}");
        let args: Vec<String> = entry["args"]
            .as_array()
            .unwrap_or_else(|| panic!("{path} has args"))
            .iter()
            .map(|a| a.as_str().expect("string arg").to_string())
            .collect();
        assert_eq!(args, ["mcp"], "{path}");
        let home = Home::empty();
        let mut cmd = home.cmd(&[]);
        cmd.args(&args);
        for (k, v) in entry["env"].as_object().into_iter().flatten() {
            cmd.env(k, v.as_str().unwrap_or_default());
        }
        let mut mcp = McpProc::spawn_command(&home, cmd);
        let init = mcp.initialize(json!({}));
        assert_eq!(init["result"]["serverInfo"]["name"], "hecate", "{path}");
        assert!(
            mcp.tool_names().contains(&"ask_agent".to_string()),
            "{path}"
        );
    }
}
