//! `hecate doctor` on a controlled machine: a PATH and HOME of temp dirs (no real
//! agents, tools or login files leak in), providers on a closed loopback port (no
//! network). Checks redaction, the required-check exit code, the JSON shape, the
//! adapter install hint, a failing bubblewrap and the terminal sandbox line.

use crate::support::common::{Home, text};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Runs `hecate doctor ARGS` with `path` as the whole PATH and the home dir as HOME.
fn doctor(home: &Home, path: &Path, args: &[&str]) -> Output {
    let mut all = vec!["doctor", "--timeout", "1"];
    all.extend_from_slice(args);
    home.cmd(&all)
        .env("PATH", path)
        .env("HOME", home.dir.path())
        .env_remove("XDG_CACHE_HOME")
        .env_remove("HECATE_TOKEN")
        .output()
        .expect("run hecate doctor")
}

/// An empty directory to serve as PATH.
fn empty_path(home: &Home) -> std::path::PathBuf {
    let dir = home.path("bin");
    std::fs::create_dir_all(&dir).expect("bin dir");
    dir
}

/// Runs `doctor --format json` and returns (exit code, the `data` object).
fn doctor_json(home: &Home, path: &Path) -> (i32, Value) {
    let out = doctor(home, path, &["--format", "json"]);
    let doc: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("doctor JSON ({e}): {:?}", text(&out)));
    (out.status.code().unwrap_or(-1), doc["data"].clone())
}

/// The check named `name`.
fn check<'a>(data: &'a Value, name: &str) -> &'a Value {
    data["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no check {name}: {data:#}"))
}

#[test]
fn a_provider_url_password_and_token_are_never_printed() {
    let home = Home::empty();
    home.write_config(
        "[providers.fix]\nbase_url = \"http://user:secret@127.0.0.1:1/v1?token=tok123\"\n",
    );
    let path = empty_path(&home);
    for args in [&[][..], &["--format", "json"][..]] {
        let out = doctor(&home, &path, args);
        let (stdout, stderr) = text(&out);
        for leaked in ["secret", "tok123"] {
            assert!(
                !stdout.contains(leaked) && !stderr.contains(leaked),
                "{args:?} printed {leaked}:\n{stdout}\n{stderr}"
            );
        }
        assert!(stdout.contains("user:***@127.0.0.1:1"), "{stdout}");
        assert_eq!(out.status.code(), Some(5), "no ready provider: {stdout}");
    }
}

#[test]
fn an_unparsable_config_fails_doctor_and_names_the_fix() {
    let home = Home::empty();
    home.write_config("[server\nlisten = \n");
    let path = empty_path(&home);
    let out = doctor(&home, &path, &[]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(2), "{stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find(|l| l.starts_with("error") && l.contains("config"))
        .unwrap_or_else(|| panic!("no config error line:\n{stdout}"));
    assert!(line.contains("line 1"), "{line}");
    assert!(
        stdout.contains("fix: Fix the file") && stdout.contains("config.toml"),
        "{stdout}"
    );
    let (code, data) = doctor_json(&home, &path);
    assert_eq!(code, 2);
    let config = check(&data, "config");
    assert_eq!(config["status"], "error");
    assert_eq!(config["required"], true);
    assert!(
        config["fix"]
            .as_str()
            .is_some_and(|f| f.contains("--config"))
    );
    assert_eq!(
        check(&data, "store")["status"],
        "ok",
        "the other checks still run"
    );
}

#[test]
fn json_has_one_entry_per_check_with_status_message_and_fix() {
    let home = Home::empty();
    let path = empty_path(&home);
    let (code, data) = doctor_json(&home, &path);
    assert_eq!(code, 0, "{data:#}");
    let checks = data["checks"].as_array().expect("checks");
    let mut names: Vec<&str> = checks.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names.len(), checks.len(), "every check is named");
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), checks.len(), "one entry per check: {names:?}");
    for wanted in [
        "config",
        "store",
        "node",
        "npm",
        "bubblewrap",
        "terminal sandbox",
        "adapter codex",
        "providers",
        "http token",
    ] {
        assert!(names.contains(&wanted), "{wanted} missing from {names:?}");
    }
    for c in checks {
        let status = c["status"].as_str().expect("status");
        assert!(["ok", "warn", "error"].contains(&status), "{c}");
        assert!(c["message"].as_str().is_some_and(|m| !m.is_empty()), "{c}");
        assert!(c.get("fix").is_some(), "fix key present: {c}");
        if status != "ok" {
            assert!(c["fix"].as_str().is_some_and(|f| !f.is_empty()), "{c}");
        }
    }
    assert_eq!(check(&data, "node")["status"], "warn", "no node on PATH");
    assert_eq!(
        check(&data, "config")["status"],
        "ok",
        "absent file is fine"
    );
    assert_eq!(check(&data, "store")["status"], "ok");
}

