//! What only the SQLite backend promises (the behaviours every backend shares are in
//! `tests/e2e/store_conformance.rs`): schema upgrades, errors on open that name the
//! file, waiting for another process that holds a new file, reads served by the
//! reader pool while the writer is busy, and foreign-key link clearing.

use super::migrations::{MIGRATIONS, latest_version, migrate_to};
use super::*;
use crate::domain::error::ErrorType;
use crate::domain::error::Result;
use crate::domain::ids::{CallId, SegmentId, SessionId};
use crate::domain::message::{NewMessage, Role, RuntimeSnapshot};
use crate::domain::provider_call::{ProviderCall, Usage};
use crate::domain::session::{RuntimeKind, Session};
use crate::domain::time::now_rfc3339;
use crate::store::Store;
use crate::store::{LeaseStore, MessageStore, SessionStore};
use rusqlite::Connection;
use std::sync::mpsc;
use std::time::Duration;

fn session(ns: &str) -> Session {
    Session::new_idle(ns, SessionId::generate(), "t", RuntimeKind::Model)
}

fn snap() -> RuntimeSnapshot {
    RuntimeSnapshot {
        runtime_kind: RuntimeKind::Model,
        segment_id: SegmentId::from("seg_1"),
        provider: Some("p".into()),
        model: Some("m".into()),
        adapter_id: None,
        task_id: None,
        task_run_id: None,
        capabilities: None,
    }
}

fn call(s: &SessionId) -> ProviderCall {
    ProviderCall {
        id: CallId::generate(),
        session_id: s.clone(),
        run_id: None,
        request_id: "req_1".into(),
        provider: "p".into(),
        model: "m".into(),
        usage: Usage::default(),
        cost_micros_usd: None,
        duration_ms: 1,
        created_at: now_rfc3339(),
    }
}

#[tokio::test]
async fn deleting_a_call_nulls_the_link_of_its_message() {
    let store = SqliteStore::open_in_memory().expect("opens");
    let s = session("default");
    store.create_session(&s).await.expect("creates");
    let c = call(&s.id);
    let mut answer = NewMessage::text(Role::Assistant, "x", snap());
    answer.produced_by_call_id = Some(c.id.clone());
    store
        .append_exchange(&s.id, vec![answer], Some(&c))
        .await
        .expect("appends");
    store
        .write(|conn| {
            conn.execute("DELETE FROM provider_calls", [])?;
            Ok(())
        })
        .await
        .expect("deletes call");
    let msgs = store.list_messages(&s.id, None, 10).await.expect("lists");
    assert_eq!(msgs[0].produced_by_call_id, None);
}

#[tokio::test]
async fn upgrades_from_every_earlier_schema_version() {
    for from in 0..latest_version() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("hecate.db");
        {
            let mut conn = rusqlite::Connection::open(&path).expect("opens");
            assert_eq!(migrate_to(&mut conn, from).expect("old schema"), from);
            if from >= 1 {
                conn.execute_batch(
                    "INSERT INTO sessions (id, namespace, title, runtime_kind, status, \
                     last_activity_at, created_at, updated_at) VALUES \
                     ('agent_chat_old', 'default', 'old', 'model', 'completed', 't', 't', 't'); \
                     INSERT INTO messages (id, session_id, sequence, role, content, status, \
                     body_json, created_at) VALUES ('msg_old', 'agent_chat_old', 0, 'user', 'kept', \
                     'completed', '{\"runtime\":{\"runtime_kind\":\"model\",\"segment_id\":\"seg_a\"}}', 't');",
                )
                .expect("seeds old data");
            }
        }
        let store = SqliteStore::open(&path).expect("migrates");
        assert_eq!(
            store.health().await.expect("health").schema_version,
            MIGRATIONS.len() as i64
        );
        if from >= 1 {
            let id = SessionId::from("agent_chat_old");
            let s = store
                .get_session("default", &id)
                .await
                .expect("old session survives");
            assert_eq!(s.title, "old");
            let msgs = store
                .list_messages(&id, None, 10)
                .await
                .expect("old messages");
            assert_eq!(msgs[0].content, "kept");
            // New tables work on the upgraded file.
            assert!(
                store
                    .acquire_lease(&id, "o", 1000)
                    .await
                    .expect("lease")
                    .is_none()
            );
        }
    }
}

#[test]
fn corrupt_file_is_a_clear_error_naming_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("broken.db");
    std::fs::write(&path, b"this is definitely not a sqlite database, just some text padding it out to more than a page .................................................................................................").expect("writes");
    let e = SqliteStore::open(&path).expect_err("rejects");
    assert_eq!(e.error_type, ErrorType::StoreError);
    assert!(e.message.contains("broken.db"), "{}", e.message);
}

