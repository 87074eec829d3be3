use super::migrations::{MIGRATIONS, latest_version, migrate_to};
use super::*;
use crate::domain::approval::{Approval, ApprovalStatus};
use crate::domain::error::ErrorType;
use crate::domain::ids::{ApprovalId, CallId, RunId, SegmentId, SessionId};
use crate::domain::message::{NewMessage, Role, RuntimeSnapshot};
use crate::domain::provider_call::{ProviderCall, Usage};
use crate::domain::run::{Run, RunStatus};
use crate::domain::session::{RuntimeKind, Session};
use crate::domain::time::now_rfc3339;
use crate::store::history::HistoryStrategy;
use crate::store::{ApprovalStore, LeaseStore, MessageStore, RunStore, SessionStore};

fn session(ns: &str) -> Session {
    Session {
        provider: Some("p".into()),
        model: Some("m".into()),
        ..Session::new_idle(ns, SessionId::generate(), "t", RuntimeKind::Model)
    }
}

fn snap() -> RuntimeSnapshot {
    RuntimeSnapshot {
        runtime_kind: RuntimeKind::Model,
        segment_id: SegmentId::from("seg_1"),
        provider: Some("p".into()),
        model: Some("m".into()),
        adapter_id: None,
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
        usage: Usage {
            prompt_tokens: 3,
            completion_tokens: 2,
            total_tokens: 5,
        },
        cost_micros_usd: None,
        duration_ms: 1,
        created_at: now_rfc3339(),
    }
}

#[test]
fn append_assigns_gap_free_sequences_and_links_calls() {
    let store = SqliteStore::open_in_memory().expect("opens");
    let s = session("default");
    store.create_session(&s).expect("creates");
    let first = store
        .append_exchange(
            &s.id,
            vec![NewMessage::text(Role::User, "hi", snap())],
            None,
        )
        .expect("appends");
    assert_eq!(first[0].sequence, 0);
    let c = call(&s.id);
    let mut answer = NewMessage::text(Role::Assistant, "hello", snap());
    answer.produced_by_call_id = Some(c.id.clone());
    let second = store
        .append_exchange(&s.id, vec![answer], Some(&c))
        .expect("appends exchange");
    assert_eq!(second[0].sequence, 1);
    let all = store.list_messages(&s.id, None, 100).expect("lists");
    assert_eq!(all.iter().map(|m| m.sequence).collect::<Vec<_>>(), [0, 1]);
    assert_eq!(all[1].produced_by_call_id.as_ref(), Some(&c.id));
    let calls = store.list_provider_calls(&s.id).expect("calls");
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].cost_micros_usd, None, "unknown cost stays unknown");
}

#[test]
fn deleting_a_call_nulls_the_link_and_deleting_a_session_cascades() {
    let store = SqliteStore::open_in_memory().expect("opens");
    let s = session("default");
    store.create_session(&s).expect("creates");
    let c = call(&s.id);
    let mut answer = NewMessage::text(Role::Assistant, "x", snap());
    answer.produced_by_call_id = Some(c.id.clone());
    store
        .append_exchange(&s.id, vec![answer], Some(&c))
        .expect("appends");
    store
        .with(|conn| {
            conn.execute("DELETE FROM provider_calls", [])?;
            Ok(())
        })
        .expect("deletes call");
    let msgs = store.list_messages(&s.id, None, 10).expect("lists");
    assert_eq!(msgs[0].produced_by_call_id, None);
    store.delete_session("default", &s.id).expect("deletes");
    assert_eq!(store.count_messages(&s.id).expect("counts"), 0);
    let e = store.delete_session("default", &s.id).expect_err("gone");
    assert_eq!(e.error_type, ErrorType::NotFound);
}

#[test]
fn namespaces_are_isolated() {
    let store = SqliteStore::open_in_memory().expect("opens");
    let a = session("agent-a");
    store.create_session(&a).expect("creates");
    let e = store.get_session("agent-b", &a.id).expect_err("isolated");
    assert_eq!(e.error_type, ErrorType::NotFound);
    assert!(
        store
            .list_sessions("agent-b", 10)
            .expect("lists")
            .is_empty()
    );
    assert_eq!(store.list_sessions("agent-a", 10).expect("lists").len(), 1);
    assert!(store.delete_session("agent-b", &a.id).is_err());
}

