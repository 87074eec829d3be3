//! The scripted editor that drives `hecate acp`: the official Rust SDK client role
//! recording what it is asked (permissions, files, terminals, elicitations), homes with the
//! fixture model server and the fixture agent, and small readers of updates.
//! The process itself is in `process.rs`.

use super::common::{Home, ModelServer, permission_turn};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ClientCapabilities, CompleteElicitationNotification, ContentBlock, CreateElicitationRequest,
    CreateElicitationResponse, CreateTerminalRequest, CreateTerminalResponse,
    ElicitationAcceptAction, ElicitationAction, ElicitationCapabilities, ElicitationContentValue,
    ElicitationFormCapabilities, ElicitationUrlCapabilities, FileSystemCapabilities,
    InitializeRequest, InitializeResponse, KillTerminalRequest, KillTerminalResponse,
    NewSessionRequest, NewSessionResponse, PermissionOptionKind, PromptRequest,
    ReadTextFileRequest, ReadTextFileResponse, ReleaseTerminalRequest, ReleaseTerminalResponse,
    RequestPermissionOutcome, RequestPermissionRequest, RequestPermissionResponse,
    SelectedPermissionOutcome, SessionId, SessionNotification, SessionUpdate, StopReason,
    TerminalExitStatus, TerminalOutputRequest, TerminalOutputResponse, WaitForTerminalExitRequest,
    WaitForTerminalExitResponse, WriteTextFileRequest, WriteTextFileResponse,
};
use agent_client_protocol::{Agent, Client, Error, ErrorCode};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

pub use super::acp_process::*;

/// A script for the fixture agent used across the bridge tests.
pub fn agent_script() -> String {
    json!({"turns": [
        permission_turn("Write b.txt", json!([{"fs_write": {"path": "b.txt", "content": "new file\n"}}])),
        {"match":"files","actions":[
            {"fs_write":{"path":"notes.txt","content":"from the agent"}},
            {"fs_read":{"path":"notes.txt"}},
            {"terminal":{"command":"echo","args":["hi"]}},
            {"fs_write":{"path":"../escape.txt","content":"x"}}]},
        {"match":"slow","actions":[{"text":"start "},{"chunks":["a ","b ","c ","d ","e ","f ","g ","h ","i ","j ","k ","l ","m ","n ","o ","p ","q ","r ","s ","t "],"delay_ms":1000}]},
        {"match":"crash","actions":[{"text":"about to crash "},{"crash":7}]}
    ]})
    .to_string()
}

/// A home whose `fixture` agent plays [`agent_script`] (extra fixture arguments
/// after the script) and keeps its sessions in the home.
pub fn agent_home(extra: &[&str]) -> Home {
    let home = Home::empty();
    add_agent(&home, extra);
    home
}

/// Registers the scripted `fixture` agent in `home`.
pub fn add_agent(home: &Home, extra: &[&str]) {
    home.add_scripted_agent(&agent_script(), extra, "");
}

/// A model server in echo mode and a home whose provider `fix` declares `models`.
pub fn model_home(models: &str) -> (ModelServer, Home) {
    let server = ModelServer::start(None);
    let mut home = Home::with_openai(&server);
    home.set("PROVIDER_FIX_MODELS", models);
    (server, home)
}

/// How the test editor answers `session/request_permission`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Permission {
    /// The first `allow_once` option.
    #[default]
    AllowOnce,
    /// The first `allow_always` option.
    AllowAlways,
    /// The first `reject_once` option.
    RejectOnce,
    /// Never answer; record `permission withdrawn` if Hecate withdraws the request.
    Never,
}

/// How the test editor answers `elicitation/create`.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Elicit {
    /// `decline`.
    #[default]
    Decline,
    /// `cancel`.
    Cancel,
    /// `accept` with this content (a JSON object), or none for `null`.
    Accept(Value),
}

