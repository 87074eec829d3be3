//! Provider readiness over HTTP against the real `hecate serve`: the presets, the
//! readiness checklist of a healthy fixture provider, of one that is down and of
//! a cloud provider without a key, and local discovery finding a server command
//! on PATH; a disabled provider (listed, skipped as `provider_disabled`), one
//! pointing back at Hecate (`self_referential`), a slow one (`provider_slow`)
//! and one known only by the default model (`default_model_only`).

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

/// A free loopback port (nothing listens on it once this returns).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[tokio::test]
async fn disabled_looping_slow_and_default_only_providers_say_why() {
    // `off` is turned off by its env; `slowpoke` answers after 400 ms against
    // a 200 ms threshold; `lone` lists nothing (its port is closed) but is named
    // by the default model; `looper` points back at this Hecate's own port.
    let off = ModelServer::start(Some(serde_json::json!([{"repeat": true, "text": "no"}])));
    let slow = ModelServer::start(Some(serde_json::json!([
        {"repeat": true, "text": "late", "delay_ms": 400}
    ])));
    let mut home = Home::empty();
    home.set("PROVIDER_OFF_BASE_URL", &format!("{}/v1", off.base));
    home.set("PROVIDER_OFF_MODELS", "off-model");
    home.set("PROVIDER_OFF_ENABLED", "false");
    home.set("PROVIDER_SLOWPOKE_BASE_URL", &format!("{}/v1", slow.base));
    home.set("PROVIDER_SLOWPOKE_MODELS", "slow-model");
    home.set(
        "PROVIDER_LONE_BASE_URL",
        &format!("http://127.0.0.1:{}/v1", free_port()),
    );
    let port = free_port();
    home.set(
        "PROVIDER_LOOPER_BASE_URL",
        &format!("http://localhost:{port}/v1"),
    );
    home.write_config("[gateway]\nslow_provider_ms = 200\ndefault_model = \"lone/only-model\"\n");
    let listen = format!("127.0.0.1:{port}");
    let s = crate::support::http::serve_args(&home, &["serve", "--listen", &listen]);
    let api = Api::new(&s);

    // A disabled provider is never asked: the route names why.
    let chat = |model: &str| serde_json::json!({"model": model, "messages": [{"role": "user", "content": "hi"}]});
    let refused = api.post("/v1/chat/completions", chat("off-model")).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    assert_eq!(refused.body["error"]["code"], "provider_disabled");
    assert_eq!(
        refused.body["error"]["route_candidates"][0]["skip_reason"], "provider_disabled",
        "{}",
        refused.body
    );
    let id = refused.header("x-request-id").expect("request id");
    let t = api.get(&format!("/hecate/v1/traces?request_id={id}")).await;
    assert_eq!(
        t.body["data"][0]["route_candidates"][0]["skip_reason"], "provider_disabled",
        "{}",
        t.body
    );
    assert!(
        off.requests().is_empty(),
        "a disabled provider is never asked"
    );

    // A provider pointing back here is skipped, not called in a loop.
    let looped = api.post("/v1/chat/completions", chat("looper/x")).await;
    assert_eq!(looped.status, 422, "{}", looped.body);
    let c = &looped.body["error"]["route_candidates"][0];
    assert_eq!(c["skip_reason"], "provider_unhealthy", "{}", looped.body);
    assert!(
        c["detail"]
            .as_str()
            .is_some_and(|d| d.contains("self_referential")),
        "{c}"
    );

    // Two slow answers make the slow provider's average cross 200 ms.
    for _ in 0..2 {
        let a = api.post("/v1/chat/completions", chat("slow-model")).await;
        assert_eq!(a.status, 200, "{}", a.body);
    }

    let st = api.get("/hecate/v1/providers/status").await;
    assert_eq!(st.status, 200, "{}", st.body);
    let rows = &st.body["data"];

    let offr = row(rows, "name", "off");
    assert_eq!(
        (&offr["status"], &offr["enabled"], &offr["routing_ready"]),
        (&"disabled".into(), &false.into(), &false.into()),
        "{offr}"
    );
    assert_eq!(offr["routing_blocked_reason"], "provider_disabled");
    let routing = check(offr, "routing");
    assert_eq!(
        (&routing["status"], &routing["reason"]),
        (&"blocked".into(), &"provider_disabled".into())
    );
    assert!(
        routing["operator_action"]
            .as_str()
            .is_some_and(|a| a.contains("PROVIDER_OFF_ENABLED=true")),
        "{routing}"
    );
    assert_eq!(check(offr, "health")["reason"], "not_probed");

    let lp = row(rows, "name", "looper");
    let health = check(lp, "health");
    assert_eq!(
        (&health["status"], &health["reason"]),
        (&"blocked".into(), &"self_referential".into()),
        "{lp}"
    );
    assert!(health["operator_action"].is_string(), "{health}");
    assert_eq!(lp["routing_ready"], false);

    let sp = row(rows, "name", "slowpoke");
    let health = check(sp, "health");
    assert_eq!(
        (&health["status"], &health["reason"]),
        (&"warning".into(), &"provider_slow".into()),
        "{sp}"
    );
    assert!(health["operator_action"].is_string(), "{health}");
    assert_eq!(sp["routing_ready"], true, "a slow provider stays routable");
    assert_eq!(sp["health"]["latency_samples"], 2, "{sp}");
    assert!(
        sp["health"]["average_latency_ms"]
            .as_u64()
            .is_some_and(|ms| ms >= 200),
        "{sp}"
    );
    assert_eq!(sp["health"]["slow_after_ms"], 200);
    assert_eq!(sp["health"]["circuit"], "closed");

    let lone = row(rows, "name", "lone");
    let models = check(lone, "models");
    assert_eq!(
        (&models["status"], &models["reason"]),
        (&"warning".into(), &"default_model_only".into()),
        "{lone}"
    );
    assert!(models["operator_action"].is_string(), "{models}");
    assert_eq!(lone["models"], serde_json::json!(["only-model"]));
    assert_eq!(lone["routing_blocked_reason"], "provider_unhealthy");
}
