//! One live connection to an external ACP agent: spawn, `initialize`, sessions,
//! modes, shutdown. Prompt turns are in `turn.rs`.

use crate::adapters::acp::agent::launcher::LaunchSpec;
use crate::adapters::acp::agent::process::{AgentProcess, exited_error, spawn_agent};
use crate::adapters::acp::convert::mcp_server;
use crate::adapters::acp::error::{AcpError, Stage, classify_rpc_error};
use crate::adapters::acp::handlers::run_connection;
use crate::adapters::acp::services::routes::{ConnectionState, Liveness, Route};
use crate::adapters::acp::services::terminal_sandbox::TerminalSandbox;
use crate::adapters::acp::transport::{DiagnosticSink, child_transport};
use crate::domain::event::RuntimeEvent;
use crate::domain::mcp::McpServerConfig;
use crate::domain::workspace::ElicitationModes;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthCapabilities, AuthMethod, ClientCapabilities, ElicitationCapabilities,
    ElicitationFormCapabilities, ElicitationUrlCapabilities, FileSystemCapabilities,
    Implementation, InitializeRequest, InitializeResponse, LoadSessionRequest, NewSessionRequest,
    SessionConfigOption, SessionConfigOptionValue, SessionModeState, SetSessionConfigOptionRequest,
    SetSessionModeRequest,
};
use agent_client_protocol::{
    Agent, Error as RpcError, JsonRpcRequest, is_connection_terminated,
    is_incoming_transport_closed,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use tokio::sync::mpsc::UnboundedSender;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Timeouts and behaviour of a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AcpOptions {
    /// Limit for `initialize` (cold starts of some agents take seconds).
    pub initialize_timeout: Duration,
    /// Limit for `session/new`.
    pub new_session_timeout: Duration,
    /// Limit for `session/load` (includes the history replay).
    pub load_session_timeout: Duration,
    /// Limit for small requests (`session/set_mode`).
    pub request_timeout: Duration,
    /// A turn fails when the agent sends nothing for this long (time spent
    /// waiting on Hecate, e.g. for a permission answer, does not count).
    pub prompt_idle_timeout: Option<Duration>,
    /// A turn fails when it takes longer than this overall.
    pub prompt_timeout: Option<Duration>,
    /// After `session/cancel`, how long to wait for the agent to end the turn.
    pub cancel_grace: Duration,
    /// Whether every update is also kept as a raw `RuntimeEvent::Raw` frame.
    pub raw_frames: bool,
    /// The sandbox the agent's terminals run in (off by default).
    pub terminal_sandbox: TerminalSandbox,
    /// The elicitation modes advertised to the agent: those the editor driving
    /// the session answers (none by default).
    pub elicitation: ElicitationModes,
}

impl Default for AcpOptions {
    fn default() -> Self {
        Self {
            initialize_timeout: Duration::from_secs(60),
            new_session_timeout: Duration::from_secs(60),
            load_session_timeout: Duration::from_secs(120),
            request_timeout: Duration::from_secs(30),
            prompt_idle_timeout: Some(Duration::from_secs(600)),
            prompt_timeout: Some(Duration::from_secs(4 * 3600)),
            cancel_grace: Duration::from_secs(5),
            raw_frames: true,
            terminal_sandbox: TerminalSandbox::default(),
            elicitation: ElicitationModes::default(),
        }
    }
}

/// One way to sign in that the agent offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthMethodInfo {
    /// Method id.
    pub id: String,
    /// Label.
    pub name: String,
    /// Description.
    pub description: Option<String>,
    /// Whether the client runs it in a terminal (`type: terminal`) instead of
    /// passing it to `authenticate`.
    #[serde(default)]
    pub terminal: bool,
    /// For a terminal method: the arguments to append to the agent's invocation.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// For a terminal method: the variables to set on that invocation.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
}

