//! Managed launchers: `hecate adapters install` and `POST
//! /hecate/v1/agent-adapters/{id}/refresh-launcher` install an adapter's npm
//! package into Hecate's cache, offline, from a tarball of a tiny package whose bin
//! runs the fixture ACP agent; then the catalog finds it and a chat turn runs
//! through it. The failures (unknown adapter, no package, npm missing, registry
//! unreachable, no such version or package) name the fix and install nothing.

use crate::support::common::{Home, workspace};
use crate::support::http::{Api, serve};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Packs a package `hecate-fixture-acp@1.2.3` whose bin `fixture-acp` execs
/// `hecate-fixtures acp-agent` (and answers `--version` itself) into a tarball
/// under `dir`, with `npm pack`.
fn pack_fixture_package(dir: &Path) -> PathBuf {
    let pkg = dir.join("pkg");
    std::fs::create_dir_all(pkg.join("bin")).expect("pkg dir");
    std::fs::write(
        pkg.join("package.json"),
        json!({
            "name": "hecate-fixture-acp",
            "version": "1.2.3",
            "bin": {"fixture-acp": "bin/fixture-acp"}
        })
        .to_string(),
    )
    .expect("package.json");
    // Written by a child shell so no write handle of the script lives in this
    // (multi-threaded, process-spawning) test process when npm runs it.
    let script = format!(
        "#!/bin/sh\nif [ \"$1\" = \"--version\" ]; then echo \"fixture-acp 1.2.3\"; exit 0; fi\nexec {:?} acp-agent \"$@\"\n",
        env!("CARGO_BIN_EXE_hecate-fixtures")
    );
    let st = Command::new("/bin/sh")
        .arg("-c")
        .arg("printf '%s' \"$2\" > \"$1\" && chmod +x \"$1\"")
        .arg("sh")
        .arg(pkg.join("bin/fixture-acp"))
        .arg(&script)
        .status()
        .expect("sh");
    assert!(st.success());
    let out = Command::new("npm")
        .args(["pack", "--silent", "--pack-destination"])
        .arg(dir)
        .current_dir(&pkg)
        .env("npm_config_update_notifier", "false")
        .output()
        .expect("npm pack (npm must be on PATH for these tests)");
    assert!(
        out.status.success(),
        "npm pack: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tarball = dir.join("hecate-fixture-acp-1.2.3.tgz");
    assert!(tarball.exists(), "npm pack made no tarball");
    tarball
}

/// A home whose cache is `<home>/cache` and whose `fixture` adapter's managed
/// package is the packed fixture (its command is on no PATH).
fn home_with_packaged_fixture() -> Home {
    let mut home = Home::empty();
    let tarball = pack_fixture_package(&home.path("npm-src"));
    home.write_config(&format!(
        "[agents]\ncache_dir = {:?}\n",
        home.path("cache").display().to_string()
    ));
    write_manifest(
        &home,
        "fixture",
        &format!("package = {:?}\n", tarball.display().to_string()),
    );
    home.set("npm_config_update_notifier", "false");
    home.set(
        "npm_config_cache",
        &home.path("npm-cache").display().to_string(),
    );
    home
}

fn write_manifest(home: &Home, id: &str, package_toml: &str) {
    let dir = home.path("adapters");
    std::fs::create_dir_all(&dir).expect("adapters dir");
    std::fs::write(
        dir.join(format!("{id}.toml")),
        format!(
            "id = {id:?}\nname = \"Packaged {id}\"\ncommand = \"hecate-no-such-fixture-acp\"\nbin = \"fixture-acp\"\n{package_toml}"
        ),
    )
    .expect("manifest");
}

fn row(home: &Home, id: &str) -> Value {
    let list = home.json(&["adapters", "list", "--format", "json"]);
    list["data"]
        .as_array()
        .expect("list")
        .iter()
        .find(|a| a["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no {id} row"))
}

/// The entries of `<cache>/adapters`, sorted.
fn cache_entries(home: &Home) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(home.path("cache/adapters"))
        .map(|r| {
            r.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn failed_install(home: &Home, id: &str) -> String {
    let out = home.run(&["adapters", "install", id]);
    assert!(!out.status.success(), "install {id} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn install_puts_the_package_in_the_cache_and_a_chat_turn_runs_through_it() {
    let home = home_with_packaged_fixture();
    let before = row(&home, "fixture");
    assert_eq!(before["status"], "missing");
    let listed = home.run(&["adapters", "list"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(
        text.contains("install: hecate adapters install fixture") && !text.contains("npm install"),
        "{text}"
    );

    let out = home.run(&["adapters", "install", "fixture"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("installing fixture") && stderr.contains("installed fixture"),
        "progress on stderr: {stderr}"
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("fixture 1.2.3 at "));

    let after = row(&home, "fixture");
    assert_eq!(after["status"], "available", "{after}");
    assert_eq!(after["source"], "managed");
    assert_eq!(after["version"], "1.2.3");
    let cache = std::fs::canonicalize(home.path("cache")).expect("cache");
    assert!(
        after["path"].as_str().is_some_and(
            |p| Path::new(p).starts_with(cache.join("adapters/fixture/node_modules/.bin"))
        ),
        "{after}"
    );
    assert_eq!(cache_entries(&home), vec!["fixture"], "no staging left");

    let (_w, ws) = workspace();
    let out = home.run(&[
        "chat",
        "--agent",
        "fixture",
        "--workspace",
        &ws.display().to_string(),
        "through the managed launcher",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "echo: through the managed launcher"
    );
}

#[test]
fn a_failed_refresh_keeps_the_previous_install_and_bad_input_names_the_fix() {
    let mut home = home_with_packaged_fixture();
    let unknown = failed_install(&home, "no_such_adapter");
    assert!(unknown.contains("not registered"), "{unknown}");
    let no_package = failed_install(&home, "cursor_agent");
    assert!(
        no_package.contains("has no managed package") && no_package.contains("on PATH"),
        "{no_package}"
    );

    assert!(
        home.run(&["adapters", "install", "fixture"])
            .status
            .success()
    );
    // Point the manifest at a tarball that does not exist: the refresh fails,
    // and the previous install is still the one the launcher finds.
    write_manifest(
        &home,
        "fixture",
        &format!(
            "package = {:?}\n",
            home.path("npm-src/gone.tgz").display().to_string()
        ),
    );
    let gone = failed_install(&home, "fixture");
    assert!(
        gone.contains("package not found") && gone.contains("Check `package`"),
        "{gone}"
    );
    assert_eq!(row(&home, "fixture")["status"], "available");
    assert_eq!(cache_entries(&home), vec!["fixture"], "no staging left");

    // No npm on PATH: nothing installed, and the fix is to install Node.js.
    write_manifest(&home, "lonely", "package = \"@hecate-test/lonely\"\n");
    let (_empty, empty) = workspace();
    home.set("PATH", &empty.display().to_string());
    let no_npm = failed_install(&home, "lonely");
    assert!(
        no_npm.contains("npm was not found on PATH") && no_npm.contains("nodejs.org"),
        "{no_npm}"
    );
    assert_eq!(cache_entries(&home), vec!["fixture"]);
}

/// A registry that knows one package, `@hecate-test/agent`, at version 1.0.0 only.
async fn fake_registry() -> String {
    use axum::extract::Path as UrlPath;
    use axum::http::StatusCode;
    use axum::response::IntoResponse;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let tarball = format!("{base}/agent-1.0.0.tgz");
    let app = axum::Router::new().route(
        "/{*name}",
        axum::routing::get(move |UrlPath(name): UrlPath<String>| {
            let tarball = tarball.clone();
            async move {
                if name.replace("%2f", "/").replace("%2F", "/") != "@hecate-test/agent" {
                    return (
                        StatusCode::NOT_FOUND,
                        axum::Json(json!({"error": "Not found"})),
                    )
                        .into_response();
                }
                axum::Json(json!({
                    "name": "@hecate-test/agent",
                    "dist-tags": {"latest": "1.0.0"},
                    "versions": {"1.0.0": {
                        "name": "@hecate-test/agent",
                        "version": "1.0.0",
                        "dist": {"tarball": tarball}
                    }}
                }))
                .into_response()
            }
        }),
    );
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    base
}

/// Runs `hecate adapters install` off the async test's threads.
async fn failed_install_async(home: &Home, id: &str) -> String {
    let mut cmd = home.cmd(&["adapters", "install", id]);
    let out = tokio::task::spawn_blocking(move || cmd.output().expect("run"))
        .await
        .expect("join");
    assert!(!out.status.success(), "install {id} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test]
async fn registry_failures_are_classified_with_their_fix() {
    let mut home = home_with_packaged_fixture();
    let registry = fake_registry().await;
    home.set("npm_config_registry", &format!("{registry}/"));
    home.set("npm_config_fetch_retries", "0");
    write_manifest(
        &home,
        "pinned",
        "package = \"@hecate-test/agent\"\npackage_version = \"9.9.9\"\n",
    );
    let missing_version = failed_install_async(&home, "pinned").await;
    assert!(
        missing_version.contains("no such version") && missing_version.contains("package_version"),
        "{missing_version}"
    );
    write_manifest(&home, "unpublished", "package = \"@hecate-test/nothing\"\n");
    let unpublished = failed_install_async(&home, "unpublished").await;
    assert!(unpublished.contains("package not found"), "{unpublished}");

    // A registry nobody listens on.
    let dead = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = dead.local_addr().expect("addr").port();
    drop(dead);
    home.set("npm_config_registry", &format!("http://127.0.0.1:{port}/"));
    let offline = failed_install_async(&home, "pinned").await;
    assert!(
        offline.contains("registry is unreachable") && offline.contains("Check the network"),
        "{offline}"
    );
    assert!(
        cache_entries(&home).is_empty(),
        "{:?}",
        cache_entries(&home)
    );
}

#[tokio::test]
async fn refresh_launcher_over_http_reinstalls_and_reports_bad_ids() {
    let home = home_with_packaged_fixture();
    let served = serve(&home);
    let api = Api::new(&served);
    let first = api
        .post(
            "/hecate/v1/agent-adapters/fixture/refresh-launcher",
            json!({}),
        )
        .await;
    assert_eq!(first.status, 200, "{:?}", first.body);
    assert_eq!(first.body["object"], "agent_adapter");
    assert_eq!(first.body["data"]["available"], true);
    assert_eq!(first.body["data"]["source"], "managed");
    let marker = home.path("cache/adapters/fixture/left-by-the-first-install");
    std::fs::write(&marker, "x").expect("marker");
    let again = api
        .post(
            "/hecate/v1/agent-adapters/fixture/refresh-launcher",
            json!({}),
        )
        .await;
    assert_eq!(again.status, 200, "{:?}", again.body);
    assert!(!marker.exists(), "a refresh installs afresh");

    let unknown = api
        .post("/hecate/v1/agent-adapters/nope/refresh-launcher", json!({}))
        .await;
    assert_eq!((unknown.status, unknown.error_type()), (404, "not_found"));
    let no_package = api
        .post(
            "/hecate/v1/agent-adapters/cursor_agent/refresh-launcher",
            json!({}),
        )
        .await;
    assert_eq!(
        (no_package.status, no_package.error_type()),
        (400, "invalid_request")
    );
    let list = api.get("/hecate/v1/agent-adapters").await;
    let cursor = list.body["data"]
        .as_array()
        .expect("data")
        .iter()
        .find(|a| a["id"] == "cursor_agent")
        .cloned()
        .expect("cursor");
    assert!(cursor["auth_status"].is_string(), "{cursor}");
}

#[test]
fn catalog_rows_carry_auth_status_from_env_and_login_files() {
    let mut home = Home::empty();
    let (_h, fake_home) = workspace();
    home.set("HOME", &fake_home.display().to_string());
    home.set("ANTHROPIC_API_KEY", "sk-test");
    // Keys the runner's own environment might carry count as absent when empty.
    home.set("GEMINI_API_KEY", "");
    home.set("GOOGLE_API_KEY", "");
    std::fs::create_dir_all(fake_home.join(".codex")).expect("codex dir");
    std::fs::write(fake_home.join(".codex/auth.json"), "{}").expect("auth");
    let claude = row(&home, "claude_code");
    assert_eq!(claude["auth_status"], "ok", "{claude}");
    assert!(claude["auth_error"].is_null());
    assert_eq!(row(&home, "codex")["auth_status"], "ok");
    let gemini = row(&home, "gemini");
    assert_eq!(gemini["auth_status"], "unauthenticated");
    assert!(
        gemini["auth_error"]
            .as_str()
            .is_some_and(|e| e.contains("GEMINI_API_KEY") && e.contains("~/.gemini")),
        "{gemini}"
    );
}

/// A registry that accepts connections and never answers (npm waits on it);
/// answers its URL and a channel that gets a message per accepted connection.
fn silent_registry() -> (String, std::sync::mpsc::Receiver<()>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}/", listener.local_addr().expect("addr"));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
            let _ = tx.send(());
        }
    });
    (url, rx)
}

/// Whether a process whose command line mentions `needle` is running.
fn process_mentioning(needle: &str) -> bool {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok())
        .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
        .any(|cmdline| String::from_utf8_lossy(&cmdline).contains(needle))
}

#[test]
fn an_install_killed_midway_leaves_a_staging_folder_that_the_next_install_cleans() {
    let mut home = home_with_packaged_fixture();
    let (registry, connected) = silent_registry();
    home.set("npm_config_registry", &registry);
    write_manifest(&home, "stuck", "package = \"@hecate-test/agent\"\n");
    let mut install = home
        .cmd(&["adapters", "install", "stuck"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn install");
    // npm is waiting on the registry: the install is midway.
    connected
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("npm never asked the registry");
    install.kill().expect("kill -9");
    install.wait().expect("reap");
    let staging: Vec<String> = cache_entries(&home)
        .into_iter()
        .filter(|n| n.starts_with(".stuck.staging-"))
        .collect();
    assert_eq!(staging.len(), 1, "{:?}", cache_entries(&home));
    // Hecate's watchdog stops npm with it (a hang guard, not a timing assertion).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while process_mentioning(&staging[0]) {
        assert!(std::time::Instant::now() < deadline, "npm outlived hecate");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }

    // The next install (of any adapter) removes what the killed one left.
    let out = home.run(&["adapters", "install", "fixture"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(cache_entries(&home), vec!["fixture"]);
    assert_eq!(row(&home, "stuck")["status"], "missing");
}

/// Polls `GET …/{id}/install` until the install ends; answers its last body.
async fn install_ended(api: &Api, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(300);
    loop {
        let a = api
            .get(&format!("/hecate/v1/agent-adapters/{id}/install"))
            .await;
        assert_eq!(a.status, 200, "{:?}", a.body);
        if a.body["data"]["state"] != "running" {
            return a.body;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the install never ended: {:?}",
            a.body
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn an_install_started_over_http_reports_its_stages_and_the_new_row() {
    let home = home_with_packaged_fixture();
    let served = serve(&home);
    let api = Api::new(&served);
    let before = api.get("/hecate/v1/agent-adapters/fixture/install").await;
    assert_eq!(
        (before.status, before.error_type()),
        (404, "not_found"),
        "no install yet"
    );
    let started = api
        .post("/hecate/v1/agent-adapters/fixture/install", json!({}))
        .await;
    assert_eq!(started.status, 202, "{:?}", started.body);
    assert_eq!(started.body["object"], "agent_adapter_install");
    assert_eq!(started.body["data"]["adapter_id"], "fixture");
    assert_eq!(started.body["data"]["state"], "running");
    assert!(
        started.body["data"]["id"]
            .as_str()
            .is_some_and(|id| id.starts_with("inst_")),
        "{:?}",
        started.body
    );
    assert_eq!(started.body["data"]["adapter"]["status"], "missing");

    let ended = install_ended(&api, "fixture").await;
    let job = &ended["data"];
    assert_eq!(job["state"], "succeeded", "{ended}");
    assert_eq!(job["id"], started.body["data"]["id"]);
    let stages: Vec<&str> = job["stages"]
        .as_array()
        .expect("stages")
        .iter()
        .filter_map(|s| s["stage"].as_str())
        .collect();
    assert_eq!(
        stages,
        [
            "resolving",
            "cleaning",
            "downloading",
            "verifying",
            "placing",
            "done"
        ]
    );
    assert_eq!(job["stage"], "done");
    assert!(job["finished_at"].is_string());
    assert_eq!(job["adapter"]["status"], "available", "{ended}");
    assert_eq!(job["adapter"]["version"], "1.2.3");
    assert_eq!(cache_entries(&home), vec!["fixture"], "no staging left");

    // The catalog row agrees, and the adapter answers its health check.
    let health = api.get("/hecate/v1/agent-adapters/fixture/health").await;
    assert_eq!(health.body["data"]["status"], "ready", "{:?}", health.body);
}

#[tokio::test]
async fn a_second_install_while_one_runs_is_refused_and_bad_ids_are_404() {
    let mut home = home_with_packaged_fixture();
    let (registry, connected) = silent_registry();
    home.set("npm_config_registry", &registry);
    write_manifest(&home, "stuck", "package = \"@hecate-test/agent\"\n");
    let served = serve(&home);
    let api = Api::new(&served);

    let unknown = api
        .post("/hecate/v1/agent-adapters/nope/install", json!({}))
        .await;
    assert_eq!((unknown.status, unknown.error_type()), (404, "not_found"));
    let unknown = api.get("/hecate/v1/agent-adapters/nope/install").await;
    assert_eq!((unknown.status, unknown.error_type()), (404, "not_found"));
    let no_package = api
        .post("/hecate/v1/agent-adapters/cursor_agent/install", json!({}))
        .await;
    assert_eq!(
        (no_package.status, no_package.error_type()),
        (400, "invalid_request"),
        "{:?}",
        no_package.body
    );

    let first = api
        .post("/hecate/v1/agent-adapters/stuck/install", json!({}))
        .await;
    assert_eq!(first.status, 202, "{:?}", first.body);
    // npm is waiting on the registry: the install is midway.
    tokio::task::spawn_blocking(move || {
        connected
            .recv_timeout(std::time::Duration::from_secs(120))
            .expect("npm never asked the registry")
    })
    .await
    .expect("join");
    let running = api.get("/hecate/v1/agent-adapters/stuck/install").await;
    assert_eq!(running.body["data"]["state"], "running");
    assert_eq!(
        running.body["data"]["stage"], "downloading",
        "{:?}",
        running.body
    );

    let second = api
        .post("/hecate/v1/agent-adapters/stuck/install", json!({}))
        .await;
    assert_eq!(
        (second.status, second.error_type()),
        (409, "conflict"),
        "{:?}",
        second.body
    );
    assert_eq!(
        second.body["error"]["install_id"], first.body["data"]["id"],
        "{:?}",
        second.body
    );
    let refresh = api
        .post(
            "/hecate/v1/agent-adapters/stuck/refresh-launcher",
            json!({}),
        )
        .await;
    assert_eq!(
        (refresh.status, refresh.error_type()),
        (409, "conflict"),
        "the blocking refresh is the same install"
    );
    // Another adapter may install meanwhile.
    let other = api
        .post("/hecate/v1/agent-adapters/fixture/install", json!({}))
        .await;
    assert_eq!(other.status, 202, "{:?}", other.body);
    let ended = install_ended(&api, "fixture").await;
    assert_eq!(ended["data"]["state"], "succeeded", "{ended}");
}

#[tokio::test]
async fn a_failed_install_over_http_ends_with_the_fix() {
    let home = home_with_packaged_fixture();
    write_manifest(
        &home,
        "gone",
        &format!(
            "package = {:?}\n",
            home.path("npm-src/gone.tgz").display().to_string()
        ),
    );
    let served = serve(&home);
    let api = Api::new(&served);
    let started = api
        .post("/hecate/v1/agent-adapters/gone/install", json!({}))
        .await;
    assert_eq!(started.status, 202, "{:?}", started.body);
    let ended = install_ended(&api, "gone").await;
    let job = &ended["data"];
    assert_eq!(job["state"], "failed", "{ended}");
    assert_eq!(job["stage"], "downloading");
    assert_eq!(job["error"]["reason"], "package_not_found", "{ended}");
    assert!(
        job["error"]["operator_action"]
            .as_str()
            .is_some_and(|a| a.contains("Check `package`")),
        "{ended}"
    );
    assert_eq!(job["adapter"]["status"], "missing");
}
