//! Session requests: `session/new`, `session/load` (the stored transcript replayed
//! as updates), `session/list`, and switching a thread's target through
//! `session/set_mode` or the `target` config option.

use super::convert::{mcp_server, nothing_configured, to_rpc};
use super::render;
use super::state::{Shared, Thread};
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::ids::SessionId;
use crate::domain::session::{RuntimeKind, Session};
use crate::engine::CreateSession;
use crate::engine::targets::{Target, TargetRef};
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, CurrentModeUpdate, ListSessionsRequest, ListSessionsResponse,
    LoadSessionRequest, LoadSessionResponse, NewSessionRequest, NewSessionResponse,
    SessionConfigOption, SessionConfigSelectOption, SessionInfo, SessionMode, SessionModeState,
    SessionNotification, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use std::path::Path;

/// The config option id through which editors pick the target.
pub const TARGET_OPTION: &str = "target";

/// Sessions listed at most.
const LIST_LIMIT: usize = 500;

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

/// The target a stored session was last answered by.
pub fn target_of(session: &Session) -> Option<TargetRef> {
    match session.runtime_kind {
        RuntimeKind::ExternalAgent => Some(TargetRef::External {
            adapter_id: session.adapter_id.clone()?,
        }),
        RuntimeKind::Agent => Some(TargetRef::Hecate {
            model: Some((session.provider.clone()?, session.model.clone()?)),
        }),
        RuntimeKind::Model => Some(TargetRef::Model {
            provider: session.provider.clone()?,
            model: session.model.clone()?,
        }),
    }
}

/// A directory as the engine stores workspaces (canonical), else as given.
fn canonical(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}