/// What the agent said about itself in `initialize`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInfo {
    /// Implementation name.
    pub name: Option<String>,
    /// Display title.
    pub title: Option<String>,
    /// Implementation version.
    pub version: Option<String>,
    /// The protocol version it answered with.
    pub protocol_version: u16,
    /// Whether it supports `session/load`.
    pub load_session: bool,
    /// Whether it supports `session/resume` (reattach without a replay).
    #[serde(default)]
    pub resume_session: bool,
    /// Whether it takes additional directories with its session requests.
    #[serde(default)]
    pub additional_directories: bool,
    /// Whether it supports `session/close`.
    #[serde(default)]
    pub close_session: bool,
    /// Whether it supports `session/delete`.
    #[serde(default)]
    pub delete_session: bool,
    /// Whether prompts may carry images.
    pub prompt_image: bool,
    /// Whether prompts may carry audio.
    pub prompt_audio: bool,
    /// Whether prompts may carry embedded resources.
    pub prompt_embedded_context: bool,
    /// Whether it connects to HTTP MCP servers.
    pub mcp_http: bool,
    /// Whether it connects to SSE MCP servers.
    pub mcp_sse: bool,
    /// Sign-in methods.
    pub auth_methods: Vec<AuthMethodInfo>,
    /// Whether it supports `logout`.
    #[serde(default)]
    pub logout: bool,
}

impl From<&InitializeResponse> for AgentInfo {
    fn from(r: &InitializeResponse) -> Self {
        let caps = &r.agent_capabilities;
        let protocol_version = serde_json::to_value(r.protocol_version)
            .ok()
            .and_then(|v| v.as_u64())
            .and_then(|v| u16::try_from(v).ok())
            .unwrap_or(0);
        Self {
            name: r.agent_info.as_ref().map(|i| i.name.clone()),
            title: r.agent_info.as_ref().and_then(|i| i.title.clone()),
            version: r.agent_info.as_ref().map(|i| i.version.clone()),
            protocol_version,
            load_session: caps.load_session,
            resume_session: caps.session_capabilities.resume.is_some(),
            close_session: caps.session_capabilities.close.is_some(),
            additional_directories: caps.session_capabilities.additional_directories.is_some(),
            delete_session: caps.session_capabilities.delete.is_some(),
            prompt_image: caps.prompt_capabilities.image,
            prompt_audio: caps.prompt_capabilities.audio,
            prompt_embedded_context: caps.prompt_capabilities.embedded_context,
            mcp_http: caps.mcp_capabilities.http,
            mcp_sse: caps.mcp_capabilities.sse,
            logout: caps.auth.logout.is_some(),
            auth_methods: r
                .auth_methods
                .iter()
                .map(|m| {
                    let (args, env) = match m {
                        AuthMethod::Terminal(t) => (
                            t.args.clone(),
                            t.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
                        ),
                        _ => (Vec::new(), BTreeMap::new()),
                    };
                    AuthMethodInfo {
                        id: m.id().0.to_string(),
                        name: m.name().to_string(),
                        description: m.description().map(str::to_string),
                        terminal: matches!(m, AuthMethod::Terminal(_)),
                        args,
                        env,
                    }
                })
                .collect(),
        }
    }
}

/// A native ACP session as the agent opened (or loaded) it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NativeSession {
    /// The agent's session id (stored by Hecate to load it later).
    pub id: String,
    /// The current mode, when the agent has modes.
    pub current_mode_id: Option<String>,
    /// The modes offered, as `(id, name)`.
    pub available_modes: Vec<(String, String)>,
    /// Config options (model, ...) as the agent listed them.
    pub config_options: Value,
}

impl NativeSession {
    pub(super) fn new(
        id: String,
        modes: Option<&SessionModeState>,
        config: Option<&Vec<SessionConfigOption>>,
    ) -> Self {
        Self {
            id,
            current_mode_id: modes.map(|m| m.current_mode_id.0.to_string()),
            available_modes: modes
                .map(|m| {
                    m.available_modes
                        .iter()
                        .map(|x| (x.id.0.to_string(), x.name.clone()))
                        .collect()
                })
                .unwrap_or_default(),
            config_options: config
                .and_then(|c| serde_json::to_value(c).ok())
                .unwrap_or(Value::Null),
        }
    }
}

