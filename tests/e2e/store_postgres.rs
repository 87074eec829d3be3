//! The real `hecate` binary on a real PostgreSQL (the test binary's throwaway
//! server, a fresh database per test): `serve --store postgres://...` keeps
//! agent-chat sessions there, so another process with the same URL sees them;
//! `[store] url` and `HECATE_STORE_URL` choose it too; `hecate store status` and
//! `migrate` report and apply the versioned schema; a newer schema, a wrong
//! password, an unreachable server and malformed URLs are refused at startup with
//! errors naming the fix.

use crate::support::acp_editor::{Editor, answer, model_home, open, prompt, run_editor};
use crate::support::acp_process::Hecate;
use crate::support::common::{Home, ModelServer, text, workspace};
use crate::support::http::{Api, data, last_message, message_contents, serve_args, slow_text};
use crate::support::mcp::McpProc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(30);
use crate::support::postgres::{self, PASSWORD};
use serde_json::{Value, json};

/// A fresh database's URL (the server starts on first use, off the runtime).
async fn fresh_url() -> String {
    tokio::task::spawn_blocking(postgres::fresh_database_url)
        .await
        .expect("database")
}

fn status_json(home: &Home, url: &str) -> Value {
    home.json(&["--store", url, "store", "status", "--format", "json"])["data"].clone()
}

#[tokio::test]
async fn serve_keeps_agent_chat_sessions_in_postgres_for_every_process() {
    let url = fresh_url().await;
    let server = ModelServer::start(Some(json!([
        {"match": {"contains": "hello"}, "text": "hi from postgres"}
    ])));
    let home = Home::with_openai(&server);
    let served = serve_args(
        &home,
        &["serve", "--listen", "127.0.0.1:0", "--store", &url],
    );
    let api = Api::new(&served);
    let id = api.create_session(json!({"title": "on postgres"})).await;
    let a = api.say(&id, "hello there").await;
    assert_eq!(a.status, 200, "{}", a.body);

    let got = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(
        message_contents(&got.body["data"]),
        ["hello there", "hi from postgres"]
    );

    // Another process on the same URL reads the same rows.
    let listed = home.json(&["--store", &url, "sessions", "list", "--format", "json"]);
    let row = listed["data"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["id"] == id.as_str())
        .cloned()
        .expect("listed by the CLI");
    assert_eq!(row["title"], "on postgres");
    assert_eq!(row["message_count"], 2);
    // And nothing went to SQLite.
    assert!(!home.data_dir().join("hecate.db").exists());
}

#[tokio::test]
async fn two_replicas_on_one_database_see_each_others_sessions() {
    let url = fresh_url().await;
    let server = ModelServer::start(Some(json!([
        {"match": {"contains": "ping"}, "text": "pong"}
    ])));
    let home = Home::with_openai(&server);
    let args = ["serve", "--listen", "127.0.0.1:0", "--store", &url];
    let (one, two) = (serve_args(&home, &args), serve_args(&home, &args));
    let (api_one, api_two) = (Api::new(&one), Api::new(&two));
    let id = api_one.create_session(json!({"title": "shared"})).await;
    let listed = api_two.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    assert!(
        listed.body["data"]
            .as_array()
            .expect("sessions")
            .iter()
            .any(|s| s["id"] == id.as_str()),
        "{}",
        listed.body
    );
    // A turn driven by the second replica is read back on the first.
    let a = api_two.say(&id, "ping").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let got = api_one
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    let last = got.body["data"]["messages"]
        .as_array()
        .and_then(|m| m.last().cloned())
        .expect("messages");
    assert_eq!(last["content"], "pong");
}

