//! An external agent's options and mode chosen in one `hecate acp` process,
//! stored with the session and applied again in the next: after
//! `session/load` and after `session/resume` the editor sees the chosen values
//! and the fixture agent works with them (its `/config` and the model its
//! calls name); a stored choice the agent no longer offers is dropped with a
//! warning, never an error; a choice the store cannot keep is the editor's
//! error and reaches neither the agent nor the thread.

use super::{agent_options_home, option, set_mode, set_option};
use crate::support::acp_editor::*;
use crate::support::common::{Home, workspace};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    LoadSessionRequest, ResumeSessionRequest, SessionConfigOptionValue, SessionId,
    SessionModeState, StopReason,
};
use agent_client_protocol::{Agent, Error, ErrorCode};
use serde_json::{Value, json};
use std::path::Path;

/// The operator chose the fixture's mode, so the editor may pick any mode.
const OPERATOR_MODES: &str = "[agents.modes]\nfixture = \"ask\"\n";

/// Reattaches to `sid` with `session/load` (`resume` false) or
/// `session/resume`; answers the options (JSON) and modes offered.
async fn reattach(
    cx: &ConnectionTo<Agent>,
    sid: &SessionId,
    ws: &Path,
    resume: bool,
) -> Result<(Value, Option<SessionModeState>), Error> {
    let (options, modes) = if resume {
        let r = cx
            .send_request(ResumeSessionRequest::new(sid.clone(), ws))
            .block_task()
            .await?;
        (r.config_options, r.modes)
    } else {
        let r = cx
            .send_request(LoadSessionRequest::new(sid.clone(), ws))
            .block_task()
            .await?;
        (r.config_options, r.modes)
    };
    let options = serde_json::to_value(options.expect("options")).expect("json");
    Ok((options, modes))
}

/// Runs `main` in a fresh `hecate acp` on `home` and waits for it to exit.
async fn in_process<R>(
    home: &Home,
    main: impl AsyncFnOnce(ConnectionTo<Agent>, Updates) -> Result<R, Error>,
) -> (R, String) {
    let (mut hecate, transport) = Hecate::spawn(home, &[]);
    let r = run_editor(transport, Editor::default(), main)
        .await
        .expect("editor session");
    assert_eq!(hecate.exit_code().await, Some(0), "{}", hecate.stderr());
    (r, hecate.stderr())
}