/// A value for a session config option: a value id (select) or a boolean.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OptionValue {
    /// A value id of a select option.
    Id(String),
    /// The value of a boolean option.
    Bool(bool),
}

/// A supervised agent process with a completed `initialize`.
pub struct AgentConnection {
    pub(super) cx: ConnectionTo<Agent>,
    pub(super) shared: Arc<ConnectionState>,
    pub(super) process: Arc<AgentProcess>,
    pub(super) options: AcpOptions,
    info: AgentInfo,
    /// Whether an `authenticate` succeeded on this process (see `signin.rs`).
    pub(super) signed_in: AtomicBool,
    stop: CancellationToken,
    driver: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for AgentConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentConnection")
            .field("pid", &self.process.pid())
            .field("workspace", &self.shared.workspace)
            .field("info", &self.info)
            .finish_non_exhaustive()
    }
}

impl AgentConnection {
    /// Spawns the agent in `workspace` (which must exist) with exactly `env` and
    /// completes `initialize` (protocol 1, fs read/write and terminal offered,
    /// elicitation in the modes `options.elicitation` names, and terminal sign-in
    /// methods taken: Hecate can re-run the agent's invocation in a terminal).
    pub async fn start(
        spec: &LaunchSpec,
        workspace: &Path,
        env: Vec<(String, String)>,
        options: AcpOptions,
    ) -> Result<AgentConnection, AcpError> {
        let workspace = std::fs::canonicalize(workspace)
            .ok()
            .filter(|w| w.is_dir())
            .ok_or_else(|| {
                AcpError::InvalidRequest(format!(
                    "workspace {} is not an existing directory",
                    workspace.display()
                ))
            })?;
        let (process, pipes) = spawn_agent(&spec.program, &spec.args, &workspace, &env)?;
        let process = Arc::new(process);
        let shared = Arc::new(ConnectionState::new(
            workspace,
            env,
            options.raw_frames,
            options.terminal_sandbox.clone(),
        ));
        let diag_target = shared.clone();
        let diag: DiagnosticSink = Arc::new(move |v| diag_target.diagnostic(v));
        let transport = child_transport(pipes.stdin, pipes.stdout, process.stdin_closer(), diag);
        let stop = CancellationToken::new();
        let (ready_tx, ready_rx) = oneshot::channel();
        let driver = tokio::spawn({
            let shared = shared.clone();
            let stop = stop.clone();
            async move {
                if let Err(e) = run_connection(shared, transport, ready_tx, stop).await {
                    tracing::debug!(code = ?e.code, error = %e.message, "ACP connection ended with an error");
                }
            }
        });
        let ready = tokio::select! {
            biased;
            cx = ready_rx => cx.map_err(|_| AcpError::Initialize("the connection ended before it started".into())),
            _ = process.wait_exit() => Err(exited_error(&process).await),
        };
        let cx = match ready {
            Ok(cx) => cx,
            Err(e) => {
                stop.cancel();
                driver.abort();
                return Err(e);
            }
        };
        let mut conn = AgentConnection {
            cx,
            shared,
            process,
            options,
            info: AgentInfo::default(),
            signed_in: AtomicBool::new(false),
            stop,
            driver,
        };
        let init = InitializeRequest::new(ProtocolVersion::V1)
            .client_capabilities(
                ClientCapabilities::new()
                    .fs(FileSystemCapabilities::new()
                        .read_text_file(true)
                        .write_text_file(true))
                    .terminal(true)
                    .auth(AuthCapabilities::new().terminal(true))
                    .elicitation(elicitation_capabilities(conn.options.elicitation)),
            )
            .client_info(Implementation::new("hecate", env!("CARGO_PKG_VERSION")).title("Hecate"));
        let limit = conn.options.initialize_timeout;
        let response = conn.request(Stage::Initialize, init, limit).await?;
        conn.info = AgentInfo::from(&response);
        if conn.info.protocol_version != 1 {
            return Err(AcpError::Initialize(format!(
                "the agent answered protocol version {}, Hecate speaks 1",
                conn.info.protocol_version
            )));
        }
        Ok(conn)
    }

