//! An external agent's elicitations through `hecate acp`: a form or a sign-in
//! link the agent asks for reaches the editor that drives the turn (in the
//! editor's session) when the editor advertised elicitation, and the editor's
//! answer (accept with content, decline, cancel) reaches the agent; Hecate
//! advertises elicitation to the agent only for such an editor. Without one
//! (an editor without the capability, or a turn from the CLI) the agent is
//! declined at once with Hecate's reason, and content that does not match the
//! requested form is refused with an error naming the field.

use crate::support::acp_editor::*;
use crate::support::common::{Home, text, workspace};
use agent_client_protocol::v1::schema::{ElicitationMode, NewSessionRequest};
use serde_json::{Value, json};
use std::path::Path;
use std::time::Duration;

/// The fixture agent's turns: a form with a required name and a bounded
/// count, and a sign-in link it reports completed once accepted.
fn script() -> String {
    json!({"turns": [
        {"match": "form", "actions": [{"elicit": {
            "message": "Who are you?",
            "schema": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string", "minLength": 1},
                "count": {"type": "integer", "minimum": 1, "maximum": 5}}}}}]},
        {"match": "sign in", "actions": [{"elicit": {
            "message": "Sign in to continue",
            "url": "https://example.org/login?state=abc",
            "id": "login-1",
            "complete": true}}]}
    ]})
    .to_string()
}

fn home() -> Home {
    let home = Home::empty();
    home.add_scripted_agent(&script(), &[], "");
    home
}

/// Runs one prompt of `text` to the fixture agent from an editor advertising
/// `caps`; answers the agent's text.
async fn turn(home: &Home, editor: Editor, caps: Caps, ws: &Path, text: &str) -> String {
    let (_hecate, updates) = one_prompt(
        home,
        &["--target", "agent:fixture"],
        editor,
        caps,
        NewSessionRequest::new(ws),
        text,
    )
    .await;
    answer(&updates)
}

fn answering(elicit: Elicit) -> Editor {
    let editor = Editor::default();
    editor.with(|i| i.elicit = elicit);
    editor
}

#[tokio::test(flavor = "multi_thread")]
async fn an_editor_answers_an_agents_form_and_the_answer_reaches_the_agent() {
    let home = home();
    let (_g, ws) = workspace();
    let editor = answering(Elicit::Accept(json!({"name": "Ada", "count": 3})));
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, editor.clone(), async |cx, mut updates| {
        initialize(&cx, Caps::ELICITATION).await?;
        let sid = new_session(&cx, &ws).await?.session_id;
        prompt(&cx, &sid, "form please").await?;
        assert_eq!(
            answer(&updates.drain()),
            r#"elicitation: accept {"count":3,"name":"Ada"}"#,
            "the agent was told it may elicit and got the editor's content"
        );
        let asked = editor.with(|i| i.elicitations.clone());
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].message, "Who are you?");
        let request = serde_json::to_value(&asked[0]).expect("json");
        assert_eq!(
            request["sessionId"],
            sid.0.as_ref(),
            "in the editor's session"
        );
        assert_eq!(request["mode"], "form");
        assert_eq!(request["requestedSchema"]["required"], json!(["name"]));
        assert_eq!(
            request["requestedSchema"]["properties"]["count"]["maximum"],
            5
        );

        editor.with(|i| i.elicit = Elicit::Decline);
        prompt(&cx, &sid, "form again").await?;
        assert_eq!(answer(&updates.drain()), "elicitation: decline");
        editor.with(|i| i.elicit = Elicit::Cancel);
        prompt(&cx, &sid, "form once more").await?;
        assert_eq!(answer(&updates.drain()), "elicitation: cancel");
        assert_eq!(editor.with(|i| i.elicitations.len()), 3);
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sign_in_link_reaches_the_editor_and_its_completion_follows() {
    let home = home();
    let (_g, ws) = workspace();
    let editor = answering(Elicit::Accept(Value::Null));
    let said = turn(&home, editor.clone(), Caps::ELICITATION, &ws, "sign in").await;
    assert_eq!(said, "elicitation: accept null");
    let asked = editor.with(|i| i.elicitations.clone());
    assert_eq!(asked.len(), 1);
    match &asked[0].mode {
        ElicitationMode::Url(u) => {
            assert_eq!(u.url, "https://example.org/login?state=abc");
            assert_eq!(u.elicitation_id.0.as_ref(), "login-1");
        }
        other => panic!("a URL elicitation, not {other:?}"),
    }
    assert_eq!(
        editor.with(|i| i.elicitations_completed.clone()),
        ["login-1"],
        "the agent's elicitation/complete reached the editor before the turn ended"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn content_that_does_not_match_the_form_is_refused_with_the_field_named() {
    let home = home();
    let (_g, ws) = workspace();
    for (content, why) in [
        (json!({"name": 7}), r#"the field "name" must be a string"#),
        (
            json!({"name": "Ada", "count": 9}),
            r#"the field "count" is 9, outside 1..5"#,
        ),
        (
            json!({"name": "Ada", "age": 40}),
            r#"the field "age" is not in the requested form"#,
        ),
        (
            json!({"count": 2}),
            r#"the required field "name" is missing"#,
        ),
    ] {
        let editor = answering(Elicit::Accept(content.clone()));
        let said = turn(&home, editor, Caps::ELICITATION, &ws, "form please").await;
        assert!(
            said.starts_with(
                "elicitation error: -32602 the editor's answer does not match the requested form"
            ),
            "{content}: {said}"
        );
        assert!(said.contains(why), "{content}: {said}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn without_an_editor_that_elicits_the_agent_is_declined_with_a_reason() {
    let home = home();
    let (_g, ws) = workspace();
    let editor = answering(Elicit::Accept(json!({"name": "Ada"})));
    let said = turn(&home, editor.clone(), Caps::ALL, &ws, "form please").await;
    assert_eq!(
        said, "elicitation (unadvertised): decline (elicitation_no_editor)",
        "not advertised to the agent, and declined at once when it asks anyway"
    );
    assert!(
        editor.with(|i| i.elicitations.is_empty()),
        "an editor without the capability is never asked"
    );

    let w = ws.display().to_string();
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        tokio::task::spawn_blocking(move || {
            home.run(&[
                "chat",
                "--agent",
                "fixture",
                "--workspace",
                &w,
                "form please",
            ])
        }),
    )
    .await
    .expect("the CLI turn ends without waiting for anybody")
    .expect("cli");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains("elicitation (unadvertised): decline (elicitation_no_editor)"),
        "{stdout}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sign_in_link_with_no_editor_to_open_it_is_declined_too() {
    let home = home();
    let (_g, ws) = workspace();
    let said = turn(&home, Editor::default(), Caps::default(), &ws, "sign in").await;
    assert_eq!(
        said,
        "elicitation (unadvertised): decline (elicitation_no_editor)"
    );
}
