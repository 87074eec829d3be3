//! The client side of one ACP connection: the SDK builder with a handler for
//! every agent→client message Hecate serves. Notifications are routed
//! synchronously (keeping update order); requests are answered from spawned tasks
//! so no handler ever blocks the dispatch loop (the SDK deadlock rule). Requests
//! without a handler get the SDK's method-not-found answer. When the turn's client
//! serves fs/terminal itself, those requests are forwarded to it (`editor.rs`);
//! elicitations go to it when it answers them (`elicitation.rs`).

use crate::adapters::acp::convert::{permission_outcome, permission_request};
use crate::adapters::acp::normalize::{normalize, raw_frame};
use crate::adapters::acp::services::routes::{ConnectionState, Route, ServingGuard};
use crate::adapters::acp::services::{editor, elicitation, fs};
use crate::domain::event::RuntimeEvent;
use crate::domain::provider_call::ReportedCost;
use agent_client_protocol::v1::schema::{
    CompleteElicitationNotification, CreateElicitationRequest, CreateTerminalRequest,
    CreateTerminalResponse, KillTerminalRequest, KillTerminalResponse, ReadTextFileRequest,
    ReleaseTerminalRequest, ReleaseTerminalResponse, RequestPermissionOutcome,
    RequestPermissionRequest, RequestPermissionResponse, SessionNotification, SessionUpdate,
    TerminalOutputRequest, WaitForTerminalExitRequest, WaitForTerminalExitResponse,
    WriteTextFileRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{
    Agent, Client, ConnectTo, Error as RpcError, UntypedMessage, on_receive_notification,
    on_receive_request,
};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

const SESSION_UPDATE: &str = "session/update";
const ELICITATION_COMPLETE: &str = "elicitation/complete";

fn serving(shared: &ConnectionState, native_id: &str) -> Option<ServingGuard> {
    shared.route(native_id).map(|r| r.activity.serving())
}

/// Routes one notification: `session/update` for a known native session becomes
/// runtime events; anything else (unknown sessions, late updates after a turn,
/// extension notifications) is dropped quietly.
fn on_notification(shared: &ConnectionState, n: &UntypedMessage) {
    if n.method() == ELICITATION_COMPLETE {
        relay_completion(shared, n);
        return;
    }
    if n.method() != SESSION_UPDATE {
        tracing::debug!(method = n.method(), "ignoring agent notification");
        return;
    }
    let params = n.params();
    let Some(native) = params.get("sessionId").and_then(Value::as_str) else {
        return;
    };
    let Some(route) = shared.route(native) else {
        tracing::trace!(
            session = native,
            "dropping update for a session nobody listens to"
        );
        return;
    };
    route.activity.touch();
    match serde_json::from_value::<SessionNotification>(params.clone()) {
        Ok(notification) => deliver(shared, &route, &notification),
        Err(e) => {
            tracing::debug!(error = %e, "session/update with an unknown shape");
            let _ = route.events.send(RuntimeEvent::Raw {
                data: json!({ "source": "acp", "method": SESSION_UPDATE, "params": params }),
            });
        }
    }
}

/// Passes a URL elicitation's `elicitation/complete` on to the editor it went to.
fn relay_completion(shared: &ConnectionState, n: &UntypedMessage) {
    let Ok(done) = serde_json::from_value::<CompleteElicitationNotification>(n.params().clone())
    else {
        tracing::debug!("elicitation/complete with an unknown shape");
        return;
    };
    let id = done.elicitation_id.0.to_string();
    match shared.take_url_elicitation(&id) {
        Some(delegate) => delegate.complete_elicitation(id),
        None => tracing::debug!(id, "elicitation/complete for an elicitation nobody relayed"),
    }
}

fn deliver(shared: &ConnectionState, route: &Route, notification: &SessionNotification) {
    if let (SessionUpdate::UsageUpdate(u), Some(turn)) = (&notification.update, &route.turn)
        && let Some(cost) = &u.cost
    {
        turn.cost.record(ReportedCost {
            amount: cost.amount,
            currency: cost.currency.clone(),
        });
    }
    let events = normalize(&notification.update);
    let has_raw = events.iter().any(|e| matches!(e, RuntimeEvent::Raw { .. }));
    for event in events {
        let _ = route.events.send(event);
    }
    if shared.raw_frames && !has_raw {
        let _ = route.events.send(raw_frame(notification));
    }
}

async fn answer_permission(
    shared: Arc<ConnectionState>,
    req: RequestPermissionRequest,
    responder: Responder<RequestPermissionResponse>,
) {
    let native = req.session_id.0.to_string();
    let route = shared.route(&native);
    let turn = route.as_ref().and_then(|r| r.turn.clone());
    let outcome = match (route, turn) {
        (Some(route), Some(turn)) => {
            let _serving = route.activity.serving();
            let request = permission_request(&req, turn.session_id.clone(), turn.run_id.clone());
            let agent_cancel = responder.cancellation();
            tokio::select! {
                answer = turn.asker.ask(request) => permission_outcome(&req, answer),
                _ = turn.cancel.cancelled() => RequestPermissionOutcome::Cancelled,
                _ = agent_cancel.cancelled() => RequestPermissionOutcome::Cancelled,
            }
        }
        _ => {
            tracing::debug!(session = %native, "permission request outside a turn; cancelling");
            RequestPermissionOutcome::Cancelled
        }
    };
    if let Err(e) = responder.respond(RequestPermissionResponse::new(outcome)) {
        tracing::debug!(error = %e.message, "could not answer a permission request");
    }
}

fn log_respond(result: Result<(), RpcError>) {
    if let Err(e) = result {
        tracing::debug!(error = %e.message, "could not answer an agent request");
    }
}

/// Runs the connection until `stop` is cancelled or the agent closes its stdout;
/// the connection handle is sent on `ready` as soon as it exists.
pub(crate) async fn run_connection(
    shared: Arc<ConnectionState>,
    transport: impl ConnectTo<Client> + 'static,
    ready: oneshot::Sender<ConnectionTo<Agent>>,
    stop: CancellationToken,
) -> Result<(), RpcError> {
    let s_notif = shared.clone();
    let s_perm = shared.clone();
    let s_elicit = shared.clone();
    let s_read = shared.clone();
    let s_write = shared.clone();
    let s_tcreate = shared.clone();
    let s_tout = shared.clone();
    let s_twait = shared.clone();
    let s_tkill = shared.clone();
    let s_trel = shared;
    Client
        .v1()
        .name("hecate")
        .on_receive_notification(
            async move |n: UntypedMessage, _cx: ConnectionTo<Agent>| {
                on_notification(&s_notif, &n);
                Ok(())
            },
            on_receive_notification!(),
        )
        .on_receive_request(
            async move |req: RequestPermissionRequest, responder, cx: ConnectionTo<Agent>| {
                let shared = s_perm.clone();
                cx.spawn(async move {
                    answer_permission(shared, req, responder).await;
                    Ok(())
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: CreateElicitationRequest, responder, cx: ConnectionTo<Agent>| {
                let shared = s_elicit.clone();
                cx.spawn(async move {
                    elicitation::answer(shared, req, responder).await;
                    Ok(())
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ReadTextFileRequest, responder, cx: ConnectionTo<Agent>| {
                let shared = s_read.clone();
                cx.spawn(async move {
                    let _serving = serving(&shared, &req.session_id.0);
                    log_respond(
                        responder.respond_with_result(fs::read_text_file(&shared, &req).await),
                    );
                    Ok(())
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: WriteTextFileRequest, responder, cx: ConnectionTo<Agent>| {
                let shared = s_write.clone();
                cx.spawn(async move {
                    let _serving = serving(&shared, &req.session_id.0);
                    log_respond(
                        responder.respond_with_result(fs::write_text_file(&shared, &req).await),
                    );
                    Ok(())
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: CreateTerminalRequest, responder, cx: ConnectionTo<Agent>| {
                // An editor's terminal cannot be confined: with a sandbox configured,
                // Hecate runs every terminal itself.
                let delegate = if s_tcreate.terminals.confined() {
                    None
                } else {
                    s_tcreate.delegate(&req.session_id.0, |c| c.terminal)
                };
                let shared = s_tcreate.clone();
                cx.spawn(async move {
                    let _serving = serving(&shared, &req.session_id.0);
                    let result = match delegate {
                        Some(d) => editor::create_terminal(&shared, d, &req).await,
                        None => shared
                            .terminals
                            .create(
                                &req,
                                &shared.workspace,
                                &shared.additional_directories(),
                                &shared.env,
                            )
                            .await
                            .map(CreateTerminalResponse::new),
                    };
                    log_respond(responder.respond_with_result(result));
                    Ok(())
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: TerminalOutputRequest, responder, cx: ConnectionTo<Agent>| {
                if let Some(d) = s_tout.editor_terminal(&req.terminal_id.0) {
                    let shared = s_tout.clone();
                    return cx.spawn(async move {
                        let _serving = serving(&shared, &req.session_id.0);
                        let result = editor::terminal_output(d, &req.terminal_id.0).await;
                        log_respond(responder.respond_with_result(result));
                        Ok(())
                    });
                }
                let _serving = serving(&s_tout, &req.session_id.0);
                responder.respond_with_result(s_tout.terminals.output(&req.terminal_id.0))
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: WaitForTerminalExitRequest, responder, cx: ConnectionTo<Agent>| {
                let shared = s_twait.clone();
                cx.spawn(async move {
                    let _serving = serving(&shared, &req.session_id.0);
                    let result = match shared.editor_terminal(&req.terminal_id.0) {
                        Some(d) => {
                            let native = req.session_id.0.as_ref();
                            editor::wait_for_exit(&shared, native, d, &req.terminal_id.0).await
                        }
                        None => shared.terminals.wait_for_exit(&req.terminal_id.0).await,
                    }
                    .map(WaitForTerminalExitResponse::new);
                    log_respond(responder.respond_with_result(result));
                    Ok(())
                })
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: KillTerminalRequest, responder, cx: ConnectionTo<Agent>| {
                if let Some(d) = s_tkill.editor_terminal(&req.terminal_id.0) {
                    return cx.spawn(async move {
                        let result = editor::kill(d, &req.terminal_id.0).await;
                        log_respond(
                            responder
                                .respond_with_result(result.map(|()| KillTerminalResponse::new())),
                        );
                        Ok(())
                    });
                }
                let result = s_tkill
                    .terminals
                    .kill(&req.terminal_id.0)
                    .map(|()| KillTerminalResponse::new());
                responder.respond_with_result(result)
            },
            on_receive_request!(),
        )
        .on_receive_request(
            async move |req: ReleaseTerminalRequest, responder, cx: ConnectionTo<Agent>| {
                if let Some(d) = s_trel.editor_terminal(&req.terminal_id.0) {
                    let shared = s_trel.clone();
                    return cx.spawn(async move {
                        let result = editor::release(&shared, d, &req.terminal_id.0).await;
                        log_respond(
                            responder.respond_with_result(
                                result.map(|()| ReleaseTerminalResponse::new()),
                            ),
                        );
                        Ok(())
                    });
                }
                let result = s_trel
                    .terminals
                    .release(&req.terminal_id.0)
                    .map(|()| ReleaseTerminalResponse::new());
                responder.respond_with_result(result)
            },
            on_receive_request!(),
        )
        .connect_with(transport, async move |cx: ConnectionTo<Agent>| {
            let _ = ready.send(cx.clone());
            // Run until Hecate stops the connection or the agent closes its stdout.
            tokio::select! {
                _ = stop.cancelled() => {}
                _ = cx.incoming_closed() => {}
            }
            Ok(())
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::acp::services::routes::Liveness;
    use crate::adapters::acp::services::terminal_sandbox::TerminalSandbox;

    fn shared_with_route(
        raw_frames: bool,
    ) -> (
        ConnectionState,
        tokio::sync::mpsc::UnboundedReceiver<RuntimeEvent>,
    ) {
        let shared = ConnectionState::new(
            std::env::temp_dir(),
            vec![],
            raw_frames,
            TerminalSandbox::default(),
        );
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        shared.set_route(
            "s1",
            Route {
                events: tx,
                turn: None,
                activity: Arc::new(Liveness::new()),
            },
        );
        (shared, rx)
    }

    fn drain(rx: &mut tokio::sync::mpsc::UnboundedReceiver<RuntimeEvent>) -> Vec<RuntimeEvent> {
        let mut out = Vec::new();
        while let Ok(e) = rx.try_recv() {
            out.push(e);
        }
        out
    }

    fn message(method: &str, params: Value) -> UntypedMessage {
        UntypedMessage::new(method, params).expect("message")
    }

    #[test]
    fn updates_route_by_session_and_keep_raw_frames() {
        let (shared, mut rx) = shared_with_route(true);
        let chunk = json!({"sessionId": "s1", "update": {"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi"}, "messageId": "m1"}, "_meta": {"x": 1}});
        on_notification(&shared, &message(SESSION_UPDATE, chunk));
        let events = drain(&mut rx);
        assert_eq!(events[0], RuntimeEvent::TextDelta { text: "hi".into() });
        assert!(
            matches!(&events[1], RuntimeEvent::Raw { data } if data["params"]["sessionId"] == "s1")
        );
        assert_eq!(events.len(), 2);
    }

    #[test]
    fn unknown_shapes_stay_raw_and_strangers_are_dropped() {
        let (shared, mut rx) = shared_with_route(false);
        let future_kind =
            json!({"sessionId": "s1", "update": {"sessionUpdate": "hologram", "x": 1}});
        on_notification(&shared, &message(SESSION_UPDATE, future_kind));
        let other_session = json!({"sessionId": "s2", "update": {"sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "late"}}});
        on_notification(&shared, &message(SESSION_UPDATE, other_session));
        on_notification(
            &shared,
            &message("_auth/status_update", json!({"state": "ok"})),
        );
        let events = drain(&mut rx);
        assert_eq!(events.len(), 1, "{events:?}");
        assert!(
            matches!(&events[0], RuntimeEvent::Raw { data } if data["params"]["update"]["sessionUpdate"] == "hologram")
        );
    }
}
