//! Changing what answers a thread and how: `session/set_mode` (an agent's mode,
//! or a target offered as a mode), `session/set_config_option` (`target`, a
//! model target's or Hecate's agent's `model` and `thought_level`, Hecate's
//! agent's `tools`, or any option an external agent advertises) and
//! `session/set_model` from older clients (the `model` option by another name).
//!
//! Every choice but `target` and `model` (which are the session's target, stored
//! with its next turn) is stored by the engine before it takes effect: a store
//! failure is the editor's error and changes nothing; a stored choice is read
//! back when the thread is loaded or resumed, in this process or another.

use super::options::{
    MODEL_OPTION, Offer, TARGET_OPTION, THOUGHT_DEFAULT, THOUGHT_OPTION, TOOLS_OPTION,
    agent_model_option, category_of, offer, thought_option, tools_option,
};
use crate::bridges::acp::convert::{mcp_server, to_rpc};
use crate::bridges::acp::state::{Shared, Thread};
use crate::domain::capability::REASONING_EFFORTS;
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::ids::SessionId;
use crate::domain::task::{TOOL_ACCESSES, ToolAccess};
use crate::engine::session_choices::{HecateChoice, HecateChoices};
use crate::engine::targets::TargetRef;
use crate::engine::{AgentSettings, OptionValue};
use agent_client_protocol::v1::schema::McpServer;
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, CurrentModeUpdate, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionNotification, SessionUpdate, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode, JsonRpcRequest};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::path::{Path, PathBuf};

/// `session/set_model` as older clients send it (before config options): the
/// model to use, which Hecate maps to the thread's `model` option.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[serde(rename_all = "camelCase")]
#[request(method = "session/set_model", response = serde_json::Value)]
pub struct SetSessionModelRequest {
    /// The session.
    pub session_id: String,
    /// The model: a value of the `model` option (or of the agent's model option).
    pub model_id: String,
}

/// Whether reading a thread's offer may start its agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// Start the external agent when none runs (a new, loaded or switched thread).
    Start,
    /// Only read what a running agent offers.
    Look,
}

/// Makes `target` the thread of stored session `sid` for this connection (a
/// `session/load` or `session/resume`) in `cwd` with its checked additional
/// directories and the stored choices of Hecate's own options, starting its
/// agent (which gets its stored choices), and answers what it offers.
pub async fn attach_thread(
    shared: &Shared,
    sid: &SessionId,
    target: TargetRef,
    (cwd, dirs): (&Path, Vec<PathBuf>),
    mcp_servers: &[McpServer],
) -> Offer {
    let chosen = match shared
        .engine
        .hecate_choices(&shared.config.namespace, sid)
        .await
    {
        Ok(c) => c,
        Err(e) => {
            tracing::warn!(error = %e, "the stored choices of the thread's options could not be read");
            shared
                .thread(sid)
                .map(|t| HecateChoices {
                    thought_level: t.thought_level,
                    tools: t.tools,
                })
                .unwrap_or_default()
        }
    };
    let thread = Thread {
        target,
        cwd: cwd.display().to_string(),
        mcp_servers: mcp_servers.iter().filter_map(mcp_server).collect(),
        thought_level: chosen.thought_level,
        tools: chosen.tools,
    };
    shared.set_thread(sid.clone(), thread.clone());
    // Hecate's own agent gets them too, whatever the thread's target now: the
    // editor may switch it to a `hecate` target later.
    shared.engine.set_agent_directories(sid, dirs.clone());
    shared
        .engine
        .agents()
        .set_additional_directories(sid, dirs)
        .await;
    offer_for(shared, sid, &thread, Opening::Start).await
}

