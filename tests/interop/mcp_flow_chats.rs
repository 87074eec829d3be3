//! The client-hosted chat tools (`h-chat-start`, `h-chat-send`, `h-chat-process`,
//! `h-chat-summary`) driven by the official Python MCP SDK (installed by
//! `scripts/test-deps/mcp.sh`) over `hecate mcp` on stdio, with a scripted model
//! that answers each turn by tool-calling `respond` from the schema Hecate gives.

use crate::support::common::Home;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Command;

fn python() -> PathBuf {
    let venv = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-deps/mcp/venv");
    assert!(
        venv.join("bin/python").exists(),
        "the Python MCP SDK is not installed in {}: run ./scripts/test-deps/mcp.sh first",
        venv.display()
    );
    venv.join("bin/python")
}

#[test]
fn a_python_sdk_client_playing_the_model_runs_a_flow_chat_to_its_end() {
    let home = Home::empty();
    let flows = home.path("flows");
    std::fs::create_dir_all(&flows).expect("flows dir");
    std::fs::write(
        flows.join("support.toml"),
        include_str!("../../docs/examples/flows/support.toml"),
    )
    .expect("flow");
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/mcp_peers/flow_chat_llm.py");
    let out = Command::new(python())
        .arg(script)
        .arg(env!("CARGO_BIN_EXE_hecate"))
        .args(home.env.iter().map(|(k, v)| format!("{k}={v}")))
        .output()
        .expect("run python");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python LLM client: {stderr}");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON report");

    assert_eq!(
        v["tools"],
        json!([
            "h-chat-process",
            "h-chat-send",
            "h-chat-start",
            "h-chat-summary"
        ])
    );
    assert_eq!(
        v["start"],
        json!({"stage": "greet", "conversation": "welcome"})
    );
    let turns = v["turns"].as_array().expect("turns");
    assert_eq!(turns.len(), 3, "{v}");
    assert_eq!(turns[0]["call"]["data"], json!({"name": "Bo"}));
    assert_eq!(turns[0]["newStageName"], "about");
    assert_eq!(turns[1]["call"]["data"], json!({"age": 41}));
    assert_eq!(turns[1]["conversationHandoff"], "plan");
    assert_eq!(turns[1]["newStageName"], "choose");
    assert_eq!(turns[2]["call"]["data"], json!({"plan": "pro"}));
    assert_eq!(turns[2]["newStageName"], "done");
    assert_eq!(turns[2]["chatEnded"], true);
    assert_eq!(
        turns[2]["data"],
        json!({"age": 41, "name": "Bo", "plan": "pro"})
    );
    assert_eq!(v["after_end"], "chat.chat_ended");
    assert_eq!(v["summary"], json!({"saved": true}));
    assert_eq!(v["bad_type"]["is_error"], true);
    assert_eq!(v["bad_type"]["error"]["type"], "chat.respond_invalid");
    assert_eq!(v["bad_type"]["error"]["field"], "data.name");
    assert_eq!(v["unknown_chat"], "chat.chat_not_found");
    assert_eq!(v["unknown_agent"], "chat.agent_not_found");
}
