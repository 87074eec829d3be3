//! Integration tests for `hecate-fixtures acp-agent`, the scripted fake ACP
//! agent, driven by the official `agent-client-protocol` client side over the
//! child's stdin/stdout: echo mode, scripted updates, permission and fs/terminal
//! round trips, session load (supported, broken, unsupported), auth errors,
//! crashes, cancellation, hangs, garbage on stdout and the grandchild process.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    CancelNotification, ClientCapabilities, ContentBlock, CreateTerminalRequest,
    CreateTerminalResponse, FileSystemCapabilities, InitializeRequest, InitializeResponse,
    LoadSessionRequest, McpServer, McpServerStdio, NewSessionRequest, PermissionOptionKind,
    PromptRequest, ReadTextFileRequest, ReadTextFileResponse, ReleaseTerminalRequest,
    ReleaseTerminalResponse, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome, SessionId, SessionNotification,
    SessionUpdate, StopReason, TerminalExitStatus, TerminalOutputRequest, TerminalOutputResponse,
    ToolCallContent, WaitForTerminalExitRequest, WaitForTerminalExitResponse, WriteTextFileRequest,
    WriteTextFileResponse,
};
use agent_client_protocol::{Agent, ByteStreams, Client, Error, ErrorCode};
use tokio::io::AsyncBufReadExt as _;
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::sync::mpsc;
use tokio_util::compat::{Compat, TokioAsyncReadCompatExt as _, TokioAsyncWriteCompatExt as _};

/// Upper bound for any single test step.
const STEP: Duration = Duration::from_secs(20);

/// The SDK transport over a child's pipes.
type ChildTransport = ByteStreams<Compat<ChildStdin>, Compat<ChildStdout>>;

/// A running fixture agent in its own process group; the group is killed on drop.
struct AgentProcess {
    child: Child,
    pid: u32,
    stderr: Arc<Mutex<String>>,
}

impl Drop for AgentProcess {
    fn drop(&mut self) {
        kill_group(self.pid);
        let _ = self.child.start_kill();
    }
}

