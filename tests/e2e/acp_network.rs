//! ACP over the network end to end: the real `hecate serve` answering ACP on its
//! `/acp` WebSocket, driven by the official Rust SDK client role over a
//! WebSocket (one JSON-RPC message per text message) and through the
//! `hecate acp --remote` relay over real pipes, against the fixture model server
//! and the fixture ACP agent. Covers the token and Origin refusals before the
//! upgrade, bad and oversized frames, a binary message, a client vanishing
//! mid-turn (its turn is cancelled, the server goes on), sessions shared with
//! HTTP and with stdio `hecate acp`, and the relay's exits.

use crate::support::acp_editor::*;
use crate::support::common::{Home, workspace};
use crate::support::http::{Api, Served, last_message, serve};
use agent_client_protocol::Lines;
use agent_client_protocol::v1::schema::{
    ContentBlock, LoadSessionRequest, PromptRequest, SessionId, SetSessionModeRequest, StopReason,
};
use futures::{SinkExt, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};

/// The token every server here requires, unless a test says otherwise.
const TOKEN: &str = "acp-network-token";

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// `ws://127.0.0.1:PORT/acp` of `served`.
fn acp_url(served: &Served) -> String {
    format!("{}/acp", served.base.replacen("http://", "ws://", 1))
}

/// A model home whose server requires [`TOKEN`], and the server.
fn served_model_home() -> (crate::support::common::ModelServer, Home, Served) {
    let (server, mut home) = model_home("fixture-model");
    home.set("HECATE_TOKEN", TOKEN);
    let served = serve(&home);
    (server, home, served)
}

/// Opens `/acp` of `served`, sending `token` and `origin` when given.
async fn connect(
    served: &Served,
    token: Option<&str>,
    origin: Option<&str>,
) -> Result<Socket, WsError> {
    let mut request = acp_url(served).into_client_request().expect("request");
    if let Some(t) = token {
        let value = format!("Bearer {t}").parse().expect("header");
        request.headers_mut().insert("authorization", value);
    }
    if let Some(o) = origin {
        request
            .headers_mut()
            .insert("origin", o.parse().expect("header"));
    }
    let connected = tokio::time::timeout(STEP, tokio_tungstenite::connect_async(request))
        .await
        .expect("the upgrade is answered in time");
    connected.map(|(socket, _)| socket)
}

/// Opens `/acp?QUERY` of `served` with [`TOKEN`].
async fn connect_with_query(served: &Served, query: &str) -> Result<Socket, WsError> {
    let mut request = format!("{}?{query}", acp_url(served))
        .into_client_request()
        .expect("request");
    let value = format!("Bearer {TOKEN}").parse().expect("header");
    request.headers_mut().insert("authorization", value);
    let connected = tokio::time::timeout(STEP, tokio_tungstenite::connect_async(request))
        .await
        .expect("the upgrade is answered in time");
    connected.map(|(socket, _)| socket)
}

/// The target a new thread of `socket` starts on.
async fn first_target(socket: Socket) -> String {
    let (_guard, ws) = workspace();
    run_editor(
        socket_transport(socket),
        Editor::default(),
        async |cx, _updates| {
            initialize(&cx, Caps::default()).await?;
            let new = new_session(&cx, &ws).await?;
            Ok(new
                .modes
                .expect("targets as modes")
                .current_mode_id
                .0
                .to_string())
        },
    )
    .await
    .expect("editor session")
}

