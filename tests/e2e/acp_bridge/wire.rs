//! Wire-level behaviour: malformed lines, unknown methods, wrong params and
//! oversized frames get JSON-RPC errors while the process keeps serving; stdout
//! carries nothing but JSON-RPC frames even with verbose logging; with
//! nothing configured, Hecate asks for setup instead of failing obscurely; and
//! a default target that cannot be parsed stops startup with a clear error.

use crate::support::acp_editor::*;
use crate::support::common::{Home, workspace};
use agent_client_protocol::v1::schema::{AuthenticateRequest, StopReason};
use agent_client_protocol::{ErrorCode, UntypedMessage};
use serde_json::{Value, json};

/// A request line.
fn req(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_frames_get_json_rpc_errors_and_the_process_keeps_serving() {
    let (_server, home) = model_home("fixture-model");
    let (_guard, ws) = workspace();
    let (mut hecate, stdin, stdout) = Hecate::spawn_raw(&home, &[], &[], &[]);
    let mut wire = Wire::new(stdin, stdout);

    wire.send("this is not json").await;
    let v = wire.recv().await;
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (Value::Null, json!(-32700))
    );

    wire.send_json(req(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    ))
    .await;
    assert!(wire.response(json!(1)).await.0["result"]["protocolVersion"] == 1);

    wire.send_json(req(2, "no/such_method", json!({}))).await;
    assert_eq!(wire.response(json!(2)).await.0["error"]["code"], -32601);

    wire.send_json(req(3, "session/new", json!({"cwd": 42})))
        .await;
    assert_eq!(wire.response(json!(3)).await.0["error"]["code"], -32602);

    wire.send_json(req(
        4,
        "session/prompt",
        json!({"sessionId": "agent_chat_nope",
        "prompt": [{"type": "text", "text": "hi"}]}),
    ))
    .await;
    let (v, _) = wire.response(json!(4)).await;
    assert_eq!(v["error"]["code"], -32002, "{v}");
    assert_eq!(v["error"]["data"]["type"], "not_found", "{v}");

    // A 9 MiB request: refused with its own id, never read or echoed.
    let huge = "x".repeat(9 * 1024 * 1024);
    wire.send_json(req(
        5,
        "session/prompt",
        json!({"sessionId": "s",
        "prompt": [{"type": "text", "text": huge}]}),
    ))
    .await;
    let (v, _) = wire.response(json!(5)).await;
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(v["error"]["data"]["limit"], 8 * 1024 * 1024);
    assert!(wire.seen.last().is_some_and(|l| l.len() < 1000));
    // Without a leading id it can only be a parse error, still without an echo.
    wire.send(&format!("{{\"params\":\"{huge}\"}}")).await;
    let v = wire.recv().await;
    assert_eq!(v["error"]["code"], -32700, "{v}");
    assert!(wire.seen.last().is_some_and(|l| l.len() < 1000));
    wire.send("[]").await;
    assert_eq!(wire.recv().await["error"]["code"], -32600);

    // Still serving: a whole turn.
    wire.send_json(req(6, "session/new", json!({"cwd": ws, "mcpServers": []})))
        .await;
    let (v, _) = wire.response(json!(6)).await;
    let sid = v["result"]["sessionId"].clone();
    wire.send_json(req(
        7,
        "session/prompt",
        json!({"sessionId": sid,
        "prompt": [{"type": "text", "text": "still there"}]}),
    ))
    .await;
    let (v, notes) = wire.response(json!(7)).await;
    assert_eq!(v["result"]["stopReason"], "end_turn", "{v}");
    let text: String = notes
        .iter()
        .filter_map(|n| n["params"]["update"]["content"]["text"].as_str())
        .collect();
    assert_eq!(text, "echo: still there");
    wire.close_stdin();
    assert!(wire.rest().await.is_empty());
    assert_eq!(hecate.exit_code().await, Some(0), "{}", hecate.stderr());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_long_malformed_line_is_quoted_only_as_a_capped_prefix() {
    let home = Home::empty();
    let (mut hecate, stdin, stdout) = Hecate::spawn_raw(&home, &[], &[], &[]);
    let mut wire = Wire::new(stdin, stdout);
    let not_json = format!("not json {}", "x".repeat(1024 * 1024));
    let deep = "[".repeat(2 * 1024 * 1024);
    let cut = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{{\"p\":\"{}",
        "y".repeat(512 * 1024)
    );
    for line in [&not_json, &deep, &cut] {
        wire.send(line).await;
        let v = wire.recv().await;
        assert_eq!(v["error"]["code"], -32700, "{v}");
        let reply = wire.seen.last().expect("reply");
        assert!(reply.len() < 2048, "the error quotes {} bytes", reply.len());
        assert!(
            reply.contains(&format!("({} bytes)", line.len())),
            "the quote names the line's size: {reply}"
        );
    }
    wire.send("short junk").await;
    let v = wire.recv().await;
    assert_eq!(v["error"]["data"]["line"], "short junk", "{v}");
    wire.close_stdin();
    assert_eq!(hecate.exit_code().await, Some(0), "{}", hecate.stderr());
}

#[tokio::test(flavor = "multi_thread")]
async fn stdout_carries_only_json_rpc_frames_even_with_verbose_logging() {
    let (_server, home) = model_home("fixture-model");
    add_agent(&home, &["--stderr-noise"]);
    let (_guard, ws) = workspace();
    let (mut hecate, transport) =
        Hecate::spawn_with(&home, &["-vvv"], &[], &[("RUST_LOG", "trace")]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        prompt(&cx, &sid, "hello").await?;
        let unknown = UntypedMessage::new("no/such_method", json!({})).expect("message");
        let err = cx
            .send_request(unknown)
            .block_task()
            .await
            .expect_err("unknown method");
        assert_eq!(err.code, ErrorCode::METHOD_NOT_FOUND);
        cx.send_request(
            agent_client_protocol::v1::schema::SetSessionModeRequest::new(
                sid.clone(),
                "agent:fixture",
            ),
        )
        .block_task()
        .await?;
        assert_eq!(
            prompt(&cx, &sid, "please write").await?,
            StopReason::EndTurn
        );
        let crash = prompt(&cx, &sid, "crash now").await;
        assert!(crash.is_err());
        updates.drain();
        Ok(())
    })
    .await
    .expect("editor session");
    assert_eq!(hecate.exit_code().await, Some(0));
    let lines = hecate.stdout_lines();
    assert!(lines.len() > 10, "{lines:?}");
    for line in &lines {
        let v: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("non-JSON on stdout ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
    }
    let stderr = hecate.stderr();
    assert!(
        stderr.contains("serving ACP on stdio"),
        "logs go to stderr: {stderr}"
    );
    assert!(
        stderr.contains("DEBUG") || stderr.contains("TRACE"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_nothing_configured_session_new_asks_for_setup() {
    let home = Home::empty();
    let empty_path = home.path("empty-bin");
    std::fs::create_dir_all(&empty_path).expect("empty dir");
    let fake_home = home.path("home");
    std::fs::create_dir_all(&fake_home).expect("home dir");
    let (_guard, ws) = workspace();
    let env = [
        ("PATH", empty_path.to_str().expect("utf-8")),
        ("HOME", fake_home.to_str().expect("utf-8")),
        ("XDG_CACHE_HOME", fake_home.to_str().expect("utf-8")),
    ];
    let (_hecate, transport) = Hecate::spawn_with(&home, &[], &[], &env);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        let init = initialize(&cx, Caps::default()).await?;
        let methods = serde_json::to_value(&init.auth_methods).expect("json");
        assert_eq!(methods[0]["id"], "hecate-setup", "{methods}");
        assert!(
            methods[0]["description"]
                .to_string()
                .contains("hecate doctor")
        );
        let err = new_session(&cx, &ws).await.expect_err("nothing can answer");
        assert_eq!(err.code, ErrorCode::AUTH_REQUIRED, "{err:?}");
        assert!(
            err.message.starts_with("Authentication required"),
            "{err:?}"
        );
        assert!(err.message.contains("hecate doctor"), "{err:?}");
        assert_eq!(
            err.data.as_ref().map(|d| d["authRequired"].clone()),
            Some(json!(true))
        );
        let auth = cx
            .send_request(AuthenticateRequest::new("hecate-setup"))
            .block_task()
            .await
            .expect_err("still nothing configured");
        assert_eq!(auth.code, ErrorCode::AUTH_REQUIRED);
        Ok(())
    })
    .await
    .expect("editor session");
}

#[test]
fn an_invalid_default_target_stops_startup_naming_where_it_came_from() {
    let home = Home::empty();
    home.write_config("[acp]\ndefault_target = \"gpt-4o\"\n");
    let out = home.run(&["acp"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "invalid input: {stderr}");
    assert!(out.stdout.is_empty(), "stdout carries frames only");
    assert!(
        stderr.contains("[acp] default_target is invalid")
            && stderr.contains("\"gpt-4o\"")
            && stderr.contains("model:PROVIDER/MODEL")
            && stderr.contains("next step: Set [acp] default_target to"),
        "{stderr}"
    );
    let out = home.run(&["acp", "--target", "agent:"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--target (HECATE_ACP_TARGET) is invalid"),
        "{stderr}"
    );
    // A valid one starts and, with stdin closed, ends cleanly.
    let out = home.run(&["acp", "--target", "hecate"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