/// What `thread` offers now; with [`Opening::Start`] an external agent is
/// started first, so its own modes and options are known (when it cannot
/// start, the thread offers Hecate's choices only and the first prompt reports
/// the failure).
pub async fn offer_for(
    shared: &Shared,
    sid: &SessionId,
    thread: &Thread,
    opening: Opening,
) -> Offer {
    let agent = match (&thread.target, opening) {
        (TargetRef::External { adapter_id }, Opening::Start) => {
            match open_agent(shared, sid, thread, adapter_id).await {
                Ok(s) => Some(s),
                Err(e) => {
                    tracing::info!(error = %e, adapter_id, "the agent's options are not known before its first turn");
                    None
                }
            }
        }
        (TargetRef::External { .. }, Opening::Look) => shared.engine.agents().settings(sid).await,
        _ => None,
    };
    let mut offered = offer(&shared.targets().await, &thread.target, agent.as_ref());
    if takes_thought_level(shared, thread) {
        let at = offered
            .options
            .iter()
            .position(|o| o.id.0.as_ref() == MODEL_OPTION)
            .map_or(offered.options.len(), |i| i + 1);
        offered
            .options
            .insert(at, thought_option(thread.thought_level.as_deref()));
    }
    if matches!(thread.target, TargetRef::Hecate { .. }) {
        offered.options.push(tools_option(thread.tools));
    }
    offered
}

/// Whether `thread` answers with a model that takes a reasoning effort: a
/// model target's, or the model of Hecate's agent (its default model when the
/// thread names none).
fn takes_thought_level(shared: &Shared, thread: &Thread) -> bool {
    let gateway = shared.engine.gateway();
    match &thread.target {
        TargetRef::Model { provider, model }
        | TargetRef::Hecate {
            model: Some((provider, model)),
        } => gateway.takes_reasoning_effort(provider, model),
        TargetRef::Hecate { model: None } => {
            shared
                .engine
                .default_agent_model()
                .is_some_and(|m| match m.split_once('/') {
                    Some((provider, model)) => gateway.takes_reasoning_effort(provider, model),
                    None => gateway.takes_reasoning_effort("", m),
                })
        }
        TargetRef::External { .. } => false,
    }
}

/// The reasoning effort `thread`'s next turn asks for: the chosen
/// `thought_level`, when its model takes one.
pub fn reasoning_effort(shared: &Shared, thread: &Thread) -> Option<String> {
    thread
        .thought_level
        .clone()
        .filter(|_| takes_thought_level(shared, thread))
}

/// Starts `adapter_id`'s agent for `thread` (an existing directory needed)
/// and answers what it offers.
pub(super) async fn open_agent(
    shared: &Shared,
    sid: &SessionId,
    thread: &Thread,
    adapter_id: &str,
) -> Result<AgentSettings, HecateError> {
    if !Path::new(&thread.cwd).is_dir() {
        return Err(HecateError::new(
            ErrorType::WorkspaceRequired,
            "the thread has no existing directory to start the agent in",
        ));
    }
    shared
        .engine
        .agents()
        .open_settings(
            &shared.config.namespace,
            sid,
            (adapter_id, &thread.cwd),
            &thread.mcp_servers,
            shared.client_caps().elicitation,
        )
        .await
}

/// The settings of the thread's running agent, starting it when none runs.
async fn running_agent(
    shared: &Shared,
    sid: &SessionId,
    thread: &Thread,
    adapter_id: &str,
) -> Result<AgentSettings, Error> {
    if let Some(s) = shared.engine.agents().settings(sid).await {
        return Ok(s);
    }
    open_agent(shared, sid, thread, adapter_id)
        .await
        .map_err(|e| setting_error(&e))
}

/// A refused setting as an ACP error: the message says why, `data` carries the
/// stable `type` and `reason`; a running turn is an `Invalid Request`.
fn setting_error(e: &HecateError) -> Error {
    let mut err = to_rpc(e);
    if e.error_type == ErrorType::AgentSessionBusy {
        err.code = ErrorCode::INVALID_REQUEST;
    }
    err
}

/// The error for an option id the thread does not offer.
fn unknown_option(id: &str, offered: &Offer) -> Error {
    let available: Vec<String> = offered.options.iter().map(|o| o.id.0.to_string()).collect();
    Error::new(
        ErrorCode::INVALID_PARAMS,
        format!("unknown config option {id}; this thread offers {available:?}"),
    )
    .data(json!({
        "type": "invalid_request",
        "reason": "config_option_unknown",
        "configId": id,
        "available": available,
    }))
}

