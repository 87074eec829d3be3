//! A real agent's own options behind `hecate acp`: codex-acp (from
//! `target/test-deps/node`, installed by `scripts/test-deps/node.sh`) offers its
//! model, reasoning effort and mode options through Hecate with their
//! categories; the editor sets the model through Hecate and the fixture model
//! server records that Codex then asks for it; the pinned `read-only` mode
//! keeps the editor from choosing a mode that skips its approval. The same for
//! claude-agent-acp; and opencode's model chosen with `session/set_model`, as
//! older clients send it.

use crate::support::acp_editor::*;
use crate::support::common::{AgentModeServer, Home};
use agent_client_protocol::JsonRpcRequest;
use agent_client_protocol::v1::schema::{
    SessionConfigOptionValue, SetSessionConfigOptionRequest, SetSessionModeRequest, StopReason,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Where `scripts/test-deps/node.sh` puts the agents' bins (and Node 22).
const DEPS_BIN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/target/test-deps/node/node_modules/.bin"
);

/// `session/set_model` as older clients send it.
#[derive(Debug, Clone, Serialize, Deserialize, JsonRpcRequest)]
#[serde(rename_all = "camelCase")]
#[request(method = "session/set_model", response = serde_json::Value)]
struct SetModel {
    session_id: String,
    model_id: String,
}

/// The option with `id` in a JSON list of options.
fn option<'a>(options: &'a Value, id: &str) -> &'a Value {
    options
        .as_array()
        .and_then(|a| a.iter().find(|o| o["id"] == id))
        .unwrap_or_else(|| panic!("option {id} in {options}"))
}

/// The generation requests recorded in `record`.
fn requests(record: &Path) -> Vec<Value> {
    std::fs::read_to_string(record)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["method"] == "POST")
        .collect()
}

/// A Codex home (outside `/tmp`, which Codex refuses) using the model server at `base`.
fn codex_home(root: &Path, base: &str) -> PathBuf {
    let dir = root.join("codex");
    std::fs::create_dir_all(&dir).expect("codex home");
    let config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"fake\"\napproval_policy = \"on-request\"\n\
         sandbox_mode = \"workspace-write\"\n\n[model_providers.fake]\nname = \"fake\"\n\
         base_url = \"{base}/v1\"\nwire_api = \"responses\"\n"
    );
    std::fs::write(dir.join("config.toml"), config).expect("codex config");
    dir
}

