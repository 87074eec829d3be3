//! The integration kits in `bridges/` do what they say: the Zed and JetBrains
//! snippets are parsed and their command (resolved on PATH, as the editor would)
//! is run with their args and env through an initialize + prompt exchange; the ACP
//! registry entry is well formed and its command answers the registry's own
//! authentication check with an almost empty environment.

use crate::support::acp_editor::*;
use crate::support::common::{Home, ModelServer, workspace};
use agent_client_protocol::v1::schema::StopReason;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};

fn kit(path: &str) -> Value {
    let file = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("bridges")
        .join(path);
    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{} is not JSON: {e}", file.display()))
}

/// The directory holding the built `hecate`, as if it were installed on PATH.
fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_hecate"))
        .parent()
        .expect("bin dir")
        .to_path_buf()
}

/// Runs an `agent_servers` entry the way an editor does and chats once with the
/// fixture model through it.
async fn chat_through(entry: &Value) {
    let command = entry["command"].as_str().expect("command");
    let args: Vec<&str> = entry["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("string arg"))
        .collect();
    let server = ModelServer::start(None);
    let home = Home::with_openai(&server);
    let (_guard, ws) = workspace();
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(&args)
        .current_dir(&ws)
        .env(
            "PATH",
            format!(
                "{}:{}",
                bin_dir().display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env_remove("HECATE_LOG")
        .env_remove("HECATE_ACP_TARGET")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    for (k, v) in &home.env {
        cmd.env(k, v);
    }
    for (k, v) in entry["env"].as_object().expect("env object") {
        cmd.env(k, v.as_str().expect("string env"));
    }
    let mut child = cmd.spawn().expect("the snippet's command starts");
    let lines = Arc::new(Mutex::new(Vec::new()));
    let t = transport(
        child.stdin.take().expect("stdin"),
        child.stdout.take().expect("stdout"),
        lines.clone(),
    );
    run_editor(t, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        assert_eq!(
            prompt(&cx, &sid, "hi from the editor").await?,
            StopReason::EndTurn
        );
        assert_eq!(answer(&updates.drain()), "echo: hi from the editor");
        Ok(())
    })
    .await
    .expect("a turn through the snippet's command");
    let status = tokio::time::timeout(STEP, child.wait())
        .await
        .expect("exits after the editor closes stdin")
        .expect("wait");
    assert!(status.success(), "{status}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_zed_snippet_starts_hecate_acp() {
    let settings = kit("zed/settings.json");
    let servers = settings["agent_servers"]
        .as_object()
        .expect("agent_servers");
    let entry = &servers["Hecate"];
    assert_eq!(entry["type"], "custom");
    chat_through(entry).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_jetbrains_snippet_starts_hecate_acp() {
    let acp = kit("jetbrains/acp.json");
    let servers = acp["agent_servers"].as_object().expect("agent_servers");
    chat_through(&servers["Hecate"]).await;
}

const PLATFORMS: &[&str] = &[
    "darwin-aarch64",
    "darwin-x86_64",
    "linux-aarch64",
    "linux-x86_64",
    "windows-aarch64",
    "windows-x86_64",
];

#[test]
fn the_registry_entry_follows_the_registry_format() {
    let entry = kit("acp-registry/hecate/agent.json");
    assert_eq!(entry["id"], "hecate", "the id names the directory");
    assert_eq!(entry["version"], env!("CARGO_PKG_VERSION"));
    for field in ["name", "description", "license"] {
        assert!(
            entry[field].as_str().is_some_and(|s| !s.is_empty()),
            "{field}"
        );
    }
    let binary = entry["distribution"]["binary"].as_object().expect("binary");
    assert!(binary.contains_key("linux-x86_64") && binary.contains_key("darwin-aarch64"));
    let version_dir = format!("/v{}/", env!("CARGO_PKG_VERSION"));
    for (platform, target) in binary {
        assert!(PLATFORMS.contains(&platform.as_str()), "{platform}");
        let archive = target["archive"].as_str().expect("archive");
        assert!(
            archive.starts_with("https://") && archive.ends_with(".tar.gz"),
            "{archive}"
        );
        assert!(
            archive.contains(&version_dir) && !archive.contains("/latest/"),
            "{archive}"
        );
        assert!(archive.contains(platform.as_str()), "{archive}");
        assert_eq!(target["cmd"], "./hecate");
        assert_eq!(target["args"], json!(["acp"]));
    }
    let icon = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("bridges/acp-registry/hecate/icon.svg"),
    )
    .expect("icon");
    assert!(icon.contains(r#"width="16""#) && icon.contains(r#"height="16""#));
    for attr in ["fill=\"", "stroke=\""] {
        for value in icon.split(attr).skip(1) {
            let v = value.split('"').next().unwrap_or_default();
            assert!(
                ["currentColor", "none", "inherit"].contains(&v),
                "monochrome icon: {attr}{v}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_registry_command_offers_an_auth_method_with_an_empty_environment() {
    let entry = kit("acp-registry/hecate/agent.json");
    let target = &entry["distribution"]["binary"]["linux-x86_64"];
    let args: Vec<String> = serde_json::from_value(target["args"].clone()).expect("args");
    let sandbox = tempfile::tempdir().expect("sandbox");
    // What the registry's checker passes: PATH, TERM=dumb and a scratch HOME.
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_hecate"))
        .args(&args)
        .current_dir(sandbox.path())
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("TERM", "dumb")
        .env("HOME", sandbox.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let mut wire = Wire::new(
        child.stdin.take().expect("stdin"),
        child.stdout.take().expect("stdout"),
    );
    wire.send_json(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": 1,
            "clientInfo": {"name": "ACP Registry Validator", "version": "1.0.0"},
            "clientCapabilities": {"terminal": true,
                "fs": {"readTextFile": true, "writeTextFile": true},
                "_meta": {"terminal_output": true, "terminal-auth": true}}
        }}),
    )
    .await;
    let (v, _) = wire.response(json!(1)).await;
    let methods = v["result"]["authMethods"].as_array().expect("authMethods");
    assert!(
        methods
            .iter()
            .any(|m| m["type"].is_null() || m["type"] == "agent" || m["type"] == "terminal"),
        "{v}"
    );
    wire.close_stdin();
    let status = tokio::time::timeout(STEP, child.wait())
        .await
        .expect("exits on EOF")
        .expect("wait");
    assert!(status.success());
}