#[test]
fn a_missing_adapter_is_not_installed_with_its_install_hint() {
    let home = Home::empty();
    let adapters = home.path("adapters");
    std::fs::create_dir_all(&adapters).expect("adapters dir");
    std::fs::write(
        adapters.join("ghost.toml"),
        "id = \"ghost\"\nname = \"Ghost\"\ncommand = \"hecate-no-such-agent\"\n\
         package = \"@example/ghost-acp\"\npackage_version = \"1.2.3\"\n",
    )
    .expect("manifest");
    let path = empty_path(&home);
    let (code, data) = doctor_json(&home, &path);
    assert_eq!(code, 0, "a missing adapter is advisory: {data:#}");
    let ghost = check(&data, "adapter ghost");
    assert_eq!(ghost["status"], "warn");
    assert_eq!(ghost["required"], false);
    assert!(
        ghost["message"]
            .as_str()
            .is_some_and(|m| m.contains("not installed") && m.contains("hecate-no-such-agent")),
        "{ghost}"
    );
    assert_eq!(ghost["fix"], "hecate adapters install ghost");
}

#[test]
fn a_failing_bwrap_on_path_makes_the_bubblewrap_line_warn_with_its_error() {
    let home = Home::empty();
    let path = empty_path(&home);
    // Written by a child shell so no write handle of the script lives in this
    // (multi-threaded, process-spawning) test process when it is executed.
    let st = Command::new("/bin/sh")
        .arg("-c")
        .arg(
            "printf '#!/bin/sh\\necho \"bwrap: No permissions to create new namespace\" >&2\\nexit 1\\n' \
             > \"$1/bwrap\" && chmod +x \"$1/bwrap\"",
        )
        .arg("sh")
        .arg(&path)
        .status()
        .expect("sh");
    assert!(st.success());
    let (code, data) = doctor_json(&home, &path);
    assert_eq!(code, 0, "bubblewrap is advisory: {data:#}");
    let bwrap = check(&data, "bubblewrap");
    assert_eq!(bwrap["status"], "warn", "{bwrap}");
    assert!(
        bwrap["message"]
            .as_str()
            .is_some_and(|m| m.contains("No permissions to create new namespace")),
        "{bwrap}"
    );
    assert!(
        bwrap["fix"]
            .as_str()
            .is_some_and(|f| f.contains("user namespaces")),
        "{bwrap}"
    );
}

#[test]
fn the_terminal_sandbox_line_says_whether_bubblewrap_can_honour_the_setting() {
    let home = Home::empty();
    let path = empty_path(&home);
    let (_, data) = doctor_json(&home, &path);
    let line = check(&data, "terminal sandbox");
    assert_eq!(line["status"], "ok", "{line}");
    assert!(
        line["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("off") && m.contains("whatever your user can")),
        "the default is off and says what that means: {line}"
    );

    home.write_config("[terminals]\nsandbox = \"workspace_only\"\nnetwork = false\n");
    let (code, data) = doctor_json(&home, &path);
    assert_eq!(code, 0, "{data:#}");
    let line = check(&data, "terminal sandbox");
    assert_eq!(line["status"], "ok", "bubblewrap works here: {line}");
    assert!(
        line["message"].as_str().is_some_and(|m| m
            .contains("sandbox = \"workspace_only\", network = false")
            && m.contains("builds the sandbox")),
        "{line}"
    );

    // A bubblewrap that cannot create namespaces (written by a child shell, as above).
    let st = Command::new("/bin/sh")
        .arg("-c")
        .arg(
            "printf '#!/bin/sh\\necho \"bwrap: No permissions to create new namespace\" >&2\\nexit 1\\n' \
             > \"$1/bwrap\" && chmod +x \"$1/bwrap\"",
        )
        .arg("sh")
        .arg(&path)
        .status()
        .expect("sh");
    assert!(st.success());
    for (bwrap, said, fix) in [
        ("/nonexistent/bwrap", "not found", "install bubblewrap"),
        (
            &*path.join("bwrap").display().to_string(),
            "No permissions to create new namespace",
            "user namespaces",
        ),
    ] {
        home.write_config(&format!(
            "[terminals]\nsandbox = \"read_only\"\nbwrap = {bwrap:?}\n"
        ));
        let (code, data) = doctor_json(&home, &path);
        assert_eq!(code, 0, "advisory: {data:#}");
        let line = check(&data, "terminal sandbox");
        assert_eq!(line["status"], "warn", "{line}");
        assert!(
            line["message"]
                .as_str()
                .is_some_and(|m| m.contains(said) && m.contains("will be refused")),
            "{line}"
        );
        assert!(
            line["fix"]
                .as_str()
                .is_some_and(|f| f.contains(fix) && f.contains("sandbox = \"off\"")),
            "{line}"
        );
    }
}

/// The doctor line of provider `name`.
fn provider_line<'a>(data: &'a Value, name: &str) -> &'a Value {
    check(data, &format!("provider {name}"))
}