impl AgentProcess {
    /// Spawns `hecate-fixtures acp-agent ARGS` and returns it with its transport.
    fn spawn(args: &[&str]) -> (Self, ChildTransport) {
        let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_hecate-fixtures"))
            .arg("acp-agent")
            .args(args)
            .env("RUST_LOG", "info")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true)
            .spawn()
            .expect("spawn hecate-fixtures acp-agent");
        let pid = child.id().expect("child pid");
        let stdin = child.stdin.take().expect("child stdin");
        let stdout = child.stdout.take().expect("child stdout");
        let stderr_pipe = child.stderr.take().expect("child stderr");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = stderr.clone();
        tokio::spawn(async move {
            let mut lines = tokio::io::BufReader::new(stderr_pipe).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                let mut text = sink.lock().expect("stderr buffer");
                text.push_str(&line);
                text.push('\n');
            }
        });
        let transport = ByteStreams::new(stdin.compat_write(), stdout.compat());
        (Self { child, pid, stderr }, transport)
    }

    /// Everything the agent wrote to stderr so far.
    fn stderr(&self) -> String {
        self.stderr.lock().expect("stderr buffer").clone()
    }

    /// Waits for the agent to exit and returns its exit code.
    async fn exit_code(&mut self) -> Option<i32> {
        let status = tokio::time::timeout(STEP, self.child.wait())
            .await
            .expect("agent exits in time")
            .expect("wait for agent");
        status.code()
    }

    /// Waits until stderr contains `needle`.
    async fn wait_for_stderr(&self, needle: &str) -> String {
        let deadline = tokio::time::Instant::now() + STEP;
        loop {
            let text = self.stderr();
            if text.contains(needle) {
                return text;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "stderr never contained {needle:?}:\n{text}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Kills a whole process group (best effort).
fn kill_group(pgid: u32) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{pgid}")])
        .stderr(Stdio::null())
        .status();
}

/// How the test client answers `session/request_permission`.
#[derive(Debug, Clone, Copy, Default)]
enum PermissionPolicy {
    /// Pick the first `allow_once` option.
    #[default]
    AllowOnce,
    /// Pick the first `reject_once` option.
    RejectOnce,
    /// Answer `cancelled`.
    Cancel,
}

/// What the test client knows and records; shared with its handlers.
#[derive(Debug, Default)]
struct ClientInner {
    permission: PermissionPolicy,
    permission_requests: Vec<RequestPermissionRequest>,
    files: HashMap<PathBuf, String>,
    terminal_commands: Vec<String>,
}

/// A cloneable handle on the test client's state.
#[derive(Debug, Clone, Default)]
struct ClientState(Arc<Mutex<ClientInner>>);

impl ClientState {
    fn with<T>(&self, f: impl FnOnce(&mut ClientInner) -> T) -> T {
        f(&mut self.0.lock().expect("client state"))
    }

    fn permission_outcome(&self, request: RequestPermissionRequest) -> RequestPermissionOutcome {
        self.with(|inner| {
            let wanted = match inner.permission {
                PermissionPolicy::AllowOnce => Some(PermissionOptionKind::AllowOnce),
                PermissionPolicy::RejectOnce => Some(PermissionOptionKind::RejectOnce),
                PermissionPolicy::Cancel => None,
            };
            let chosen = wanted.and_then(|kind| {
                request
                    .options
                    .iter()
                    .find(|option| option.kind == kind)
                    .map(|option| option.option_id.clone())
            });
            inner.permission_requests.push(request);
            match chosen {
                Some(id) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
                None => RequestPermissionOutcome::Cancelled,
            }
        })
    }

    fn read(&self, path: &Path) -> Result<String, Error> {
        self.with(|inner| inner.files.get(path).cloned())
            .ok_or_else(|| Error::new(ErrorCode::RESOURCE_NOT_FOUND, "Resource not found"))
    }
}

/// Session updates received by the client, in arrival order.
struct Updates(mpsc::UnboundedReceiver<SessionNotification>);

impl Updates {
    /// Waits for the next update.
    async fn next(&mut self) -> SessionUpdate {
        tokio::time::timeout(STEP, self.0.recv())
            .await
            .expect("update in time")
            .expect("update channel open")
            .update
    }

    /// Takes every update already received (all updates sent before a
    /// response are dispatched before that response resolves).
    fn drain(&mut self) -> Vec<SessionUpdate> {
        std::iter::from_fn(|| self.0.try_recv().ok())
            .map(|notification| notification.update)
            .collect()
    }
}

/// Runs a client against the agent; `main` gets the connection and the updates.
async fn run_client<R>(
    transport: ChildTransport,
    state: ClientState,
    main: impl AsyncFnOnce(ConnectionTo<Agent>, Updates) -> Result<R, Error>,
) -> Result<R, Error> {
    let (updates_tx, updates_rx) = mpsc::unbounded_channel();
    let (s1, s2, s3, s4) = (state.clone(), state.clone(), state.clone(), state);
    let client = Client
        .v1()
        .name("fixture-test-client")
        .on_receive_notification(
            async move |notification: SessionNotification, _cx| {
                let _ = updates_tx.send(notification);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |request: RequestPermissionRequest, responder, _cx| {
                let outcome = s1.permission_outcome(request);
                responder.respond(RequestPermissionResponse::new(outcome))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: ReadTextFileRequest, responder, _cx| match s2.read(&request.path) {
                Ok(content) => responder.respond(ReadTextFileResponse::new(content)),
                Err(error) => responder.respond_with_error(error),
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: WriteTextFileRequest, responder, _cx| {
                s3.with(|inner| inner.files.insert(request.path, request.content));
                responder.respond(WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: CreateTerminalRequest, responder, _cx| {
                let line = format!("{} {}", request.command, request.args.join(" "));
                s4.with(|inner| inner.terminal_commands.push(line));
                responder.respond(CreateTerminalResponse::new("term-1"))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: WaitForTerminalExitRequest, responder, _cx| {
                responder.respond(WaitForTerminalExitResponse::new(
                    TerminalExitStatus::new().exit_code(0),
                ))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: TerminalOutputRequest, responder, _cx| {
                responder.respond(TerminalOutputResponse::new("hi\n", false))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_request: ReleaseTerminalRequest, responder, _cx| {
                responder.respond(ReleaseTerminalResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        );
    tokio::time::timeout(
        STEP * 3,
        client.connect_with(transport, async move |cx| {
            main(cx, Updates(updates_rx)).await
        }),
    )
    .await
    .expect("client finishes in time")
}

/// Sends `initialize` advertising fs and terminal support.
async fn initialize(cx: &ConnectionTo<Agent>) -> Result<InitializeResponse, Error> {
    let capabilities = ClientCapabilities::new()
        .fs(FileSystemCapabilities::new()
            .read_text_file(true)
            .write_text_file(true))
        .terminal(true);
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(capabilities))
        .block_task()
        .await
}

/// Initializes and opens a session in `cwd`.
async fn open_session(cx: &ConnectionTo<Agent>, cwd: &Path) -> Result<SessionId, Error> {
    initialize(cx).await?;
    let response = cx
        .send_request(NewSessionRequest::new(cwd))
        .block_task()
        .await?;
    Ok(response.session_id)
}

/// Sends a text prompt and waits for its stop reason.
async fn prompt(
    cx: &ConnectionTo<Agent>,
    session_id: &SessionId,
    text: &str,
) -> Result<StopReason, Error> {
    let response = cx
        .send_request(PromptRequest::new(
            session_id.clone(),
            vec![ContentBlock::from(text)],
        ))
        .block_task()
        .await?;
    Ok(response.stop_reason)
}

/// The text of a text content block.
fn block_text(block: &ContentBlock) -> Option<&str> {
    match block {
        ContentBlock::Text(text) => Some(&text.text),
        _ => None,
    }
}

/// The text of an agent message chunk.
fn agent_text(update: &SessionUpdate) -> Option<&str> {
    match update {
        SessionUpdate::AgentMessageChunk(chunk) => block_text(&chunk.content),
        _ => None,
    }
}

/// All agent message texts among `updates`.
fn agent_texts(updates: &[SessionUpdate]) -> Vec<String> {
    updates
        .iter()
        .filter_map(agent_text)
        .map(str::to_owned)
        .collect()
}

/// Writes a script file into `dir`.
fn write_script(dir: &Path, script: &serde_json::Value) -> String {
    let path = dir.join("script.json");
    std::fs::write(&path, script.to_string()).expect("write script");
    path.to_str().expect("utf-8 path").to_owned()
}

/// Writes `script` into `dir` and spawns the fixture agent playing it.
fn spawn_scripted(dir: &Path, script: serde_json::Value) -> (AgentProcess, ChildTransport) {
    AgentProcess::spawn(&["--script", &write_script(dir, &script)])
}

/// Sends a text prompt, asserts that the turn ended normally, and answers the
/// agent message texts it produced.
async fn turn_texts(
    cx: &ConnectionTo<Agent>,
    session_id: &SessionId,
    updates: &mut Updates,
    text: &str,
) -> Result<Vec<String>, Error> {
    assert_eq!(prompt(cx, session_id, text).await?, StopReason::EndTurn);
    Ok(agent_texts(&updates.drain()))
}

fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

#[tokio::test(flavor = "multi_thread")]
async fn echo_mode_answers_with_one_chunk() {
    let dir = temp_dir();
    let (_agent, transport) = AgentProcess::spawn(&[]);
    let cwd = dir.path().to_path_buf();
    run_client(
        transport,
        ClientState::default(),
        async |cx, mut updates| {
            let init = initialize(&cx).await?;
            assert_eq!(init.protocol_version, ProtocolVersion::V1);
            let info = init.agent_info.expect("agent info");
            assert_eq!(info.name, "hecate-fixture-agent");
            let caps = init.agent_capabilities;
            assert!(caps.load_session);
            assert!(!caps.prompt_capabilities.image);
            assert!(caps.prompt_capabilities.embedded_context);

            let new = NewSessionRequest::new(&cwd).mcp_servers(vec![
                McpServer::Stdio(McpServerStdio::new("files", "/bin/true")),
                McpServer::Stdio(McpServerStdio::new("search", "/bin/true")),
            ]);
            let session_id = cx.send_request(new).block_task().await?.session_id;
            assert!(session_id.0.starts_with("fixture-sess-"), "{session_id:?}");

            assert_eq!(
                turn_texts(&cx, &session_id, &mut updates, "hello there").await?,
                ["echo: hello there"]
            );
            assert_eq!(
                turn_texts(&cx, &session_id, &mut updates, "/mcp").await?,
                ["mcp: files, search"]
            );
            assert_eq!(
                turn_texts(&cx, &session_id, &mut updates, "/cwd").await?,
                [format!("cwd: {}", cwd.display())]
            );
            Ok(())
        },
    )
    .await
    .expect("echo session");
}

#[tokio::test(flavor = "multi_thread")]
async fn scripted_turn_sends_updates_in_order() {
    let dir = temp_dir();
    let (_agent, transport) = spawn_scripted(
        dir.path(),
        serde_json::json!({"turns": [
            {"match": "refuse", "actions": [{"text": "no"}, {"stop": "refusal"}, {"text": "never sent"}]},
            {"match": "edit", "actions": [
                {"thought": "thinking"},
                {"tool_call": {"id": "t1", "title": "Edit a.txt", "kind": "edit", "status": "pending",
                               "locations": ["/abs/a.txt"], "raw_input": {"path": "a.txt"}}},
                {"plan": [{"content": "step one", "priority": "high", "status": "pending"}]},
                {"chunks": ["a", "b", "c"], "delay_ms": 5},
                {"tool_call_update": {"id": "t1", "status": "completed", "text": "done",
                                      "diff": {"path": "/abs/a.txt", "old_text": null, "new_text": "new"}}},
                {"available_commands": [{"name": "x", "description": "y"}]},
                {"usage": {"used": 100, "size": 1000}},
                {"stream": {"count": 20, "text": "z"}}
            ]}
        ]}),
    );
    run_client(
        transport,
        ClientState::default(),
        async |cx, mut updates| {
            let session_id = open_session(&cx, dir.path()).await?;
            assert_eq!(
                prompt(&cx, &session_id, "please edit it").await?,
                StopReason::EndTurn
            );
            let got = updates.drain();
            assert_eq!(got.len(), 29, "{got:#?}");
            assert!(matches!(&got[0], SessionUpdate::AgentThoughtChunk(chunk)
            if block_text(&chunk.content) == Some("thinking")));
            let SessionUpdate::ToolCall(call) = &got[1] else {
                panic!("expected tool_call, got {:?}", got[1]);
            };
            assert_eq!(call.tool_call_id.0.as_ref(), "t1");
            assert_eq!(call.title, "Edit a.txt");
            assert_eq!(call.locations[0].path, Path::new("/abs/a.txt"));
            assert_eq!(call.raw_input, Some(serde_json::json!({"path": "a.txt"})));
            let SessionUpdate::Plan(plan) = &got[2] else {
                panic!("expected plan, got {:?}", got[2]);
            };
            assert_eq!(plan.entries[0].content, "step one");
            assert_eq!(agent_texts(&got[3..6]), ["a", "b", "c"]);
            let SessionUpdate::ToolCallUpdate(update) = &got[6] else {
                panic!("expected tool_call_update, got {:?}", got[6]);
            };
            let content = update.fields.content.as_ref().expect("update content");
            assert!(matches!(&content[1], ToolCallContent::Diff(diff)
            if diff.new_text == "new" && diff.old_text.is_none()));
            assert!(
                matches!(&got[7], SessionUpdate::AvailableCommandsUpdate(commands)
            if commands.available_commands[0].name == "x")
            );
            assert!(matches!(&got[8], SessionUpdate::UsageUpdate(usage)
            if usage.used == 100 && usage.size == 1000));
            assert_eq!(agent_texts(&got[9..]), vec!["z".to_owned(); 20]);

            assert_eq!(
                prompt(&cx, &session_id, "refuse this").await?,
                StopReason::Refusal
            );
            assert_eq!(agent_texts(&updates.drain()), ["no"]);
            // No turn matches: echo.
            assert_eq!(
                turn_texts(&cx, &session_id, &mut updates, "other").await?,
                ["echo: other"]
            );
            Ok(())
        },
    )
    .await
    .expect("scripted session");
}

#[tokio::test(flavor = "multi_thread")]
async fn permission_answers_pick_the_branch_by_option_kind() {
    let dir = temp_dir();
    let (_agent, transport) = spawn_scripted(
        dir.path(),
        serde_json::json!({"turns": [{"actions": [
            {"request_permission": {
                "tool_call_id": "t1", "title": "Write a.txt", "kind": "edit",
                "options": [
                    {"id": "allow-once-id", "name": "Allow", "kind": "allow_once"},
                    {"id": "allow-always-id", "name": "Always", "kind": "allow_always"},
                    {"id": "reject-id", "name": "Reject", "kind": "reject_once"}],
                "on_allow": [{"text": "allowed!"}],
                "on_reject": [{"text": "rejected!"}]}}
        ]}]}),
    );
    let state = ClientState::default();
    let seen = state.clone();
    run_client(transport, state.clone(), async |cx, mut updates| {
        let session_id = open_session(&cx, dir.path()).await?;
        assert_eq!(
            turn_texts(&cx, &session_id, &mut updates, "go").await?,
            ["permission: allow-once-id", "allowed!"]
        );
        state.with(|inner| inner.permission = PermissionPolicy::RejectOnce);
        assert_eq!(
            turn_texts(&cx, &session_id, &mut updates, "go").await?,
            ["permission: reject-id", "rejected!"]
        );
        state.with(|inner| inner.permission = PermissionPolicy::Cancel);
        assert_eq!(
            turn_texts(&cx, &session_id, &mut updates, "go").await?,
            ["permission: cancelled", "rejected!"]
        );
        Ok(())
    })
    .await
    .expect("permission session");
    seen.with(|inner| {
        let request = &inner.permission_requests[0];
        assert_eq!(request.tool_call.tool_call_id.0.as_ref(), "t1");
        assert_eq!(
            request.tool_call.fields.title.as_deref(),
            Some("Write a.txt")
        );
        assert_eq!(request.options.len(), 3);
        assert_eq!(inner.permission_requests.len(), 3);
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn fs_terminal_and_edit_file_round_trips() {
    let dir = temp_dir();
    let cwd = dir.path().join("work");
    std::fs::create_dir(&cwd).expect("cwd");
    let (_agent, transport) = spawn_scripted(
        dir.path(),
        serde_json::json!({"turns": [{"actions": [
            {"fs_read": {"path": "notes.txt"}},
            {"fs_read": {"path": "/nowhere/missing.txt", "line": 2, "limit": 1}},
            {"fs_write": {"path": "out/new.txt", "content": "written by agent"}},
            {"terminal": {"command": "sh", "args": ["-c", "echo hi"]}},
            {"edit_file": {"path": "direct.txt", "content": "edited directly"}}
        ]}]}),
    );
    let state = ClientState::default();
    state.with(|inner| {
        inner
            .files
            .insert(cwd.join("notes.txt"), "hello file".to_owned())
    });
    run_client(transport, state.clone(), async |cx, mut updates| {
        let session_id = open_session(&cx, &cwd).await?;
        assert_eq!(
            turn_texts(&cx, &session_id, &mut updates, "files").await?,
            [
                "read: hello file".to_owned(),
                "read error: -32002 Resource not found".to_owned(),
                format!("wrote: {}", cwd.join("out/new.txt").display()),
                "terminal exit 0: hi\n".to_owned(),
            ]
        );
        Ok(())
    })
    .await
    .expect("fs session");
    state.with(|inner| {
        assert_eq!(
            inner
                .files
                .get(&cwd.join("out/new.txt"))
                .map(String::as_str),
            Some("written by agent")
        );
        assert_eq!(inner.terminal_commands, ["sh -c echo hi"]);
    });
    assert_eq!(
        std::fs::read_to_string(cwd.join("direct.txt")).expect("edited file"),
        "edited directly"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn load_session_replays_history_in_a_new_process() {
    let dir = temp_dir();
    let state_dir = dir.path().join("state");
    let state_arg = state_dir.to_str().expect("utf-8 path").to_owned();
    let cwd = dir.path().to_path_buf();

    let (mut first, transport) = AgentProcess::spawn(&["--state-dir", &state_arg]);
    let session_id = run_client(transport, ClientState::default(), async |cx, _updates| {
        let session_id = open_session(&cx, &cwd).await?;
        prompt(&cx, &session_id, "first question").await?;
        prompt(&cx, &session_id, "second question").await?;
        Ok(session_id)
    })
    .await
    .expect("first process");
    assert_eq!(first.exit_code().await, Some(0), "stdin EOF ends the agent");

    let (_second, transport) = AgentProcess::spawn(&["--state-dir", &state_arg]);
    run_client(
        transport,
        ClientState::default(),
        async |cx, mut updates| {
            assert!(initialize(&cx).await?.agent_capabilities.load_session);
            cx.send_request(LoadSessionRequest::new(session_id.clone(), &cwd))
                .block_task()
                .await?;
            let replay: Vec<(bool, String)> = updates
                .drain()
                .iter()
                .map(|update| match update {
                    SessionUpdate::UserMessageChunk(chunk) => {
                        (true, block_text(&chunk.content).expect("text").to_owned())
                    }
                    SessionUpdate::AgentMessageChunk(chunk) => {
                        (false, block_text(&chunk.content).expect("text").to_owned())
                    }
                    other => panic!("unexpected replay update {other:?}"),
                })
                .collect();
            assert_eq!(
                replay,
                [
                    (true, "first question".to_owned()),
                    (false, "echo: first question".to_owned()),
                    (true, "second question".to_owned()),
                    (false, "echo: second question".to_owned()),
                ]
            );
            assert_eq!(
                prompt(&cx, &session_id, "third").await?,
                StopReason::EndTurn
            );

            let unknown = cx
                .send_request(LoadSessionRequest::new("fixture-sess-missing", &cwd))
                .block_task()
                .await
                .expect_err("unknown session");
            assert_eq!(unknown.code, ErrorCode::INVALID_PARAMS);
            assert!(
                unknown.message.contains("fixture-sess-missing"),
                "{unknown:?}"
            );
            Ok(())
        },
    )
    .await
    .expect("second process");
}

#[tokio::test(flavor = "multi_thread")]
async fn load_session_broken_and_unsupported() {
    let dir = temp_dir();
    for (mode, advertised, code) in [
        ("broken", true, ErrorCode::INTERNAL_ERROR),
        ("unsupported", false, ErrorCode::METHOD_NOT_FOUND),
    ] {
        let (_agent, transport) = AgentProcess::spawn(&["--load-session", mode]);
        let error = run_client(transport, ClientState::default(), async |cx, _updates| {
            let init = initialize(&cx).await?;
            assert_eq!(init.agent_capabilities.load_session, advertised, "{mode}");
            let result = cx
                .send_request(LoadSessionRequest::new("fixture-sess-x", dir.path()))
                .block_task()
                .await;
            Ok(result.expect_err("load fails"))
        })
        .await
        .expect("client runs");
        assert_eq!(error.code, code, "{mode}: {error:?}");
        if mode == "broken" {
            assert_eq!(error.message, "No previous sessions found for this project");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn auth_required_rejects_new_session() {
    let dir = temp_dir();
    let (_agent, transport) = AgentProcess::spawn(&["--auth-required"]);
    let error = run_client(transport, ClientState::default(), async |cx, _updates| {
        initialize(&cx).await?;
        let result = cx
            .send_request(NewSessionRequest::new(dir.path()))
            .block_task()
            .await;
        Ok(result.expect_err("auth required"))
    })
    .await
    .expect("client runs");
    assert_eq!(error.code.value(), -32000);
    assert_eq!(error.message, "Authentication required");
}

#[tokio::test(flavor = "multi_thread")]
async fn crash_on_initialize_ends_the_connection() {
    let (mut agent, transport) = AgentProcess::spawn(&["--crash-on", "initialize"]);
    let error = run_client(transport, ClientState::default(), async |cx, _updates| {
        Ok(initialize(&cx).await.expect_err("agent crashed"))
    })
    .await
    .expect("client runs");
    // The pending request fails locally once the agent's stdout reaches EOF.
    assert!(
        agent_client_protocol::is_incoming_transport_closed(&error),
        "{error:?}"
    );
    assert_eq!(agent.exit_code().await, Some(3));
    assert!(
        agent
            .stderr()
            .contains("fixture agent crashing on purpose at initialize"),
        "{}",
        agent.stderr()
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn crash_mid_turn_exits_with_the_scripted_code() {
    let dir = temp_dir();
    let (mut agent, transport) = spawn_scripted(
        dir.path(),
        serde_json::json!({"turns": [{"actions": [{"text": "about to die"}, {"crash": 7}]}]}),
    );
    let (texts, error) = run_client(
        transport,
        ClientState::default(),
        async |cx, mut updates| {
            let session_id = open_session(&cx, dir.path()).await?;
            let error = prompt(&cx, &session_id, "go").await.expect_err("crashed");
            Ok((agent_texts(&updates.drain()), error))
        },
    )
    .await
    .expect("client runs");
    assert_eq!(texts, ["about to die"]);
    assert!(
        agent_client_protocol::is_incoming_transport_closed(&error),
        "{error:?}"
    );
    assert_eq!(agent.exit_code().await, Some(7));
    agent
        .wait_for_stderr("fixture agent crashing mid-turn")
        .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_interrupts_chunks_but_not_hang() {
    let dir = temp_dir();
    let (_agent, transport) = spawn_scripted(
        dir.path(),
        serde_json::json!({"turns": [
            {"match": "slow", "actions": [
                {"chunks": ["tick", "tick", "tick", "tick", "tick", "tick", "tick", "tick"], "delay_ms": 200},
                {"text": "not reached"}]},
            {"match": "hang", "actions": [{"text": "hanging"}, {"hang": true}]}
        ]}),
    );
    run_client(
        transport,
        ClientState::default(),
        async |cx, mut updates| {
            let session_id = open_session(&cx, dir.path()).await?;
            let pending = cx.send_request(PromptRequest::new(
                session_id.clone(),
                vec![ContentBlock::from("slow please")],
            ));
            assert_eq!(agent_text(&updates.next().await), Some("tick"));
            cx.send_notification(CancelNotification::new(session_id.clone()))?;
            let response = pending.block_task().await?;
            assert_eq!(response.stop_reason, StopReason::Cancelled);
            let rest = agent_texts(&updates.drain());
            assert!(rest.len() < 7, "cancel did not stop the chunks: {rest:?}");
            assert!(!rest.iter().any(|text| text == "not reached"));

            // `hang` ignores cancel and never answers, but the agent stays responsive.
            let hanging = cx.send_request(PromptRequest::new(
                session_id.clone(),
                vec![ContentBlock::from("hang now")],
            ));
            assert_eq!(agent_text(&updates.next().await), Some("hanging"));
            cx.send_notification(CancelNotification::new(session_id.clone()))?;
            let waited =
                tokio::time::timeout(Duration::from_millis(500), hanging.block_task()).await;
            assert!(waited.is_err(), "a hanging prompt must not be answered");
            let other = cx
                .send_request(NewSessionRequest::new(dir.path()))
                .block_task()
                .await?
                .session_id;
            assert_eq!(prompt(&cx, &other, "alive?").await?, StopReason::EndTurn);
            Ok(())
        },
    )
    .await
    .expect("cancel session");
}

#[tokio::test(flavor = "multi_thread")]
async fn garbage_on_stdout_does_not_break_the_connection() {
    let dir = temp_dir();
    let (agent, transport) = spawn_scripted(
        dir.path(),
        serde_json::json!({"turns": [{"match": "garbage", "actions": [
            {"text": "before"}, {"garbage": "this is not json"}, {"text": "after"}]}]}),
    );
    run_client(
        transport,
        ClientState::default(),
        async |cx, mut updates| {
            let session_id = open_session(&cx, dir.path()).await?;
            assert_eq!(
                turn_texts(&cx, &session_id, &mut updates, "garbage").await?,
                ["before", "after"]
            );
            assert_eq!(
                turn_texts(&cx, &session_id, &mut updates, "again").await?,
                ["echo: again"]
            );
            Ok(())
        },
    )
    .await
    .expect("garbage session");
    // The client SDK answers the bad line with a -32700 error response whose id
    // is null; the agent SDK logs it as a response for an unknown id and goes on.
    agent.wait_for_stderr("unknown id").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn grandchild_and_stderr_noise_share_the_process_group() {
    let (agent, transport) = AgentProcess::spawn(&["--spawn-grandchild", "--stderr-noise"]);
    let stderr = agent.wait_for_stderr("grandchild pid: ").await;
    assert!(stderr.contains("stderr noise"), "{stderr}");
    let pid: u32 = stderr
        .lines()
        .find_map(|line| line.strip_prefix("grandchild pid: "))
        .expect("pid line")
        .trim()
        .parse()
        .expect("numeric pid");
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("grandchild alive");
    let pgid: u32 = stat
        .rsplit(')')
        .next()
        .and_then(|rest| rest.split_whitespace().nth(2))
        .and_then(|field| field.parse().ok())
        .expect("pgid field");
    assert_eq!(
        pgid, agent.pid,
        "grandchild is in the agent's process group"
    );

    // The noise does not disturb the protocol.
    run_client(transport, ClientState::default(), async |cx, _updates| {
        initialize(&cx).await.map(drop)
    })
    .await
    .expect("initialize despite noise");

    kill_group(agent.pid);
    let deadline = tokio::time::Instant::now() + STEP;
    loop {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next());
        if stat.is_empty() || state == Some("Z") {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "grandchild survived: {stat}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
