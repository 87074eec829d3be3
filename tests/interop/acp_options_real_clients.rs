//! acpx (a real ACP client) against `hecate acp` in front of the fixture agent
//! with config options: it sees the agent's options with their categories, its
//! `--model` reaches the agent through Hecate, and it gets the relayed
//! `usage_update` and the turn's usage in the prompt response.

use crate::support::acp_clients::{ClientRun, Clients, acpx, acpx_answer};
use crate::support::common::{Home, workspace};
use serde_json::{Value, json};

/// A home whose only target is the fixture agent with config options and modes.
fn options_home() -> Home {
    let home = Home::empty();
    let script = json!({"turns": [{"match": "usage", "actions": [
        {"usage": {"used": 1200, "size": 200000, "cost": {"amount": 0.25, "currency": "USD"},
                   "turn": {"input_tokens": 1000, "output_tokens": 200}}},
        {"text": "counted"}]}]});
    home.add_scripted_agent(&script.to_string(), &["--config-options", "--modes"], "");
    home
}

#[test]
fn acpx_sees_the_agents_options_and_its_model_reaches_the_agent() {
    let home = options_home();
    let (_g, ws) = workspace();
    let out = acpx(
        &Clients::get(),
        &home,
        &ws,
        "--target agent:fixture",
        "--model=fixture-large",
        "/config",
        &[],
    );
    let ClientRun { stdout, frames, .. } = ClientRun::exited(&out, 0, "");
    let options: Vec<&Value> = frames
        .iter()
        .filter_map(|f| f["result"]["configOptions"].as_array())
        .flatten()
        .collect();
    let category = |id: &str| {
        options
            .iter()
            .find(|o| o["id"] == id)
            .map(|o| o["category"].clone())
    };
    assert_eq!(category("model"), Some(json!("model")), "{stdout}");
    assert_eq!(category("reasoning"), Some(json!("thought_level")));
    assert_eq!(category("mode"), Some(json!("mode")));
    let text = acpx_answer(&frames);
    assert!(text.contains("config: model=fixture-large"), "{stdout}");
}

#[test]
fn acpx_gets_the_agents_usage_through_hecate() {
    let home = options_home();
    let (_g, ws) = workspace();
    let out = acpx(
        &Clients::get(),
        &home,
        &ws,
        "--target agent:fixture",
        "--approve-all",
        "usage please",
        &[],
    );
    let ClientRun { stdout, frames, .. } = ClientRun::exited(&out, 0, "");
    let usage = frames
        .iter()
        .find(|f| f["params"]["update"]["sessionUpdate"] == "usage_update")
        .unwrap_or_else(|| panic!("usage_update relayed: {stdout}"));
    assert_eq!(usage["params"]["update"]["used"], 1200);
    assert_eq!(usage["params"]["update"]["size"], 200000);
    assert_eq!(usage["params"]["update"]["cost"]["amount"], 0.25);
    assert!(
        frames
            .iter()
            .any(|f| f["result"]["stopReason"] == "end_turn"
                && f["result"]["usage"]["inputTokens"] == 1000),
        "the turn's usage in the prompt response: {stdout}"
    );
}
