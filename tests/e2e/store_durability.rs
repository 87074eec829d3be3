//! Durability across processes: corrupt and read-only databases, concurrent writers,
//! a session driven elsewhere, and a Hecate killed mid-turn. The cross-process
//! cases run on a SQLite file and on a PostgreSQL database (the processes are then
//! replicas of one store).

use crate::support::common::{Home, ModelServer, session_id_from, text};
use crate::support::postgres;
use serde_json::json;
use std::io::Read as _;
use std::process::Stdio;
use std::time::{Duration, Instant};

#[test]
fn a_corrupt_database_is_a_clear_error_naming_the_file() {
    let home = Home::empty();
    std::fs::create_dir_all(home.data_dir()).expect("mkdir");
    let db = home.data_dir().join("hecate.db");
    std::fs::write(&db, vec![b'Z'; 8192]).expect("write garbage");
    let out = home.run(&["sessions", "list"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(8), "{stderr}");
    assert!(stderr.contains("store_error"), "{stderr}");
    assert!(stderr.contains(&db.display().to_string()), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_database_with_a_newer_schema_is_refused_naming_the_upgrade() {
    let home = Home::empty();
    std::fs::create_dir_all(home.data_dir()).expect("mkdir");
    let db = home.data_dir().join("hecate.db");
    let conn = rusqlite::Connection::open(&db).expect("create");
    conn.pragma_update(None, "user_version", 999)
        .expect("version");
    drop(conn);
    let out = home.run(&["sessions", "list"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(8), "{stderr}");
    assert!(stderr.contains("schema version 999"), "{stderr}");
    assert!(stderr.contains("Upgrade this Hecate"), "{stderr}");
    let status = home.json(&["store", "status", "--format", "json"]);
    assert_eq!(status["data"]["schema_version"], 999);
}

#[test]
fn a_read_only_database_is_a_clear_error_naming_the_file() {
    if unsafe_is_root() {
        // root ignores file permissions; use a read-only directory bind instead:
        // an unwritable path under /proc cannot be created by anyone.
        let mut home = Home::empty();
        home.set("HECATE_DATA_DIR", "/proc/hecate-cannot-exist");
        let out = home.run(&["sessions", "list"]);
        let (_, stderr) = text(&out);
        assert_eq!(out.status.code(), Some(8), "{stderr}");
        assert!(stderr.contains("/proc/hecate-cannot-exist"), "{stderr}");
        return;
    }
    let home = Home::empty();
    assert!(home.run(&["sessions", "list"]).status.success());
    let db = home.data_dir().join("hecate.db");
    let mut perms = std::fs::metadata(&db).expect("meta").permissions();
    perms.set_readonly(true);
    std::fs::set_permissions(&db, perms).expect("chmod");
    let out = home.run(&["sessions", "list"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(8), "{stderr}");
    assert!(stderr.contains(&db.display().to_string()), "{stderr}");
}

fn unsafe_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// Where the processes of a case keep their store.
#[derive(Clone, Copy)]
enum Backend {
    /// The SQLite file in the home's data directory.
    SqliteFile,
    /// A fresh PostgreSQL database (`HECATE_STORE_URL`).
    Postgres,
}

/// A home with the fixture provider on `server`, on `backend`; answers the
/// PostgreSQL database name when there is one.
fn home_on(server: &ModelServer, backend: Backend) -> (Home, Option<String>) {
    let mut home = Home::with_openai(server);
    match backend {
        Backend::SqliteFile => (home, None),
        Backend::Postgres => {
            let url = postgres::fresh_database_url();
            home.set("HECATE_STORE_URL", &url);
            let db = url.rsplit('/').next().map(str::to_string);
            (home, db)
        }
    }
}

#[test]
fn concurrent_processes_lose_nothing_and_keep_sequences_gap_free() {
    concurrent_processes_case(Backend::SqliteFile);
}

#[test]
fn concurrent_replicas_on_postgres_lose_nothing_and_keep_sequences_gap_free() {
    concurrent_processes_case(Backend::Postgres);
}

fn concurrent_processes_case(backend: Backend) {
    let server = ModelServer::start(None);
    let (home, _) = home_on(&server, backend);
    // Two sessions, then two processes each running several turns on its own
    // session and a third process creating fresh sessions, all on one file.
    let a = session_id_from(&home.run(&["chat", "--model", "fix/m", "a0"]).stderr);
    let b = session_id_from(&home.run(&["chat", "--model", "fix/m", "b0"]).stderr);
    let turns = 8;
    let mut children = Vec::new();
    for (id, tag) in [(Some(a.clone()), "a"), (Some(b.clone()), "b"), (None, "c")] {
        let mut script = String::new();
        for i in 1..=turns {
            let bin = env!("CARGO_BIN_EXE_hecate");
            match &id {
                Some(id) => {
                    script.push_str(&format!("{bin} chat --session {id} {tag}{i} || exit 1\n"))
                }
                None => script.push_str(&format!("{bin} chat --model fix/m {tag}{i} || exit 1\n")),
            }
        }
        let mut c = std::process::Command::new("sh");
        c.arg("-c")
            .arg(script)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in &home.env {
            c.env(k, v);
        }
        children.push(c.spawn().expect("spawn sh"));
    }
    for mut c in children {
        let status = c.wait().expect("wait");
        let mut err = String::new();
        if let Some(mut e) = c.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        assert!(status.success(), "{err}");
    }
    for id in [&a, &b] {
        let show = home.json(&["sessions", "show", id, "--format", "json"]);
        let seqs: Vec<i64> = show["data"]["messages"]
            .as_array()
            .expect("messages")
            .iter()
            .map(|m| m["sequence"].as_i64().expect("seq"))
            .collect();
        assert_eq!(seqs, (0..(2 + 2 * turns as i64)).collect::<Vec<_>>());
    }
    let list = home.json(&["sessions", "list", "--format", "json", "--limit", "100"]);
    assert_eq!(list["data"].as_array().map(Vec::len), Some(2 + turns));
}

#[test]
fn a_session_driven_by_another_process_answers_busy_elsewhere() {
    busy_elsewhere_case(Backend::SqliteFile);
}

#[test]
fn a_session_driven_by_another_replica_on_postgres_answers_busy_elsewhere() {
    busy_elsewhere_case(Backend::Postgres);
}

fn busy_elsewhere_case(backend: Backend) {
    let server = ModelServer::start(Some(json!([
        {"match": {"contains": "slow"}, "chunks": ["a ", "b ", "c ", "d "], "chunk_delay_ms": 600},
        {"repeat": true, "text": "fine"}
    ])));
    let (home, _) = home_on(&server, backend);
    let mut slow = home
        .cmd(&["chat", "--model", "fix/m", "slow please"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn slow chat");
    // Wait until the first process stored its session (and holds the lease).
    let deadline = Instant::now() + Duration::from_secs(20);
    let id = loop {
        let list = home.json(&["sessions", "list", "--format", "json"]);
        if let Some(id) = list["data"][0]["id"].as_str()
            && list["data"][0]["status"] == "running"
        {
            break id.to_string();
        }
        assert!(Instant::now() < deadline, "first turn never started");
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = home.run(&["chat", "--session", &id, "me too"]);
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(4), "{stderr}");
    assert!(
        stderr.contains("agent_chat.session_busy_elsewhere"),
        "{stderr}"
    );
    assert!(slow.wait().expect("wait").success());
    // Once the owner finished, anyone may continue the session.
    assert!(
        home.run(&["chat", "--session", &id, "now"])
            .status
            .success()
    );
}

/// How many text deltas of the session's newest run the store holds (read straight
/// from the database, as another process would): from PostgreSQL database `pg`
/// when given, else from the home's SQLite file.
fn stored_deltas(home: &Home, pg: Option<&str>, session_id: &str) -> i64 {
    if let Some(db) = pg {
        // Ids are generated by Hecate (letters, digits, `_`), safe to quote inline.
        return postgres::shared()
            .psql(
                db,
                &format!(
                    "SELECT COUNT(*) FROM run_events WHERE type = 'text_delta' AND run_id = \
                     (SELECT id FROM runs WHERE session_id = '{session_id}' \
                      ORDER BY started_at DESC, seq DESC LIMIT 1)"
                ),
            )
            .parse()
            .unwrap_or(0);
    }
    let Ok(db) = rusqlite::Connection::open(home.data_dir().join("hecate.db")) else {
        return 0;
    };
    db.query_row(
        "SELECT COUNT(*) FROM run_events WHERE type = 'text_delta' AND run_id = \
         (SELECT id FROM runs WHERE session_id = ?1 ORDER BY started_at DESC, rowid DESC LIMIT 1)",
        [session_id],
        |r| r.get(0),
    )
    .unwrap_or(0)
}

#[test]
fn a_hecate_killed_mid_turn_keeps_the_streamed_text_as_an_interrupted_answer() {
    killed_mid_turn_case(Backend::SqliteFile);
}

#[test]
fn a_replica_killed_mid_turn_on_postgres_keeps_the_streamed_text_as_an_interrupted_answer() {
    killed_mid_turn_case(Backend::Postgres);
}

fn killed_mid_turn_case(backend: Backend) {
    let server = ModelServer::start(Some(json!([
        {"match": {"contains": "first"}, "text": "stored answer"},
        {"match": {"contains": "stream"}, "chunks": ["one ", "two ", "three ", "four ", "five "], "chunk_delay_ms": 1500},
        {"repeat": true, "text": "after restart"}
    ])));
    let (home, pg) = home_on(&server, backend);
    let id = session_id_from(&home.run(&["chat", "--model", "fix/m", "first"]).stderr);
    let mut victim = home
        .cmd(&["chat", "--session", &id, "stream slowly"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    // Read the first streamed bytes, wait until the store holds them (the stream
    // then pauses, so only the flush timer can write them), then kill -9.
    let mut stdout = victim.stdout.take().expect("stdout");
    let mut buf = [0u8; 4];
    stdout.read_exact(&mut buf).expect("some output arrived");
    assert_eq!(&buf, b"one ");
    let deadline = Instant::now() + Duration::from_secs(30);
    while stored_deltas(&home, pg.as_deref(), &id) < 1 {
        assert!(
            Instant::now() < deadline,
            "the streamed text never reached the store"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    victim.kill().expect("SIGKILL");
    victim.wait().expect("reaped");

    let show = home.json(&["sessions", "show", &id, "--format", "json"]);
    let data = &show["data"];
    let runs = data["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 2);
    assert_eq!(runs[0]["status"], "completed");
    assert_eq!(runs[1]["status"], "failed");
    assert_eq!(runs[1]["error_type"], "interrupted");
    let msgs = data["messages"].as_array().expect("messages");
    assert_eq!(
        msgs.len(),
        4,
        "transcript before the kill, the durable prompt and what was streamed: {msgs:?}"
    );
    assert_eq!(msgs[1]["content"], "stored answer");
    assert_eq!(msgs[2]["content"], "stream slowly");
    let partial = &msgs[3];
    assert_eq!(partial["role"], "assistant");
    assert_eq!(partial["content"], "one ", "exactly what the user saw");
    assert_eq!(partial["status"], "failed");
    assert_eq!(partial["error"], "interrupted");
    assert_eq!(partial["run_id"], runs[1]["id"]);
    assert_eq!(data["status"], "failed");
    // The session is usable again, and the cut answer is not sent as history.
    let out = home.run(&["chat", "--session", &id, "continue"]);
    assert!(out.status.success(), "{}", text(&out).1);
    assert_eq!(text(&out).0.trim(), "after restart");
}