/// The thread of `sid`: this process's, else rebuilt from the store.
async fn thread_of(shared: &Shared, sid: &SessionId) -> Result<Thread, Error> {
    shared.thread_or_stored(sid).await
}

/// Switches a thread's target, checking it is offered and permitted.
async fn switch_target(shared: &Shared, sid: &SessionId, target: &str) -> Result<Thread, Error> {
    let parsed = TargetRef::parse(target).map_err(|e| to_rpc(&e))?;
    let session = shared
        .engine
        .get_session(&shared.config.namespace, sid)
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
        .data(json!({
            "type": "invalid_request",
            "target": target,
            "available": offered.iter().map(|t| &t.id).collect::<Vec<_>>(),
        })));
    }
    let cwd = shared
        .thread(sid)
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
    if !shared.set_target(sid, parsed.clone()) {
        shared.set_thread(
            sid.clone(),
            Thread {
                target: parsed.clone(),
                cwd: session.workspace.unwrap_or_default(),
                mcp_servers: Vec::new(),
                thought_level: None,
                tools: ToolAccess::default(),
            },
        );
    }
    shared.thread(sid).ok_or_else(Error::internal_error)
}

fn notify(cx: &ConnectionTo<Client>, sid: &SessionId, update: SessionUpdate) -> Result<(), Error> {
    cx.send_notification(SessionNotification::new(sid.to_string(), update))
}

/// `session/set_mode`: a target id switches the target (and the client hears
/// that the options changed with it); otherwise, on an external agent's thread,
/// the agent's own mode is set (offered, and allowed by the operator's rule).
pub async fn set_mode(
    shared: &Shared,
    r: SetSessionModeRequest,
    resp: Responder<SetSessionModeResponse>,
    cx: &ConnectionTo<Client>,
) -> Result<(), Error> {
    let sid = SessionId::from(r.session_id.0.to_string());
    let mode = r.mode_id.0.to_string();
    let thread = match thread_of(shared, &sid).await {
        Ok(t) => t,
        Err(e) => return resp.respond_with_error(e),
    };
    if let (TargetRef::External { adapter_id }, Err(_)) = (&thread.target, TargetRef::parse(&mode))
    {
        if let Err(e) = running_agent(shared, &sid, &thread, adapter_id).await {
            return resp.respond_with_error(e);
        }
        return match shared.engine.agents().set_mode(&sid, &mode).await {
            Ok(settings) => {
                let offered = offer(&shared.targets().await, &thread.target, Some(&settings));
                notify(
                    cx,
                    &sid,
                    SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(offered.options)),
                )?;
                resp.respond(SetSessionModeResponse::new())
            }
            Err(e) => resp.respond_with_error(setting_error(&e)),
        };
    }
    match switch_target(shared, &sid, &mode).await {
        Ok(t) => {
            let offered = offer_for(shared, &sid, &t, Opening::Start).await;
            notify(
                cx,
                &sid,
                SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(offered.options)),
            )?;
            resp.respond(SetSessionModeResponse::new())
        }
        Err(e) => resp.respond_with_error(e),
    }
}

/// What a `session/set_config_option` does on a thread.
enum Change {
    /// Switch the target to this id.
    Target(String),
    /// Set the external agent's option.
    Agent(String, OptionValue),
    /// Set the model's reasoning effort (`None`: the model's default).
    Thought(Option<String>),
    /// Set the tools Hecate's agent offers its model.
    Tools(ToolAccess),
}