/// What the test editor knows and records.
#[derive(Debug, Default)]
pub struct EditorInner {
    /// Permission policy.
    pub permission: Permission,
    /// Elicitation policy.
    pub elicit: Elicit,
    /// Elicitation requests received.
    pub elicitations: Vec<CreateElicitationRequest>,
    /// Ids of the URL elicitations Hecate said had completed.
    pub elicitations_completed: Vec<String>,
    /// Permission requests received.
    pub permission_requests: Vec<RequestPermissionRequest>,
    /// Files the editor holds (written by the agent through Hecate).
    pub files: HashMap<PathBuf, String>,
    /// Every fs/terminal method received, with its path or command.
    pub calls: Vec<String>,
    /// Terminal working directories received.
    pub terminal_cwds: Vec<Option<PathBuf>>,
}

/// The test editor's shared state.
#[derive(Debug, Clone, Default)]
pub struct Editor(pub Arc<Mutex<EditorInner>>);

impl Editor {
    /// An editor answering permission requests with `p`.
    pub fn answering(p: Permission) -> Self {
        let e = Self::default();
        e.with(|i| i.permission = p);
        e
    }

    /// Runs `f` on the state.
    pub fn with<T>(&self, f: impl FnOnce(&mut EditorInner) -> T) -> T {
        f(&mut self.0.lock().expect("editor state"))
    }

    fn permission_outcome(&self, request: RequestPermissionRequest) -> RequestPermissionOutcome {
        self.with(|inner| {
            let wanted = match inner.permission {
                Permission::AllowOnce => PermissionOptionKind::AllowOnce,
                Permission::AllowAlways => PermissionOptionKind::AllowAlways,
                Permission::RejectOnce | Permission::Never => PermissionOptionKind::RejectOnce,
            };
            let chosen = request
                .options
                .iter()
                .find(|o| o.kind == wanted)
                .map(|o| o.option_id.clone());
            inner.permission_requests.push(request);
            match chosen {
                Some(id) => RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(id)),
                None => RequestPermissionOutcome::Cancelled,
            }
        })
    }
}

/// Session updates received, in order.
pub struct Updates(pub mpsc::UnboundedReceiver<SessionNotification>);

impl Updates {
    /// Waits for the next update.
    pub async fn next(&mut self) -> SessionUpdate {
        tokio::time::timeout(STEP, self.0.recv())
            .await
            .expect("update in time")
            .expect("updates open")
            .update
    }

    /// Every update already received (updates sent before a response are
    /// dispatched before the response resolves).
    pub fn drain(&mut self) -> Vec<SessionUpdate> {
        std::iter::from_fn(|| self.0.try_recv().ok())
            .map(|n| n.update)
            .collect()
    }
}

/// What the test editor advertises.
#[derive(Debug, Clone, Copy, Default)]
pub struct Caps {
    /// fs read and write.
    pub fs: bool,
    /// terminal.
    pub terminal: bool,
    /// elicitation, forms and URLs.
    pub elicitation: bool,
}

impl Caps {
    /// fs and terminal both.
    pub const ALL: Caps = Caps {
        fs: true,
        terminal: true,
        elicitation: false,
    };

    /// Elicitation (forms and URLs) and nothing else.
    pub const ELICITATION: Caps = Caps {
        fs: false,
        terminal: false,
        elicitation: true,
    };
}