#[test]
fn history_strategies_load_windows_and_checkpoints() {
    let store = SqliteStore::open_in_memory().expect("opens");
    let s = session("default");
    store.create_session(&s).expect("creates");
    let batch: Vec<_> = (0..30)
        .map(|i| {
            let mut m = NewMessage::text(Role::User, format!("m{i}"), snap());
            m.is_summary = i == 12;
            m
        })
        .collect();
    store.append_exchange(&s.id, batch, None).expect("appends");
    let window = HistoryStrategy::BufferWindow { window: 5 }
        .load(&store, &s.id)
        .expect("loads");
    assert_eq!(window.first().map(|m| m.sequence), Some(25));
    assert_eq!(window.len(), 5);
    let from_summary = HistoryStrategy::SummaryCheckpoint
        .load(&store, &s.id)
        .expect("loads");
    assert_eq!(from_summary.first().map(|m| m.sequence), Some(12));
    assert_eq!(from_summary.len(), 18);
}

#[test]
fn leases_exclude_other_owners_until_released_or_expired() {
    let store = SqliteStore::open_in_memory().expect("opens");
    let s = session("default");
    store.create_session(&s).expect("creates");
    assert_eq!(store.acquire_lease(&s.id, "a", 60_000).expect("a"), None);
    assert_eq!(
        store.acquire_lease(&s.id, "b", 60_000).expect("b"),
        Some("a".to_string())
    );
    store.release_lease(&s.id, "a").expect("release");
    assert_eq!(store.acquire_lease(&s.id, "b", -1).expect("b"), None);
    // b's lease is already expired, so c may take it.
    assert_eq!(store.acquire_lease(&s.id, "c", 60_000).expect("c"), None);
}

#[test]
fn reconcile_fails_orphaned_runs_and_times_out_pending_approvals() {
    let store = SqliteStore::open_in_memory().expect("opens");
    let s = session("default");
    store.create_session(&s).expect("creates");
    let run = Run {
        id: RunId::generate(),
        session_id: s.id.clone(),
        status: RunStatus::Running,
        error_type: None,
        error_message: None,
        request_id: "req".into(),
        trace_id: None,
        started_at: now_rfc3339(),
        completed_at: None,
        duration_ms: None,
    };
    store.create_run(&run).expect("run");
    let approval = Approval {
        id: ApprovalId::generate(),
        session_id: s.id.clone(),
        run_id: Some(run.id.clone()),
        status: ApprovalStatus::Pending,
        tool_kind: "edit".into(),
        tool_name: "Edit".into(),
        options: serde_json::json!([]),
        decision: None,
        scope: None,
        path: None,
        selected_option: None,
        created_at: now_rfc3339(),
        expires_at: None,
        resolved_at: None,
    };
    store.create_approval(&approval).expect("approval");
    // A live owner keeps its turn.
    store.acquire_lease(&s.id, "live", 60_000).expect("lease");
    let report = store.reconcile(&|_| false).expect("reconciles");
    assert_eq!(report.runs_failed, 0);
    // A dead owner does not.
    let report = store.reconcile(&|o| o == "live").expect("reconciles");
    assert_eq!(report.runs_failed, 1);
    assert_eq!(report.approvals_timed_out, 1);
    let run = store.get_run(&run.id).expect("run");
    assert_eq!(run.status, RunStatus::Failed);
    assert_eq!(run.error_type.as_deref(), Some("interrupted"));
    let a = store.get_approval(&approval.id).expect("approval");
    assert_eq!(a.status, ApprovalStatus::TimedOut);
    assert_eq!(a.path.as_deref(), Some("startup_reconcile"));
    let mut again = a.clone();
    again.status = ApprovalStatus::Approved;
    let e = store.resolve_approval(&again).expect_err("not pending");
    assert_eq!(e.error_type, ErrorType::Conflict);
}

#[test]
fn upgrades_from_every_earlier_schema_version() {
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
            store.health().expect("health").schema_version,
            MIGRATIONS.len() as i64
        );
        if from >= 1 {
            let id = SessionId::from("agent_chat_old");
            let s = store
                .get_session("default", &id)
                .expect("old session survives");
            assert_eq!(s.title, "old");
            let msgs = store.list_messages(&id, None, 10).expect("old messages");
            assert_eq!(msgs[0].content, "kept");
            // New tables work on the upgraded file.
            assert!(
                store
                    .acquire_lease(&id, "o", 1000)
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
/// releasing it after a moment.
fn open_while_held(lock_sql: &str) -> Result<SqliteStore> {
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
    opener.join().expect("opener thread")
}

#[test]
fn opening_waits_for_another_connection_that_holds_the_new_file_locked() {
    for lock in [
        "CREATE TABLE early(x); BEGIN EXCLUSIVE; INSERT INTO early VALUES (1);",
        "CREATE TABLE early(x); BEGIN; SELECT * FROM early;",
    ] {
        let store = open_while_held(lock).expect("open after the lock is released");
        assert_eq!(store.health().expect("health").backend, "sqlite", "{lock}");
    }
}
