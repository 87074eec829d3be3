//! `hecate acp` naming threads: a thread starts as "Editor thread", its first
//! prompt names it (the editor hears a `session_info_update`, the store keeps
//! the title, `session/list` shows it), later prompts leave it, an external
//! agent's own `session_info_update` renames it, and `session/load` and
//! `session/resume` tell the editor the stored title.

use crate::support::acp_editor::*;
use crate::support::common::{Home, workspace};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ListSessionsRequest, LoadSessionRequest, ResumeSessionRequest, SessionId, SessionUpdate,
    StopReason,
};
use agent_client_protocol::{Agent, Error};
use serde_json::json;

/// The titles among `updates`' `session_info_update`s, in order.
fn titles(updates: &[SessionUpdate]) -> Vec<String> {
    updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::SessionInfoUpdate(i) => i.title.value().cloned(),
            _ => None,
        })
        .collect()
}

/// The title `session/list` shows for `sid`.
async fn listed_title(cx: &ConnectionTo<Agent>, sid: &SessionId) -> Result<String, Error> {
    let list = cx
        .send_request(ListSessionsRequest::new())
        .block_task()
        .await?;
    Ok(list
        .sessions
        .iter()
        .find(|s| &s.session_id == sid)
        .and_then(|s| s.title.clone())
        .expect("the session is listed with a title"))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_first_prompt_names_the_thread_and_a_reopened_thread_hears_its_title() {
    let (_server, home) = model_home("fixture-model");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    let sid = run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        assert!(
            titles(&updates.drain()).is_empty(),
            "no title before a prompt"
        );
        assert_eq!(listed_title(&cx, &sid).await?, "Editor thread");

        let first = "\n  Fix the   login bug\nwith more detail on the next line";
        assert_eq!(prompt(&cx, &sid, first).await?, StopReason::EndTurn);
        let seen = updates.drain();
        assert_eq!(titles(&seen), ["Fix the login bug"]);
        let announced = seen
            .iter()
            .find_map(|u| match u {
                SessionUpdate::SessionInfoUpdate(i) => i.updated_at.value().cloned(),
                _ => None,
            })
            .expect("the title comes with its time");
        assert!(announced.contains('T'), "RFC 3339: {announced}");
        assert_eq!(listed_title(&cx, &sid).await?, "Fix the login bug");

        assert_eq!(
            prompt(&cx, &sid, "and another thing").await?,
            StopReason::EndTurn
        );
        assert!(titles(&updates.drain()).is_empty(), "named once");
        assert_eq!(listed_title(&cx, &sid).await?, "Fix the login bug");
        Ok(sid)
    })
    .await
    .expect("first editor session");

    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        cx.send_request(LoadSessionRequest::new(sid.clone(), &ws))
            .block_task()
            .await?;
        let replay = updates.drain();
        assert_eq!(titles(&replay), ["Fix the login bug"], "load names it");
        assert!(
            matches!(replay.last(), Some(SessionUpdate::SessionInfoUpdate(_))),
            "after the replay"
        );
        cx.send_request(ResumeSessionRequest::new(sid.clone(), &ws))
            .block_task()
            .await?;
        assert_eq!(
            titles(&updates.drain()),
            ["Fix the login bug"],
            "resume names it"
        );
        Ok(())
    })
    .await
    .expect("second editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agents_own_title_reaches_the_editor_and_the_store() {
    let home = Home::empty();
    let script = json!({"turns": [
        {"match": "rename", "actions": [
            {"title": "  The agent's\n own   title "},
            {"text": "renamed"}
        ]}
    ]})
    .to_string();
    home.add_scripted_agent(&script, &[], "");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:fixture"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        updates.drain();
        assert_eq!(
            prompt(&cx, &sid, "please rename this").await?,
            StopReason::EndTurn
        );
        let seen = updates.drain();
        assert_eq!(
            titles(&seen),
            ["please rename this", "The agent's own title"],
            "Hecate's name first, then the agent's"
        );
        assert_eq!(answer(&seen), "renamed");
        assert_eq!(listed_title(&cx, &sid).await?, "The agent's own title");
        Ok(())
    })
    .await
    .expect("editor session");
}
