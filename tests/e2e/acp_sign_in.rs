//! Signing in to an external agent from the editor through `hecate acp`: an
//! agent that answers `session/new` with `auth_required` makes Hecate answer
//! the same, with the agent's methods under namespaced ids
//! (`agent:ADAPTER_ID:METHOD_ID`); `authenticate` with one reaches the agent's
//! running process and the retried `session/new` works; `logout` reaches it
//! too. Unknown methods and agents that are not running get stable errors.

use crate::support::acp_editor::*;
use crate::support::common::{Home, workspace};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthenticateRequest, ListSessionsRequest, LogoutRequest, StopReason,
};
use agent_client_protocol::{Agent, Error, ErrorCode};
use serde_json::{Value, json};
use std::path::Path;

/// The `authenticate`/`logout`/login lines the fixture agent recorded.
pub(crate) fn auth_log(state: &str) -> Vec<String> {
    std::fs::read_to_string(Path::new(state).join("auth.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

async fn authenticate(cx: &ConnectionTo<Agent>, id: &str) -> Result<(), Error> {
    cx.send_request(AuthenticateRequest::new(id.to_string()))
        .block_task()
        .await
        .map(|_| ())
}

/// The data of an ACP error (`null` when it has none).
pub(crate) fn data(e: &Error) -> Value {
    e.data.clone().unwrap_or(Value::Null)
}

/// Asserts `r` failed as invalid params with `data.reason` `want`.
fn assert_reason(r: Result<(), Error>, want: &str) -> Value {
    let e = r.expect_err("refused");
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
    assert_eq!(data(&e)["reason"], want, "{e:?}");
    data(&e)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_signs_in_to_an_agent_through_hecate_and_out_again() {
    let home = Home::empty();
    let state = home.add_scripted_agent(&agent_script(), &["--sign-in"], "");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let init = initialize(&cx, Caps::default()).await?;
        assert!(
            init.agent_capabilities.auth.logout.is_some(),
            "logout advertised"
        );
        assert_eq!(init.auth_methods[0].id().0.as_ref(), "hecate-setup");

        assert_reason(
            authenticate(&cx, "agent:fixture:login").await,
            "agent_not_running",
        );

        let e = new_session(&cx, &ws).await.expect_err("sign-in first");
        assert_eq!(e.code, ErrorCode::AUTH_REQUIRED, "{e:?}");
        assert_eq!(
            data(&e)["auth_methods"],
            json!([{"id": "agent:fixture:login", "name": "Log in",
                    "description": "Signs in to the fixture"}]),
            "the agent's own methods, namespaced; its terminal method is not offered as one"
        );
        assert_eq!(
            data(&e)["terminal_methods"][0]["command"],
            "hecate adapters login fixture tty-login",
            "an editor without auth.terminal is told the command instead"
        );
        let listed = cx
            .send_request(ListSessionsRequest::new())
            .block_task()
            .await?;
        assert!(listed.sessions.is_empty(), "the refused thread is not kept");

        let unknown = assert_reason(
            authenticate(&cx, "agent:fixture:sso").await,
            "auth_method_unknown",
        );
        assert_eq!(unknown["available"], json!(["agent:fixture:login"]));
        assert_reason(
            authenticate(&cx, "agent:fixture:tty-login").await,
            "auth_method_terminal",
        );
        assert_reason(
            authenticate(&cx, "agent:nobody:login").await,
            "auth_method_unknown",
        );
        assert_reason(authenticate(&cx, "login").await, "auth_method_unknown");
        assert!(auth_log(&state).is_empty(), "nothing reached the agent");

        authenticate(&cx, "agent:fixture:login").await?;
        assert_eq!(auth_log(&state), ["authenticate login"]);
        let sid = new_session(&cx, &ws).await?.session_id;
        assert_eq!(prompt(&cx, &sid, "hello").await?, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "echo: hello");

        cx.send_request(LogoutRequest::new()).block_task().await?;
        assert_eq!(auth_log(&state), ["authenticate login", "logout"]);
        Ok(())
    })
    .await
    .expect("editor session");

    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        initialize(&cx, Caps::default()).await?;
        assert_reason(
            cx.send_request(LogoutRequest::new())
                .block_task()
                .await
                .map(|_| ()),
            "agent_not_running",
        );
        let e = new_session(&cx, &ws).await.expect_err("signed out");
        assert_eq!(e.code, ErrorCode::AUTH_REQUIRED, "{e:?}");
        Ok(())
    })
    .await
    .expect("second editor session");
}
