//! `hecate store copy` with the real binary: an installation populated through
//! real use (`hecate serve` with the fixture model: an agent-chat turn, a
//! gateway chat session; a task run and a grant from the CLI) moves from SQLite
//! to a fresh PostgreSQL database with matching counts and checksums, `serve
//! --store postgres://...` then shows the same session, and the copy back to
//! SQLite sums the same. Bad input (a non-empty target, an unreachable one,
//! malformed URLs, the same database twice, a missing or outdated source) is
//! refused with a clear error and the target left as it was. The copy's table
//! list is held to the PostgreSQL schema.

use crate::support::common::{Home, ModelServer, text};
use crate::support::http::{Api, serve, serve_args};
use crate::support::postgres;
use serde_json::{Value, json};
use std::collections::BTreeMap;

async fn fresh_url() -> String {
    tokio::task::spawn_blocking(postgres::fresh_database_url)
        .await
        .expect("database")
}

/// The database name at the end of a URL.
fn db_of(url: &str) -> String {
    url.rsplit('/').next().expect("database name").to_string()
}

async fn psql(db: String, sql: &'static str) -> String {
    tokio::task::spawn_blocking(move || postgres::shared().psql(&db, sql))
        .await
        .expect("psql")
}

/// Runs `store copy --format json`; answers the report's `data`.
fn copy_ok(home: &Home, from: &str, to: &str) -> Value {
    let out = home.run(&[
        "store", "copy", "--from", from, "--to", to, "--format", "json",
    ]);
    let (stdout, stderr) = text(&out);
    assert!(
        out.status.success(),
        "copy {from} -> {to}: {stderr}\n{stdout}"
    );
    let v: Value = serde_json::from_str(&stdout).expect("json report");
    assert_eq!(v["object"], "store_copy");
    v["data"].clone()
}

/// Table name -> (rows, sha256) of one side of a report, checking that both
/// sides agree on every table.
fn sums(report: &Value) -> BTreeMap<String, (u64, String)> {
    assert_eq!(report["committed"], true, "{report}");
    report["tables"]
        .as_array()
        .expect("tables")
        .iter()
        .map(|t| {
            assert_eq!(t["matches"], true, "{t}");
            assert_eq!(t["source_rows"], t["target_rows"], "{t}");
            assert_eq!(t["source_sha256"], t["target_sha256"], "{t}");
            (
                t["table"].as_str().expect("name").to_string(),
                (
                    t["target_rows"].as_u64().expect("rows"),
                    t["target_sha256"].as_str().expect("sha").to_string(),
                ),
            )
        })
        .collect()
}

