//! Session requests: `session/new`, `session/load` (the stored transcript replayed
//! as updates) and `session/list`; each opening request's `additionalDirectories`
//! are checked by the engine's rule and handed to the thread's agent. Resuming,
//! closing and deleting are in `lifecycle`. What a thread offers as modes and
//! options is in `options`; changing them (`session/set_mode`,
//! `session/set_config_option`, `session/set_model`) in `settings`.

pub mod lifecycle;
pub mod options;
pub mod settings;

use super::convert::{mcp_server, nothing_configured, target_of, to_rpc};
use super::render;
use super::signin::offered_sign_ins;
use super::state::{Shared, Thread};
use crate::domain::error::HecateError;
use crate::domain::ids::SessionId;
use crate::domain::session::RuntimeKind;
use crate::domain::session_title::PROVISIONAL_TITLE;
use crate::engine::CreateSession;
use crate::engine::agent_roots::check_additional_directories;
use crate::engine::targets::TargetRef;
use agent_client_protocol::v1::schema::{
    ListSessionsRequest, ListSessionsResponse, LoadSessionRequest, LoadSessionResponse,
    NewSessionRequest, NewSessionResponse, SessionInfo, SessionNotification,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error};
use options::offer;
use settings::{Opening, attach_thread, offer_for, open_agent};
use std::path::Path;

/// Sessions listed at most.
const LIST_LIMIT: usize = 500;

/// A directory as the engine stores workspaces (canonical), else as given.
fn canonical(dir: &Path) -> String {
    std::fs::canonicalize(dir)
        .unwrap_or_else(|_| dir.to_path_buf())
        .display()
        .to_string()
}

/// `session/new`: a Hecate session answered by the default target. An
/// external agent is started at once; when it asks to sign in, the session is
/// not kept and the editor gets `auth_required` with the agent's methods.
pub async fn new_session(
    shared: &Shared,
    r: NewSessionRequest,
    resp: Responder<NewSessionResponse>,
) -> Result<(), Error> {
    let Some(target) = shared.default_target().await else {
        return resp.respond_with_error(nothing_configured());
    };
    let cwd = r.cwd.display().to_string();
    let dirs = match check_additional_directories(&r.cwd, &r.additional_directories) {
        Ok(d) => d,
        Err(e) => return resp.respond_with_error(to_rpc(&e)),
    };
    let mcp_servers: Vec<_> = r.mcp_servers.iter().filter_map(mcp_server).collect();
    let base = CreateSession {
        title: Some(PROVISIONAL_TITLE.into()),
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
    let thread = Thread {
        target: target.clone(),
        cwd,
        mcp_servers,
        thought_level: None,
        tools: Default::default(),
    };
    shared.set_thread(session.id.clone(), thread.clone());
    // Hecate's own agent gets them too, whatever the thread's target now: the
    // editor may switch it to a `hecate` target later.
    shared
        .engine
        .set_agent_directories(&session.id, dirs.clone());
    shared
        .engine
        .agents()
        .set_additional_directories(&session.id, dirs)
        .await;
    let offer = match &target {
        TargetRef::External { adapter_id } => {
            match open_agent(shared, &session.id, &thread, adapter_id).await {
                Ok(settings) => offer(&shared.targets().await, &target, Some(&settings)),
                Err(e) if needs_sign_in(&e) => {
                    return refuse_until_signed_in(shared, &session.id, &e, resp).await;
                }
                Err(e) => {
                    tracing::info!(error = %e, adapter_id, "the agent's options are not known before its first turn");
                    offer(&shared.targets().await, &target, None)
                }
            }
        }
        _ => offer_for(shared, &session.id, &thread, Opening::Start).await,
    };
    resp.respond(
        NewSessionResponse::new(session.id.to_string())
            .modes(offer.modes)
            .config_options(offer.options),
    )
}

/// Whether an agent refused to open a session until the user signs in.
fn needs_sign_in(e: &HecateError) -> bool {
    e.details.get("reason").and_then(|r| r.as_str()) == Some("agent_auth_required")
}

/// Answers a `session/new` whose agent asks to sign in: the session just
/// created is deleted (the editor retries after `authenticate`), and the
/// `auth_required` error lists the agent's methods in `data.auth_methods`.
async fn refuse_until_signed_in(
    shared: &Shared,
    sid: &SessionId,
    e: &HecateError,
    resp: Responder<NewSessionResponse>,
) -> Result<(), Error> {
    if let Err(gone) = shared
        .engine
        .delete_session(&shared.config.namespace, sid)
        .await
    {
        tracing::warn!(error = %gone, "could not delete the session that waits for sign-in");
    }
    shared.forget_thread(sid);
    resp.respond_with_error(to_rpc(&offered_sign_ins(shared, e)))
}

/// `session/load`: replays the stored transcript as updates and the session's
/// title (`session_info_update`), then answers with the thread's target; the
/// next prompt continues the same session.
pub async fn load_session(
    shared: &Shared,
    r: LoadSessionRequest,
    resp: Responder<LoadSessionResponse>,
    cx: &ConnectionTo<Client>,
) -> Result<(), Error> {
    let sid = SessionId::from(r.session_id.0.to_string());
    let dirs = match check_additional_directories(&r.cwd, &r.additional_directories) {
        Ok(d) => d,
        Err(e) => return resp.respond_with_error(to_rpc(&e)),
    };
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
    let title = render::session_info(
        Some(&transcript.session.title),
        Some(&transcript.session.updated_at),
    );
    for u in render::transcript(&transcript.messages)
        .into_iter()
        .chain([title])
    {
        cx.send_notification(SessionNotification::new(r.session_id.clone(), u))?;
    }
    let offer = attach_thread(shared, &sid, target, (&r.cwd, dirs), &r.mcp_servers).await;
    resp.respond(
        LoadSessionResponse::new()
            .modes(offer.modes)
            .config_options(offer.options),
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