/// `session/new`: a Hecate session answered by the default target.
pub async fn new_session(
    shared: &Shared,
    r: NewSessionRequest,
    resp: Responder<NewSessionResponse>,
) -> Result<(), Error> {
    let Some(target) = shared.default_target().await else {
        return resp.respond_with_error(nothing_configured());
    };
    let cwd = r.cwd.display().to_string();
    let mcp_servers: Vec<_> = r.mcp_servers.iter().filter_map(mcp_server).collect();
    let base = CreateSession {
        title: Some("Editor thread".into()),
        ..Default::default()
    };
    let create = match &target {
        TargetRef::Model { provider, model } => CreateSession {
            runtime_kind: Some(RuntimeKind::Model),
            provider: Some(provider.clone()),
            model: Some(model.clone()),
            workspace: Some(cwd.clone()).filter(|c| Path::new(c).is_dir()),
            ..base
        },
        TargetRef::External { adapter_id } => CreateSession {
            runtime_kind: Some(RuntimeKind::ExternalAgent),
            adapter_id: Some(adapter_id.clone()),
            workspace: Some(cwd.clone()),
            ..base
        },
        TargetRef::Hecate { model } => CreateSession {
            runtime_kind: Some(RuntimeKind::Agent),
            provider: model.as_ref().map(|m| m.0.clone()),
            model: model.as_ref().map(|m| m.1.clone()),
            workspace: Some(cwd.clone()),
            ..base
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

/// `session/load`: replays the stored transcript as updates, then answers with the
/// thread's target; the next prompt continues the same session.
pub async fn load_session(
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
    let target = match target_of(&transcript.session).or(shared.default_target().await) {
        Some(t) => t,
        None => return resp.respond_with_error(nothing_configured()),
    };
    for u in render::transcript(&transcript.messages) {
        cx.send_notification(SessionNotification::new(r.session_id.clone(), u))?;
    }
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

/// `session/list`: the namespace's sessions, newest first, optionally those whose
/// workspace is `cwd`.
pub async fn list_sessions(
    shared: &Shared,
    r: ListSessionsRequest,
    resp: Responder<ListSessionsResponse>,
) -> Result<(), Error> {
    let list = match shared
        .engine
        .list_sessions(&shared.config.namespace, LIST_LIMIT)
        .await
    {
        Ok(l) => l,
        Err(e) => return resp.respond_with_error(to_rpc(&e)),
    };
    let wanted = r.cwd.as_deref().map(canonical);
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
    let offered = shared.targets().await;
    if !offered.iter().any(|t| t.id == parsed.id()) {
        let why = match &parsed {
            TargetRef::Hecate { model: None } => {
                ": no default model is set ([tasks] or [gateway] default_model)".to_string()
            }
            TargetRef::Hecate {
                model: Some((p, m)),
            }
            | TargetRef::Model {
                provider: p,
                model: m,
            } => {
                format!(": no configured provider offers the model {p}/{m}")
            }
            TargetRef::External { adapter_id } => {
                format!(": no installed agent has the id {adapter_id}")
            }
        };
        return Err(Error::new(
            ErrorCode::INVALID_PARAMS,
            format!("target {target} is not available here{why}"),
        )
        .data(serde_json::json!({
            "type": "invalid_request",
            "target": target,
            "available": offered.iter().map(|t| &t.id).collect::<Vec<_>>(),
        })));
    }
    let cwd = shared
        .thread(&sid)
        .map(|t| t.cwd)
        .filter(|c| !c.is_empty())
        .or(session.workspace.clone())
        .unwrap_or_default();
    if matches!(parsed, TargetRef::Hecate { .. }) && !Path::new(&cwd).is_dir() {
        let why = if cwd.is_empty() {
            "this thread has none".to_string()
        } else {
            format!("{cwd:?} is not an existing directory")
        };
        return Err(to_rpc(
            &HecateError::new(
                ErrorType::WorkspaceRequired,
                format!("Hecate's agent works in the thread's directory, and {why}"),
            )
            .with_detail("workspace", cwd.as_str())
            .with_operator_action(
                "Open a folder (or project) in the editor and start a new thread.",
            ),
        ));
    }
    if !shared.set_target(&sid, parsed.clone()) {
        shared.set_thread(
            sid,
            Thread {
                target: parsed.clone(),
                cwd: session.workspace.unwrap_or_default(),
                mcp_servers: Vec::new(),
            },
        );
    }
    Ok(parsed)
}

/// `session/set_mode`: switches the target and tells the client (before the
/// answer, so the order is fixed) that the config option changed with it.
pub async fn set_mode(
    shared: &Shared,
    r: SetSessionModeRequest,
    resp: Responder<SetSessionModeResponse>,
    cx: &ConnectionTo<Client>,
) -> Result<(), Error> {
    match switch_target(shared, &r.session_id.0, &r.mode_id.0).await {
        Ok(t) => {
            let options = config_options(&shared.targets().await, &t);
            cx.send_notification(SessionNotification::new(
                r.session_id,
                SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(options)),
            ))?;
            resp.respond(SetSessionModeResponse::new())
        }
        Err(e) => resp.respond_with_error(e),
    }
}

/// `session/set_config_option` for `target`: switches and tells the client
/// (before the answer) that the mode changed with it.
pub async fn set_config_option(
    shared: &Shared,
    r: SetSessionConfigOptionRequest,
    resp: Responder<SetSessionConfigOptionResponse>,
    cx: &ConnectionTo<Client>,
) -> Result<(), Error> {
    if r.config_id.0.as_ref() != TARGET_OPTION {
        return resp.respond_with_error(Error::new(
            ErrorCode::INVALID_PARAMS,
            format!(
                "unknown config option {}; the only option is {TARGET_OPTION}",
                r.config_id.0
            ),
        ));
    }
    let Some(value) = r.value.as_value_id() else {
        return resp.respond_with_error(Error::new(
            ErrorCode::INVALID_PARAMS,
            "target needs a value id (model:PROVIDER/MODEL, hecate:PROVIDER/MODEL, hecate \
             or agent:ADAPTER_ID)",
        ));
    };
    match switch_target(shared, &r.session_id.0, &value.0).await {
        Ok(t) => {
            let targets = shared.targets().await;
            cx.send_notification(SessionNotification::new(
                r.session_id,
                SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(t.id())),
            ))?;
            resp.respond(SetSessionConfigOptionResponse::new(config_options(
                &targets, &t,
            )))
        }
        Err(e) => resp.respond_with_error(e),
    }
}
