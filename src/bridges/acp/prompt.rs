//! `session/prompt` and `session/cancel`: a prompt becomes an engine turn on the
//! thread's target; its events stream back as `session/update`s, its approvals as
//! `session/request_permission`, and (for external agents, when the editor serves
//! files and terminals) the agent's fs/terminal requests go to the editor.

use super::convert::{nothing_configured, prompt_content, to_rpc};
use super::sessions::target_of;
use super::state::{Shared, Thread};
use super::workspace::EditorWorkspace;
use super::{permission, render};
use crate::domain::approval::ApprovalMode;
use crate::domain::event::EngineEvent;
use crate::domain::ids::SessionId;
use crate::domain::run::RunStatus;
use crate::domain::session::RuntimeKind;
use crate::engine::SendMessage;
use crate::engine::bus::Received;
use crate::engine::targets::TargetRef;
use agent_client_protocol::v1::schema::{
    PromptRequest, PromptResponse, SessionNotification, StopReason,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// The thread of `sid`, from this process's memory or the store.
async fn thread_of(shared: &Shared, sid: &SessionId) -> Result<Thread, Error> {
    if let Some(t) = shared.thread(sid) {
        return Ok(t);
    }
    let s = shared
        .engine
        .get_session(&shared.config.namespace, sid)
        .await
        .map_err(|e| to_rpc(&e))?;
    let target = target_of(&s).ok_or_else(nothing_configured)?;
    let t = Thread {
        target,
        // No workspace stays empty (never `/`): the Hecate agent then needs one.
        cwd: s.workspace.clone().unwrap_or_default(),
        mcp_servers: Vec::new(),
    };
    shared.set_thread(sid.clone(), t.clone());
    Ok(t)
}

/// The engine request for one prompt on `thread`.
fn send_message(
    shared: &Shared,
    r: &PromptRequest,
    thread: &Thread,
    cx: &ConnectionTo<Client>,
) -> SendMessage {
    let (content, blocks) = prompt_content(&r.prompt);
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
    let thread = match thread_of(shared, &sid).await {
        Ok(t) => t,
        Err(e) => return resp.respond_with_error(e),
    };
    if cancel.is_cancelled() {
        return resp.respond(PromptResponse::new(StopReason::Cancelled));
    }
    let send = send_message(shared, &r, &thread, &cx);
    let mut turn = match shared.engine.send_message(&ns, &sid, send).await {
        Ok(t) => t,
        Err(e) => return resp.respond_with_error(to_rpc(&e)),
    };
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