#[tokio::test(flavor = "multi_thread")]
async fn codex_options_reach_the_editor_and_its_model_is_set_through_hecate() {
    assert!(
        Path::new(DEPS_BIN).join("codex-acp").exists(),
        "codex-acp is not installed: run scripts/test-deps/node.sh"
    );
    let root = tempfile::Builder::new()
        .prefix("acp-options-codex-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("sandbox");
    let record = root.path().join("requests.jsonl");
    let server = AgentModeServer::start(Some(&record));
    let codex = codex_home(root.path(), &server.base);
    let ws = root.path().join("ws");
    std::fs::create_dir_all(root.path().join("home")).expect("home");
    std::fs::create_dir_all(&ws).expect("workspace");
    let mut home = Home::empty();
    home.set("CODEX_HOME", &codex.display().to_string());
    home.set("HOME", &root.path().join("home").display().to_string());
    home.set("PATH", &format!("{DEPS_BIN}:/usr/local/bin:/usr/bin:/bin"));
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:codex"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let new = new_session(&cx, &ws).await?;
        let options = serde_json::to_value(new.config_options.expect("options")).expect("json");
        assert_eq!(options[0]["id"], "target");
        let model = option(&options, "model");
        assert_eq!(
            (&model["category"], &model["currentValue"]),
            (&json!("model"), &json!("gpt-5.5"))
        );
        assert_eq!(
            option(&options, "reasoning_effort")["category"],
            "thought_level"
        );
        assert_eq!(option(&options, "mode")["currentValue"], "read-only");
        let modes = new.modes.expect("Codex's modes");
        assert_eq!(modes.current_mode_id.0.as_ref(), "read-only");
        let sid = new.session_id;

        let set = cx
            .send_request(SetSessionConfigOptionRequest::new(
                sid.clone(),
                "model",
                SessionConfigOptionValue::from("gpt-5.6-sol"),
            ))
            .block_task()
            .await?;
        let after = serde_json::to_value(set.config_options).expect("json");
        assert_eq!(option(&after, "model")["currentValue"], "gpt-5.6-sol");
        let refused = cx
            .send_request(SetSessionModeRequest::new(sid.clone(), "agent"))
            .block_task()
            .await
            .expect_err("auto review skips the editor's approval");
        assert_eq!(
            refused.data.as_ref().map(|d| d["reason"].clone()),
            Some(json!("mode_not_allowed"))
        );

        assert_eq!(prompt(&cx, &sid, "say hello").await?, StopReason::EndTurn);
        assert!(!answer(&updates.drain()).is_empty(), "Codex answered");
        Ok(())
    })
    .await
    .expect("editor session");
    let asked: Vec<Value> = requests(&record)
        .iter()
        .map(|r| r["body"]["model"].clone())
        .collect();
    // Codex may also make a side request of its own on a small model (a
    // title, say); the turn's requests use the chosen model, never the default.
    assert!(
        asked.contains(&json!("gpt-5.6-sol")) && !asked.contains(&json!("gpt-5.5")),
        "Codex asked for the model the editor chose: {asked:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn claude_code_options_reach_the_editor_and_its_model_is_set_through_hecate() {
    assert!(
        Path::new(DEPS_BIN).join("claude-agent-acp").exists(),
        "claude-agent-acp is not installed: run scripts/test-deps/node.sh"
    );
    let root = tempfile::Builder::new()
        .prefix("acp-options-claude-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("sandbox");
    let record = root.path().join("requests.jsonl");
    let server = AgentModeServer::start(Some(&record));
    let ws = root.path().join("ws");
    std::fs::create_dir_all(root.path().join("home")).expect("home");
    std::fs::create_dir_all(&ws).expect("workspace");
    let mut home = Home::empty();
    home.set("ANTHROPIC_BASE_URL", &server.base);
    home.set("ANTHROPIC_API_KEY", "dummy");
    home.set("IS_SANDBOX", "1");
    home.set("HOME", &root.path().join("home").display().to_string());
    home.set("PATH", &format!("{DEPS_BIN}:/usr/local/bin:/usr/bin:/bin"));
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:claude_code"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let new = new_session(&cx, &ws).await?;
        let options = serde_json::to_value(new.config_options.expect("options")).expect("json");
        assert_eq!(option(&options, "model")["category"], "model");
        assert_eq!(option(&options, "effort")["category"], "thought_level");
        assert_eq!(option(&options, "mode")["currentValue"], "default");
        assert_eq!(
            new.modes.expect("modes").current_mode_id.0.as_ref(),
            "default"
        );
        let sid = new.session_id;
        let set = cx
            .send_request(SetSessionConfigOptionRequest::new(
                sid.clone(),
                "model",
                SessionConfigOptionValue::from("opus"),
            ))
            .block_task()
            .await?;
        let after = serde_json::to_value(set.config_options).expect("json");
        assert_eq!(option(&after, "model")["currentValue"], "opus");
        let refused = cx
            .send_request(SetSessionModeRequest::new(sid.clone(), "bypassPermissions"))
            .block_task()
            .await
            .expect_err("bypassing permissions skips the editor's approval");
        assert_eq!(
            refused.data.as_ref().map(|d| d["reason"].clone()),
            Some(json!("mode_not_allowed"))
        );
        assert_eq!(prompt(&cx, &sid, "say hello").await?, StopReason::EndTurn);
        assert!(!answer(&updates.drain()).is_empty(), "Claude answered");
        Ok(())
    })
    .await
    .expect("editor session");
    let asked: Vec<String> = requests(&record)
        .iter()
        .filter_map(|r| r["body"]["model"].as_str().map(str::to_string))
        .collect();
    assert!(
        asked.iter().any(|m| m.contains("opus")),
        "Claude asked for the model the editor chose: {asked:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn opencode_takes_the_model_an_older_client_sets_with_set_model() {
    assert!(
        Path::new(DEPS_BIN).join("opencode").exists(),
        "opencode is not installed: run scripts/test-deps/node.sh"
    );
    let root = tempfile::Builder::new()
        .prefix("acp-options-opencode-")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .expect("sandbox");
    let record = root.path().join("requests.jsonl");
    let server = AgentModeServer::start(Some(&record));
    let xdg = root.path().join("xdg");
    std::fs::create_dir_all(xdg.join("opencode")).expect("xdg");
    let config = json!({
        "provider": {"fake": {
            "npm": "@ai-sdk/openai-compatible",
            "options": {"baseURL": format!("{}/v1", server.base), "apiKey": "x"},
            "models": {"fake-model": {"tool_call": true}, "other-model": {"tool_call": true}}
        }},
        "model": "fake/fake-model",
        "small_model": "fake/fake-model"
    });
    std::fs::write(xdg.join("opencode/opencode.json"), config.to_string()).expect("config");
    let ws = root.path().join("ws");
    std::fs::create_dir_all(root.path().join("home")).expect("home");
    std::fs::create_dir_all(&ws).expect("workspace");
    let mut home = Home::empty();
    home.set("XDG_CONFIG_HOME", &xdg.display().to_string());
    for k in [
        "OPENCODE_DISABLE_MODELS_FETCH",
        "OPENCODE_DISABLE_AUTOUPDATE",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS",
    ] {
        home.set(k, "1");
    }
    home.set("HOME", &root.path().join("home").display().to_string());
    home.set("PATH", &format!("{DEPS_BIN}:/usr/local/bin:/usr/bin:/bin"));
    let (_hecate, transport) = Hecate::spawn(&home, &["--target", "agent:opencode"]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        initialize(&cx, Caps::default()).await?;
        let new = new_session(&cx, &ws).await?;
        let options = serde_json::to_value(new.config_options.expect("options")).expect("json");
        let model = option(&options, "model");
        assert_eq!(
            (&model["category"], &model["currentValue"]),
            (&json!("model"), &json!("fake/fake-model"))
        );
        let sid = new.session_id;
        cx.send_request(SetModel {
            session_id: sid.0.to_string(),
            model_id: "fake/other-model".into(),
        })
        .block_task()
        .await?;
        let told = updates.drain().into_iter().find_map(|u| match u {
            agent_client_protocol::v1::schema::SessionUpdate::ConfigOptionUpdate(c) => {
                Some(serde_json::to_value(c.config_options).expect("json"))
            }
            _ => None,
        });
        let told = told.expect("the new options");
        assert_eq!(option(&told, "model")["currentValue"], "fake/other-model");
        assert_eq!(prompt(&cx, &sid, "say hello").await?, StopReason::EndTurn);
        updates.drain();
        Ok(())
    })
    .await
    .expect("editor session");
    let asked: Vec<Value> = requests(&record)
        .iter()
        .map(|r| r["body"]["model"].clone())
        .collect();
    assert!(
        asked.contains(&json!("other-model")),
        "opencode asked for the model set with session/set_model: {asked:?}"
    );
}