/// Opens a store at a new file while another connection holds it with `lock_sql`,
/// releasing it after a moment; the directory lives as long as the store is used.
fn open_while_held(lock_sql: &str) -> (tempfile::TempDir, Result<SqliteStore>) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hecate.db");
    let holder = Connection::open(&path).expect("holder");
    holder.execute_batch(lock_sql).expect("take the lock");
    let opener = {
        let path = path.clone();
        std::thread::spawn(move || SqliteStore::open(&path))
    };
    std::thread::sleep(Duration::from_millis(300));
    holder.execute_batch("COMMIT").expect("release");
    (dir, opener.join().expect("opener thread"))
}

#[tokio::test]
async fn opening_waits_for_another_connection_that_holds_the_new_file_locked() {
    for lock in [
        "CREATE TABLE early(x); BEGIN EXCLUSIVE; INSERT INTO early VALUES (1);",
        "CREATE TABLE early(x); BEGIN; SELECT * FROM early;",
    ] {
        let (_dir, store) = open_while_held(lock);
        let store = store.expect("open after the lock is released");
        assert_eq!(
            store.health().await.expect("health").backend,
            "sqlite",
            "{lock}"
        );
    }
}

#[tokio::test]
async fn reads_are_answered_while_the_writer_is_inside_a_transaction() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(&dir.path().join("hecate.db")).expect("opens");
    let committed = session("default");
    store.create_session(&committed).await.expect("creates");
    let (release, wait) = mpsc::channel::<()>();
    let (entered, inside) = tokio::sync::oneshot::channel::<()>();
    let uncommitted = session("default");
    // The writer opens a transaction, writes, and waits for the test to let go.
    let held = {
        let s = uncommitted.clone();
        store.write(move |c| {
            let tx = c.transaction()?;
            tx.execute(
                "INSERT INTO sessions (id, namespace, title, runtime_kind, status, \
                 last_activity_at, created_at, updated_at) \
                 VALUES (?1, 'default', 't', 'model', 'idle', 't', 't', 't')",
                [s.id.as_str()],
            )?;
            let _ = entered.send(());
            let _ = wait.recv_timeout(Duration::from_secs(10));
            tx.commit()?;
            Ok(())
        })
    };
    let reader = async {
        inside.await.expect("the writer started");
        // A reader answers now, from the last committed state.
        let listed = store.list_sessions("default", 10).await.expect("lists");
        let _ = release.send(());
        listed
    };
    let (written, listed) = tokio::join!(held, reader);
    written.expect("the held write commits");
    assert_eq!(listed.len(), 1, "the uncommitted row is not visible");
    assert_eq!(listed[0].session.id, committed.id);
    assert_eq!(
        store
            .list_sessions("default", 10)
            .await
            .expect("lists")
            .len(),
        2
    );
}

#[tokio::test]
async fn an_inline_read_sees_every_commit_and_falls_back_when_its_connection_is_taken() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(&dir.path().join("hecate.db")).expect("opens");
    let mut s = session("default");
    store.create_session(&s).await.expect("creates");
    // On the caller's own connection: the header as last committed.
    s.title = "renamed".into();
    store.update_session(&s).await.expect("updates");
    let read = store.get_session("default", &s.id).await.expect("reads");
    assert_eq!(read.title, "renamed");
    // Another caller holds the inline connection: the read goes to a reader
    // thread and answers the same.
    let held = store.inline.as_ref().expect("file stores have one").lock();
    let read = store.get_session("default", &s.id).await.expect("reads");
    assert_eq!(read.title, "renamed");
    drop(held);
    let missing = store
        .get_session("default", &SessionId::from("nope"))
        .await
        .expect_err("unknown");
    assert_eq!(missing.error_type, ErrorType::NotFound);
    // `:memory:` has none and reads on the writer.
    let memory = SqliteStore::open_in_memory().expect("opens");
    assert!(memory.inline.is_none());
    memory.create_session(&s).await.expect("creates");
    assert_eq!(
        memory
            .get_session("default", &s.id)
            .await
            .expect("reads")
            .id,
        s.id
    );
}

#[tokio::test]
async fn reader_connections_cannot_write() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(&dir.path().join("hecate.db")).expect("opens");
    let e = store
        .read(|c| {
            c.execute("DELETE FROM sessions", [])?;
            Ok(())
        })
        .await
        .expect_err("query_only");
    assert_eq!(e.error_type, ErrorType::StoreError);
    assert!(e.message.contains("hecate.db"), "{}", e.message);
}

#[tokio::test]
async fn a_panicking_job_fails_its_caller_and_the_store_keeps_working() {
    let store = SqliteStore::open_in_memory().expect("opens");
    let e = store
        .write(|_| -> OpResult<()> { panic!("a job that panics") })
        .await
        .expect_err("the caller learns");
    assert_eq!(e.error_type, ErrorType::StoreError);
    let s = session("default");
    store.create_session(&s).await.expect("still writes");
    assert_eq!(
        store
            .list_sessions("default", 10)
            .await
            .expect("reads")
            .len(),
        1
    );
}