/// Decides what setting option `id` to `value` means on `thread`.
async fn change_for(
    shared: &Shared,
    sid: &SessionId,
    thread: &Thread,
    id: &str,
    value: &SessionConfigOptionValue,
) -> Result<Change, Error> {
    let value_id = value.as_value_id().map(|v| v.0.to_string());
    if id == TARGET_OPTION {
        return value_id.map(Change::Target).ok_or_else(|| {
            Error::new(
                ErrorCode::INVALID_PARAMS,
                "target needs a value id (model:PROVIDER/MODEL, hecate:PROVIDER/MODEL, hecate \
                 or agent:ADAPTER_ID)",
            )
            .data(json!({"type": "invalid_request", "reason": "config_value_invalid", "configId": id}))
        });
    }
    match &thread.target {
        TargetRef::External { adapter_id } => {
            running_agent(shared, sid, thread, adapter_id).await?;
            let v = match (value.as_bool(), value_id) {
                (Some(b), _) => OptionValue::Bool(b),
                (None, Some(v)) => OptionValue::Id(v),
                (None, None) => {
                    return Err(Error::new(
                        ErrorCode::INVALID_PARAMS,
                        format!("config option {id} needs a value id or a boolean"),
                    ));
                }
            };
            Ok(Change::Agent(id.to_string(), v))
        }
        TargetRef::Model { .. } | TargetRef::Hecate { .. }
            if id == THOUGHT_OPTION && takes_thought_level(shared, thread) =>
        {
            match value_id.as_deref() {
                Some(THOUGHT_DEFAULT) => Ok(Change::Thought(None)),
                Some(v) if REASONING_EFFORTS.contains(&v) => Ok(Change::Thought(Some(v.into()))),
                _ => {
                    let available: Vec<&str> = std::iter::once(THOUGHT_DEFAULT)
                        .chain(REASONING_EFFORTS)
                        .collect();
                    let got = value_id.unwrap_or_else(|| "a boolean".into());
                    Err(Error::new(
                        ErrorCode::INVALID_PARAMS,
                        format!("thought_level takes one of {available:?}, not {got:?}"),
                    )
                    .data(
                        json!({"type": "invalid_request", "reason": "config_value_invalid",
                        "configId": id, "available": available}),
                    ))
                }
            }
        }
        TargetRef::Hecate { .. } if id == TOOLS_OPTION => {
            match value_id.as_deref().and_then(ToolAccess::parse) {
                Some(access) => Ok(Change::Tools(access)),
                None => {
                    let available: Vec<&str> = TOOL_ACCESSES.iter().map(|a| a.as_str()).collect();
                    let got = value_id.unwrap_or_else(|| "a boolean".into());
                    Err(Error::new(
                        ErrorCode::INVALID_PARAMS,
                        format!("tools takes one of {available:?}, not {got:?}"),
                    )
                    .data(
                        json!({"type": "invalid_request", "reason": "config_value_invalid",
                        "configId": id, "available": available}),
                    ))
                }
            }
        }
        TargetRef::Model { .. } | TargetRef::Hecate { .. } if id == MODEL_OPTION => {
            let prefix = if matches!(thread.target, TargetRef::Model { .. }) {
                "model"
            } else {
                "hecate"
            };
            match value_id {
                Some(m) if m.contains('/') => Ok(Change::Target(format!("{prefix}:{m}"))),
                _ => Err(Error::new(
                    ErrorCode::INVALID_PARAMS,
                    "model needs a value id PROVIDER/MODEL",
                )
                .data(json!({"type": "invalid_request", "reason": "config_value_invalid", "configId": id}))),
            }
        }
        _ => Err(unknown_option(
            id,
            &offer_for(shared, sid, thread, Opening::Look).await,
        )),
    }
}

/// Stores a choice of Hecate's own options for thread `sid`.
async fn choose_for_hecate(
    shared: &Shared,
    sid: &SessionId,
    choice: HecateChoice,
) -> Result<(), Error> {
    shared
        .engine
        .choose_for_hecate(&shared.config.namespace, sid, choice)
        .await
        .map_err(|e| to_rpc(&e))
}