#[tokio::test]
async fn a_stream_on_one_replica_carries_a_turn_driven_by_another() {
    let url = fresh_url().await;
    // 30 words, 60 ms apart: the turn streams for about two seconds.
    let server = ModelServer::start(Some(json!([slow_text(30, 60)])));
    let home = Home::with_openai(&server);
    let args = ["serve", "--listen", "127.0.0.1:0", "--store", &url];
    let (one, two) = (serve_args(&home, &args), serve_args(&home, &args));
    let (api_one, api_two) = (Api::new(&one), Api::new(&two));
    let id = api_one.create_session(json!({"title": "watched"})).await;
    let mut sse = api_one.stream(&id, None).await;
    let first = sse.next(WAIT).await.expect("initial snapshot");
    assert_eq!(first.event, "snapshot");

    let (api, sid) = (api_two.clone(), id.clone());
    let post = tokio::spawn(async move { api.say(&sid, "stream please").await.body });
    let events = sse.until_done(WAIT).await;
    let done = events.last().expect("events");
    assert_eq!(done.event, "done");
    let full: Vec<String> = (0..30).map(|i| format!("w{i}")).collect();
    assert_eq!(last_message(&data(done))["content"], full.join(" "));
    let partial = events
        .iter()
        .filter(|e| e.event == "snapshot")
        .map(data)
        .any(|v| last_message(&v)["status"] == "running");
    assert!(
        partial,
        "the other replica's running turn showed before it ended: {events:?}"
    );
    assert_eq!(post.await.expect("join")["data"]["status"], "completed");
}

#[tokio::test]
async fn store_status_and_migrate_report_the_versioned_schema() {
    let url = fresh_url().await;
    let home = Home::empty();
    let before = status_json(&home, &url);
    assert_eq!(before["backend"], "postgres");
    assert_eq!(before["schema_version"], 0);
    assert!(before["pending"].as_i64().expect("pending") > 0);
    assert!(
        !before["location"]
            .as_str()
            .expect("location")
            .contains(PASSWORD),
        "the password is never shown: {before}"
    );

    let out = home.run(&["--store", &url, "store", "migrate"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("up to date"), "{stdout}");

    let after = status_json(&home, &url);
    assert_eq!(after["schema_version"], after["known_version"]);
    assert_eq!(after["pending"], 0);
    let migrations = after["migrations"].as_array().expect("migrations");
    assert_eq!(
        migrations.len() as i64,
        after["schema_version"].as_i64().expect("v")
    );
    assert!(
        migrations[0]["name"]
            .as_str()
            .is_some_and(|n| !n.is_empty())
    );
    assert!(migrations[0]["applied_at"].as_str().is_some());

    // The same through the config file's [store] url and through the environment.
    home.write_config(&format!("[store]\nurl = \"{url}\"\n"));
    let from_file = home.json(&["store", "status", "--format", "json"]);
    assert_eq!(from_file["data"]["backend"], "postgres");
    let mut env_home = Home::empty();
    env_home.set("HECATE_STORE_URL", &url);
    let out = env_home.cmd(&["store", "status"]).output().expect("run");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("backend:        postgres"), "{stdout}");

    // SQLite, the default, answers the same command.
    let sqlite = Home::empty().json(&["store", "status", "--format", "json"]);
    assert_eq!(sqlite["data"]["backend"], "sqlite");
}