    /// What the agent reported in `initialize`.
    pub fn agent_info(&self) -> &AgentInfo {
        &self.info
    }

    /// The elicitation modes advertised to the agent when it started.
    pub fn elicitation(&self) -> ElicitationModes {
        self.options.elicitation
    }

    /// Sets the additional directories (absolute, checked by the caller) that
    /// later `session/new`, `session/load` and `session/resume` requests carry,
    /// and that the agent's fs and terminal requests may reach.
    pub fn set_additional_directories(&self, dirs: Vec<std::path::PathBuf>) {
        self.shared.set_additional_directories(dirs);
    }

    /// The additional directories a session request carries: none unless the
    /// agent advertised `sessionCapabilities.additionalDirectories`.
    pub(super) fn additional_directories(&self) -> Vec<std::path::PathBuf> {
        let roots = self.shared.additional_directories();
        if !self.info.additional_directories && !roots.is_empty() {
            tracing::info!(
                count = roots.len(),
                "the agent does not take additional directories; not passed on"
            );
        }
        if self.info.additional_directories {
            roots
        } else {
            Vec::new()
        }
    }

    /// The agent's process id (also its process group id).
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// Whether the agent process and its connection are still up.
    pub fn is_alive(&self) -> bool {
        self.process.is_alive() && !self.driver.is_finished()
    }

    /// The last lines the agent wrote to stderr.
    pub fn stderr_tail(&self) -> String {
        self.process.stderr_tail().text()
    }

    /// Sends one request, bounded by `limit`, mapping failures: an agent that dies
    /// meanwhile gives [`AcpError::Exited`], a JSON-RPC error is classified
    /// (auth-required or protocol).
    pub(super) async fn request<Req>(
        &self,
        stage: Stage,
        req: Req,
        limit: Duration,
    ) -> Result<Req::Response, AcpError>
    where
        Req: JsonRpcRequest,
        Req::Response: Send,
    {
        let response = self.cx.send_request(req).block_task();
        tokio::select! {
            biased;
            r = tokio::time::timeout(limit, response) => match r {
                Ok(Ok(v)) => Ok(v),
                Ok(Err(e)) => Err(self.failure(stage, e).await),
                Err(_) => Err(AcpError::Timeout { stage }),
            },
            _ = self.process.wait_exit() => Err(exited_error(&self.process).await),
        }
    }

    /// Classifies a failed request: a local connection failure (the agent closed
    /// its pipes or died) becomes `Exited`, an agent answer is classified.
    pub(super) async fn failure(&self, stage: Stage, e: RpcError) -> AcpError {
        let local = is_incoming_transport_closed(&e) || is_connection_terminated(&e);
        if local || !self.process.is_alive() {
            let _ = self.process.wait_exit_for(Duration::from_secs(1)).await;
            return exited_error(&self.process).await;
        }
        classify_rpc_error(stage, e.code.value(), &e.message, e.data.as_ref())
    }

    /// Opens a new native session in `cwd` with the given MCP servers.
    pub async fn new_session(
        &self,
        cwd: &Path,
        mcp_servers: &[McpServerConfig],
    ) -> Result<NativeSession, AcpError> {
        let req = NewSessionRequest::new(cwd)
            .mcp_servers(mcp_servers.iter().map(mcp_server).collect())
            .additional_directories(self.additional_directories());
        let r = self
            .request(Stage::NewSession, req, self.options.new_session_timeout)
            .await?;
        Ok(NativeSession::new(
            r.session_id.0.to_string(),
            r.modes.as_ref(),
            r.config_options.as_ref(),
        ))
    }

