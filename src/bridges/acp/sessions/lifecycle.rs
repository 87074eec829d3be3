//! `session/resume`, `session/close` and `session/delete`: reattaching the
//! editor to a stored session without replaying it, ending a thread for this
//! connection (its turn cancelled, its agent let go, nothing deleted), and
//! deleting a stored session after closing it.

use super::settings::attach_thread;
use crate::bridges::acp::convert::{nothing_configured, target_of, to_rpc};
use crate::bridges::acp::render;
use crate::bridges::acp::state::Shared;
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::ids::SessionId;
use crate::engine::agent_roots::check_additional_directories;
use agent_client_protocol::v1::schema::{
    CloseSessionRequest, CloseSessionResponse, DeleteSessionRequest, DeleteSessionResponse,
    ResumeSessionRequest, ResumeSessionResponse, SessionNotification,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Client, Error, ErrorCode};
use serde_json::json;

/// The stable `data.reason` of a request naming a session the store does not have.
pub const SESSION_NOT_FOUND: &str = "session_not_found";

/// An engine error for a request about session `sid`: an unknown session is a
/// resource-not-found error with `data.reason` [`SESSION_NOT_FOUND`].
fn session_error(e: &HecateError, sid: &SessionId, method: &str) -> Error {
    if e.error_type != ErrorType::NotFound {
        return to_rpc(e);
    }
    Error::new(
        ErrorCode::RESOURCE_NOT_FOUND,
        format!("{method}: no stored Hecate session has the id {sid}"),
    )
    .data(json!({
        "type": "not_found",
        "reason": SESSION_NOT_FOUND,
        "sessionId": sid.as_str(),
    }))
}

/// `session/resume`: the editor attaches to a stored session (an external
/// agent reattaching to its native session) without the transcript replayed,
/// and hears its title (`session_info_update`); the next prompt continues it.
pub async fn resume_session(
    shared: &Shared,
    r: ResumeSessionRequest,
    resp: Responder<ResumeSessionResponse>,
    cx: &ConnectionTo<Client>,
) -> Result<(), Error> {
    let sid = SessionId::from(r.session_id.0.to_string());
    let dirs = match check_additional_directories(&r.cwd, &r.additional_directories) {
        Ok(d) => d,
        Err(e) => return resp.respond_with_error(to_rpc(&e)),
    };
    let session = match shared
        .engine
        .get_session(&shared.config.namespace, &sid)
        .await
    {
        Ok(s) => s,
        Err(e) => return resp.respond_with_error(session_error(&e, &sid, "session/resume")),
    };
    let target = match target_of(&session).or(shared.default_target().await) {
        Some(t) => t,
        None => return resp.respond_with_error(nothing_configured()),
    };
    let offer = attach_thread(shared, &sid, target, (&r.cwd, dirs), &r.mcp_servers).await;
    let title = render::session_info(Some(&session.title), Some(&session.updated_at));
    cx.send_notification(SessionNotification::new(r.session_id.clone(), title))?;
    resp.respond(
        ResumeSessionResponse::new()
            .modes(offer.modes)
            .config_options(offer.options),
    )
}

/// `session/close`: cancels the session's running turn, lets go of its agent
/// process (`session/close` to agents that offer it) and forgets the thread
/// here; the stored session stays and can be resumed or loaded.
pub async fn close_session(
    shared: &Shared,
    r: CloseSessionRequest,
    resp: Responder<CloseSessionResponse>,
) -> Result<(), Error> {
    let sid = SessionId::from(r.session_id.0.to_string());
    match end_thread(shared, &sid, false).await {
        Ok(()) => resp.respond(CloseSessionResponse::new()),
        Err(e) => resp.respond_with_error(session_error(&e, &sid, "session/close")),
    }
}

/// `session/delete`: closes the session as `session/close` does (passing
/// `session/delete` on to an agent that offers it) and deletes it from the
/// store, as `DELETE /hecate/v1/agent-chat/sessions/{id}` does.
pub async fn delete_session(
    shared: &Shared,
    r: DeleteSessionRequest,
    resp: Responder<DeleteSessionResponse>,
) -> Result<(), Error> {
    let sid = SessionId::from(r.session_id.0.to_string());
    match end_thread(shared, &sid, true).await {
        Ok(()) => resp.respond(DeleteSessionResponse::new()),
        Err(e) => resp.respond_with_error(session_error(&e, &sid, "session/delete")),
    }
}

/// Ends thread `sid` for this connection: checks the session is stored, cancels
/// a prompt in flight, then closes (or deletes) it in the engine.
async fn end_thread(shared: &Shared, sid: &SessionId, delete: bool) -> Result<(), HecateError> {
    let ns = &shared.config.namespace;
    shared.engine.get_session(ns, sid).await?;
    shared.cancel_prompt(sid);
    if delete {
        shared.engine.delete_session(ns, sid).await?;
    } else {
        shared.engine.close_session(ns, sid).await?;
    }
    shared.forget_thread(sid);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_session_is_resource_not_found_with_a_stable_reason() {
        let sid = SessionId::from("s-1");
        let e = session_error(
            &HecateError::not_found("session", "s-1"),
            &sid,
            "session/close",
        );
        assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND);
        let data = e.data.expect("data");
        assert_eq!(
            (&data["reason"], &data["sessionId"]),
            (&json!(SESSION_NOT_FOUND), &json!("s-1"))
        );
        let busy = HecateError::new(ErrorType::AgentSessionBusy, "a turn runs");
        let e = session_error(&busy, &sid, "session/delete");
        assert_ne!(e.code, ErrorCode::RESOURCE_NOT_FOUND);
    }
}
