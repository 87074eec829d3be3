//! Terminal sign-in of an external agent through `hecate acp` (ACP `type:
//! terminal` auth methods). Hecate advertises `auth.terminal` to agents, so the
//! fixture agent offers its terminal method; an editor that advertised
//! `auth.terminal` gets it as a terminal method of Hecate's own command (`hecate
//! acp ... --agent-login fixture -- --login`) with the agent's env, runs it like
//! an editor would, and its retried `session/new` reaches a new agent process
//! that sees the login. A failed login keeps its exit code; an editor without
//! `auth.terminal` is told the `hecate adapters login` command instead, which
//! works on its own; `authenticate` never takes a terminal method.

use crate::acp_sign_in::{auth_log, data};
use crate::support::acp_editor::*;
use crate::support::common::{Home, text, workspace};
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    AuthCapabilities, AuthenticateRequest, ClientCapabilities, InitializeRequest, StopReason,
};
use agent_client_protocol::{Agent, Error, ErrorCode};
use serde_json::{Value, json};
use std::process::Output;

/// The editor's configured invocation: `hecate acp ARGS`.
const EDITOR_ARGS: [&str; 2] = ["--target", "agent:fixture"];

/// `initialize` as an editor that runs terminal sign-ins.
async fn initialize_with_terminal_auth(cx: &ConnectionTo<Agent>) -> Result<(), Error> {
    let caps = ClientCapabilities::new().auth(AuthCapabilities::new().terminal(true));
    cx.send_request(InitializeRequest::new(ProtocolVersion::V1).client_capabilities(caps))
        .block_task()
        .await
        .map(|_| ())
}

/// Runs `hecate args...` in `home` with `env` set, as a terminal would.
async fn run_hecate(home: &Home, args: &[String], env: &[(String, String)]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut cmd = home.cmd(&args);
    cmd.envs(env.iter().map(|(k, v)| (k, v)));
    tokio::time::timeout(STEP, tokio::process::Command::from(cmd).output())
        .await
        .expect("hecate ends in time")
        .expect("run hecate")
}

