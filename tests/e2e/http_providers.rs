//! Provider readiness over HTTP against the real `hecate serve`: the presets, the
//! readiness checklist of a healthy fixture provider, of one that is down and of
//! a cloud provider without a key, and local discovery finding a server command
//! on PATH.

use crate::support::common::{Home, ModelServer};
use crate::support::http::{Api, serve};
use serde_json::Value;

fn row<'a>(rows: &'a Value, key: &str, name: &str) -> &'a Value {
    rows.as_array()
        .expect("rows")
        .iter()
        .find(|r| r[key] == name)
        .unwrap_or_else(|| panic!("{name} in {rows}"))
}

fn check<'a>(status: &'a Value, name: &str) -> &'a Value {
    row(&status["readiness_checks"], "name", name)
}

#[tokio::test]
async fn presets_readiness_and_local_discovery_tell_the_operator_what_works() {
    let server = ModelServer::start(None);
    let mut home = Home::with_openai(&server);
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    home.set(
        "PROVIDER_DOWN_BASE_URL",
        &format!("http://127.0.0.1:{closed}/v1"),
    );
    home.set("PROVIDER_CLOUDY_BASE_URL", "https://api.example.invalid/v1");
    let bin = tempfile::tempdir().expect("bin dir");
    let ollama = bin.path().join("ollama");
    std::fs::write(&ollama, "#!/bin/sh\nexit 0\n").expect("fake ollama");
    let mut perms = std::fs::metadata(&ollama).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&ollama, perms).expect("chmod");
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    home.set("PATH", &path);
    let s = serve(&home);
    let api = Api::new(&s);

    let p = api.get("/hecate/v1/providers/presets").await;
    assert_eq!(p.status, 200, "{}", p.body);
    assert_eq!(p.body["object"], "provider_presets");
    let openai = row(&p.body["data"], "id", "openai");
    assert_eq!(openai["kind"], "cloud");
    assert!(
        openai["env_snippet"]
            .as_str()
            .is_some_and(|s| s.contains("PROVIDER_OPENAI_API_KEY")),
        "{openai}"
    );
    assert_eq!(row(&p.body["data"], "id", "ollama")["kind"], "local");

    let st = api.get("/hecate/v1/providers/status").await;
    assert_eq!(st.status, 200, "{}", st.body);
    assert_eq!(st.body["object"], "provider_status");
    let fix = row(&st.body["data"], "name", "fix");
    assert_eq!(
        (&fix["status"], &fix["kind"]),
        (&"healthy".into(), &"local".into()),
        "{fix}"
    );
    assert_eq!(fix["credential_state"], "not_required");
    assert_eq!(fix["routing_ready"], true, "{fix}");
    assert!(fix["model_count"].as_u64().is_some_and(|n| n > 0), "{fix}");
    assert_eq!(check(fix, "models")["reason"], "models_discovered");
    assert_eq!(check(fix, "routing")["status"], "ok");

    let down = row(&st.body["data"], "name", "down");
    assert_eq!(down["healthy"], false, "{down}");
    assert_eq!(down["routing_ready"], false);
    assert_eq!(down["routing_blocked_reason"], "provider_unhealthy");
    assert_eq!(check(down, "health")["status"], "blocked");
    assert!(
        check(down, "health")["operator_action"].is_string(),
        "{down}"
    );

    let cloudy = row(&st.body["data"], "name", "cloudy");
    assert_eq!(cloudy["kind"], "cloud");
    assert_eq!(cloudy["credential_state"], "missing");
    assert_eq!(cloudy["routing_blocked_reason"], "credential_missing");
    assert_eq!(check(cloudy, "credentials")["reason"], "credential_missing");

    let d = api
        .get("/hecate/v1/settings/providers/local-discovery")
        .await;
    assert_eq!(d.status, 200, "{}", d.body);
    assert_eq!(d.body["object"], "local_provider_discovery");
    let found = row(&d.body["data"], "preset_id", "ollama");
    assert_eq!(found["command_available"], true, "{found}");
    assert_eq!(found["command_path"], ollama.display().to_string());
    // Nothing may listen on Ollama's port here; if something does, it runs.
    let st = found["status"].as_str().expect("status");
    assert!(st == "installed" || st == "running", "{found}");
    for r in d.body["data"].as_array().expect("rows") {
        let s = r["status"].as_str().expect("status");
        assert!(["running", "installed", "not_detected"].contains(&s), "{r}");
    }
}
