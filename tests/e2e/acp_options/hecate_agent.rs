//! Hecate's own agent as an editor's target offers a `thought_level` (its model
//! takes a reasoning effort) and a `tools` option (`all`, `read_only`, `none`):
//! the fixture model's recorded requests show the effort asked for and the
//! tools offered (every built-in, the read-only ones, or no `tools` at all);
//! both choices are stored with the session and come back after `session/load`
//! and `session/resume` in a new process; a value the option does not take is
//! refused with the stable reason.

use super::option;
use crate::support::acp_editor::*;
use crate::support::agent::{WIRES, agent_home_with};
use crate::support::common::{Home, ModelServer, workspace};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    LoadSessionRequest, ResumeSessionRequest, SessionConfigOptionValue, SessionId,
    SetSessionConfigOptionRequest, StopReason,
};
use agent_client_protocol::{Agent, Error, ErrorCode};
use serde_json::{Value, json};
use std::path::Path;

/// The Hecate agent target on the fixture model.
const TARGET: &str = "hecate:fix/gpt-fixture";

/// A home whose provider `fix` (OpenAI wire) points at `server` and declares
/// `gpt-fixture`, a model that takes a reasoning effort.
fn reasoning_home(server: &ModelServer) -> Home {
    let mut home = agent_home_with(
        server,
        WIRES[0],
        "",
        "[providers.fix.capabilities.\"gpt-fixture\"]\nreasoning = true\n",
    );
    home.set("PROVIDER_FIX_MODELS", "gpt-fixture");
    home
}

async fn choose(
    cx: &ConnectionTo<Agent>,
    sid: &SessionId,
    id: &str,
    value: &str,
) -> Result<Value, Error> {
    let r = cx
        .send_request(SetSessionConfigOptionRequest::new(
            sid.clone(),
            id.to_string(),
            SessionConfigOptionValue::value_id(value.to_string()),
        ))
        .block_task()
        .await?;
    Ok(serde_json::to_value(r.config_options).expect("json"))
}

fn ids(options: &Value) -> Vec<String> {
    options
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["id"].as_str().map(str::to_string))
        .collect()
}

/// The (reasoning effort, tool names) of every request the model received.
fn asked(server: &ModelServer) -> Vec<(Value, Option<Vec<String>>)> {
    server
        .requests()
        .iter()
        .map(|r| {
            let tools = r["body"].get("tools").map(|t| {
                t.as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
                    .collect()
            });
            (r["body"]["reasoning_effort"].clone(), tools)
        })
        .collect()
}

/// Runs `main` in a fresh `hecate acp --target TARGET` on `home`.
async fn in_process<R>(
    home: &Home,
    main: impl AsyncFnOnce(ConnectionTo<Agent>, Updates) -> Result<R, Error>,
) -> R {
    let (mut hecate, transport) = Hecate::spawn(home, &["--target", TARGET]);
    let r = run_editor(transport, Editor::default(), main)
        .await
        .expect("editor session");
    assert_eq!(hecate.exit_code().await, Some(0), "{}", hecate.stderr());
    r
}

/// Reattaches to `sid` (`session/resume` when `resume`, else `session/load`);
/// answers the options offered.
async fn reattach(
    cx: &ConnectionTo<Agent>,
    sid: &SessionId,
    ws: &Path,
    resume: bool,
) -> Result<Value, Error> {
    let options = if resume {
        cx.send_request(ResumeSessionRequest::new(sid.clone(), ws))
            .block_task()
            .await?
            .config_options
    } else {
        cx.send_request(LoadSessionRequest::new(sid.clone(), ws))
            .block_task()
            .await?
            .config_options
    };
    Ok(serde_json::to_value(options.expect("options")).expect("json"))
}

#[tokio::test(flavor = "multi_thread")]
async fn hecates_agent_takes_a_thought_level_and_tools_and_keeps_them_across_processes() {
    let server = ModelServer::start(None);
    let home = reasoning_home(&server);
    let (_g, ws) = workspace();
    let sid = in_process(&home, async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let new = new_session(&cx, &ws).await?;
        let options = serde_json::to_value(new.config_options.expect("options")).expect("json");
        assert_eq!(ids(&options), ["target", "model", "thought_level", "tools"]);
        assert_eq!(option(&options, "thought_level")["currentValue"], "default");
        let tools = option(&options, "tools");
        assert_eq!(tools["currentValue"], "all");
        let values: Vec<&str> = tools["options"]
            .as_array()
            .expect("choices")
            .iter()
            .filter_map(|o| o["value"].as_str())
            .collect();
        assert_eq!(values, ["all", "read_only", "none"]);
        let sid = new.session_id;
        assert_eq!(prompt(&cx, &sid, "one").await?, StopReason::EndTurn);

        choose(&cx, &sid, "thought_level", "high").await?;
        let after = choose(&cx, &sid, "tools", "read_only").await?;
        assert_eq!(option(&after, "tools")["currentValue"], "read_only");
        assert_eq!(option(&after, "thought_level")["currentValue"], "high");
        let e = choose(&cx, &sid, "tools", "some")
            .await
            .expect_err("not an access");
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
        let data = e.data.clone().unwrap_or_default();
        assert_eq!(data["reason"], "config_value_invalid", "{e:?}");
        assert_eq!(data["available"], json!(["all", "read_only", "none"]));
        assert_eq!(prompt(&cx, &sid, "two").await?, StopReason::EndTurn);
        updates.drain();
        Ok(sid)
    })
    .await;

    in_process(&home, async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let options = reattach(&cx, &sid, &ws, false).await?;
        assert_eq!(option(&options, "thought_level")["currentValue"], "high");
        assert_eq!(option(&options, "tools")["currentValue"], "read_only");
        choose(&cx, &sid, "tools", "none").await?;
        assert_eq!(prompt(&cx, &sid, "three").await?, StopReason::EndTurn);
        updates.drain();
        Ok(())
    })
    .await;

    in_process(&home, async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let options = reattach(&cx, &sid, &ws, true).await?;
        assert_eq!(option(&options, "thought_level")["currentValue"], "high");
        assert_eq!(option(&options, "tools")["currentValue"], "none");
        assert_eq!(prompt(&cx, &sid, "four").await?, StopReason::EndTurn);
        updates.drain();
        Ok(())
    })
    .await;

    let read_only: Vec<String> = ["read_file", "list_dir", "update_plan"]
        .map(String::from)
        .to_vec();
    let got = asked(&server);
    assert_eq!(got.len(), 4, "{got:?}");
    assert_eq!(got[0].0, Value::Null, "the model's default at first");
    assert_eq!(
        got[0].1.as_ref().map(Vec::len),
        Some(8),
        "every built-in: {got:?}"
    );
    assert_eq!(got[1], (json!("high"), Some(read_only)));
    assert_eq!(got[2], (json!("high"), None), "no tools at all");
    assert_eq!(got[3], (json!("high"), None), "after a resume too");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_target_has_no_tools_option() {
    let (_server, home) = model_home("fixture-model");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, _updates| {
        let sid = open(&cx, &ws).await?;
        let e = choose(&cx, &sid, "tools", "none")
            .await
            .expect_err("a model thread has no tools");
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
        assert_eq!(
            e.data.clone().unwrap_or_default()["reason"],
            "config_option_unknown"
        );
        Ok(())
    })
    .await
    .expect("editor session");
}
