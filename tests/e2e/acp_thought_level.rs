//! A model target's `thought_level` option through `hecate acp`: offered (with
//! category `thought_level`) for a model that takes a reasoning effort (the
//! config's `reasoning = true`), applied to the next turns' provider requests
//! (OpenAI's `reasoning_effort`, Anthropic's extended thinking), not offered
//! for a model that does not, and an unknown value refused with the values
//! it takes.

use crate::support::acp_editor::*;
use crate::support::common::{Home, ModelServer, workspace};
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    SessionConfigOptionValue, SessionId, SetSessionConfigOptionRequest, StopReason,
};
use agent_client_protocol::{Agent, Error, ErrorCode};
use serde_json::{Value, json};

async fn set_option(
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

/// The option `id` among `options` (JSON), or `Null`.
fn option(options: &Value, id: &str) -> Value {
    options
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| o["id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

fn ids(options: &Value) -> Vec<String> {
    options
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["id"].as_str().map(str::to_string))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reasoning_model_offers_thought_level_and_its_turns_ask_for_it() {
    let (server, home) = model_home("fixture-model,other-model");
    home.write_config("[providers.fix.capabilities.\"fixture-model\"]\nreasoning = true\n");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "model:fix/fixture-model"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let new = new_session(&cx, &ws).await?;
        let options = serde_json::to_value(new.config_options.expect("options")).expect("json");
        assert_eq!(ids(&options), ["target", "model", "thought_level"]);
        let thought = option(&options, "thought_level");
        assert_eq!(thought["category"], "thought_level");
        assert_eq!(thought["currentValue"], "default");
        let values: Vec<&str> = thought["options"]
            .as_array()
            .expect("choices")
            .iter()
            .filter_map(|o| o["value"].as_str())
            .collect();
        assert_eq!(values, ["default", "low", "medium", "high"]);
        let sid = new.session_id;
        assert_eq!(prompt(&cx, &sid, "one").await?, StopReason::EndTurn);

        let after = set_option(&cx, &sid, "thought_level", "high").await?;
        assert_eq!(option(&after, "thought_level")["currentValue"], "high");
        assert_eq!(prompt(&cx, &sid, "two").await?, StopReason::EndTurn);

        let e = set_option(&cx, &sid, "thought_level", "extreme")
            .await
            .expect_err("not a level");
        assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
        let data = e.data.clone().unwrap_or_default();
        assert_eq!(data["reason"], "config_value_invalid", "{e:?}");
        assert_eq!(
            data["available"],
            json!(["default", "low", "medium", "high"])
        );
        assert!(e.message.contains("\"extreme\""), "{}", e.message);

        let other = set_option(&cx, &sid, "model", "fix/other-model").await?;
        assert_eq!(
            ids(&other),
            ["target", "model"],
            "a model that takes no effort offers none"
        );
        assert_eq!(prompt(&cx, &sid, "three").await?, StopReason::EndTurn);
        let e = set_option(&cx, &sid, "thought_level", "low")
            .await
            .expect_err("not offered");
        assert_eq!(
            e.data.clone().unwrap_or_default()["reason"],
            "config_option_unknown"
        );

        let back = set_option(&cx, &sid, "model", "fix/fixture-model").await?;
        assert_eq!(
            option(&back, "thought_level")["currentValue"],
            "high",
            "the thread keeps its choice"
        );
        set_option(&cx, &sid, "thought_level", "default").await?;
        assert_eq!(prompt(&cx, &sid, "four").await?, StopReason::EndTurn);
        updates.drain();
        Ok(())
    })
    .await
    .expect("editor session");
    let asked: Vec<(Value, Value)> = server
        .requests()
        .iter()
        .map(|r| {
            (
                r["body"]["model"].clone(),
                r["body"]["reasoning_effort"].clone(),
            )
        })
        .collect();
    assert_eq!(
        asked,
        [
            (json!("fixture-model"), Value::Null),
            (json!("fixture-model"), json!("high")),
            (json!("other-model"), Value::Null),
            (json!("fixture-model"), Value::Null),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_anthropic_model_thinks_with_a_budget_for_the_chosen_level() {
    let server = ModelServer::start(None);
    let home = Home::with_both_kinds(&server);
    home.write_config("[providers.ant.capabilities.\"claude-fix\"]\nreasoning = true\n");
    let (_g, ws) = workspace();
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "model:ant/claude-fix"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        set_option(&cx, &sid, "thought_level", "low").await?;
        assert_eq!(prompt(&cx, &sid, "think").await?, StopReason::EndTurn);
        updates.drain();
        Ok(())
    })
    .await
    .expect("editor session");
    let bodies: Vec<Value> = server
        .requests()
        .into_iter()
        .filter(|r| r["api"] == "anthropic")
        .map(|r| r["body"].clone())
        .collect();
    assert_eq!(bodies.len(), 1, "{bodies:?}");
    assert_eq!(
        bodies[0]["thinking"],
        json!({"type": "enabled", "budget_tokens": 1024})
    );
    assert!(
        bodies[0]["max_tokens"].as_u64() > Some(1024),
        "{}",
        bodies[0]
    );
}
