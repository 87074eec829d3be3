//! `session/prompt` and `session/cancel`: a prompt becomes an engine turn on the
//! thread's target; its events stream back as `session/update`s, its approvals as
//! `session/request_permission`, and (for external agents, when the editor serves
//! files and terminals) the agent's fs/terminal requests go to the editor.

mod content;
mod usage;

pub use content::offered_content;

use super::convert::{prompt_content, to_rpc};
use super::sessions::options::offer;
use super::sessions::settings::reasoning_effort;
use super::signin::offered_sign_ins;
use super::state::{Shared, Thread};
use super::workspace::EditorWorkspace;
use super::{permission, render};
use crate::domain::approval::ApprovalMode;
use crate::domain::event::{EngineEvent, RuntimeEvent};
use crate::domain::ids::SessionId;
use crate::domain::message::ContentBlock;
use crate::domain::run::RunStatus;
use crate::domain::session::RuntimeKind;
use crate::engine::SendMessage;
use crate::engine::bus::Received;
use crate::engine::targets::TargetRef;
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, CurrentModeUpdate, PromptRequest, PromptResponse, SessionNotification,
    SessionUpdate, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The engine request for one prompt (its text and rich blocks) on `thread`.
fn send_message(
    shared: &Shared,
    r: &PromptRequest,
    (content, blocks): (String, Vec<ContentBlock>),
    thread: &Thread,
    cx: &ConnectionTo<Client>,
) -> SendMessage {
    let mut send = SendMessage {
        content,
        blocks,
        approval_mode: Some(ApprovalMode::Prompt),
        ..Default::default()
    };
    match &thread.target {
        TargetRef::Model { provider, model } => {
            send.runtime_kind = Some(RuntimeKind::Model);
            send.provider = Some(provider.clone());
            send.model = Some(model.clone());
        }
        TargetRef::External { adapter_id } => {
            send.runtime_kind = Some(RuntimeKind::ExternalAgent);
            send.adapter_id = Some(adapter_id.clone());
            send.mcp_servers = thread.mcp_servers.clone();
            if std::path::Path::new(&thread.cwd).is_dir() {
                send.workspace = Some(thread.cwd.clone());
            }
            let caps = shared.client_caps();
            if caps.any() {
                send.workspace_delegate = Some(Arc::new(EditorWorkspace::new(
                    cx.clone(),
                    r.session_id.clone(),
                    caps,
                )));
            }
        }
        TargetRef::Hecate { model } => {
            send.runtime_kind = Some(RuntimeKind::Agent);
            match model {
                Some((provider, model)) => {
                    send.provider = Some(provider.clone());
                    send.model = Some(model.clone());
                }
                None => send.model = shared.engine.default_agent_model().map(str::to_string),
            }
            send.mcp_servers = thread.mcp_servers.clone();
            // A missing directory is left to the engine: `agent_chat.workspace_required`.
            send.workspace = Some(thread.cwd.clone());
        }
    }
    send
}

/// The update relaying an external agent's own mode or option change: its new
/// mode, or the thread's whole option list with the agent's new options.
async fn relay(
    shared: &Shared,
    sid: &SessionId,
    thread: &Thread,
    ev: &RuntimeEvent,
) -> Option<SessionUpdate> {
    match ev {
        RuntimeEvent::ModeChanged { mode_id } => Some(SessionUpdate::CurrentModeUpdate(
            CurrentModeUpdate::new(mode_id.clone()),
        )),
        RuntimeEvent::ConfigChanged { options } => {
            let mut settings = shared
                .engine
                .agents()
                .settings(sid)
                .await
                .unwrap_or_default();
            settings.options = options.clone();
            let offered = offer(&shared.targets().await, &thread.target, Some(&settings));
            Some(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                offered.options,
            )))
        }
        _ => None,
    }
}

/// Runs one prompt to its end. `cancel` fires when the client sends
/// `session/cancel` for this session (even before the turn has started).
pub async fn prompt(
    shared: &Arc<Shared>,
    r: PromptRequest,
    resp: Responder<PromptResponse>,
    cx: ConnectionTo<Client>,
    cancel: CancellationToken,
) -> Result<(), Error> {
    let ns = shared.config.namespace.clone();
    let sid = SessionId::from(r.session_id.0.to_string());
    let thread = match shared.thread_or_stored(&sid).await {
        Ok(t) => t,
        Err(e) => return resp.respond_with_error(e),
    };
    if cancel.is_cancelled() {
        return resp.respond(PromptResponse::new(StopReason::Cancelled));
    }
    let content = match prompt_content(&r.prompt) {
        Ok(c) => c,
        Err(e) => return resp.respond_with_error(e),
    };
    if let Err(e) = content::check(shared, &thread.target, &content.1).await {
        return resp.respond_with_error(e);
    }
    let mut send = send_message(shared, &r, content, &thread, &cx);
    send.reasoning_effort = reasoning_effort(shared, &thread);
    let mut turn = match shared.engine.send_message(&ns, &sid, send).await {
        Ok(t) => t,
        Err(e) => return resp.respond_with_error(to_rpc(&e)),
    };
    let mut meter = usage::Meter::new(shared, &thread.target);
    let mut cancel_sent = false;
    loop {
        let received = tokio::select! {
            r = turn.events.recv() => r,
            _ = cancel.cancelled(), if !cancel_sent => {
                cancel_sent = true;
                if let Err(e) = shared.engine.cancel(&ns, &sid).await {
                    tracing::debug!(error = %e, "cancel found no running turn");
                }
                continue;
            }
        };
        let Some(received) = received else { break };
        match received {
            Received::Event(EngineEvent::Runtime { update, .. }) => {
                let relayed = match &update {
                    RuntimeEvent::ModeChanged { .. } | RuntimeEvent::ConfigChanged { .. } => {
                        relay(shared, &sid, &thread, &update).await
                    }
                    RuntimeEvent::Usage { usage } => meter.call(shared, usage).await,
                    _ => render::runtime_event(&update),
                };
                if let Some(u) = relayed {
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
    let (closing, used) = meter.finish(shared, &sid, &result.run.id).await;
    if let Some(u) = closing {
        cx.send_notification(SessionNotification::new(r.session_id.clone(), u))?;
    }
    let ended = |reason| PromptResponse::new(reason).usage(used.clone());
    match (result.run.status, result.error) {
        (RunStatus::Cancelled, _) => resp.respond(ended(StopReason::Cancelled)),
        (RunStatus::Completed, _) => resp.respond(ended(StopReason::EndTurn)),
        (_, Some(e)) => resp.respond_with_error(to_rpc(&offered_sign_ins(shared, &e))),
        _ => resp.respond_with_error(Error::internal_error()),
    }
}