/// The rows of `session_choices` in `home`'s SQLite store.
fn stored_rows(home: &Home) -> i64 {
    let db = rusqlite::Connection::open(home.data_dir().join(hecate::store::sqlite::DB_FILE))
        .expect("open the store");
    db.query_row("SELECT COUNT(*) FROM session_choices", [], |r| r.get(0))
        .expect("count")
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agents_choices_outlive_the_process_through_load_and_resume() {
    let (server, home) = agent_options_home(OPERATOR_MODES);
    let (_g, ws) = workspace();
    let (sid, _) = in_process(&home, async |cx, _updates| {
        let sid = open(&cx, &ws).await?;
        set_option(&cx, &sid, "model", "fixture-large".into()).await?;
        set_option(&cx, &sid, "fast", SessionConfigOptionValue::boolean(true)).await?;
        set_mode(&cx, &sid, "auto").await?;
        Ok(sid)
    })
    .await;
    assert_eq!(stored_rows(&home), 3, "two options and the mode");

    for resume in [false, true] {
        let how = if resume { "resume" } else { "load" };
        in_process(&home, async |cx, mut updates| {
            initialize(&cx, Caps::default()).await?;
            let (options, modes) = reattach(&cx, &sid, &ws, resume).await?;
            assert_eq!(
                option(&options, "model")["currentValue"],
                "fixture-large",
                "{how}"
            );
            assert_eq!(option(&options, "fast")["currentValue"], true, "{how}");
            assert_eq!(option(&options, "mode")["currentValue"], "auto", "{how}");
            let modes = modes.expect("the agent's modes");
            assert_eq!(modes.current_mode_id.0.as_ref(), "auto", "{how}");
            updates.drain();
            assert_eq!(prompt(&cx, &sid, "/config").await?, StopReason::EndTurn);
            let text = answer(&updates.drain());
            assert!(
                text.contains("config: model=fixture-large reasoning=low fast=true mode=auto"),
                "{how}: the agent got the choices back: {text}"
            );
            assert_eq!(
                prompt(&cx, &sid, &format!("hello after {how}")).await?,
                StopReason::EndTurn
            );
            let text = answer(&updates.drain());
            assert!(text.contains("model: echo: hello after"), "{how}: {text}");
            Ok(())
        })
        .await;
    }
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r["body"]["model"].clone())
        .collect();
    assert_eq!(
        models,
        [json!("fixture-large"), json!("fixture-large")],
        "each process's agent called the model the editor chose"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_choice_the_agent_no_longer_offers_is_dropped_without_an_error() {
    let (_server, home) = agent_options_home("");
    let (_g, ws) = workspace();
    let (sid, _) = in_process(&home, async |cx, _updates| {
        let sid = open(&cx, &ws).await?;
        set_option(&cx, &sid, "model", "fixture-large".into()).await?;
        Ok(sid)
    })
    .await;
    assert_eq!(stored_rows(&home), 1);
    // The agent now offers no config options at all.
    home.add_scripted_agent(
        "{\"turns\": []}",
        &["--modes"],
        "[quirks]\ninitial_mode = \"ask\"\n",
    );
    let (_, stderr) = in_process(&home, async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let (options, _) = reattach(&cx, &sid, &ws, false).await?;
        let ids: Vec<&str> = options
            .as_array()
            .expect("options")
            .iter()
            .filter_map(|o| o["id"].as_str())
            .collect();
        assert_eq!(ids, ["target"], "{options}");
        updates.drain();
        assert_eq!(prompt(&cx, &sid, "still here").await?, StopReason::EndTurn);
        Ok(())
    })
    .await;
    assert!(stderr.contains("no longer taken"), "{stderr}");
    assert_eq!(stored_rows(&home), 0, "the stale choice is deleted");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_choice_the_store_cannot_keep_is_an_error_and_changes_nothing() {
    let (_server, home) = agent_options_home(OPERATOR_MODES);
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        let db = rusqlite::Connection::open(home.data_dir().join(hecate::store::sqlite::DB_FILE))
            .expect("open the store");
        db.execute_batch(
            "CREATE TRIGGER refuse_choices BEFORE INSERT ON session_choices \
             BEGIN SELECT RAISE(ABORT, 'the disk is full'); END;",
        )
        .expect("trigger");
        let e = set_option(&cx, &sid, "model", "fixture-large".into())
            .await
            .expect_err("the store refused");
        assert_eq!(e.code, ErrorCode::INTERNAL_ERROR, "{e:?}");
        assert_eq!(
            e.data.clone().unwrap_or_default()["type"],
            "store_error",
            "{e:?}"
        );
        let e = set_mode(&cx, &sid, "auto")
            .await
            .expect_err("the store refused");
        assert_eq!(
            e.data.clone().unwrap_or_default()["type"],
            "store_error",
            "{e:?}"
        );
        updates.drain();
        assert_eq!(prompt(&cx, &sid, "/config").await?, StopReason::EndTurn);
        let text = answer(&updates.drain());
        assert!(
            text.contains("config: model=fixture-small reasoning=low fast=false mode=ask"),
            "the agent was not asked: {text}"
        );

        db.execute_batch("DROP TRIGGER refuse_choices;")
            .expect("drop");
        let after = set_option(&cx, &sid, "reasoning", "high".into()).await?;
        assert_eq!(
            option(&after, "model")["currentValue"],
            "fixture-small",
            "the refused choice was not kept anywhere"
        );
        assert_eq!(option(&after, "reasoning")["currentValue"], "high");
        Ok(())
    })
    .await
    .expect("editor session");
    assert_eq!(stored_rows(&home), 1);
}
