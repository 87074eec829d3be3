//! `hecate acp` relaying each target's own options and modes to the editor: an
//! external agent's config options (with their categories) and modes, set on
//! the agent when the editor sets them and relayed when the agent changes them;
//! a model target's `model` option and `session/set_model`; `usage_update`;
//! and the errors for bad input (unknown option or value, a forbidden mode, a
//! change while a turn runs).

mod hecate_agent;
mod persisted;

use crate::support::acp_editor::*;
use crate::support::common::{Home, ModelServer, workspace};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, PromptRequest, PromptResponse, SessionConfigOptionValue, SessionId,
    SessionUpdate, SetSessionConfigOptionRequest, SetSessionModeRequest, StopReason,
};
use agent_client_protocol::{Agent, Error, ErrorCode, JsonRpcRequest};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// `session/set_model` as older clients send it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[serde(rename_all = "camelCase")]
#[request(method = "session/set_model", response = serde_json::Value)]
struct SetModel {
    session_id: String,
    model_id: String,
}

/// The fixture agent's script for these tests.
fn script() -> String {
    json!({"turns": [
        {"match": "switch", "actions": [
            {"set_option": {"id": "model", "value": "fixture-large"}},
            {"set_mode": "auto"},
            {"text": "switched"}]},
        {"match": "usage", "actions": [
            {"usage": {"used": 1200, "size": 200000, "cost": {"amount": 0.25, "currency": "USD"},
                       "turn": {"input_tokens": 1000, "output_tokens": 200}}},
            {"text": "counted"}]},
        {"match": "slow", "actions": [
            {"text": "start "},
            {"chunks": ["a ", "b ", "c ", "d ", "e ", "f ", "g ", "h "], "delay_ms": 1000}]},
        {"match": "crash", "actions": [{"crash": 7}]}
    ]})
    .to_string()
}

/// A model server in echo mode, and a home whose only target is the fixture
/// agent with config options and modes (pinned to `ask`), reaching that server
/// as its model endpoint; `config` is written as the config file.
fn agent_options_home(config: &str) -> (ModelServer, Home) {
    let server = ModelServer::start(None);
    let mut home = Home::empty();
    home.set("FIXTURE_MODEL_BASE_URL", &server.base);
    home.add_scripted_agent(
        &script(),
        &["--config-options", "--modes"],
        "env_allow = [\"FIXTURE_*\"]\n[quirks]\ninitial_mode = \"ask\"\n",
    );
    home.write_config(config);
    (server, home)
}

async fn set_option(
    cx: &ConnectionTo<Agent>,
    sid: &SessionId,
    id: &str,
    value: SessionConfigOptionValue,
) -> Result<Value, Error> {
    let r = cx
        .send_request(SetSessionConfigOptionRequest::new(
            sid.clone(),
            id.to_string(),
            value,
        ))
        .block_task()
        .await?;
    Ok(serde_json::to_value(r.config_options).expect("json"))
}

async fn set_mode(cx: &ConnectionTo<Agent>, sid: &SessionId, mode: &str) -> Result<(), Error> {
    cx.send_request(SetSessionModeRequest::new(sid.clone(), mode.to_string()))
        .block_task()
        .await
        .map(|_| ())
}

/// The option with `id` in a JSON list of options.
fn option<'a>(options: &'a Value, id: &str) -> &'a Value {
    options
        .as_array()
        .and_then(|a| a.iter().find(|o| o["id"] == id))
        .unwrap_or_else(|| panic!("option {id} in {options}"))
}

/// Sends a text prompt; answers the whole prompt response.
async fn prompt_with_usage(
    cx: &ConnectionTo<Agent>,
    sid: &SessionId,
    text: &str,
) -> Result<PromptResponse, Error> {
    cx.send_request(PromptRequest::new(
        sid.clone(),
        vec![ContentBlock::from(text)],
    ))
    .block_task()
    .await
}

/// The `usage_update`s among `updates`.
fn usage_updates(updates: &[SessionUpdate]) -> Vec<(u64, u64)> {
    updates
        .iter()
        .filter_map(|u| match u {
            SessionUpdate::UsageUpdate(u) => Some((u.used, u.size)),
            _ => None,
        })
        .collect()
}