/// Applies a change; answers the thread's options afterwards.
async fn apply(
    shared: &Shared,
    sid: &SessionId,
    change: Change,
    cx: &ConnectionTo<Client>,
) -> Result<Offer, Error> {
    match change {
        Change::Target(target) => {
            let t = switch_target(shared, sid, &target).await?;
            let offered = offer_for(shared, sid, &t, Opening::Start).await;
            notify(
                cx,
                sid,
                SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                    offered.modes.current_mode_id.clone(),
                )),
            )?;
            Ok(offered)
        }
        // Stored first: a store failure is the answer and the thread keeps
        // its choice; only a stored choice changes the thread.
        Change::Thought(level) => {
            choose_for_hecate(shared, sid, HecateChoice::ThoughtLevel(level.clone())).await?;
            shared.set_thought_level(sid, level);
            let thread = thread_of(shared, sid).await?;
            Ok(offer_for(shared, sid, &thread, Opening::Look).await)
        }
        Change::Tools(access) => {
            choose_for_hecate(shared, sid, HecateChoice::Tools(access)).await?;
            shared.set_tools(sid, access);
            let thread = thread_of(shared, sid).await?;
            Ok(offer_for(shared, sid, &thread, Opening::Look).await)
        }
        Change::Agent(id, value) => {
            let settings = shared
                .engine
                .agents()
                .set_option(sid, &id, value.clone())
                .await
                .map_err(|e| setting_error(&e))?;
            let thread = thread_of(shared, sid).await?;
            if category_of(&settings, &id) == Some(SessionConfigOptionCategory::Mode)
                && let OptionValue::Id(mode) = value
            {
                notify(
                    cx,
                    sid,
                    SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(mode)),
                )?;
            }
            Ok(offer(
                &shared.targets().await,
                &thread.target,
                Some(&settings),
            ))
        }
    }
}

/// `session/set_config_option`: `target`, a model target's or Hecate's
/// agent's `model` and `thought_level`, Hecate's agent's `tools`, or an option
/// of the thread's external agent (forwarded after checking it is offered,
/// takes the value and no turn is running, and stored first).
pub async fn set_config_option(
    shared: &Shared,
    r: SetSessionConfigOptionRequest,
    resp: Responder<SetSessionConfigOptionResponse>,
    cx: &ConnectionTo<Client>,
) -> Result<(), Error> {
    let sid = SessionId::from(r.session_id.0.to_string());
    let outcome = async {
        let thread = thread_of(shared, &sid).await?;
        let change = change_for(shared, &sid, &thread, &r.config_id.0, &r.value).await?;
        apply(shared, &sid, change, cx).await
    }
    .await;
    match outcome {
        Ok(offered) => resp.respond(SetSessionConfigOptionResponse::new(offered.options)),
        Err(e) => resp.respond_with_error(e),
    }
}

/// `session/set_model` (older clients): the `model` option of a model target
/// or Hecate's agent, or the option an external agent lists under category
/// `model`; the client hears the new options.
pub async fn set_model(
    shared: &Shared,
    r: SetSessionModelRequest,
    resp: Responder<serde_json::Value>,
    cx: &ConnectionTo<Client>,
) -> Result<(), Error> {
    let sid = SessionId::from(r.session_id.as_str());
    let outcome = async {
        let thread = thread_of(shared, &sid).await?;
        let id = match &thread.target {
            TargetRef::External { adapter_id } => {
                let settings = running_agent(shared, &sid, &thread, adapter_id).await?;
                agent_model_option(&settings).ok_or_else(|| {
                    Error::new(
                        ErrorCode::INVALID_PARAMS,
                        format!("agent {adapter_id} offers no model option"),
                    )
                    .data(json!({"type": "invalid_request", "reason": "config_option_unknown", "configId": MODEL_OPTION}))
                })?
            }
            _ => MODEL_OPTION.to_string(),
        };
        let value = SessionConfigOptionValue::value_id(r.model_id.clone());
        let change = change_for(shared, &sid, &thread, &id, &value).await?;
        apply(shared, &sid, change, cx).await
    }
    .await;
    match outcome {
        Ok(offered) => {
            notify(
                cx,
                &sid,
                SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(offered.options)),
            )?;
            resp.respond(json!({}))
        }
        Err(e) => resp.respond_with_error(e),
    }
}
