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

/// Where a write ran, and how many times it was tried.
fn tracked_write(
    tries: std::sync::Arc<std::sync::atomic::AtomicUsize>,
) -> impl Fn(&mut Connection) -> OpResult<String> + Send + 'static {
    move |c| {
        tries.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute("CREATE TABLE IF NOT EXISTS probe (n INTEGER)", [])?;
        tx.execute("INSERT INTO probe VALUES (1)", [])?;
        tx.commit()?;
        Ok(std::thread::current().name().unwrap_or("").to_string())
    }
}

#[tokio::test]
async fn an_inline_write_runs_in_place_and_goes_to_the_writer_when_another_process_holds_the_lock()
{
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hecate.db");
    let store = SqliteStore::open(&path).expect("opens");
    let here = std::thread::current().name().unwrap_or("").to_string();
    // Free writer: the write runs on the caller's thread, once.
    let tries = Arc::new(AtomicUsize::new(0));
    let ran_on = store
        .write_inline(tracked_write(tries.clone()))
        .await
        .expect("writes");
    assert_eq!(
        (ran_on.as_str(), tries.load(Ordering::SeqCst)),
        (here.as_str(), 1)
    );
    // Another process holds the write lock: the caller's thread does not wait
    // for it; the writer thread does, and writes once it is released.
    let other = Connection::open(&path).expect("second connection");
    other
        .execute_batch("BEGIN IMMEDIATE")
        .expect("takes the lock");
    let (release, released) = mpsc::channel::<()>();
    let holder = std::thread::spawn(move || {
        let _ = released.recv_timeout(Duration::from_secs(5));
        other.execute_batch("COMMIT").expect("releases");
    });
    let tries = Arc::new(AtomicUsize::new(0));
    let pending = store.write_inline(tracked_write(tries.clone()));
    tokio::pin!(pending);
    let waited = tokio::time::timeout(Duration::from_millis(200), &mut pending).await;
    assert!(
        waited.is_err(),
        "the write waits for the other process's lock"
    );
    release.send(()).expect("holder waits");
    let ran_on = pending.await.expect("writes after the lock is released");
    holder.join().expect("holder ends");
    assert_eq!(ran_on, "hecate-store-writer");
    assert_eq!(
        tries.load(Ordering::SeqCst),
        2,
        "tried in place, then queued"
    );
    let rows: i64 = store
        .read(|c| Ok(c.query_row("SELECT COUNT(*) FROM probe", [], |r| r.get(0))?))
        .await
        .expect("counts");
    assert_eq!(rows, 2, "the refused try left nothing behind");
}

#[tokio::test]
async fn a_write_in_place_never_overtakes_one_queued_for_the_writer_thread() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store =
        std::sync::Arc::new(SqliteStore::open(&dir.path().join("hecate.db")).expect("opens"));
    fn log(c: &mut Connection, who: &str) -> OpResult<()> {
        c.execute("CREATE TABLE IF NOT EXISTS turns_order (who TEXT)", [])?;
        c.execute("INSERT INTO turns_order VALUES (?1)", [who])?;
        Ok(())
    }
    for _ in 0..20 {
        // The last round's job answers just before its thread counts it done.
        while store.pool.queued_jobs() > 0 {
            std::thread::sleep(Duration::from_millis(1));
        }
        // The connection is borrowed while a write is queued: the writer
        // thread waits for it with that job in hand.
        let held = store.pool.try_writer().expect("free");
        // Taking the connection counts a write, which may queue a checkpoint:
        // the queued write is the job after those already waiting (none of
        // them can finish while the connection is held).
        let waiting = store.pool.queued_jobs();
        let queuer = {
            let store = store.clone();
            std::thread::spawn(move || {
                futures::executor::block_on(store.write(|c| log(c, "queued"))).expect("writes")
            })
        };
        while store.pool.queued_jobs() == waiting {
            std::thread::sleep(Duration::from_millis(1));
        }
        drop(held);
        // A write in place right after must come second.
        store
            .write_inline(|c| log(c, "in place"))
            .await
            .expect("writes");
        queuer.join().expect("queued write ends");
    }
    let order: Vec<String> = store
        .read(|c| {
            let mut st = c.prepare("SELECT who FROM turns_order ORDER BY rowid")?;
            let rows = st.query_map([], |r| r.get(0))?;
            Ok(rows.collect::<rusqlite::Result<Vec<String>>>()?)
        })
        .await
        .expect("reads");
    for pair in order.chunks(2) {
        assert_eq!(pair, ["queued", "in place"], "{order:?}");
    }
}

#[tokio::test]
async fn writes_in_place_still_get_the_wal_checkpointed() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("hecate.db");
    let store = SqliteStore::open(&path).expect("opens");
    let tries = Arc::new(AtomicUsize::new(0));
    let blob = "x".repeat(16 * 1024);
    for _ in 0..1_000 {
        let blob = blob.clone();
        store
            .write_inline(move |c| {
                c.execute("CREATE TABLE IF NOT EXISTS big (b TEXT)", [])?;
                c.execute("INSERT INTO big VALUES (?1)", [&blob])?;
                Ok(())
            })
            .await
            .expect("writes");
    }
    store
        .write_inline(tracked_write(tries))
        .await
        .expect("writes");
    // 16 MB written: without checkpoints the WAL would hold all of it.
    let wal = std::fs::metadata(dir.path().join("hecate.db-wal"))
        .expect("a WAL file")
        .len();
    assert!(
        wal < 8 * 1024 * 1024,
        "the WAL is reused after checkpoints: {wal} bytes"
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