/// Runs a terminal method as an editor does: its configured invocation of
/// Hecate with the method's `args` appended and its `env` set.
async fn run_method(home: &Home, method: &Value) -> Output {
    let mut args: Vec<String> = vec!["acp".into()];
    args.extend(EDITOR_ARGS.iter().map(|a| a.to_string()));
    for a in method["args"].as_array().expect("args") {
        args.push(a.as_str().expect("arg").to_string());
    }
    let env: Vec<(String, String)> = method["env"]
        .as_object()
        .map(|o| {
            o.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    run_hecate(home, &args, &env).await
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_runs_the_agents_terminal_login_through_hecate_and_the_retry_works() {
    let home = Home::empty();
    let state = home.add_scripted_agent(&agent_script(), &["--terminal-sign-in"], "");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &EDITOR_ARGS);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize_with_terminal_auth(&cx).await?;
        let e = new_session(&cx, &ws).await.expect_err("sign-in first");
        assert_eq!(e.code, ErrorCode::AUTH_REQUIRED, "{e:?}");
        let method = json!({
            "type": "terminal",
            "id": "agent:fixture:tty-login",
            "name": "Log in in a terminal",
            "description": "Runs the fixture's own login",
            "args": ["--agent-login", "fixture", "--agent-login-env", "FIXTURE_LOGIN_USER",
                     "--", "--login"],
            "env": {"FIXTURE_LOGIN_USER": "tester"}
        });
        assert_eq!(data(&e)["auth_methods"], json!([method]), "{e:?}");
        assert!(data(&e).get("terminal_methods").is_none(), "{e:?}");

        let refused = cx
            .send_request(AuthenticateRequest::new("agent:fixture:tty-login"))
            .block_task()
            .await
            .expect_err("a terminal method is never authenticated");
        assert_eq!(refused.code, ErrorCode::INVALID_PARAMS, "{refused:?}");
        assert_eq!(data(&refused)["reason"], "auth_method_terminal");
        assert!(auth_log(&state).is_empty(), "nothing reached the agent");

        let login = run_method(&home, &method).await;
        let (out, err) = text(&login);
        assert_eq!(login.status.code(), Some(0), "{out}\n{err}");
        assert!(out.contains("fixture: logged in as tester"), "{out}");
        assert_eq!(auth_log(&state), ["terminal login tester"]);

        let sid = new_session(&cx, &ws).await?.session_id;
        assert_eq!(prompt(&cx, &sid, "hello").await?, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "echo: hello");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failed_terminal_login_keeps_its_exit_code_and_the_agent_still_asks() {
    let home = Home::empty();
    let state = home.add_scripted_agent(
        &agent_script(),
        &["--terminal-sign-in", "--terminal-sign-in-exit", "5"],
        "",
    );
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &EDITOR_ARGS);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        initialize_with_terminal_auth(&cx).await?;
        let e = new_session(&cx, &ws).await.expect_err("sign-in first");
        let method = data(&e)["auth_methods"][0].clone();
        assert_eq!(
            method["args"],
            json!([
                "--agent-login",
                "fixture",
                "--agent-login-env",
                "FIXTURE_LOGIN_USER",
                "--",
                "--login",
                "--login-exit",
                "5"
            ])
        );
        let login = run_method(&home, &method).await;
        let (_, err) = text(&login);
        assert_eq!(login.status.code(), Some(5), "{err}");
        assert!(err.contains("sign-in of agent fixture failed"), "{err}");
        assert_eq!(auth_log(&state), ["terminal login failed 5"]);
        let again = new_session(&cx, &ws)
            .await
            .expect_err("still not signed in");
        assert_eq!(again.code, ErrorCode::AUTH_REQUIRED, "{again:?}");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_without_terminal_auth_is_told_the_command_and_it_signs_in() {
    let home = Home::empty();
    let state = home.add_scripted_agent(&agent_script(), &["--terminal-sign-in"], "");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &EDITOR_ARGS);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let e = new_session(&cx, &ws).await.expect_err("sign-in first");
        assert_eq!(e.code, ErrorCode::AUTH_REQUIRED, "{e:?}");
        assert_eq!(
            data(&e)["auth_methods"],
            json!([]),
            "no terminal method as such"
        );
        assert_eq!(
            data(&e)["terminal_methods"],
            json!([{"id": "agent:fixture:tty-login", "name": "Log in in a terminal",
                    "description": "Runs the fixture's own login",
                    "command": "hecate adapters login fixture tty-login"}])
        );
        assert!(
            e.message
                .contains("`hecate adapters login fixture tty-login`"),
            "{e:?}"
        );

        let login = run_hecate(
            &home,
            &["adapters".into(), "login".into(), "fixture".into()],
            &[],
        )
        .await;
        let (out, err) = text(&login);
        assert_eq!(login.status.code(), Some(0), "{out}\n{err}");
        assert!(out.contains("fixture: logged in as tester"), "{out}");
        assert!(err.contains("signed in to fixture"), "{err}");
        assert_eq!(auth_log(&state), ["terminal login tester"]);

        let sid = new_session(&cx, &ws).await?.session_id;
        assert_eq!(prompt(&cx, &sid, "hi").await?, StopReason::EndTurn);
        assert_eq!(answer(&updates.drain()), "echo: hi");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn logins_that_cannot_run_say_why() {
    let home = Home::empty();
    home.add_scripted_agent(&agent_script(), &[], "");
    let argv = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();

    let unknown = run_hecate(
        &home,
        &argv(&["acp", "--agent-login", "nobody", "--", "x"]),
        &[],
    )
    .await;
    let (_, err) = text(&unknown);
    assert_eq!(unknown.status.code(), Some(1), "{err}");
    assert!(
        err.contains("cannot run the sign-in of agent nobody") && err.contains("not registered"),
        "{err}"
    );

    let unset = run_hecate(
        &home,
        &argv(&[
            "acp",
            "--agent-login",
            "fixture",
            "--agent-login-env",
            "FIXTURE_NOPE",
            "--",
        ]),
        &[],
    )
    .await;
    let (_, err) = text(&unset);
    assert_eq!(unset.status.code(), Some(1), "{err}");
    assert!(err.contains("FIXTURE_NOPE is not set"), "{err}");

    let none = run_hecate(&home, &argv(&["adapters", "login", "fixture"]), &[]).await;
    let (_, err) = text(&none);
    assert_ne!(none.status.code(), Some(0), "{err}");
    assert!(err.contains("offers no terminal sign-in method"), "{err}");
}
