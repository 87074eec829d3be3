//! The ACP connection: one handler per method. Handlers never wait on the client
//! inside the dispatch loop: every request that needs the engine runs in
//! `cx.spawn` with its responder, so `session/cancel` and permission answers keep
//! flowing during a turn. A prompt is marked in flight before its task starts, so
//! a `session/cancel` right behind it is never lost.

use super::AcpBridgeError;
use super::prompt::{offered_content, prompt};
use super::sessions::lifecycle::{close_session, delete_session, resume_session};
use super::sessions::settings::{SetSessionModelRequest, set_config_option, set_mode, set_model};
use super::sessions::{list_sessions, load_session, new_session};
use super::signin::{SETUP_METHOD, authenticate, logout};
use super::state::Shared;
use super::transport::OversizedFrame;
use crate::domain::ids::SessionId;
use crate::domain::workspace::{DelegateCapabilities, ElicitationModes};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentAuthCapabilities, AgentCapabilities, AuthMethod, AuthMethodAgent, AuthenticateRequest,
    AuthenticateResponse, CancelNotification, CloseSessionRequest, DeleteSessionRequest,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest, LoadSessionRequest,
    LogoutCapabilities, LogoutRequest, McpCapabilities, NewSessionRequest, PromptRequest,
    ResumeSessionRequest, SessionAdditionalDirectoriesCapabilities, SessionCapabilities,
    SessionCloseCapabilities, SessionDeleteCapabilities, SessionListCapabilities,
    SessionResumeCapabilities, SetSessionConfigOptionRequest, SetSessionModeRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, Client, ConnectTo, Error, ErrorCode, on_receive_notification, on_receive_request,
};
use std::sync::Arc;

/// Runs `work` (which answers its own responder) in a task of the connection.
fn spawn_answer(
    cx: &ConnectionTo<Client>,
    work: impl Future<Output = Result<(), Error>> + Send + 'static,
) -> Result<(), Error> {
    cx.spawn(async move {
        log_send(work.await);
        Ok(())
    })
}

/// Serves the agent role over `transport` until the client disconnects.
pub async fn connect(
    shared: Arc<Shared>,
    transport: impl ConnectTo<Agent> + 'static,
) -> Result<(), AcpBridgeError> {
    let (s1, s2, s3, s4, s5, s6, s7, s8, s9, s10) = (
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
        shared.clone(),
    );
    let (s11, s12, s13, s14) = (shared.clone(), shared.clone(), shared.clone(), shared);
    Agent
        .v1()
        .name("hecate")
        .on_receive_request(
            async move |r: InitializeRequest, resp, _cx| initialize(&s1, r, resp),
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: AuthenticateRequest, resp: Responder<AuthenticateResponse>, cx| {
                let shared = s2.clone();
                spawn_answer(&cx, async move { authenticate(&shared, r, resp).await })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: LogoutRequest, resp, cx| {
                let shared = s14.clone();
                spawn_answer(&cx, async move { logout(&shared, r, resp).await })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: NewSessionRequest, resp, cx| {
                let shared = s3.clone();
                spawn_answer(&cx, async move { new_session(&shared, r, resp).await })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: LoadSessionRequest, resp, cx: ConnectionTo<Client>| {
                let (shared, conn) = (s4.clone(), cx.clone());
                spawn_answer(&cx, async move { load_session(&shared, r, resp, &conn).await })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: ResumeSessionRequest, resp, cx: ConnectionTo<Client>| {
                let (shared, conn) = (s11.clone(), cx.clone());
                spawn_answer(&cx, async move { resume_session(&shared, r, resp, &conn).await })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: CloseSessionRequest, resp, cx| {
                let shared = s12.clone();
                spawn_answer(&cx, async move { close_session(&shared, r, resp).await })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: DeleteSessionRequest, resp, cx| {
                let shared = s13.clone();
                spawn_answer(&cx, async move { delete_session(&shared, r, resp).await })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: ListSessionsRequest, resp, cx| {
                let shared = s5.clone();
                spawn_answer(&cx, async move { list_sessions(&shared, r, resp).await })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: SetSessionModeRequest, resp, cx: ConnectionTo<Client>| {
                let (shared, conn) = (s6.clone(), cx.clone());
                spawn_answer(&cx, async move { set_mode(&shared, r, resp, &conn).await })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: SetSessionConfigOptionRequest, resp, cx: ConnectionTo<Client>| {
                let (shared, conn) = (s7.clone(), cx.clone());
                spawn_answer(&cx, async move {
                    set_config_option(&shared, r, resp, &conn).await
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: SetSessionModelRequest, resp, cx: ConnectionTo<Client>| {
                let (shared, conn) = (s10.clone(), cx.clone());
                spawn_answer(&cx, async move { set_model(&shared, r, resp, &conn).await })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: PromptRequest, resp, cx: ConnectionTo<Client>| {
                let shared = s8.clone();
                let sid = SessionId::from(r.session_id.0.to_string());
                let (ticket, cancel) = shared.prompt_received(&sid);
                let conn = cx.clone();
                spawn_answer(&cx, async move {
                    let answered = prompt(&shared, r, resp, conn, cancel).await;
                    shared.prompt_done(&sid, ticket);
                    answered
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |r: OversizedFrame, resp: Responder<serde_json::Value>, _cx| {
                resp.respond_with_error(
                    Error::new(
                        ErrorCode::INVALID_REQUEST,
                        format!(
                            "Invalid Request: the frame is {} bytes, over the {}-byte limit; \
                             it was not read",
                            r.bytes, r.limit
                        ),
                    )
                    .data(serde_json::json!({"bytes": r.bytes, "limit": r.limit})),
                )
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            async move |n: CancelNotification, _cx| {
                let sid = SessionId::from(n.session_id.0.to_string());
                if !s9.cancel_prompt(&sid) {
                    tracing::debug!(session = %sid, "cancel for a session with no prompt in flight");
                }
                Ok(())
            },
            on_receive_notification!(),
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
    shared.set_client_caps(DelegateCapabilities {
        read_text_file: caps.fs.read_text_file,
        write_text_file: caps.fs.write_text_file,
        terminal: caps.terminal,
        elicitation: ElicitationModes {
            form: caps.elicitation.as_ref().is_some_and(|e| e.supports_form()),
            url: caps.elicitation.as_ref().is_some_and(|e| e.supports_url()),
        },
    });
    shared.set_terminal_auth(caps.auth.terminal);
    let agent_caps = AgentCapabilities::new()
        .load_session(true)
        .prompt_capabilities(offered_content())
        .mcp_capabilities(McpCapabilities::new().http(true))
        .session_capabilities(
            SessionCapabilities::new()
                .list(SessionListCapabilities::new())
                .resume(SessionResumeCapabilities::new())
                .close(SessionCloseCapabilities::new())
                .delete(SessionDeleteCapabilities::new())
                .additional_directories(SessionAdditionalDirectoriesCapabilities::new()),
        )
        .auth(AgentAuthCapabilities::new().logout(LogoutCapabilities::new()));
    let setup = AuthMethodAgent::new(SETUP_METHOD, "Set up Hecate").description(
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