fn reason(e: &Error) -> Value {
    e.data
        .as_ref()
        .map(|d| d["reason"].clone())
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agents_options_reach_the_editor_and_setting_its_model_changes_its_calls() {
    let (server, home) = agent_options_home("");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let new = new_session(&cx, &ws).await?;
        let options = serde_json::to_value(new.config_options.expect("options")).expect("json");
        assert_eq!(options[0]["id"], "target", "{options}");
        assert_eq!(options[0]["currentValue"], "agent:fixture");
        let model = option(&options, "model");
        assert_eq!(
            (&model["category"], &model["currentValue"]),
            (&json!("model"), &json!("fixture-small"))
        );
        assert_eq!(option(&options, "reasoning")["category"], "thought_level");
        let fast = option(&options, "fast");
        assert_eq!(
            (&fast["type"], &fast["category"]),
            (&json!("boolean"), &json!("_fixture"))
        );
        assert_eq!(option(&options, "mode")["category"], "mode");
        let modes = new.modes.expect("the agent's modes");
        assert_eq!(modes.current_mode_id.0.as_ref(), "ask", "the pinned mode");
        let ids: Vec<&str> = modes
            .available_modes
            .iter()
            .map(|m| m.id.0.as_ref())
            .collect();
        assert_eq!(ids, ["auto", "ask"]);
        let sid = new.session_id;

        let after = set_option(&cx, &sid, "model", "fixture-large".into()).await?;
        assert_eq!(option(&after, "model")["currentValue"], "fixture-large");
        let after = set_option(&cx, &sid, "fast", SessionConfigOptionValue::boolean(true)).await?;
        assert_eq!(option(&after, "fast")["currentValue"], true);
        assert_eq!(option(&after, "target")["currentValue"], "agent:fixture");

        assert_eq!(prompt(&cx, &sid, "hello model").await?, StopReason::EndTurn);
        assert_eq!(prompt(&cx, &sid, "/config").await?, StopReason::EndTurn);
        let text = answer(&updates.drain());
        assert!(text.contains("model: echo: hello model"), "{text}");
        assert!(
            text.contains("config: model=fixture-large reasoning=low fast=true mode=ask"),
            "{text}"
        );
        Ok(())
    })
    .await
    .expect("editor session");
    let calls = server.requests();
    assert_eq!(
        calls.last().expect("the agent called its model")["body"]["model"],
        "fixture-large",
        "the model the editor chose"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_options_bad_values_and_forbidden_modes_get_stable_errors() {
    let (_server, home) = agent_options_home("");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        let e = set_option(&cx, &sid, "colour", "red".into())
            .await
            .expect_err("no such option");
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
        assert_eq!(reason(&e), "config_option_unknown", "{e:?}");
        let e = set_option(&cx, &sid, "model", "gpt-nope".into())
            .await
            .expect_err("not offered");
        assert_eq!(
            (e.code, reason(&e)),
            (ErrorCode::INVALID_PARAMS, json!("config_value_invalid"))
        );
        let e = set_option(&cx, &sid, "fast", "yes".into())
            .await
            .expect_err("a boolean option");
        assert_eq!(reason(&e), "config_value_invalid");

        let e = set_mode(&cx, &sid, "auto")
            .await
            .expect_err("auto skips the editor's approval");
        assert_eq!(
            (e.code, reason(&e)),
            (ErrorCode::INVALID_PARAMS, json!("mode_not_allowed"))
        );
        let e = set_option(&cx, &sid, "mode", "auto".into())
            .await
            .expect_err("the same mode as an option");
        assert_eq!(reason(&e), "mode_not_allowed");
        let e = set_mode(&cx, &sid, "yolo").await.expect_err("no such mode");
        assert_eq!(reason(&e), "mode_unknown");

        assert_eq!(prompt(&cx, &sid, "/config").await?, StopReason::EndTurn);
        let text = answer(&updates.drain());
        assert!(text.contains("model=fixture-small"), "{text}");
        assert!(text.contains("mode=ask"), "{text}");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operators_mode_choice_lets_the_editor_pick_any_mode() {
    let (_server, home) = agent_options_home("[agents.modes]\nfixture = \"ask\"\n");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        set_mode(&cx, &sid, "auto").await?;
        assert_eq!(prompt(&cx, &sid, "/config").await?, StopReason::EndTurn);
        let text = answer(&updates.drain());
        assert!(text.contains("mode=auto"), "{text}");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agents_own_changes_and_usage_are_relayed() {
    let (_server, home) = agent_options_home("");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        updates.drain();
        assert_eq!(prompt(&cx, &sid, "switch now").await?, StopReason::EndTurn);
        let got = updates.drain();
        let options = got
            .iter()
            .find_map(|u| match u {
                SessionUpdate::ConfigOptionUpdate(c) => {
                    Some(serde_json::to_value(&c.config_options).expect("json"))
                }
                _ => None,
            })
            .expect("config_option_update relayed");
        assert_eq!(options[0]["id"], "target", "Hecate's choice stays first");
        assert_eq!(option(&options, "model")["currentValue"], "fixture-large");
        assert!(
            got.iter().any(|u| matches!(u,
                SessionUpdate::CurrentModeUpdate(m) if m.current_mode_id.0.as_ref() == "auto")),
            "current_mode_update relayed: {got:?}"
        );

        assert_eq!(
            prompt(&cx, &sid, "usage please").await?,
            StopReason::EndTurn
        );
        let got = updates.drain();
        let usage = got
            .iter()
            .find_map(|u| match u {
                SessionUpdate::UsageUpdate(u) => Some(u.clone()),
                _ => None,
            })
            .expect("usage_update relayed");
        assert_eq!((usage.used, usage.size), (1200, 200_000));
        let cost = usage.cost.expect("cost");
        assert_eq!((cost.amount, cost.currency.as_str()), (0.25, "USD"));
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_option_set_while_a_turn_runs_is_refused() {
    let (_server, home) = agent_options_home("");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        updates.drain();
        let turn = {
            let (cx, sid) = (cx.clone(), sid.clone());
            tokio::spawn(async move { prompt(&cx, &sid, "slow please").await })
        };
        loop {
            if agent_text(&updates.next().await).is_some() {
                break;
            }
        }
        let e = set_option(&cx, &sid, "model", "fixture-large".into())
            .await
            .expect_err("a turn is running");
        assert_eq!(
            (e.code, reason(&e)),
            (ErrorCode::INVALID_REQUEST, json!("session_busy"))
        );
        cx.send_notification(agent_client_protocol::v1::schema::CancelNotification::new(
            sid.clone(),
        ))?;
        assert_eq!(turn.await.expect("turn task")?, StopReason::Cancelled);
        let after = set_option(&cx, &sid, "model", "fixture-large".into()).await?;
        assert_eq!(option(&after, "model")["currentValue"], "fixture-large");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn choices_are_applied_again_when_the_agent_restarts() {
    let (_server, home) = agent_options_home("");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        set_option(&cx, &sid, "model", "fixture-large".into()).await?;
        set_option(&cx, &sid, "reasoning", "high".into()).await?;
        prompt(&cx, &sid, "crash now")
            .await
            .expect_err("the agent died");
        updates.drain();
        assert_eq!(prompt(&cx, &sid, "/config").await?, StopReason::EndTurn);
        let text = answer(&updates.drain());
        assert!(
            text.contains("model=fixture-large reasoning=high"),
            "the reloaded agent session got the choices back: {text}"
        );
        assert!(text.contains("mode=ask"), "{text}");
        Ok(())
    })
    .await
    .expect("editor session");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_thread_offers_its_models_and_set_model_switches_them() {
    let (server, home) = model_home("fixture-model,other-model");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let new = new_session(&cx, &ws).await?;
        let options = serde_json::to_value(new.config_options.expect("options")).expect("json");
        let model = option(&options, "model");
        assert_eq!(
            (&model["category"], &model["currentValue"]),
            (&json!("model"), &json!("fix/fixture-model"))
        );
        let values: Vec<&str> = model["options"]
            .as_array()
            .expect("choices")
            .iter()
            .filter_map(|o| o["value"].as_str())
            .collect();
        assert_eq!(values, ["fix/fixture-model", "fix/other-model"]);
        let sid = new.session_id;

        let after = set_option(&cx, &sid, "model", "fix/other-model".into()).await?;
        assert_eq!(
            option(&after, "target")["currentValue"],
            "model:fix/other-model"
        );
        assert_eq!(prompt(&cx, &sid, "one").await?, StopReason::EndTurn);

        cx.send_request(SetModel {
            session_id: sid.0.to_string(),
            model_id: "fix/fixture-model".into(),
        })
        .block_task()
        .await?;
        assert_eq!(prompt(&cx, &sid, "two").await?, StopReason::EndTurn);
        let e = set_option(&cx, &sid, "effort", "high".into())
            .await
            .expect_err("a model thread has no such option");
        assert_eq!(reason(&e), "config_option_unknown");
        updates.drain();
        Ok(())
    })
    .await
    .expect("editor session");
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r["body"]["model"].clone())
        .collect();
    assert_eq!(models, [json!("other-model"), json!("fixture-model")]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_model_turn_reports_its_context_window_and_usage() {
    let (_server, home) = model_home("fixture-model");
    home.write_config(
        "[providers.fix.capabilities.\"fixture-model\"]\nmax_context_tokens = 8192\n",
    );
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &[]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        updates.drain();
        let response = prompt_with_usage(&cx, &sid, "count me").await?;
        let turn = response.usage.expect("the turn's usage");
        assert!(turn.total_tokens > 0, "{turn:?}");
        let windows = usage_updates(&updates.drain());
        assert!(!windows.is_empty(), "usage_update sent");
        for (used, size) in &windows {
            assert_eq!(*size, 8192, "the model's window");
            assert_eq!(*used, turn.total_tokens, "the context the call filled");
        }
        Ok(())
    })
    .await
    .expect("editor session");
}
