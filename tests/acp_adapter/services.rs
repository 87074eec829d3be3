//! The fs and terminal services Hecate offers agents, confined to the session
//! workspace, plus the environment and MCP servers agents receive.

use crate::support::*;
use hecate::adapters::acp::{AgentConnection, StopReason};
use hecate::domain::event::RuntimeEvent;
use hecate::domain::mcp::McpServerConfig;
use serde_json::json;

#[tokio::test]
async fn fs_inside_the_workspace_reads_and_writes() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let script = json!({"turns": [
        {"match": "write", "actions": [
            {"fs_write": {"path": "notes/a.txt", "content": "hello\nworld\n"}},
            {"fs_write": {"path": "notes/a.txt", "content": "line1\nline2\nline3\n"}}
        ]},
        {"match": "read", "actions": [
            {"fs_read": {"path": "notes/a.txt", "line": 2, "limit": 1}},
            {"fs_read": {"path": "missing.txt"}}
        ]}
    ]});
    let (conn, native) = scripted(&ws, &sdir, script).await;
    let w = turn(&conn, &native, "write").await;
    assert!(
        w.text()
            .contains(&format!("wrote: {}", ws.join("notes/a.txt").display())),
        "{}",
        w.text()
    );
    let changes: Vec<_> = w
        .events
        .iter()
        .filter_map(|e| match e {
            RuntimeEvent::FileChanged { path, change } => Some((path.as_str(), change.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        changes,
        vec![("notes/a.txt", "added"), ("notes/a.txt", "modified")]
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("notes/a.txt")).expect("file"),
        "line1\nline2\nline3\n"
    );
    let r = turn(&conn, &native, "read").await;
    assert!(r.text().contains("read: line2\n"), "{}", r.text());
    assert!(
        r.text().ends_with("read: "),
        "missing file reads as empty: {:?}",
        r.text()
    );
    conn.shutdown().await;
}

#[tokio::test]
async fn fs_outside_the_workspace_is_refused() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let (_o, outside) = workspace();
    std::fs::write(outside.join("secret.txt"), "secret").expect("write");
    std::os::unix::fs::symlink(outside.join("secret.txt"), ws.join("link.txt")).expect("symlink");
    let script = json!({"turns": [{"actions": [
        {"fs_read": {"path": "../x"}},
        {"fs_read": {"path": "/etc/passwd"}},
        {"fs_read": {"path": "link.txt"}},
        {"fs_write": {"path": "link.txt", "content": "pwned"}},
        {"fs_write": {"path": "/tmp/hecate-should-not-exist.txt", "content": "x"}}
    ]}]});
    let (conn, native) = scripted(&ws, &sdir, script).await;
    let t = turn(&conn, &native, "go").await;
    assert_eq!(t.result, Ok(StopReason::EndTurn));
    let text = t.text();
    assert_eq!(text.matches("read error: -32602").count(), 3, "{text}");
    assert_eq!(text.matches("write error: -32602").count(), 2, "{text}");
    assert!(!text.contains("read: secret"), "{text}");
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).expect("read"),
        "secret"
    );
    assert!(!std::path::Path::new("/tmp/hecate-should-not-exist.txt").exists());
    let rejected: Vec<_> = t
        .diagnostics()
        .into_iter()
        .filter(|d| d.get("rejected_path").is_some())
        .collect();
    assert_eq!(rejected.len(), 5, "{rejected:?}");
    assert!(
        rejected
            .iter()
            .all(|d| d["reason"].as_str().is_some_and(|r| !r.is_empty()))
    );
    assert!(
        !t.events
            .iter()
            .any(|e| matches!(e, RuntimeEvent::FileChanged { .. }))
    );
    conn.shutdown().await;
}

#[tokio::test]
async fn terminals_run_commands_in_the_workspace() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let script = json!({"turns": [{"actions": [
        {"terminal": {"command": "sh", "args": ["-c", "echo hi from $(pwd); exit 3"]}},
        {"terminal": {"command": "echo one two"}},
        {"terminal": {"command": "sh", "args": ["-c", "printf 'abcdefghij'"], "output_byte_limit": 4}},
        {"terminal": {"command": "true", "cwd": "/"}}
    ]}]});
    let (conn, native) = scripted(&ws, &sdir, script).await;
    let t = turn(&conn, &native, "go").await;
    let text = t.text();
    assert!(
        text.contains(&format!("terminal exit 3: hi from {}", ws.display())),
        "{text}"
    );
    assert!(text.contains("terminal exit 0: one two"), "{text}");
    assert!(text.contains("terminal exit 0: ghij"), "{text}");
    assert!(text.contains("terminal error: create: -32602"), "{text}");
    conn.shutdown().await;
}

#[tokio::test]
async fn terminals_get_the_sanitized_environment() {
    let (_g, ws) = workspace();
    let (_s, sdir) = workspace();
    let mut base = hecate::adapters::process::env::current_env();
    base.insert("OPENAI_API_KEY".into(), "sk-openai".into());
    base.insert("ANTHROPIC_API_KEY".into(), "sk-ant".into());
    base.insert("HECATE_SECRET".into(), "hidden".into());
    let env =
        hecate::adapters::process::env::sanitized_env(&base, &["ANTHROPIC_*".to_string()], &[]);
    let script = script_file(
        &sdir,
        json!({"turns": [{"actions": [
            {"terminal": {"command": "echo o=${OPENAI_API_KEY:-unset} a=${ANTHROPIC_API_KEY:-unset} h=${HECATE_SECRET:-unset}"}}
        ]}]}),
    );
    let conn = AgentConnection::start(&spec(&["--script", &script]), &ws, env, options())
        .await
        .expect("start");
    let native = conn.new_session(&ws, &[]).await.expect("session").id;
    let t = turn(&conn, &native, "go").await;
    assert!(
        t.text().contains("o=unset a=sk-ant h=unset"),
        "{}",
        t.text()
    );
    conn.shutdown().await;
}

#[tokio::test]
async fn mcp_servers_reach_the_agent() {
    let (_g, ws) = workspace();
    let conn = start(&ws, &[]).await;
    let servers = vec![McpServerConfig::Stdio {
        name: "files".into(),
        command: "/bin/true".into(),
        args: vec![],
        env: vec![],
    }];
    let native = conn.new_session(&ws, &servers).await.expect("session").id;
    assert_eq!(turn(&conn, &native, "/mcp").await.text(), "mcp: files");
    conn.shutdown().await;
}