#[tokio::test]
async fn a_database_with_a_newer_schema_is_refused() {
    let url = fresh_url().await;
    let home = Home::empty();
    let out = home.run(&["--store", &url, "store", "migrate"]);
    assert!(out.status.success(), "{}", text(&out).1);
    let db = url.rsplit('/').next().expect("database name").to_string();
    tokio::task::spawn_blocking(move || {
        postgres::shared().psql(
            &db,
            "INSERT INTO schema_migrations (version, name, applied_at) \
             VALUES (999, 'from the future', 'now')",
        )
    })
    .await
    .expect("psql");
    let out = home.run(&["--store", &url, "sessions", "list"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(8), "{stderr}");
    assert!(stderr.contains("schema version 999"), "{stderr}");
    assert!(stderr.contains("upgrade this replica"), "{stderr}");
}

#[tokio::test]
async fn bad_store_urls_fail_at_startup_naming_the_fix() {
    let url = fresh_url().await;
    let home = Home::empty();
    let port = postgres::shared().port();
    let db = url.rsplit('/').next().expect("database name").to_string();
    // (url, exit code, what stderr must say)
    let cases = [
        (
            format!(
                "postgres://{}:wrong-password@127.0.0.1:{port}/{db}",
                postgres::USER
            ),
            8,
            vec![
                "password authentication failed",
                "check the user and password",
            ],
        ),
        (
            format!(
                "postgres://{}:{PASSWORD}@127.0.0.1:{port}/no_such_db",
                postgres::USER
            ),
            8,
            vec!["does not exist", "createdb no_such_db"],
        ),
        (
            format!("postgres://u:p@127.0.0.1:{}/db", unused_port()),
            8,
            vec!["cannot reach the server", "Check that PostgreSQL runs"],
        ),
        (
            "postgres://u:p@127.0.0.1:notaport/db".to_string(),
            2,
            vec![
                "invalid PostgreSQL store URL",
                "USER:PASSWORD@HOST:PORT/DATABASE",
            ],
        ),
        (
            "mysql://u:p@127.0.0.1/db".to_string(),
            2,
            vec!["unsupported store URL", "sqlite:PATH"],
        ),
    ];
    for (bad, code, says) in cases {
        for args in [
            vec!["--store", bad.as_str(), "store", "status"],
            vec!["--store", bad.as_str(), "serve", "--listen", "127.0.0.1:0"],
        ] {
            let out = home.run(&args);
            let (_, stderr) = text(&out);
            assert_eq!(out.status.code(), Some(code), "{args:?}: {stderr}");
            for s in &says {
                assert!(stderr.contains(s), "{args:?} must say {s:?}: {stderr}");
            }
            assert!(
                !stderr.contains("wrong-password"),
                "the password is never shown: {stderr}"
            );
        }
    }
}

#[test]
fn the_store_url_in_the_environment_never_shows_in_help() {
    let mut home = Home::empty();
    home.set("HECATE_STORE_URL", "postgres://u:hunter2@db.example/hecate");
    let out = home.run(&["serve", "--help"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stdout.contains("--store"), "{stdout}");
    assert!(!stdout.contains("hunter2"), "{stdout}");
}

/// A loopback port nobody listens on.
fn unused_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a port")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_starting_together_migrate_once() {
    use hecate::store::PostgresStore;
    use hecate::store::postgres::migrations::latest_version;
    let url = fresh_url().await;
    let mut starting = Vec::new();
    for _ in 0..4 {
        let url = url.clone();
        starting.push(tokio::spawn(
            async move { PostgresStore::connect(&url).await },
        ));
    }
    for s in starting {
        s.await.expect("task").expect("every replica starts");
    }
    let store = PostgresStore::connect(&url).await.expect("connects");
    let applied = store.applied_migrations().await.expect("applied");
    assert_eq!(
        applied.iter().map(|a| a.version).collect::<Vec<_>>(),
        (1..=latest_version()).collect::<Vec<_>>(),
        "each migration recorded once"
    );
}

#[tokio::test]
async fn a_user_who_may_not_create_tables_is_told_how_to_grant_it() {
    let url = fresh_url().await;
    let db = url.rsplit('/').next().expect("database name").to_string();
    let role = format!("weak_{db}");
    let sql = format!("CREATE ROLE {role} LOGIN PASSWORD 'weak-pw'");
    tokio::task::spawn_blocking(move || postgres::shared().psql("postgres", &sql))
        .await
        .expect("psql");
    let port = postgres::shared().port();
    let weak = format!("postgres://{role}:weak-pw@127.0.0.1:{port}/{db}");
    let out = Home::empty().run(&["--store", &weak, "store", "migrate"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(8), "{stderr}");
    assert!(stderr.contains("cannot create Hecate's tables"), "{stderr}");
    assert!(stderr.contains("GRANT CREATE ON SCHEMA public"), "{stderr}");
}

#[test]
fn a_server_that_goes_away_fails_operations_clearly_and_serves_again_when_back() {
    use hecate::domain::ErrorType;
    use hecate::domain::ids::SessionId;
    use hecate::domain::session::{RuntimeKind, Session};
    use hecate::store::{PostgresStore, SessionStore};
    let server = postgres::private();
    let url = server.url(&server.create_database());
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let store = rt.block_on(PostgresStore::connect(&url)).expect("connects");
    let session = |title: &str| {
        Session::new_idle("default", SessionId::generate(), title, RuntimeKind::Model)
    };
    let before = session("before");
    rt.block_on(store.create_session(&before)).expect("stored");

    server.stop();
    let e = rt
        .block_on(store.get_session("default", &before.id))
        .expect_err("the server is down");
    assert_eq!(e.error_type, ErrorType::StoreError, "{e:?}");
    assert!(e.message.contains("127.0.0.1"), "names the database: {e:?}");
    assert!(!e.message.contains(PASSWORD), "{e:?}");
    let during = session("during");
    let e = rt
        .block_on(store.create_session(&during))
        .expect_err("the server is down");
    assert_eq!(e.error_type, ErrorType::StoreError, "{e:?}");

    server.start_again();
    let got = rt
        .block_on(store.get_session("default", &before.id))
        .expect("the same store serves again");
    assert_eq!(got.title, "before");
    // The write that failed left nothing behind: it can be made now.
    rt.block_on(store.create_session(&during))
        .expect("writes again");
    assert_eq!(
        rt.block_on(store.list_sessions("default", 10))
            .expect("lists")
            .len(),
        2
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn acp_and_mcp_processes_share_sessions_with_serve_on_postgres() {
    let url = fresh_url().await;
    let (_server, home) = model_home("fixture-model");
    let served = serve_args(
        &home,
        &["serve", "--listen", "127.0.0.1:0", "--store", &url],
    );
    let api = Api::new(&served);

    // An editor's thread through `hecate acp` on the same database.
    let (_guard, ws) = workspace();
    let (mut acp, transport) = Hecate::spawn(&home, &["--store", &url]);
    run_editor(transport, Editor::default(), async |cx, mut updates| {
        let sid = open(&cx, &ws).await?;
        prompt(&cx, &sid, "from the editor").await?;
        assert!(
            answer(&updates.drain()).contains("from the editor"),
            "the editor got its answer"
        );
        Ok(())
    })
    .await
    .expect("editor session");
    assert_eq!(acp.exit_code().await, Some(0), "{}", acp.stderr());

    // `hecate serve` lists and shows it.
    let listed = api.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let rows = listed.body["data"].as_array().cloned().expect("sessions");
    assert_eq!(rows.len(), 1, "{}", listed.body);
    let id = rows[0]["id"].as_str().expect("id").to_string();
    let contents = |body: &Value| -> Vec<String> {
        body["data"]["messages"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .filter_map(|m| m["content"].as_str().map(str::to_string))
            .collect()
    };
    let got = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    let seen = contents(&got.body);
    assert_eq!(seen.len(), 2, "{}", got.body);
    assert_eq!(seen[0], "from the editor");

    // An agent continues it through `hecate mcp` on the same database.
    let mut mcp = McpProc::spawn(&home, &["--store", &url]);
    mcp.initialize(json!({}));
    let found = mcp.call_ok("list_sessions", json!({}));
    assert_eq!(found["structuredContent"]["sessions"][0]["id"], id.as_str());
    let turn = mcp.call_ok(
        "send_message",
        json!({"session_id": id, "content": "from an agent"}),
    );
    assert_eq!(turn["structuredContent"]["status"], "completed", "{turn}");
    let got = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    let seen = contents(&got.body);
    assert_eq!(seen.len(), 4, "{}", got.body);
    assert_eq!(seen[2], "from an agent");
    // Nothing went to SQLite.
    assert!(!home.data_dir().join("hecate.db").exists());
}
