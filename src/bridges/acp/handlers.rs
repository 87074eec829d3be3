//! The ACP request handlers. Handlers never wait on the client inside the dispatch
//! loop: a prompt turn runs in `cx.spawn` with its responder, so `session/cancel`
//! and permission answers keep flowing during the turn.

use super::convert::{mcp_server, nothing_configured, prompt_content, to_rpc};
use super::state::{Shared, Thread};
use super::{AcpBridgeError, permission, render};
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::event::EngineEvent;
use crate::domain::ids::SessionId;
use crate::domain::run::RunStatus;
use crate::domain::session::{RuntimeKind, Session};
use crate::engine::bus::Received;
use crate::engine::targets::{Target, TargetRef};
use crate::engine::{CreateSession, SendMessage};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest, AuthenticateResponse,
    CancelNotification, Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    SessionCapabilities, SessionConfigOption, SessionConfigSelectOption, SessionInfo,
    SessionListCapabilities, SessionMode, SessionModeState, SessionNotification,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent, Client, ConnectTo, Error, ErrorCode};
use std::sync::Arc;

/// The config option id through which editors pick the target.
const TARGET_OPTION: &str = "target";

/// Serves the agent role over `transport` until the client disconnects.
pub async fn connect(
    shared: Arc<Shared>,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), AcpBridgeError> {
    let (s1, s2, s3, s4, s5, s6, s7, s8, s9) = (
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared,
    );
    Agent
        .v1()
        .name("hecate")
        .on_receive_request(
            async move |r: InitializeRequest, resp, _cx| initialize(&s1, r, resp),
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |_r: AuthenticateRequest, resp: Responder<AuthenticateResponse>, cx| {
                let shared = s2.clone();
                cx.spawn(async move {
                    let answer = if shared.targets().await.is_empty() {
                        resp.respond_with_error(nothing_configured())
                    } else {
                        resp.respond(AuthenticateResponse::new())
                    };
                    log_send(answer);
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: NewSessionRequest, resp, cx| {
                let shared = s3.clone();
                cx.spawn(async move {
                    log_send(new_session(&shared, r, resp).await);
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: LoadSessionRequest, resp, cx: ConnectionTo<Client>| {
                let shared = s4.clone();
                let conn = cx.clone();
                cx.spawn(async move {
                    log_send(load_session(&shared, r, resp, &conn).await);
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: ListSessionsRequest, resp, cx| {
                let shared = s5.clone();
                cx.spawn(async move {
                    log_send(list_sessions(&shared, r, resp).await);
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: SetSessionModeRequest, resp: Responder<SetSessionModeResponse>, cx| {
                let shared = s6.clone();
                cx.spawn(async move {
                    let answer = match switch_target(&shared, &r.session_id.0, &r.mode_id.0).await {
                        Ok(_) => resp.respond(SetSessionModeResponse::new()),
                        Err(e) => resp.respond_with_error(e),
                    };
                    log_send(answer);
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: SetSessionConfigOptionRequest,
                        resp: Responder<SetSessionConfigOptionResponse>,
                        cx| {
                let shared = s7.clone();
                cx.spawn(async move {
                    log_send(set_config_option(&shared, r, resp).await);
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |r: PromptRequest, resp, cx: ConnectionTo<Client>| {
                let shared = s8.clone();
                let conn = cx.clone();
                cx.spawn(async move {
                    log_send(prompt(&shared, r, resp, conn).await);
                    Ok(())
                })
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx| {
                let shared = s9.clone();
                tokio::spawn(async move {
                    let sid = SessionId::from(n.session_id.0.to_string());
                    if let Err(e) = shared.engine.cancel(&shared.config.namespace, &sid).await {
                        tracing::debug!(error = %e, "cancel ignored");
                    }
                });
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(transport)
        .await
        .map_err(|e| AcpBridgeError::Connection(e.to_string()))
}

fn log_send(r: Result<(), Error>) {
    if let Err(e) = r {
        tracing::warn!(error = ?e, "could not answer the client");
    }
}

fn initialize(
    shared: &Shared,
    r: InitializeRequest,
    resp: Responder<InitializeResponse>,
) -> Result<(), Error> {
    let caps = &r.client_capabilities;
    shared.set_client_caps(
        caps.fs.read_text_file,
        caps.fs.write_text_file,
        caps.terminal,
    );
    let agent_caps = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(
            PromptCapabilities::new()
                .image(false)
                .embedded_context(true),
        )
        .mcp_capabilities(McpCapabilities::new().http(true))
        .session_capabilities(SessionCapabilities::new().list(SessionListCapabilities::new()));
    let setup = AuthMethodAgent::new("hecate-setup", "Set up Hecate").description(
        "Hecate needs a model provider or an installed coding agent. Run `hecate doctor` \
         to see the config file path and what is missing."
            .to_string(),
    );
    resp.respond(
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(agent_caps)
            .auth_methods(vec![AuthMethod::Agent(setup)])
            .agent_info(Implementation::new("hecate", env!("CARGO_PKG_VERSION")).title("Hecate")),
    )
}

fn modes(targets: &[Target], current: &TargetRef) -> SessionModeState {
    let mut available: Vec<SessionMode> = targets
        .iter()
        .map(|t| SessionMode::new(t.id.clone(), t.name.clone()).description(t.description.clone()))
        .collect();
    let current_id = current.id();
    if !targets.iter().any(|t| t.id == current_id) {
        available.push(SessionMode::new(current_id.clone(), current_id.clone()));
    }
    SessionModeState::new(current_id, available)
}

fn config_options(targets: &[Target], current: &TargetRef) -> Vec<SessionConfigOption> {
    let mut choices: Vec<SessionConfigSelectOption> = targets
        .iter()
        .map(|t| SessionConfigSelectOption::new(t.id.clone(), t.name.clone()))
        .collect();
    if !targets.iter().any(|t| t.id == current.id()) {
        choices.push(SessionConfigSelectOption::new(current.id(), current.id()));
    }
    vec![SessionConfigOption::select(
        TARGET_OPTION,
        "Answered by",
        current.id(),
        choices,
    )]
}

fn target_of(session: &Session) -> Option<TargetRef> {
    match session.runtime_kind {
        RuntimeKind::ExternalAgent => Some(TargetRef::Agent {
            adapter_id: session.adapter_id.clone()?,
        }),
        _ => Some(TargetRef::Model {
            provider: session.provider.clone()?,
            model: session.model.clone()?,
        }),
    }
}

async fn new_session(
    shared: &Shared,
    r: NewSessionRequest,
    resp: Responder<NewSessionResponse>,
) -> Result<(), Error> {
    let Some(target) = shared.default_target().await else {
        return resp.respond_with_error(nothing_configured());
    };
    let cwd = r.cwd.display().to_string();
    let mcp_servers: Vec<_> = r.mcp_servers.iter().filter_map(mcp_server).collect();
    let create = match &target {
        TargetRef::Model { provider, model } => CreateSession {
            title: Some("Editor thread".into()),
            runtime_kind: Some(RuntimeKind::Model),
            provider: Some(provider.clone()),
            model: Some(model.clone()),
            workspace: Some(cwd.clone()).filter(|c| std::path::Path::new(c).is_dir()),
            ..Default::default()
        },
        TargetRef::Agent { adapter_id } => CreateSession {
            title: Some("Editor thread".into()),
            runtime_kind: Some(RuntimeKind::ExternalAgent),
            adapter_id: Some(adapter_id.clone()),
            workspace: Some(cwd.clone()),
            ..Default::default()
        },
    };
    let session = match shared
        .engine
        .create_session(&shared.config.namespace, create)
        .await
    {
        Ok(s) => s,
        Err(e) => return resp.respond_with_error(to_rpc(&e)),
    };
    shared.set_thread(
        session.id.clone(),
        Thread {
            target: target.clone(),
            cwd,
            mcp_servers,
        },
    );
    let targets = shared.targets().await;
    resp.respond(
        NewSessionResponse::new(session.id.to_string())
            .modes(modes(&targets, &target))
            .config_options(config_options(&targets, &target)),
    )
}

async fn load_session(
    shared: &Shared,
    r: LoadSessionRequest,
    resp: Responder<LoadSessionResponse>,
    cx: &ConnectionTo<Client>,
) -> Result<(), Error> {
    let sid = SessionId::from(r.session_id.0.to_string());
    let transcript = match shared
        .engine
        .transcript(&shared.config.namespace, &sid)
        .await
    {
        Ok(t) => t,
        Err(e) => return resp.respond_with_error(to_rpc(&e)),
    };
    for u in render::transcript(&transcript.messages) {
        cx.send_notification(SessionNotification::new(r.session_id.clone(), u))?;
    }
    let target = match target_of(&transcript.session).or(shared.default_target().await) {
        Some(t) => t,
        None => return resp.respond_with_error(nothing_configured()),
    };
    shared.set_thread(
        sid,
        Thread {
            target: target.clone(),
            cwd: r.cwd.display().to_string(),
            mcp_servers: r.mcp_servers.iter().filter_map(mcp_server).collect(),
        },
    );
    let targets = shared.targets().await;
    resp.respond(
        LoadSessionResponse::new()
            .modes(modes(&targets, &target))
            .config_options(config_options(&targets, &target)),
    )
}

async fn list_sessions(
    shared: &Shared,
    r: ListSessionsRequest,
    resp: Responder<ListSessionsResponse>,
) -> Result<(), Error> {
    let list = match shared
        .engine
        .list_sessions(&shared.config.namespace, 500)
        .await
    {
        Ok(l) => l,
        Err(e) => return resp.respond_with_error(to_rpc(&e)),
    };
    let wanted = r.cwd.as_ref().map(|c| c.display().to_string());
    let sessions = list
        .into_iter()
        .filter(|s| wanted.is_none() || s.session.workspace == wanted)
        .map(|s| {
            let cwd = s.session.workspace.clone().unwrap_or_else(|| "/".into());
            let mut info = SessionInfo::new(s.session.id.to_string(), cwd);
            info.title = Some(s.session.title.clone());
            info.updated_at = Some(s.session.updated_at.clone());
            info
        })
        .collect();
    resp.respond(ListSessionsResponse::new(sessions))
}

/// Switches a thread's target, checking it is offered and permitted.
async fn switch_target(
    shared: &Shared,
    session_id: &str,
    target: &str,
) -> Result<TargetRef, Error> {
    let sid = SessionId::from(session_id);
    let parsed = TargetRef::parse(target).map_err(|e| to_rpc(&e))?;
    let session = shared
        .engine
        .get_session(&shared.config.namespace, &sid)
        .await
        .map_err(|e| to_rpc(&e))?;
    if session.runtime_kind == RuntimeKind::ExternalAgent
        && matches!(parsed, TargetRef::Model { .. })
    {
        return Err(to_rpc(&HecateError::new(
            ErrorType::RuntimeMismatch,
            "an external-agent thread cannot switch back to a model; start a new thread",
        )));
    }
    let offered = shared.targets().await;
    if !offered.iter().any(|t| t.id == parsed.id()) {
        return Err(Error::new(
            ErrorCode::INVALID_PARAMS,
            format!("target {target} is not available here"),
        ));
    }
    if !shared.set_target(&sid, parsed.clone()) {
        shared.set_thread(
            sid,
            Thread {
                target: parsed.clone(),
                cwd: session.workspace.unwrap_or_else(|| "/".into()),
                mcp_servers: Vec::new(),
            },
        );
    }
    Ok(parsed)
}

async fn set_config_option(
    shared: &Shared,
    r: SetSessionConfigOptionRequest,
    resp: Responder<SetSessionConfigOptionResponse>,
) -> Result<(), Error> {
    if r.config_id.0.as_ref() != TARGET_OPTION {
        return resp.respond_with_error(Error::new(
            ErrorCode::INVALID_PARAMS,
            format!("unknown config option {}", r.config_id.0),
        ));
    }
    let Some(value) = r.value.as_value_id() else {
        return resp.respond_with_error(Error::new(
            ErrorCode::INVALID_PARAMS,
            "target needs a value id",
        ));
    };
    match switch_target(shared, &r.session_id.0, &value.0).await {
        Ok(t) => {
            let targets = shared.targets().await;
            resp.respond(SetSessionConfigOptionResponse::new(config_options(
                &targets, &t,
            )))
        }
        Err(e) => resp.respond_with_error(e),
    }
}

async fn prompt(
    shared: &Arc<Shared>,
    r: PromptRequest,
    resp: Responder<PromptResponse>,
    cx: ConnectionTo<Client>,
) -> Result<(), Error> {
    let ns = shared.config.namespace.clone();
    let sid = SessionId::from(r.session_id.0.to_string());
    let thread = match shared.thread(&sid) {
        Some(t) => t,
        None => match shared.engine.get_session(&ns, &sid).await {
            Ok(s) => {
                let Some(target) = target_of(&s) else {
                    return resp.respond_with_error(nothing_configured());
                };
                let t = Thread {
                    target,
                    cwd: s.workspace.clone().unwrap_or_else(|| "/".into()),
                    mcp_servers: Vec::new(),
                };
                shared.set_thread(sid.clone(), t.clone());
                t
            }
            Err(e) => return resp.respond_with_error(to_rpc(&e)),
        },
    };
    let (content, blocks) = prompt_content(&r.prompt);
    let mut send = SendMessage {
        content,
        blocks,
        approval_mode: Some(crate::domain::approval::ApprovalMode::Prompt),
        ..Default::default()
    };
    match &thread.target {
        TargetRef::Model { provider, model } => {
            send.runtime_kind = Some(RuntimeKind::Model);
            send.provider = Some(provider.clone());
            send.model = Some(model.clone());
        }
        TargetRef::Agent { adapter_id } => {
            send.runtime_kind = Some(RuntimeKind::ExternalAgent);
            send.adapter_id = Some(adapter_id.clone());
            send.mcp_servers = thread.mcp_servers.clone();
            if std::path::Path::new(&thread.cwd).is_dir() {
                send.workspace = Some(thread.cwd.clone());
            }
        }
    }
    let mut turn = match shared.engine.send_message(&ns, &sid, send).await {
        Ok(t) => t,
        Err(e) => return resp.respond_with_error(to_rpc(&e)),
    };
    while let Some(received) = turn.events.recv().await {
        match received {
            Received::Event(EngineEvent::Runtime { update, .. }) => {
                if let Some(u) = render::runtime_event(&update) {
                    cx.send_notification(SessionNotification::new(r.session_id.clone(), u))?;
                }
            }
            Received::Event(EngineEvent::ApprovalRequested {
                approval,
                tool_call_id,
                ..
            }) => permission::forward(shared.clone(), cx.clone(), *approval, tool_call_id),
            Received::Event(EngineEvent::TurnFinished { .. }) => break,
            Received::Lagged(n) => tracing::warn!(n, "editor updates dropped under load"),
            Received::Event(_) => {}
        }
    }
    let result = turn.wait().await;
    match (result.run.status, result.error) {
        (RunStatus::Cancelled, _) => resp.respond(PromptResponse::new(StopReason::Cancelled)),
        (RunStatus::Completed, _) => resp.respond(PromptResponse::new(StopReason::EndTurn)),
        (_, Some(e)) => resp.respond_with_error(to_rpc(&e)),
        _ => resp.respond_with_error(Error::internal_error()),
    }
}