fn messages_of(session: &Value) -> Vec<(String, String)> {
    session["data"]["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .map(|m| {
            (
                m["id"].as_str().unwrap_or_default().to_string(),
                m["content"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_sqlite_installation_moves_to_postgres_and_back_without_loss() {
    let fx = ModelServer::start(Some(
        json!([{"text": "answer from the fixture", "repeat": true}]),
    ));
    let mut home = Home::with_openai(&fx);
    home.set("PROVIDER_OAI_KIND", "openai");
    home.set("PROVIDER_OAI_BASE_URL", &format!("{}/v1", fx.base));
    home.set("PROVIDER_OAI_MODELS", "gpt-fix");
    home.set("HECATE_TASK_APPROVAL_POLICIES", "");

    // Real use on SQLite: an agent-chat turn and a gateway chat session.
    let (id, before) = {
        let served = serve(&home);
        let api = Api::new(&served);
        let id = api.create_session(json!({"title": "moving house"})).await;
        let a = api.say(&id, "hello before the move").await;
        assert_eq!(a.status, 200, "{}", a.body);
        let chat = api
            .send(
                api.request(reqwest::Method::POST, "/v1/chat/completions")
                    .header("x-hecate-session-id", "chat_moving")
                    .json(&json!({"model": "oai/gpt-fix",
                        "messages": [{"role": "user", "content": "hi gateway"}]})),
            )
            .await;
        assert_eq!(chat.status, 200, "{}", chat.body);
        let got = api
            .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
            .await;
        assert_eq!(got.status, 200, "{}", got.body);
        (id, messages_of(&got.body))
    };
    assert_eq!(before.len(), 2, "{before:?}");
    // A task run and a grant from the CLI, on the same store.
    let created = home.create_shell_task("echo moved");
    assert!(created.status.success(), "{}", text(&created).1);
    let task = text(&created).0.trim().to_string();
    let ran = home.run(&["tasks", "start", &task, "--wait"]);
    assert!(ran.status.success(), "{}", text(&ran).1);
    let granted = home.run(&[
        "grants",
        "create",
        "--scope",
        "session",
        "--session",
        &id,
        "--tool-kind",
        "edit",
        "--decision",
        "approve",
    ]);
    assert!(granted.status.success(), "{}", text(&granted).1);

    let sqlite = format!("sqlite:{}", home.data_dir().join("hecate.db").display());
    let url = fresh_url().await;
    let there = sums(&copy_ok(&home, &sqlite, &url));
    for table in [
        "sessions",
        "messages",
        "provider_calls",
        "runs",
        "run_events",
        "grants",
        "tasks",
        "task_runs",
        "task_steps",
        "task_events",
        "chat_sessions",
        "chat_session_messages",
        "chat_session_provider_calls",
        "gateway_traces",
    ] {
        assert!(there[table].0 > 0, "{table} was populated: {there:?}");
    }
    // The PostgreSQL copy, read back into a new SQLite file, sums the same.
    let back = home.path("back.db");
    let back_url = format!("sqlite:{}", back.display());
    let returned = sums(&copy_ok(&home, &url, &back_url));
    assert_eq!(
        returned, there,
        "SQLite -> PostgreSQL -> SQLite keeps every row"
    );

    // Hecate on the copy shows the same session and messages, and keeps going.
    let served = serve_args(
        &home,
        &["serve", "--listen", "127.0.0.1:0", "--store", &url],
    );
    let api = Api::new(&served);
    let got = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(got.status, 200, "{}", got.body);
    assert_eq!(got.body["data"]["title"], "moving house");
    assert_eq!(messages_of(&got.body), before);
    let a = api.say(&id, "hello after the move").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let got = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(messages_of(&got.body).len(), 4, "{}", got.body);
    let chat = api.get("/hecate/v1/chat/sessions/chat_moving").await;
    assert_eq!(chat.status, 200, "{}", chat.body);
    // The task's event log goes on from where it was (its sequence moved past
    // the copied numbers).
    let again = home.run(&["--store", &url, "tasks", "start", &task, "--wait"]);
    assert!(again.status.success(), "{}", text(&again).1);
}

/// Runs a copy that must fail; answers its stderr after checking the exit code.
fn copy_refused(home: &Home, from: &str, to: &str, code: i32) -> String {
    let out = home.run(&["store", "copy", "--from", from, "--to", to]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(code), "{from} -> {to}: {stderr}");
    assert!(stdout.is_empty(), "no report: {stdout}");
    stderr
}

#[tokio::test]
async fn bad_copies_are_refused_clearly_and_leave_the_target_as_it_was() {
    let home = Home::empty();
    let created = home.run(&["tasks", "create", "--kind", "shell", "--shell", "echo x"]);
    assert!(created.status.success(), "{}", text(&created).1);
    let db = home.data_dir().join("hecate.db");
    let sqlite = format!("sqlite:{}", db.display());
    let url = fresh_url().await;
    copy_ok(&home, &sqlite, &url);

    // A target that holds rows: refused, nothing added.
    let stderr = copy_refused(&home, &sqlite, &url, 4);
    assert!(stderr.contains("is not empty: tasks"), "{stderr}");
    assert!(stderr.contains("There is no --force"), "{stderr}");
    assert!(!stderr.contains(postgres::PASSWORD), "{stderr}");
    assert_eq!(psql(db_of(&url), "SELECT count(*) FROM tasks").await, "1");

    // The same database on both sides, however it is written.
    let dotted = format!(
        "sqlite:{}",
        db.parent()
            .expect("dir")
            .join(".")
            .join("hecate.db")
            .display()
    );
    let stderr = copy_refused(&home, &sqlite, &dotted, 2);
    assert!(stderr.contains("the same database"), "{stderr}");
    let stderr = copy_refused(&home, &url, &url, 2);
    assert!(stderr.contains("the same database"), "{stderr}");

    // Unreachable and malformed targets, the in-memory store.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("port");
    let unreachable = format!("postgres://u:secret-pw@127.0.0.1:{port}/db");
    let stderr = copy_refused(&home, &sqlite, &unreachable, 8);
    assert!(stderr.contains("cannot reach the server"), "{stderr}");
    assert!(!stderr.contains("secret-pw"), "{stderr}");
    let stderr = copy_refused(&home, &sqlite, "postgres://u:p@127.0.0.1:notaport/db", 2);
    assert!(stderr.contains("invalid PostgreSQL store URL"), "{stderr}");
    let stderr = copy_refused(&home, &sqlite, "mysql://u:p@h/db", 2);
    assert!(stderr.contains("unsupported store URL"), "{stderr}");
    let stderr = copy_refused(&home, &sqlite, "sqlite::memory:", 2);
    assert!(stderr.contains("in-memory store"), "{stderr}");

    // A missing source, and one a migration behind: nothing is created.
    let target = home.path("never.db");
    let target_url = format!("sqlite:{}", target.display());
    let missing = format!("sqlite:{}", home.path("nothing-here.db").display());
    let stderr = copy_refused(&home, &missing, &target_url, 3);
    assert!(stderr.contains("no SQLite store at"), "{stderr}");
    let old = home.path("old.db");
    {
        let mut conn = rusqlite::Connection::open(&old).expect("open");
        hecate::store::sqlite::migrations::migrate_to(&mut conn, 3).expect("v3");
    }
    let old_url = format!("sqlite:{}", old.display());
    let stderr = copy_refused(&home, &old_url, &target_url, 4);
    assert!(stderr.contains("schema version 3"), "{stderr}");
    assert!(
        stderr.contains(&format!("hecate --store {old_url} store migrate")),
        "{stderr}"
    );
    assert!(!target.exists(), "the target was not created");
}

#[tokio::test]
async fn the_copy_covers_every_postgres_table_and_column() {
    use hecate::store::transfer::catalog::{Kind, TABLES};
    let url = fresh_url().await;
    let home = Home::empty();
    let out = home.run(&["--store", &url, "store", "migrate"]);
    assert!(out.status.success(), "{}", text(&out).1);
    let rows = psql(
        db_of(&url),
        "SELECT table_name, column_name, data_type FROM information_schema.columns \
         WHERE table_schema = 'public' AND table_name <> 'schema_migrations' \
         AND column_name <> 'seq' ORDER BY table_name, ordinal_position",
    )
    .await;
    let mut schema: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for line in rows.lines() {
        let mut parts = line.split('|');
        let (t, c, ty) = (
            parts.next().expect("table"),
            parts.next().expect("column"),
            parts.next().expect("type"),
        );
        schema
            .entry(t.to_string())
            .or_default()
            .push((c.to_string(), ty.to_string()));
    }
    let catalog: BTreeMap<String, Vec<(String, String)>> = TABLES
        .iter()
        .map(|t| {
            let columns = t
                .columns
                .iter()
                .map(|c| {
                    let ty = match c.kind {
                        Kind::Text => "text",
                        Kind::Int => "bigint",
                        Kind::Int4 => "integer",
                        Kind::Bool => "boolean",
                        Kind::Vector => "ARRAY",
                    };
                    (c.name.to_string(), ty.to_string())
                })
                .collect();
            (t.name.to_string(), columns)
        })
        .collect();
    assert_eq!(catalog, schema);
}

#[tokio::test]
async fn a_copy_that_fails_midway_leaves_the_target_empty() {
    // Rows late in the copy order that cannot be copied as they are: a BLOB
    // where Hecate writes text (the reading side stops), and a flag of 2 that
    // PostgreSQL's BOOLEAN cannot hold (the writing side stops).
    let cases = [
        (
            "INSERT INTO flow_memory VALUES ('default', 'app', 'u', 'agent', 'f', X'00ff', 'c', 'now')",
            "flow_memory.value_json holds a Blob value",
        ),
        (
            "INSERT INTO flow_chats VALUES ('default', 'fc', 'agent', 'app', 'u', 'conv', \
             'start', 2, 1, NULL, '[]', 1, 'now', 'now')",
            "flow_chats.ended: the value Int(2) does not fit",
        ),
    ];
    for (bad_row, says) in cases {
        let home = Home::empty();
        let created = home.run(&["tasks", "create", "--kind", "shell", "--shell", "echo x"]);
        assert!(created.status.success(), "{}", text(&created).1);
        let db = home.data_dir().join("hecate.db");
        rusqlite::Connection::open(&db)
            .and_then(|c| c.execute_batch(bad_row))
            .expect("crafted row");
        let url = fresh_url().await;
        let stderr = copy_refused(&home, &format!("sqlite:{}", db.display()), &url, 8);
        assert!(stderr.contains(says), "{stderr}");
        // The task, copied before the bad row, was rolled back with it.
        assert_eq!(psql(db_of(&url), "SELECT count(*) FROM tasks").await, "0");
        // And the target, still empty, takes a copy once the source is fixed.
        rusqlite::Connection::open(&db)
            .and_then(|c| c.execute_batch("DELETE FROM flow_memory; DELETE FROM flow_chats;"))
            .expect("fixed");
        copy_ok(&home, &format!("sqlite:{}", db.display()), &url);
        assert_eq!(psql(db_of(&url), "SELECT count(*) FROM tasks").await, "1");
    }
}