/// The readiness entry of provider `name` in the JSON report.
fn provider_report<'a>(data: &'a Value, name: &str) -> &'a Value {
    data["providers"]
        .as_array()
        .expect("providers")
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no provider {name}: {data:#}"))
}

#[test]
fn disabled_and_self_referential_providers_say_why_and_are_not_probed() {
    let fx = crate::support::common::ModelServer::start(None);
    let home = Home::empty();
    // `loop` points at the address `hecate serve` would listen on.
    home.write_config(&format!(
        "[server]\nlisten = \"127.0.0.1:18999\"\n\n\
         [providers.up]\nbase_url = \"{base}/v1\"\n\n\
         [providers.off]\nbase_url = \"{base}/v1\"\nenabled = false\nmodels = [\"m\"]\n\n\
         [providers.loop]\nbase_url = \"http://localhost:18999/v1\"\n",
        base = fx.base
    ));
    let path = empty_path(&home);
    let (code, data) = doctor_json(&home, &path);
    assert_eq!(code, 0, "one provider is ready: {data:#}");

    let up = provider_report(&data, "up");
    assert_eq!(up["routing_ready"], true, "{up:#}");
    assert_eq!(provider_line(&data, "up")["status"], "ok");

    // Disabled: listed, not asked (no health, no latency), blocked in routing.
    let off = provider_report(&data, "off");
    assert_eq!(
        (&off["healthy"], &off["routing_ready"]),
        (&Value::Bool(false), &Value::Bool(false))
    );
    assert!(off["latency_ms"].is_null(), "not probed: {off:#}");
    assert_eq!(
        off["models"],
        serde_json::json!(["m"]),
        "declared models kept"
    );
    let routing = off["readiness_checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "routing")
        .expect("routing step");
    assert_eq!(routing["reason"], "provider_disabled", "{off:#}");
    let line = provider_line(&data, "off");
    assert_eq!(line["status"], "warn");
    assert!(
        line["message"].as_str().expect("text").contains("disabled"),
        "{line}"
    );
    assert!(
        line["fix"]
            .as_str()
            .expect("text")
            .contains("PROVIDER_OFF_ENABLED=true"),
        "{line}"
    );

    // Self-referential: blocked in health and routing, not probed.
    let looping = provider_report(&data, "loop");
    assert!(looping["latency_ms"].is_null(), "not probed: {looping:#}");
    let reasons: Vec<&str> = looping["readiness_checks"]
        .as_array()
        .expect("checks")
        .iter()
        .filter(|c| c["status"] == "blocked")
        .map(|c| c["reason"].as_str().expect("text"))
        .collect();
    assert_eq!(
        reasons,
        ["self_referential", "self_referential"],
        "{looping:#}"
    );
    let line = provider_line(&data, "loop");
    assert!(
        line["message"]
            .as_str()
            .expect("text")
            .contains("127.0.0.1:18999"),
        "{line}"
    );
    assert!(
        line["fix"]
            .as_str()
            .expect("text")
            .contains("real upstream"),
        "{line}"
    );

    let summary = check(&data, "providers");
    assert_eq!(summary["status"], "ok");
    assert_eq!(summary["message"], "1 of 3 provider(s) ready (1 disabled).");
}

#[test]
fn every_provider_disabled_is_a_warning_not_an_error() {
    let home = Home::empty();
    home.write_config(
        "[providers.a]\nbase_url = \"http://127.0.0.1:1/v1\"\nenabled = false\n\n\
         [providers.b]\nbase_url = \"http://127.0.0.1:1/v1\"\nenabled = false\n",
    );
    let path = empty_path(&home);
    let (code, data) = doctor_json(&home, &path);
    assert_eq!(code, 0, "{data:#}");
    let summary = check(&data, "providers");
    assert_eq!(summary["status"], "warn", "{summary}");
    assert!(
        summary["message"]
            .as_str()
            .expect("text")
            .contains("disabled"),
        "{summary}"
    );
    assert!(
        summary["fix"]
            .as_str()
            .expect("text")
            .contains("ENABLED=true"),
        "{summary}"
    );
}