#[tokio::test(flavor = "multi_thread")]
async fn new_threads_start_on_the_configured_default_unless_the_client_names_a_target() {
    let (_model, mut home) = model_home("fixture-model");
    add_agent(&home, &[]);
    home.set("HECATE_TOKEN", TOKEN);
    home.write_config("[acp]\ndefault_target = \"agent:fixture\"\n");
    let served = serve(&home);
    let plain = connect(&served, Some(TOKEN), None).await.expect("socket");
    assert_eq!(
        first_target(plain).await,
        "agent:fixture",
        "[acp] default_target"
    );
    let chosen = connect_with_query(&served, "target=model:fix/fixture-model")
        .await
        .expect("socket");
    assert_eq!(
        first_target(chosen).await,
        "model:fix/fixture-model",
        "?target= wins"
    );
    // A target that does not parse is refused before the upgrade, naming it.
    match connect_with_query(&served, "target=nonsense")
        .await
        .map(|_| ())
    {
        Err(WsError::Http(response)) => {
            assert_eq!(response.status().as_u16(), 400);
            let body: Value =
                serde_json::from_slice(response.body().as_deref().unwrap_or_default())
                    .expect("an error envelope");
            assert_eq!(body["error"]["type"], "invalid_request", "{body}");
            assert_eq!(body["error"]["field"], "target", "{body}");
        }
        other => panic!("a bad target was not refused: {other:?}"),
    }
    drop(served);
    // A default that does not parse stops `hecate serve` at startup.
    home.write_config("[acp]\ndefault_target = \"nonsense\"\n");
    let out = home
        .cmd(&["serve", "--listen", "127.0.0.1:0"])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run serve");
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("[acp] default_target is invalid"),
        "{stderr}"
    );
}

/// The SDK transport over a WebSocket: each JSON-RPC message is one text message.
fn socket_transport(socket: Socket) -> Transport {
    let (tx, rx) = socket.split();
    let sink = tx
        .with(async |line: String| Ok::<_, WsError>(Message::text(line)))
        .sink_map_err(std::io::Error::other);
    let stream = rx.filter_map(async |m| match m {
        Ok(Message::Text(t)) => Some(Ok(t.as_str().to_owned())),
        Ok(_) => None,
        Err(e) => Some(Err(std::io::Error::other(e))),
    });
    Lines::new(Box::pin(sink), Box::pin(stream))
}