    /// Loads a native session saved earlier; the history the agent replays goes to
    /// `events` as runtime events. Fails with `Unsupported` when the agent does not
    /// advertise `session/load`.
    pub async fn load_session(
        &self,
        native_id: &str,
        cwd: &Path,
        mcp_servers: &[McpServerConfig],
        events: UnboundedSender<RuntimeEvent>,
    ) -> Result<NativeSession, AcpError> {
        if !self.info.load_session {
            return Err(AcpError::Unsupported("session/load".into()));
        }
        let _route = RouteGuard::set(
            &self.shared,
            native_id,
            Route {
                events,
                turn: None,
                activity: Arc::new(Liveness::new()),
            },
        );
        let req = LoadSessionRequest::new(native_id.to_string(), cwd)
            .mcp_servers(mcp_servers.iter().map(mcp_server).collect())
            .additional_directories(self.additional_directories());
        let r = self
            .request(Stage::LoadSession, req, self.options.load_session_timeout)
            .await?;
        Ok(NativeSession::new(
            native_id.to_string(),
            r.modes.as_ref(),
            r.config_options.as_ref(),
        ))
    }

    /// Switches a native session's mode (e.g. `default` for claude-agent-acp 0.101).
    pub async fn set_mode(&self, native_id: &str, mode_id: &str) -> Result<(), AcpError> {
        let req = SetSessionModeRequest::new(native_id.to_string(), mode_id.to_string());
        self.request(Stage::SetMode, req, self.options.request_timeout)
            .await
            .map(|_| ())
    }

    /// Sets config option `id` of a native session to `value` (a value id, or a
    /// boolean); answers the agent's full list of options afterwards, as JSON.
    pub async fn set_config_option(
        &self,
        native_id: &str,
        id: &str,
        value: &OptionValue,
    ) -> Result<Value, AcpError> {
        let value = match value {
            OptionValue::Id(v) => SessionConfigOptionValue::value_id(v.clone()),
            OptionValue::Bool(b) => SessionConfigOptionValue::boolean(*b),
        };
        let req = SetSessionConfigOptionRequest::new(native_id.to_string(), id.to_string(), value);
        let r = self
            .request(Stage::SetConfigOption, req, self.options.request_timeout)
            .await?;
        Ok(serde_json::to_value(&r.config_options).unwrap_or(Value::Null))
    }

    /// Ends the agent: terminals killed, connection closed, stdin closed, then the
    /// whole process group terminated (SIGTERM, then SIGKILL).
    pub async fn shutdown(&self) {
        self.shared.terminals.kill_all();
        self.stop.cancel();
        self.process.terminate_group().await;
    }
}

impl Drop for AgentConnection {
    fn drop(&mut self) {
        self.shared.terminals.kill_all();
        self.stop.cancel();
        self.driver.abort();
        // Dropping `process` SIGKILLs the agent's whole process group.
    }
}

/// The `elicitation` client capability for `modes` (absent when none).
fn elicitation_capabilities(modes: ElicitationModes) -> Option<ElicitationCapabilities> {
    modes.any().then(|| {
        ElicitationCapabilities::new()
            .form(modes.form.then(ElicitationFormCapabilities::new))
            .url(modes.url.then(ElicitationUrlCapabilities::new))
    })
}

/// Routes a native session's traffic while alive; clears the route on drop (late
/// updates are then dropped quietly and pending permission asks cancelled).
pub(super) struct RouteGuard {
    shared: Arc<ConnectionState>,
    native_id: String,
}

impl RouteGuard {
    pub(super) fn set(shared: &Arc<ConnectionState>, native_id: &str, route: Route) -> Self {
        shared.set_route(native_id, route);
        Self {
            shared: shared.clone(),
            native_id: native_id.to_string(),
        }
    }
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.shared.clear_route(&self.native_id);
    }
}