/// Runs the test editor against `transport`; `main` gets the connection and updates.
pub async fn run_editor<R>(
    transport: Transport,
    editor: Editor,
    main: impl AsyncFnOnce(ConnectionTo<Agent>, Updates) -> Result<R, Error>,
) -> Result<R, Error> {
    let (tx, rx) = mpsc::unbounded_channel();
    let (e9, e10) = (editor.clone(), editor.clone());
    let (e1, e2, e3, e4, e5, e6, e7, e8) = (
        editor.clone(),
        editor.clone(),
        editor.clone(),
        editor.clone(),
        editor.clone(),
        editor.clone(),
        editor.clone(),
        editor,
    );
    let client = Client
        .v1()
        .name("hecate-bridge-test-editor")
        .on_receive_notification(
            async move |n: SessionNotification, _cx| {
                let _ = tx.send(n);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .on_receive_request(
            async move |r: RequestPermissionRequest, resp, cx| {
                if e1.with(|i| i.permission) == Permission::Never {
                    e1.with(|i| i.permission_requests.push(r));
                    let e = e1.clone();
                    return cx.spawn(async move {
                        resp.cancellation().cancelled().await;
                        e.with(|i| i.calls.push("permission withdrawn".into()));
                        Ok(())
                    });
                }
                resp.respond(RequestPermissionResponse::new(e1.permission_outcome(r)))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: ReadTextFileRequest, resp, _cx| {
                let found = e2.with(|i| {
                    i.calls.push(format!("read {}", r.path.display()));
                    i.files.get(&r.path).cloned()
                });
                match found {
                    Some(c) => resp.respond(ReadTextFileResponse::new(c)),
                    None => resp.respond_with_error(Error::new(
                        ErrorCode::RESOURCE_NOT_FOUND,
                        "Resource not found",
                    )),
                }
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: WriteTextFileRequest, resp, _cx| {
                e3.with(|i| {
                    i.calls.push(format!("write {}", r.path.display()));
                    i.files.insert(r.path, r.content);
                });
                resp.respond(WriteTextFileResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: CreateTerminalRequest, resp, _cx| {
                e4.with(|i| {
                    i.calls
                        .push(format!("terminal {} {}", r.command, r.args.join(" ")));
                    i.terminal_cwds.push(r.cwd.clone());
                });
                resp.respond(CreateTerminalResponse::new("editor-term-1"))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: WaitForTerminalExitRequest, resp, _cx| {
                e5.with(|i| i.calls.push(format!("wait {}", r.terminal_id.0)));
                resp.respond(WaitForTerminalExitResponse::new(
                    TerminalExitStatus::new().exit_code(0),
                ))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: TerminalOutputRequest, resp, _cx| {
                e6.with(|i| i.calls.push(format!("output {}", r.terminal_id.0)));
                resp.respond(TerminalOutputResponse::new("hi from the editor\n", false))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: ReleaseTerminalRequest, resp, _cx| {
                e7.with(|i| i.calls.push(format!("release {}", r.terminal_id.0)));
                resp.respond(ReleaseTerminalResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: KillTerminalRequest, resp, _cx| {
                e8.with(|i| i.calls.push(format!("kill {}", r.terminal_id.0)));
                resp.respond(KillTerminalResponse::new())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: CreateElicitationRequest, resp, _cx| {
                let action = e9.with(|i| {
                    i.elicitations.push(r);
                    match &i.elicit {
                        Elicit::Decline => ElicitationAction::Decline,
                        Elicit::Cancel => ElicitationAction::Cancel,
                        Elicit::Accept(content) => ElicitationAction::Accept(
                            ElicitationAcceptAction::new().content(
                                serde_json::from_value::<
                                    Option<
                                        std::collections::BTreeMap<String, ElicitationContentValue>,
                                    >,
                                >(content.clone())
                                .expect("elicitation content"),
                            ),
                        ),
                    }
                });
                resp.respond(CreateElicitationResponse::new(action))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CompleteElicitationNotification, _cx| {
                e10.with(|i| {
                    i.elicitations_completed
                        .push(n.elicitation_id.0.to_string())
                });
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        );
    tokio::time::timeout(
        STEP * 4,
        client.connect_with(transport, async move |cx| main(cx, Updates(rx)).await),
    )
    .await
    .expect("editor session finishes in time")
}

/// Sends `initialize` advertising `caps`.
pub async fn initialize(cx: &ConnectionTo<Agent>, caps: Caps) -> Result<InitializeResponse, Error> {
    let c = ClientCapabilities::new()
        .fs(FileSystemCapabilities::new()
            .read_text_file(caps.fs)
            .write_text_file(caps.fs))
        .terminal(caps.terminal)
        .elicitation(caps.elicitation.then(|| {
            ElicitationCapabilities::new()
                .form(ElicitationFormCapabilities::new())
                .url(ElicitationUrlCapabilities::new())
        }));
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(c))
        .block_task()
        .await
}

/// `session/new` in `cwd`.
pub async fn new_session(
    cx: &ConnectionTo<Agent>,
    cwd: &Path,
) -> Result<NewSessionResponse, Error> {
    cx.send_request(NewSessionRequest::new(cwd))
        .block_task()
        .await
}

/// Initializes (no fs, no terminal) and opens a session in `cwd`.
pub async fn open(cx: &ConnectionTo<Agent>, cwd: &Path) -> Result<SessionId, Error> {
    initialize(cx, Caps::default()).await?;
    Ok(new_session(cx, cwd).await?.session_id)
}

/// Sends a text prompt and waits for its stop reason.
pub async fn prompt(
    cx: &ConnectionTo<Agent>,
    sid: &SessionId,
    text: &str,
) -> Result<StopReason, Error> {
    let r = cx
        .send_request(PromptRequest::new(
            sid.clone(),
            vec![ContentBlock::from(text)],
        ))
        .block_task()
        .await?;
    Ok(r.stop_reason)
}

/// Spawns `hecate acp` of `home` with `args` and runs `editor`, advertising
/// `caps`, against it: the session `new` asks for and one prompt of `text`,
/// which must end its turn; answers the process and the turn's updates.
pub async fn one_prompt(
    home: &Home,
    args: &[&str],
    editor: Editor,
    caps: Caps,
    new: NewSessionRequest,
    text: &str,
) -> (Hecate, Vec<SessionUpdate>) {
    let (hecate, transport) = Hecate::spawn(home, args);
    let updates = run_editor(transport, editor, async |cx, mut updates| {
        initialize(&cx, caps).await?;
        let sid = cx.send_request(new).block_task().await?.session_id;
        assert_eq!(prompt(&cx, &sid, text).await?, StopReason::EndTurn);
        Ok(updates.drain())
    })
    .await
    .expect("editor session");
    (hecate, updates)
}

/// [`one_prompt`] of the [`agent_script`] turn of writes, reads and a terminal
/// (`files please`) to `home`'s `fixture` agent in `cwd`; answers the process
/// and the agent's text.
pub async fn files_turn(home: &Home, editor: Editor, caps: Caps, cwd: &Path) -> (Hecate, String) {
    let (hecate, updates) = one_prompt(
        home,
        &["--target", "agent:fixture"],
        editor,
        caps,
        NewSessionRequest::new(cwd),
        "files please",
    )
    .await;
    (hecate, answer(&updates))
}

/// The text of an agent message chunk.
pub fn agent_text(u: &SessionUpdate) -> Option<String> {
    match u {
        SessionUpdate::AgentMessageChunk(c) => match &c.content {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// The text of a user message chunk.
pub fn user_text(u: &SessionUpdate) -> Option<String> {
    match u {
        SessionUpdate::UserMessageChunk(c) => match &c.content {
            ContentBlock::Text(t) => Some(t.text.clone()),
            _ => None,
        },
        _ => None,
    }
}

/// All agent message text among `updates`, joined.
pub fn answer(updates: &[SessionUpdate]) -> String {
    updates.iter().filter_map(agent_text).collect()
}

/// The JSON data of every run event stored in `home`'s database.
pub fn stored_run_events(home: &Home) -> Vec<Value> {
    let db = rusqlite::Connection::open(home.data_dir().join("hecate.db")).expect("db");
    let mut stmt = db
        .prepare("SELECT data_json FROM run_events ORDER BY run_id, sequence")
        .expect("query");
    stmt.query_map([], |r| r.get::<_, String>(0))
        .expect("rows")
        .filter_map(|r| r.ok())
        .filter_map(|s| serde_json::from_str(&s).ok())
        .collect()
}