/// A request as a JSON value.
fn req(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// The next text message, parsed; panics on anything else.
async fn next_json(socket: &mut Socket) -> Value {
    loop {
        let m = tokio::time::timeout(STEP, socket.next())
            .await
            .expect("a message in time")
            .expect("the socket is open")
            .expect("a message");
        match m {
            Message::Text(t) => return serde_json::from_str(t.as_str()).expect("JSON"),
            Message::Ping(_) | Message::Pong(_) => {}
            other => panic!("expected a text message, got {other:?}"),
        }
    }
}

/// The close frame the server ends the socket with: (code, reason).
async fn close_frame(socket: &mut Socket) -> (CloseCode, String) {
    loop {
        let m = tokio::time::timeout(STEP, socket.next())
            .await
            .expect("the close in time")
            .expect("a close frame before the end")
            .expect("a message");
        match m {
            Message::Close(Some(f)) => return (f.code, f.reason.as_str().to_owned()),
            Message::Close(None) => panic!("closed without a code"),
            _ => {}
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_websocket_prompt_turn_is_a_stored_session_that_http_sees() {
    let (_model, _home, served) = served_model_home();
    let (_guard, ws) = workspace();
    let socket = connect(&served, Some(TOKEN), None)
        .await
        .expect("the token opens the socket");
    let sid = run_editor(
        socket_transport(socket),
        Editor::default(),
        async |cx, mut updates| {
            let sid = open(&cx, &ws).await?;
            assert_eq!(
                prompt(&cx, &sid, "hello over the network").await?,
                StopReason::EndTurn
            );
            assert_eq!(answer(&updates.drain()), "echo: hello over the network");
            Ok(sid)
        },
    )
    .await
    .expect("editor session");
    let api = Api::new(&served).with_token(TOKEN);
    let got = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{}", sid.0))
        .await;
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(
        last_message(&got.body)["content"],
        "echo: hello over the network",
        "{}",
        got.body
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_socket_without_the_token_or_from_a_foreign_origin_is_refused_before_the_upgrade() {
    let (_model, _home, served) = served_model_home();
    let cases = [
        (None, None, 401, "unauthorized"),
        (Some("wrong-token"), None, 401, "unauthorized"),
        (Some(TOKEN), Some("https://evil.example"), 403, "forbidden"),
    ];
    for (token, origin, status, code) in cases {
        match connect(&served, token, origin).await.map(|_| ()) {
            Err(WsError::Http(response)) => {
                assert_eq!(response.status().as_u16(), status, "{token:?} {origin:?}");
                let body: Value =
                    serde_json::from_slice(response.body().as_deref().unwrap_or_default())
                        .expect("an error envelope");
                assert_eq!(body["error"]["type"], code, "{body}");
                assert!(
                    body["error"]["message"]
                        .as_str()
                        .is_some_and(|m| !m.is_empty()),
                    "{body}"
                );
            }
            other => panic!("{token:?} {origin:?} was not refused: {other:?}"),
        }
    }
    connect(&served, Some(TOKEN), Some("http://localhost:3000"))
        .await
        .expect("a loopback origin with the token is accepted");
    let plain = Api::new(&served).with_token(TOKEN).get("/acp").await;
    assert_eq!(plain.status, 426, "{}", plain.body);
    assert_eq!(plain.error_type(), "invalid_request");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_and_oversized_frames_get_errors_and_a_binary_message_closes_the_socket() {
    let (_model, _home, served) = served_model_home();
    let mut socket = connect(&served, Some(TOKEN), None).await.expect("socket");

    socket
        .send(Message::text("this is not json"))
        .await
        .expect("send");
    let v = next_json(&mut socket).await;
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (Value::Null, json!(-32700)),
        "{v}"
    );

    let init = req(
        8,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    );
    socket
        .send(Message::text(init.to_string()))
        .await
        .expect("send");
    let v = next_json(&mut socket).await;
    assert_eq!(
        (v["id"].clone(), v["result"]["protocolVersion"].clone()),
        (json!(8), json!(1)),
        "{v}"
    );

    // A 9 MiB request, over the 8 MiB frame limit: refused with its own id.
    let huge = "x".repeat(9 * 1024 * 1024);
    let big = req(7, "session/new", json!({"cwd": huge, "mcpServers": []}));
    socket
        .send(Message::text(big.to_string()))
        .await
        .expect("send");
    let v = next_json(&mut socket).await;
    assert_eq!(v["id"], 7, "{v}");
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(v["error"]["data"]["limit"], 8 * 1024 * 1024, "{v}");
    assert!(v.to_string().len() < 4096, "the frame is not echoed");

    // The connection still serves.
    let list = req(9, "session/list", json!({}));
    socket
        .send(Message::text(list.to_string()))
        .await
        .expect("send");
    let v = next_json(&mut socket).await;
    assert!(v["result"]["sessions"].is_array(), "{v}");

    socket
        .send(Message::binary(init.to_string().into_bytes()))
        .await
        .expect("send");
    let (code, reason) = close_frame(&mut socket).await;
    assert_eq!(code, CloseCode::Unsupported);
    assert!(
        reason.contains("binary messages are not accepted"),
        "{reason}"
    );

    // The server goes on.
    let again = connect(&served, Some(TOKEN), None).await.expect("socket");
    drop(again);
    let health = Api::new(&served).get("/healthz").await;
    assert_eq!(health.status, 200);
}

/// The run statuses of a session, as HTTP reports them.
async fn run_statuses(api: &Api, sid: &SessionId) -> Vec<String> {
    let got = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{}", sid.0))
        .await;
    assert_eq!(got.status, 200, "{}", got.body);
    got.body["data"]["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["status"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_vanishing_mid_turn_cancels_its_turn_and_the_server_goes_on() {
    let mut home = agent_home(&[]);
    home.set("HECATE_TOKEN", TOKEN);
    let served = serve(&home);
    let (_guard, ws) = workspace();
    let socket = connect(&served, Some(TOKEN), None).await.expect("socket");
    // The editor starts the slow turn, sees its first chunk and vanishes: the
    // transport is dropped without a close frame.
    let sid = run_editor(
        socket_transport(socket),
        Editor::default(),
        async |cx, mut updates| {
            let sid = open(&cx, &ws).await?;
            cx.send_request(SetSessionModeRequest::new(sid.clone(), "agent:fixture"))
                .block_task()
                .await?;
            cx.send_request(PromptRequest::new(
                sid.clone(),
                vec![ContentBlock::from("slow")],
            ))
            .detach();
            while agent_text(&updates.next().await).is_none() {}
            Ok(sid)
        },
    )
    .await
    .expect("editor session");
    let api = Api::new(&served).with_token(TOKEN);
    let deadline = tokio::time::Instant::now() + STEP;
    let statuses = loop {
        let statuses = run_statuses(&api, &sid).await;
        if statuses.last().is_some_and(|s| s != "running") {
            break statuses;
        }
        assert!(tokio::time::Instant::now() < deadline, "{statuses:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    assert_eq!(statuses, ["cancelled"], "the vanished client's turn");

    // A new editor continues the thread on the same server.
    let socket = connect(&served, Some(TOKEN), None).await.expect("socket");
    run_editor(
        socket_transport(socket),
        Editor::default(),
        async |cx, mut updates| {
            initialize(&cx, Caps::default()).await?;
            cx.send_request(LoadSessionRequest::new(sid.clone(), &ws))
                .block_task()
                .await?;
            updates.drain();
            assert_eq!(prompt(&cx, &sid, "again").await?, StopReason::EndTurn);
            assert_eq!(answer(&updates.drain()), "echo: again");
            Ok(())
        },
    )
    .await
    .expect("second editor");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_made_with_stdio_acp_loads_over_the_websocket() {
    let (_model, home) = model_home("fixture-model");
    let (_guard, ws) = workspace();
    let (mut stdio, transport) = Hecate::spawn(&home, &[]);
    let sid = run_editor(transport, Editor::default(), async |cx, _updates| {
        let sid = open(&cx, &ws).await?;
        prompt(&cx, &sid, "remember the word zebra").await?;
        Ok(sid)
    })
    .await
    .expect("stdio editor");
    assert_eq!(stdio.exit_code().await, Some(0), "{}", stdio.stderr());

    let served = serve(&home);
    let socket = connect(&served, None, None).await.expect("socket");
    run_editor(
        socket_transport(socket),
        Editor::default(),
        async |cx, mut updates| {
            initialize(&cx, Caps::default()).await?;
            cx.send_request(LoadSessionRequest::new(sid.clone(), &ws))
                .block_task()
                .await?;
            let replay = updates.drain();
            let users: Vec<String> = replay.iter().filter_map(user_text).collect();
            assert_eq!(users, ["remember the word zebra"]);
            assert_eq!(answer(&replay), "echo: remember the word zebra");
            Ok(())
        },
    )
    .await
    .expect("network editor");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_remote_relay_carries_an_editor_session_and_oversized_lines_over_pipes() {
    let (_model, home, served) = served_model_home();
    let (_guard, ws) = workspace();
    // The token comes from the home's HECATE_TOKEN; the URL is the server's base.
    let (mut relay, transport) = Hecate::spawn(&home, &["--remote", &served.base]);
    let sid = run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        assert_eq!(
            prompt(&cx, &sid, "hello through the relay").await?,
            StopReason::EndTurn
        );
        assert_eq!(answer(&updates.drain()), "echo: hello through the relay");
        Ok(sid)
    })
    .await
    .expect("editor session through the relay");
    // Returning from the editor closed the relay's stdin: a clean exit.
    assert_eq!(relay.exit_code().await, Some(0), "{}", relay.stderr());
    let got = Api::new(&served)
        .with_token(TOKEN)
        .get(&format!("/hecate/v1/agent-chat/sessions/{}", sid.0))
        .await;
    assert_eq!(got.status, 200, "the hub stored the session: {}", got.body);

    let (_relay, stdin, stdout) = Hecate::spawn_raw(&home, &[], &["--remote", &served.base], &[]);
    let mut wire = Wire::new(stdin, stdout);
    wire.send("not json either").await;
    let v = wire.recv().await;
    assert_eq!(v["error"]["code"], -32700, "{v}");
    wire.send_json(req(
        2,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    ))
    .await;
    assert_eq!(
        wire.response(json!(2)).await.0["result"]["protocolVersion"],
        1
    );
    let huge = "x".repeat(9 * 1024 * 1024);
    wire.send_json(req(
        3,
        "session/new",
        json!({"cwd": huge, "mcpServers": []}),
    ))
    .await;
    let (v, _) = wire.response(json!(3)).await;
    assert_eq!(v["error"]["code"], -32600, "{v}");
    assert_eq!(v["error"]["data"]["limit"], 8 * 1024 * 1024, "{v}");
    wire.send_json(req(4, "session/new", json!({"cwd": ws, "mcpServers": []})))
        .await;
    let (v, _) = wire.response(json!(4)).await;
    assert!(v["result"]["sessionId"].is_string(), "{v}");
}

/// The relay's stderr once it holds `needle` (its reader may lag the exit).
async fn stderr_with(relay: &Hecate, needle: &str) -> String {
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let stderr = relay.stderr();
        if stderr.contains(needle) || tokio::time::Instant::now() >= deadline {
            return stderr;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_relay_fails_clearly_when_refused_or_when_the_hub_goes_away() {
    let (_model, home, mut served) = served_model_home();
    let (mut refused, _transport) = Hecate::spawn_with(
        &home,
        &[],
        &["--remote", &served.base],
        &[("HECATE_TOKEN", "")],
    );
    assert_eq!(refused.exit_code().await, Some(1), "{}", refused.stderr());
    let stderr = stderr_with(&refused, "Authorization").await;
    assert!(
        stderr.contains("refused the connection (HTTP 401)") && stderr.contains("Authorization"),
        "{stderr}"
    );

    let (mut relay, stdin, stdout) =
        Hecate::spawn_raw(&home, &[], &["--remote", &served.base], &[]);
    let mut wire = Wire::new(stdin, stdout);
    wire.send_json(req(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    ))
    .await;
    wire.response(json!(1)).await;
    // The hub stops while the editor is still connected.
    assert!(served.stop_gracefully().is_some(), "the hub stopped");
    assert_eq!(relay.exit_code().await, Some(1), "{}", relay.stderr());
    let stderr = stderr_with(&relay, "shutting down").await;
    assert!(
        stderr.contains("went away") && stderr.contains("shutting down"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_relay_fails_clearly_when_the_hub_dies() {
    let (_model, home, mut served) = served_model_home();
    let (mut relay, stdin, stdout) =
        Hecate::spawn_raw(&home, &[], &["--remote", &served.base], &[]);
    let mut wire = Wire::new(stdin, stdout);
    wire.send_json(req(
        1,
        "initialize",
        json!({"protocolVersion": 1, "clientCapabilities": {}}),
    ))
    .await;
    wire.response(json!(1)).await;
    served.child.kill().expect("kill the hub");
    let _ = served.child.wait();
    assert_eq!(relay.exit_code().await, Some(1), "{}", relay.stderr());
    let stderr = stderr_with(&relay, "went away").await;
    assert!(stderr.contains("went away"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_open_socket_holds_its_connection_slot_until_it_closes() {
    let (_model, mut home) = model_home("fixture-model");
    home.set("HECATE_SERVER_MAX_CONNECTIONS", "1");
    let served = serve(&home);
    let socket = connect(&served, None, None).await.expect("socket");
    let busy = Api::new(&served).get("/healthz").await;
    assert_eq!(busy.status, 503, "the socket holds the only slot");
    assert_eq!(busy.error_type(), "server_busy");
    drop(socket);
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let health = Api::new(&served).get("/healthz").await;
        if health.status == 200 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the slot was never freed: {}",
            health.status
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
