//! One behavioural suite of the async store interface, run against every backend
//! configuration: a file-backed SQLite store (writer plus reader pool), the same
//! with a single reader, the in-memory one, and PostgreSQL (a fresh database per
//! test on the throwaway server of `tests/support/postgres.rs`). A new backend
//! joins with one line in the `conformance!` invocation at the bottom.

use hecate::domain::ErrorType;
use hecate::domain::approval::{Approval, ApprovalStatus, Grant};
use hecate::domain::ids::{ApprovalId, CallId, GrantId, MessageId, RunId, SegmentId, SessionId};
use hecate::domain::message::{Message, MessageStatus, NewMessage, Role, RuntimeSnapshot};
use hecate::domain::provider_call::{ProviderCall, Usage};
use hecate::domain::run::{Run, RunStatus};
use hecate::domain::session::SessionStatus;
use hecate::domain::session::{RuntimeKind, Session};
use hecate::domain::task::TaskEventFilter;
use hecate::domain::time::now_rfc3339;
use hecate::store::history::HistoryStrategy;
use hecate::store::tasks::{NewTaskEvent, NewTaskRun, TaskRunEnd};
use hecate::store::{
    ApprovalPruning, ApprovalQuery, BeginTurn, FinishTurn, McpCallRecord, NewArtifact, NewRunEvent,
    PostgresStore, PruneReport, RunEnd, SqliteStore, Store, TurnBegun,
};
use serde_json::json;
use std::sync::Arc;

/// A store under test, with whatever keeps it alive (its temporary directory).
pub struct Backend {
    /// The store.
    pub store: Arc<dyn Store>,
    _dir: Option<tempfile::TempDir>,
}

/// The token counts every recorded provider call of these cases reports.
const USAGE: Usage = Usage {
    prompt_tokens: 3,
    completion_tokens: 2,
    total_tokens: 5,
};

/// The backend configurations the suite runs against.
mod backends {
    use super::*;

    /// A SQLite file with the default reader pool.
    pub async fn sqlite_file() -> Backend {
        sqlite_file_with(hecate::store::sqlite::DEFAULT_READERS)
    }

    /// A SQLite file with one reader connection.
    pub async fn sqlite_file_one_reader() -> Backend {
        sqlite_file_with(1)
    }

    fn sqlite_file_with(readers: usize) -> Backend {
        let dir = tempfile::tempdir().expect("tempdir");
        let store =
            SqliteStore::open_with_readers(&dir.path().join("hecate.db"), readers).expect("opens");
        Backend {
            store: Arc::new(store),
            _dir: Some(dir),
        }
    }

    /// The in-memory SQLite backend.
    pub async fn sqlite_memory() -> Backend {
        Backend {
            store: Arc::new(SqliteStore::open_in_memory().expect("opens")),
            _dir: None,
        }
    }

    /// A fresh database on the test binary's PostgreSQL server.
    pub async fn postgres() -> Backend {
        let url = tokio::task::spawn_blocking(crate::support::postgres::fresh_database_url)
            .await
            .expect("database");
        let store = PostgresStore::connect(&url).await.expect("connects");
        Backend {
            store: Arc::new(store),
            _dir: None,
        }
    }
}

mod a2a_cases;
mod chat_cases;
mod choice_cases;
mod flow_chat_cases;
mod isolation_cases;
mod load_cases;
mod memory_cases;

/// The behaviours, each an async function of a fresh store.
mod cases {
    pub use super::a2a_cases::*;
    pub use super::chat_cases::*;
    pub use super::choice_cases::*;
    pub use super::flow_chat_cases::*;
    pub use super::load_cases::*;
    use super::*;

    fn session(ns: &str) -> Session {
        Session {
            provider: Some("p".into()),
            model: Some("m".into()),
            ..Session::new_idle(ns, SessionId::generate(), "t", RuntimeKind::Model)
        }
    }

    /// A pending `edit` approval of `run` in `session`.
    pub(super) fn pending_approval(session: &SessionId, run: &RunId) -> Approval {
        Approval {
            id: ApprovalId::generate(),
            session_id: session.clone(),
            run_id: Some(run.clone()),
            status: ApprovalStatus::Pending,
            tool_kind: "edit".into(),
            tool_name: "Edit".into(),
            options: json!([]),
            decision: None,
            scope: None,
            path: None,
            selected_option: None,
            created_at: now_rfc3339(),
            expires_at: None,
            resolved_at: None,
            resolved_by: None,
        }
    }

    pub(super) fn snap() -> RuntimeSnapshot {
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
            usage: USAGE,
            cost_micros_usd: None,
            duration_ms: 1,
            created_at: now_rfc3339(),
        }
    }

    fn run(s: &SessionId) -> Run {
        Run {
            id: RunId::generate(),
            session_id: s.clone(),
            status: RunStatus::Running,
            error_type: None,
            error_message: None,
            request_id: "req".into(),
            trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736".into()),
            span_id: Some("00f067aa0ba902b7".into()),
            started_at: now_rfc3339(),
            completed_at: None,
            duration_ms: None,
        }
    }

    async fn new_session(store: &dyn Store, ns: &str) -> Session {
        let s = session(ns);
        store.create_session(&s).await.expect("creates");
        s
    }

    pub async fn append_assigns_gap_free_sequences_and_links_calls(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let first = store
            .append_exchange(
                &s.id,
                vec![NewMessage::text(Role::User, "hi", snap())],
                None,
            )
            .await
            .expect("appends");
        assert_eq!(first[0].sequence, 0);
        let c = call(&s.id);
        let mut answer = NewMessage::text(Role::Assistant, "hello", snap());
        answer.produced_by_call_id = Some(c.id.clone());
        let second = store
            .append_exchange(&s.id, vec![answer], Some(&c))
            .await
            .expect("appends exchange");
        assert_eq!(second[0].sequence, 1);
        let all = store.list_messages(&s.id, None, 100).await.expect("lists");
        assert_eq!(all.iter().map(|m| m.sequence).collect::<Vec<_>>(), [0, 1]);
        assert_eq!(all[1].produced_by_call_id.as_ref(), Some(&c.id));
        let calls = store.list_provider_calls(&s.id).await.expect("calls");
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].cost_micros_usd, None, "unknown cost stays unknown");
        assert_eq!(store.count_messages(&s.id).await.expect("count"), 2);
        // One message by its key, only within its own session.
        let got = store.get_message(&s.id, &all[1].id).await.expect("by id");
        assert_eq!(got, all[1]);
        let other = new_session(store, "default").await;
        let e = store
            .get_message(&other.id, &all[1].id)
            .await
            .expect_err("another session's message");
        assert_eq!(e.error_type, ErrorType::NotFound);
        let e = store
            .get_message(&s.id, &MessageId::from("msg_missing"))
            .await
            .expect_err("unknown id");
        assert_eq!(e.error_type, ErrorType::NotFound);
    }

    /// A transcript window reads pages from the end, a turn's messages and calls
    /// by its run, and runs by id, never crossing into another session.
    pub async fn a_window_reads_only_its_messages_runs_and_calls(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let other = new_session(store, "default").await;
        let mut turns = Vec::new();
        for i in 0..3 {
            let r = run(&s.id);
            store.create_run(&r).await.expect("run");
            let mut c = call(&s.id);
            c.run_id = Some(r.id.clone());
            let mut user = NewMessage::text(Role::User, format!("q{i}"), snap());
            user.run_id = Some(r.id.clone());
            let mut answer = NewMessage::text(Role::Assistant, format!("a{i}"), snap());
            answer.run_id = Some(r.id.clone());
            answer.produced_by_call_id = Some(c.id.clone());
            store
                .append_exchange(&s.id, vec![user, answer], Some(&c))
                .await
                .expect("a turn");
            turns.push((r.id, c.id));
        }
        let seqs = |ms: Vec<Message>| ms.iter().map(|m| m.sequence).collect::<Vec<_>>();
        let before = |b: Option<i64>, n: usize| store.list_messages_before(&s.id, b, n);
        assert_eq!(seqs(before(None, 4).await.expect("tail")), [2, 3, 4, 5]);
        assert_eq!(seqs(before(Some(2), 4).await.expect("page")), [0, 1]);
        assert_eq!(
            seqs(before(Some(0), 4).await.expect("empty")),
            Vec::<i64>::new()
        );
        let (r0, r1, r2) = (&turns[0].0, &turns[1].0, &turns[2].0);
        let by_run = async |runs: &[RunId]| {
            seqs(store.list_run_messages(&s.id, runs).await.expect("by run"))
        };
        assert_eq!(by_run(std::slice::from_ref(r1)).await, [2, 3]);
        assert_eq!(by_run(&[r2.clone(), r0.clone()]).await, [0, 1, 4, 5]);
        assert_eq!(by_run(&[]).await, Vec::<i64>::new());
        let calls = store
            .list_run_provider_calls(&s.id, std::slice::from_ref(r1))
            .await
            .expect("calls");
        assert_eq!(
            calls.iter().map(|c| &c.id).collect::<Vec<_>>(),
            [&turns[1].1]
        );
        let runs = store
            .list_runs_by_id(&s.id, &[r2.clone(), r0.clone(), RunId::from("run_missing")])
            .await
            .expect("runs");
        assert_eq!(runs.iter().map(|r| &r.id).collect::<Vec<_>>(), [r0, r2]);
        let last = store.last_run(&s.id).await.expect("last").expect("a run");
        assert_eq!(&last.id, r2);
        // Another session sees none of it, whatever ids it is asked with.
        assert!(store.last_run(&other.id).await.expect("last").is_none());
        let ids = [r0.clone(), r1.clone()];
        assert!(
            store
                .list_run_messages(&other.id, &ids)
                .await
                .expect("m")
                .is_empty()
        );
        assert!(
            store
                .list_run_provider_calls(&other.id, &ids)
                .await
                .expect("c")
                .is_empty()
        );
        assert!(
            store
                .list_runs_by_id(&other.id, &ids)
                .await
                .expect("r")
                .is_empty()
        );
        assert!(
            store
                .list_messages_before(&other.id, None, 10)
                .await
                .expect("p")
                .is_empty()
        );
    }

    pub async fn an_exchange_whose_call_fails_stores_no_message(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let c = call(&s.id);
        store
            .append_exchange(&s.id, vec![], Some(&c))
            .await
            .expect("the call alone");
        let mut answer = NewMessage::text(Role::Assistant, "lost", snap());
        answer.produced_by_call_id = Some(c.id.clone());
        store
            .append_exchange(&s.id, vec![answer], Some(&c))
            .await
            .expect_err("the same call id twice");
        assert_eq!(store.count_messages(&s.id).await.expect("count"), 0);
    }

    pub async fn deleting_a_session_cascades(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let c = call(&s.id);
        let mut answer = NewMessage::text(Role::Assistant, "x", snap());
        answer.produced_by_call_id = Some(c.id.clone());
        let stored = store
            .append_exchange(&s.id, vec![answer], Some(&c))
            .await
            .expect("appends");
        store
            .add_artifact(
                &stored[0].id,
                NewArtifact {
                    kind: "diff".into(),
                    path: String::new(),
                    data: "{}".into(),
                },
            )
            .await
            .expect("artifact");
        store
            .delete_session("default", &s.id)
            .await
            .expect("deletes");
        assert_eq!(store.count_messages(&s.id).await.expect("counts"), 0);
        assert!(
            store
                .list_provider_calls(&s.id)
                .await
                .expect("calls")
                .is_empty()
        );
        assert!(
            store
                .list_artifacts(&stored[0].id)
                .await
                .expect("artifacts")
                .is_empty()
        );
        let e = store
            .delete_session("default", &s.id)
            .await
            .expect_err("gone");
        assert_eq!(e.error_type, ErrorType::NotFound);
    }

    pub async fn namespaces_are_isolated(b: Backend) {
        let store = b.store.as_ref();
        let a = new_session(store, "agent-a").await;
        let e = store
            .get_session("agent-b", &a.id)
            .await
            .expect_err("isolated");
        assert_eq!(e.error_type, ErrorType::NotFound);
        assert!(
            store
                .list_sessions("agent-b", 10)
                .await
                .expect("lists")
                .is_empty()
        );
        assert_eq!(
            store
                .list_sessions("agent-a", 10)
                .await
                .expect("lists")
                .len(),
            1
        );
        assert!(store.delete_session("agent-b", &a.id).await.is_err());
    }

    pub async fn history_strategies_load_windows_and_checkpoints(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let batch: Vec<_> = (0..30)
            .map(|i| {
                let mut m = NewMessage::text(Role::User, format!("m{i}"), snap());
                m.is_summary = i == 12;
                m
            })
            .collect();
        store
            .append_exchange(&s.id, batch, None)
            .await
            .expect("appends");
        let window = HistoryStrategy::BufferWindow { window: 5 }
            .load(store, &s.id)
            .await
            .expect("loads");
        assert_eq!(window.first().map(|m| m.sequence), Some(25));
        assert_eq!(window.len(), 5);
        let from_summary = HistoryStrategy::summary_buffer()
            .load(store, &s.id)
            .await
            .expect("loads");
        assert_eq!(from_summary.first().map(|m| m.sequence), Some(12));
        assert_eq!(from_summary.len(), 18);
        // The one-operation load reads the same.
        for strategy in [
            HistoryStrategy::BufferWindow { window: 5 },
            HistoryStrategy::summary_buffer(),
            HistoryStrategy::TokenBudget { max_tokens: 40 },
        ] {
            let once = store.load_history(&s.id, strategy).await.expect("loads");
            let stepwise = strategy.load(store, &s.id).await.expect("loads");
            assert_eq!(once, stepwise, "{strategy:?}");
        }
    }

    pub async fn a_sessions_memory_strategy_round_trips(b: Backend) {
        let store = b.store.as_ref();
        let plain = new_session(store, "default").await;
        let strategies = [
            HistoryStrategy::BufferWindow { window: 7 },
            HistoryStrategy::summary_buffer(),
            HistoryStrategy::TokenBudget { max_tokens: 500 },
        ];
        let mut ids = Vec::new();
        for h in strategies {
            let s = Session {
                history: Some(h),
                ..session("default")
            };
            store.create_session(&s).await.expect("creates");
            assert_eq!(store.get_session("default", &s.id).await.expect("reads"), s);
            ids.push((s.id, h));
        }
        let read = store
            .get_session("default", &plain.id)
            .await
            .expect("reads");
        assert_eq!(
            read.history, None,
            "no strategy stored: the config's applies"
        );
        let listed = store.list_sessions("default", 10).await.expect("lists");
        for (id, h) in ids {
            let found = listed.iter().find(|x| x.session.id == id).expect("listed");
            assert_eq!(found.session.history, Some(h));
        }
    }

    pub async fn token_budget_loads_the_newest_messages_that_fit(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        // 150 messages of 36 characters: 13 estimated tokens each, more than two
        // pages of the backward read.
        let batch: Vec<_> = (0..150)
            .map(|i| NewMessage::text(Role::User, format!("{i:0>36}"), snap()))
            .collect();
        store
            .append_exchange(&s.id, batch, None)
            .await
            .expect("appends");
        let fits = HistoryStrategy::TokenBudget { max_tokens: 1300 }
            .load(store, &s.id)
            .await
            .expect("loads");
        assert_eq!(fits.len(), 100);
        assert_eq!(fits.first().map(|m| m.sequence), Some(50));
        assert_eq!(fits.last().map(|m| m.sequence), Some(149));
        let one = HistoryStrategy::TokenBudget { max_tokens: 1 }
            .load(store, &s.id)
            .await
            .expect("loads");
        assert_eq!(one.iter().map(|m| m.sequence).collect::<Vec<_>>(), [149]);
        // Inside begin_turn: the prompt ("question", 6 tokens) and 99 older ones.
        let mut turn = begin(&s, "owner-a", "m");
        turn.history = HistoryStrategy::TokenBudget { max_tokens: 1300 };
        let user = started(store, turn).await;
        let all = HistoryStrategy::TokenBudget { max_tokens: 1300 }
            .load(store, &s.id)
            .await
            .expect("loads");
        assert_eq!(all.len(), 100);
        assert_eq!(all.first().map(|m| m.sequence), Some(51));
        assert_eq!(all.last().map(|m| m.id.clone()), Some(user.id));
    }

    pub async fn leases_exclude_other_owners_until_released_or_expired(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let id = &s.id;
        assert_eq!(store.acquire_lease(id, "a", 60_000).await.expect("a"), None);
        assert_eq!(
            store.acquire_lease(id, "b", 60_000).await.expect("b"),
            Some("a".to_string())
        );
        store.release_lease(id, "a").await.expect("release");
        assert_eq!(store.acquire_lease(id, "b", -1).await.expect("b"), None);
        // b's lease is already expired, so c may take it.
        assert_eq!(store.acquire_lease(id, "c", 60_000).await.expect("c"), None);
    }

    pub async fn reconcile_fails_orphaned_runs_and_cancels_pending_approvals_as_hub_restarted(
        b: Backend,
    ) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let run = run(&s.id);
        store.create_run(&run).await.expect("run");
        let approval = pending_approval(&s.id, &run.id);
        store.create_approval(&approval).await.expect("approval");
        // A live owner keeps its turn.
        store
            .acquire_lease(&s.id, "live", 60_000)
            .await
            .expect("lease");
        let report = store
            .reconcile(Arc::new(|_| false))
            .await
            .expect("reconciles");
        assert_eq!(report.runs_failed, 0);
        // A dead owner does not.
        let report = store
            .reconcile(Arc::new(|o| o == "live"))
            .await
            .expect("reconciles");
        assert_eq!(report.runs_failed, 1);
        assert_eq!(report.approvals_cancelled, 1);
        let run = store.get_run(&run.id).await.expect("run");
        assert_eq!(run.status, RunStatus::Failed);
        assert_eq!(run.error_type.as_deref(), Some("interrupted"));
        let a = store.get_approval(&approval.id).await.expect("approval");
        assert_eq!(a.status, ApprovalStatus::Cancelled);
        assert_eq!(a.path.as_deref(), Some("hub_restarted"));
        let mut again = a.clone();
        again.status = ApprovalStatus::Approved;
        let e = store
            .resolve_approval(&again)
            .await
            .expect_err("not pending");
        assert_eq!(e.error_type, ErrorType::Conflict);
    }

    pub async fn reconcile_keeps_the_streamed_text_of_an_interrupted_turn(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let (streamed, silent) = (run(&s.id), run(&s.id));
        for r in [&streamed, &silent] {
            store.create_run(r).await.expect("run");
            let mut user = NewMessage::text(Role::User, "tell me", snap());
            user.run_id = Some(r.id.clone());
            store
                .append_exchange(&s.id, vec![user], None)
                .await
                .expect("user message");
        }
        let ev = |sequence: i64, data: serde_json::Value| NewRunEvent {
            sequence,
            event_type: data["type"].as_str().unwrap_or_default().to_string(),
            data,
            occurred_at: now_rfc3339(),
        };
        store
            .append_run_events(
                &streamed.id,
                &[
                    ev(1, json!({"type": "thought_delta", "text": "hm"})),
                    ev(2, json!({"type": "text_delta", "text": "Once upon"})),
                    ev(3, json!({"type": "plan", "entries": []})),
                    ev(4, json!({"type": "text_delta", "text": " a time"})),
                ],
            )
            .await
            .expect("events");
        let report = store
            .reconcile(Arc::new(|_| true))
            .await
            .expect("reconciles");
        assert_eq!((report.runs_failed, report.answers_kept), (2, 1));
        let messages = store.list_messages(&s.id, None, 10).await.expect("list");
        let answers: Vec<_> = messages
            .iter()
            .filter(|m| m.role == Role::Assistant)
            .collect();
        assert_eq!(answers.len(), 1, "only the run that streamed text");
        let a = answers[0];
        assert_eq!(a.content, "Once upon a time");
        assert_eq!(a.run_id.as_ref(), Some(&streamed.id));
        assert_eq!(a.status, MessageStatus::Failed);
        assert_eq!(a.error.as_deref(), Some("interrupted"));
        assert_eq!(a.content_blocks.len(), 2, "reasoning kept: {a:?}");
        assert_eq!(a.runtime, snap());
        // A second pass finds nothing left to keep.
        let again = store
            .reconcile(Arc::new(|_| true))
            .await
            .expect("reconciles");
        assert_eq!(again.answers_kept, 0);
    }

    pub async fn retention_prunes_old_and_surplus_resolved_approvals_and_expired_grants(
        b: Backend,
    ) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let approval = |status: ApprovalStatus, resolved_at: Option<&str>| Approval {
            run_id: None,
            status,
            created_at: "2020-01-01T00:00:00Z".into(),
            resolved_at: resolved_at.map(str::to_string),
            ..pending_approval(&s.id, &RunId::generate())
        };
        let pending = approval(ApprovalStatus::Pending, None);
        let ancient = approval(ApprovalStatus::Approved, Some("2020-01-02T00:00:00Z"));
        let older = approval(ApprovalStatus::Rejected, Some("2026-01-01T00:00:00Z"));
        let newer = approval(ApprovalStatus::TimedOut, Some("2026-02-01T00:00:00Z"));
        for a in [&pending, &ancient, &older, &newer] {
            store.create_approval(a).await.expect("approval");
        }
        let grant = |expires_at: Option<&str>| Grant {
            id: GrantId::generate(),
            namespace: "default".into(),
            scope: "adapter_tool".into(),
            session_id: None,
            adapter_id: Some("a".into()),
            workspace: None,
            tool_kind: "edit".into(),
            decision: "approve".into(),
            created_at: "2020-01-01T00:00:00Z".into(),
            expires_at: expires_at.map(str::to_string),
            created_by: Some("key:ci".into()),
        };
        // Expiries are instants: 01:00+02:00 is 23:00 the day before in UTC.
        let expired = grant(Some("2026-03-01T01:00:00+02:00"));
        let live = grant(Some("2026-03-01T00:30:00Z"));
        let standing = grant(None);
        for g in [&expired, &live, &standing] {
            store.create_grant(g).await.expect("grant");
        }
        let now_ms = hecate::domain::time::parse_millis("2026-03-01T00:00:00Z").expect("now");
        let report = store
            .prune_approvals(&ApprovalPruning {
                resolved_before: Some("2025-01-01T00:00:00Z".into()),
                keep_newest: Some(1),
                now_ms,
            })
            .await
            .expect("prunes");
        assert_eq!((report.approvals_deleted, report.grants_expired), (2, 1));
        let left: Vec<ApprovalId> = store
            .list_approvals(ApprovalQuery {
                namespace: "default",
                session_id: None,
                status: None,
            })
            .await
            .expect("list")
            .into_iter()
            .map(|a| a.id)
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(left.contains(&pending.id) && left.contains(&newer.id));
        let grants: Vec<GrantId> = store
            .list_grants("default")
            .await
            .expect("grants")
            .into_iter()
            .map(|g| g.id)
            .collect();
        assert_eq!(grants.len(), 2);
        assert!(grants.contains(&live.id) && grants.contains(&standing.id));
        let idle = store
            .prune_approvals(&ApprovalPruning {
                resolved_before: None,
                keep_newest: None,
                now_ms,
            })
            .await
            .expect("prunes");
        assert_eq!(idle, PruneReport::default());
    }

    pub async fn run_events_keep_the_engines_numbers_and_deltas_can_be_left_out(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let (r1, r2) = (run(&s.id), run(&s.id));
        for r in [&r1, &r2] {
            store.create_run(r).await.expect("run");
        }
        let ev = |sequence: i64, kind: &str| NewRunEvent {
            sequence,
            event_type: kind.to_string(),
            data: json!({"text": "x"}),
            occurred_at: now_rfc3339(),
        };
        store
            .append_run_events(&r1.id, &[ev(1, "text_delta"), ev(2, "tool_call_started")])
            .await
            .expect("first batch");
        store
            .append_run_events(&r1.id, &[ev(3, "text_delta")])
            .await
            .expect("second batch");
        store
            .append_run_events(&r2.id, &[ev(1, "thought_delta")])
            .await
            .expect("other run");
        // A number the run already has is refused, and the batch with it is not
        // stored in part.
        let e = store
            .append_run_events(&r1.id, &[ev(4, "text_delta"), ev(2, "text_delta")])
            .await
            .expect_err("taken sequence");
        assert_eq!(e.error_type, ErrorType::Conflict);
        let one = store.list_run_events(&r1.id, None).await.expect("events");
        assert_eq!(
            one.iter().map(|e| e.sequence).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        let after = store.list_run_events(&r1.id, Some(2)).await.expect("after");
        assert_eq!(after.len(), 1);
        let all = store
            .list_session_run_events(&s.id, false)
            .await
            .expect("session events");
        assert_eq!(all.len(), 4);
        for e in &all {
            let delta = e.event_type.ends_with("_delta");
            assert_eq!(e.data.is_null(), delta, "{e:?}");
        }
        store
            .finish_run(RunEnd {
                run_id: &r1.id,
                status: RunStatus::Failed,
                error: Some(("boom", "it broke")),
            })
            .await
            .expect("finishes");
        let r = store.get_run(&r1.id).await.expect("run");
        assert_eq!(r.status, RunStatus::Failed);
        assert_eq!(r.error_message.as_deref(), Some("it broke"));
        assert!(r.completed_at.is_some());
        // The trace and span ids the run was started with are kept.
        assert_eq!(r.trace_id, r1.trace_id);
        assert_eq!(r.span_id.as_deref(), Some("00f067aa0ba902b7"));
    }

    pub async fn audit_records_round_trip_newest_first_per_namespace(b: Backend) {
        let store = b.store.as_ref();
        let rec = |id: &str, ns: &str, at: &str| McpCallRecord {
            id: id.into(),
            namespace: ns.into(),
            server: "fs".into(),
            tool: "read".into(),
            exposed_name: "fs__read".into(),
            client: "test (stdio)".into(),
            policy: "auto".into(),
            decision: "allowed".into(),
            approval_id: None,
            outcome: "ok".into(),
            error_type: None,
            error_message: None,
            argument_keys: vec!["path".into()],
            argument_bytes: 12,
            started_at: at.into(),
            duration_ms: 3,
        };
        store
            .record_mcp_calls(&[rec("a", "default", "2026-01-01T00:00:00Z")])
            .await
            .expect("a");
        store
            .record_mcp_calls(&[
                rec("b", "default", "2026-01-02T00:00:00Z"),
                rec("c", "other", "2026-01-03T00:00:00Z"),
            ])
            .await
            .expect("b and c");
        let got = store.list_mcp_calls("default", 10).await.expect("list");
        assert_eq!(
            got.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["b", "a"]
        );
        assert_eq!(got[0].argument_keys, ["path"]);
        // A batch stored again (a journal replayed after a crash) is skipped.
        let again = rec("b", "default", "2026-01-02T00:00:00Z");
        store
            .record_mcp_calls(&[again.clone(), rec("d", "default", "2026-01-04T00:00:00Z")])
            .await
            .expect("replayed");
        let got = store.list_mcp_calls("default", 10).await.expect("list");
        assert_eq!(
            got.iter().map(|r| r.id.as_str()).collect::<Vec<_>>(),
            ["d", "b", "a"]
        );
        assert_eq!(got[1], again);
    }

    pub async fn health_names_the_backend_and_reports_integrity(b: Backend) {
        let h = b.store.health().await.expect("health");
        assert_eq!(h.integrity, "ok");
        assert!(h.schema_version > 0);
        assert!(!h.backend.is_empty());
    }

    fn begin(s: &Session, owner: &str, model: &str) -> BeginTurn {
        let mut session = s.clone();
        session.status = SessionStatus::Running;
        session.turns_used += 1;
        let run = run(&s.id);
        let mut snapshot = snap();
        snapshot.model = Some(model.into());
        snapshot.segment_id = SegmentId::generate();
        let mut user = NewMessage::text(Role::User, "question", snapshot);
        user.run_id = Some(run.id.clone());
        BeginTurn {
            owner: owner.into(),
            lease_ttl_ms: 60_000,
            session,
            run,
            user,
            history: HistoryStrategy::BufferWindow { window: 3 },
        }
    }

    fn finish(b: &BeginTurn, user: &hecate::domain::message::Message) -> FinishTurn {
        let mut session = b.session.clone();
        session.status = SessionStatus::Completed;
        let mut c = call(&session.id);
        c.run_id = Some(b.run.id.clone());
        let mut answer = NewMessage::text(Role::Assistant, "answer", user.runtime.clone());
        answer.produced_by_call_id = Some(c.id.clone());
        answer.run_id = Some(b.run.id.clone());
        FinishTurn {
            owner: b.owner.clone(),
            session,
            run_id: b.run.id.clone(),
            status: RunStatus::Completed,
            error: None,
            assistant: answer,
            call: Some(c),
            artifacts: vec![NewArtifact {
                kind: "turn_diff".into(),
                path: String::new(),
                data: "{}".into(),
            }],
            events: ["text_delta", "usage"]
                .iter()
                .zip(1..)
                .map(|(kind, sequence)| NewRunEvent {
                    sequence,
                    event_type: kind.to_string(),
                    data: json!({}),
                    occurred_at: now_rfc3339(),
                })
                .collect(),
        }
    }

    /// Begins `turn` and checks the history it read back: what its strategy loads
    /// once the prompt is stored, ending with the prompt.
    async fn started(store: &dyn Store, turn: BeginTurn) -> hecate::domain::message::Message {
        let (strategy, session) = (turn.history, turn.session.id.clone());
        match store.begin_turn(turn).await.expect("begins") {
            TurnBegun::Started { user, history } => {
                assert_eq!(history.last(), Some(user.as_ref()), "ends with the prompt");
                let loaded = strategy.load(store, &session).await.expect("loads");
                assert_eq!(history, loaded, "the strategy's window");
                *user
            }
            other => panic!("expected a started turn, got {other:?}"),
        }
    }

    pub async fn a_turn_begins_and_finishes_in_two_writes(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let turn = begin(&s, "owner-a", "m");
        let user = started(store, turn.clone()).await;
        assert_eq!(user.sequence, 0);
        assert_eq!(user.run_id.as_ref(), Some(&turn.run.id));
        // Begun: the lease, the run, the message and the header are all there.
        assert_eq!(
            store
                .acquire_lease(&s.id, "owner-b", 1000)
                .await
                .expect("lease"),
            Some("owner-a".to_string())
        );
        let header = store.get_session("default", &s.id).await.expect("session");
        assert_eq!(header.status, SessionStatus::Running);
        assert_eq!(header.turns_used, 1);
        assert_eq!(
            store.get_run(&turn.run.id).await.expect("run").status,
            RunStatus::Running
        );

        let end = finish(&turn, &user);
        let call_id = end.call.as_ref().map(|c| c.id.clone());
        let done = store.finish_turn(end).await.expect("finishes");
        assert_eq!(done.assistant.sequence, 1);
        let events = store
            .list_run_events(&turn.run.id, None)
            .await
            .expect("events");
        assert_eq!(
            events
                .iter()
                .map(|e| (e.sequence, e.event_type.as_str()))
                .collect::<Vec<_>>(),
            [(1, "text_delta"), (2, "usage")],
            "the last batch of events is stored with the answer"
        );
        assert_eq!(done.assistant.produced_by_call_id, call_id);
        assert_eq!(done.run.status, RunStatus::Completed);
        assert!(done.run.completed_at.is_some());
        assert_eq!(done.message_count, 2);
        let calls = store.list_provider_calls(&s.id).await.expect("calls");
        assert_eq!(calls.len(), 1);
        assert_eq!(
            store
                .list_artifacts(&done.assistant.id)
                .await
                .expect("artifacts")
                .len(),
            1
        );
        let header = store.get_session("default", &s.id).await.expect("session");
        assert_eq!(header.status, SessionStatus::Completed);
        // Finished: the lease is free.
        assert_eq!(
            store
                .acquire_lease(&s.id, "owner-b", 1000)
                .await
                .expect("lease"),
            None
        );
    }

    pub async fn begin_turn_keeps_the_segment_of_the_same_target(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let first = begin(&s, "o", "m");
        let u1 = started(store, first.clone()).await;
        store
            .finish_turn(finish(&first, &u1))
            .await
            .expect("finishes");
        let second = begin(&s, "o", "m");
        let u2 = started(store, second.clone()).await;
        assert_eq!(u2.runtime.segment_id, u1.runtime.segment_id, "same target");
        store
            .finish_turn(finish(&second, &u2))
            .await
            .expect("finishes");
        let third = begin(&s, "o", "other-model");
        let u3 = started(store, third).await;
        assert_ne!(u3.runtime.segment_id, u2.runtime.segment_id, "new target");
    }

    pub async fn begin_turn_on_a_session_held_elsewhere_writes_nothing(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        store
            .acquire_lease(&s.id, "x", 60_000)
            .await
            .expect("lease");
        let turn = begin(&s, "o", "m");
        let answer = store.begin_turn(turn.clone()).await.expect("answers");
        assert_eq!(answer, TurnBegun::HeldElsewhere { owner: "x".into() });
        assert_eq!(store.count_messages(&s.id).await.expect("count"), 0);
        assert!(store.list_runs(&s.id).await.expect("runs").is_empty());
        assert_eq!(store.get_session("default", &s.id).await.expect("s"), s);
    }

    /// A turn whose owner stopped (its lease expired, the run still open) is
    /// closed by the next owner's `begin_turn`: the run ends `interrupted`, what it
    /// had streamed stays as a failed answer, and the new turn starts after it.
    pub async fn begin_turn_after_an_expired_owner_closes_its_open_run(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let mut gone = begin(&s, "gone-host:1:dead", "m");
        gone.lease_ttl_ms = -1;
        started(store, gone.clone()).await;
        store
            .append_run_events(
                &gone.run.id,
                &[NewRunEvent {
                    sequence: 1,
                    event_type: "text_delta".into(),
                    data: json!({"type": "text_delta", "text": "half an ans"}),
                    occurred_at: now_rfc3339(),
                }],
            )
            .await
            .expect("streamed");
        let next = begin(&s, "owner-b", "m");
        let user = started(store, next.clone()).await;
        let old = store.get_run(&gone.run.id).await.expect("old run");
        assert_eq!(old.status, RunStatus::Failed);
        assert_eq!(old.error_type.as_deref(), Some("interrupted"));
        let messages = store.list_messages(&s.id, None, 10).await.expect("list");
        let kept: Vec<_> = messages
            .iter()
            .filter(|m| m.role == Role::Assistant && m.run_id.as_ref() == Some(&gone.run.id))
            .collect();
        assert_eq!(kept.len(), 1, "{messages:?}");
        assert_eq!(kept[0].content, "half an ans");
        assert_eq!(kept[0].status, MessageStatus::Failed);
        assert_eq!(kept[0].error.as_deref(), Some("interrupted"));
        assert!(
            user.sequence > kept[0].sequence,
            "the new prompt comes after it"
        );
        assert_eq!(
            store.get_run(&next.run.id).await.expect("new run").status,
            RunStatus::Running
        );
        // A live owner's run is never closed: a third owner is refused.
        let third = store
            .begin_turn(begin(&s, "owner-c", "m"))
            .await
            .expect("answers");
        assert_eq!(
            third,
            TurnBegun::HeldElsewhere {
                owner: "owner-b".into()
            }
        );
    }

    /// The user message fails to insert (its id is taken) after the lease and the
    /// run were written: none of them stays.
    pub async fn a_failing_begin_turn_stores_nothing(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let earlier = store
            .append_exchange(
                &s.id,
                vec![NewMessage::text(Role::User, "old", snap())],
                None,
            )
            .await
            .expect("appends");
        let mut turn = begin(&s, "o", "m");
        turn.user.id = earlier[0].id.clone();
        store
            .begin_turn(turn.clone())
            .await
            .expect_err("duplicate id");
        assert!(store.list_runs(&s.id).await.expect("runs").is_empty());
        assert_eq!(store.count_messages(&s.id).await.expect("count"), 1);
        let header = store.get_session("default", &s.id).await.expect("s");
        assert_eq!(header.status, s.status);
        assert_eq!(header.turns_used, 0);
        assert_eq!(
            store
                .acquire_lease(&s.id, "other", 1000)
                .await
                .expect("lease"),
            None,
            "the lease was rolled back"
        );
    }

    /// The answer and its provider call are written, then the run is missing:
    /// neither the answer nor the call stays, and the lease is still held.
    pub async fn a_failing_finish_turn_stores_nothing(b: Backend) {
        let store = b.store.as_ref();
        let s = new_session(store, "default").await;
        let turn = begin(&s, "o", "m");
        let user = started(store, turn.clone()).await;
        let mut end = finish(&turn, &user);
        end.run_id = RunId::generate();
        let e = store.finish_turn(end).await.expect_err("no such run");
        assert_eq!(e.error_type, ErrorType::NotFound);
        // A taken message id fails the same way, at the first insert.
        let mut end = finish(&turn, &user);
        end.assistant.id = user.id.clone();
        store.finish_turn(end).await.expect_err("duplicate id");
        assert_eq!(store.count_messages(&s.id).await.expect("count"), 1);
        assert!(
            store
                .list_run_events(&turn.run.id, None)
                .await
                .expect("events")
                .is_empty()
        );
        assert!(
            store
                .list_provider_calls(&s.id)
                .await
                .expect("calls")
                .is_empty()
        );
        assert_eq!(
            store.get_run(&turn.run.id).await.expect("run").status,
            RunStatus::Running
        );
        assert_eq!(
            store.get_session("default", &s.id).await.expect("s").status,
            SessionStatus::Running
        );
        assert_eq!(
            store
                .acquire_lease(&s.id, "other", 1000)
                .await
                .expect("lease"),
            Some("o".to_string()),
            "the release was rolled back"
        );
        // And the turn can still finish.
        let done = store
            .finish_turn(finish(&turn, &user))
            .await
            .expect("finishes");
        assert_eq!(done.message_count, 2);
    }

    /// Many tasks append to a few sessions at once: every append gets consecutive
    /// sequences, and each session ends with 0..n, no gap, no duplicate.
    pub async fn concurrent_appends_keep_sequences_monotonic_and_gap_free(b: Backend) {
        const SESSIONS: usize = 3;
        const WRITERS_PER_SESSION: usize = 6;
        const APPENDS: usize = 15;
        let mut ids = Vec::new();
        for _ in 0..SESSIONS {
            ids.push(new_session(b.store.as_ref(), "default").await.id);
        }
        let mut tasks = Vec::new();
        for id in &ids {
            for w in 0..WRITERS_PER_SESSION {
                let (store, id) = (b.store.clone(), id.clone());
                tasks.push(tokio::spawn(async move {
                    let mut last = -1;
                    for i in 0..APPENDS {
                        // Alternate single messages and pairs.
                        let n = 1 + (i + w) % 2;
                        let batch = (0..n)
                            .map(|k| NewMessage::text(Role::User, format!("{w}.{i}.{k}"), snap()))
                            .collect();
                        let stored = store
                            .append_exchange(&id, batch, None)
                            .await
                            .expect("appends");
                        let seqs: Vec<i64> = stored.iter().map(|m| m.sequence).collect();
                        assert!(seqs.windows(2).all(|p| p[1] == p[0] + 1), "{seqs:?}");
                        assert!(seqs[0] > last, "a writer's sequences only grow");
                        last = seqs[seqs.len() - 1];
                    }
                }));
            }
        }
        // Readers run meanwhile and always see a gap-free prefix.
        let mut readers = Vec::new();
        for id in &ids {
            let (store, id) = (b.store.clone(), id.clone());
            readers.push(tokio::spawn(async move {
                for _ in 0..20 {
                    let msgs = store
                        .list_messages(&id, None, usize::MAX)
                        .await
                        .expect("lists");
                    for (i, m) in msgs.iter().enumerate() {
                        assert_eq!(m.sequence, i as i64);
                    }
                    tokio::task::yield_now().await;
                }
            }));
        }
        for t in tasks.into_iter().chain(readers) {
            t.await.expect("task");
        }
        let expected: usize = (0..WRITERS_PER_SESSION)
            .map(|w| (0..APPENDS).map(|i| 1 + (i + w) % 2).sum::<usize>())
            .sum();
        for id in &ids {
            let msgs = b
                .store
                .list_messages(id, None, usize::MAX)
                .await
                .expect("lists");
            let seqs: Vec<i64> = msgs.iter().map(|m| m.sequence).collect();
            assert_eq!(seqs, (0..expected as i64).collect::<Vec<_>>());
            assert_eq!(
                b.store.count_messages(id).await.expect("count") as usize,
                seqs.len()
            );
        }
    }

    /// Whatever a write answered is visible to the next read, from any task.
    pub async fn a_read_sees_every_committed_write(b: Backend) {
        let mut tasks = Vec::new();
        for t in 0..8 {
            let store = b.store.clone();
            tasks.push(tokio::spawn(async move {
                for i in 0..10 {
                    let s = session(&format!("ns{t}"));
                    store.create_session(&s).await.expect("creates");
                    let got = store
                        .get_session(&s.namespace, &s.id)
                        .await
                        .expect("reads back");
                    assert_eq!(got.id, s.id);
                    let stored = store
                        .append_exchange(
                            &s.id,
                            vec![NewMessage::text(Role::User, format!("{t}.{i}"), snap())],
                            None,
                        )
                        .await
                        .expect("appends");
                    let last = store.last_messages(&s.id, 1).await.expect("reads");
                    assert_eq!(last.len(), 1);
                    assert_eq!(last[0].id, stored[0].id);
                    let listed = store.list_sessions(&s.namespace, 100).await.expect("lists");
                    assert_eq!(listed.len(), i + 1);
                }
            }));
        }
        for t in tasks {
            t.await.expect("task");
        }
    }

    fn queued_task(ns: &str) -> (hecate::domain::task::Task, NewTaskRun) {
        use hecate::domain::ids::{TaskId, TaskRunId};
        use hecate::domain::task::{ExecutionKind, Task, TaskRun, TaskRunStatus, TaskSpec};
        let now = now_rfc3339();
        let task = Task {
            id: TaskId::generate(),
            namespace: ns.into(),
            spec: TaskSpec {
                execution_kind: Some(ExecutionKind::Shell),
                shell_command: "true".into(),
                ..Default::default()
            },
            latest_run_id: None,
            latest_run_status: None,
            created_at: now.clone(),
            updated_at: now.clone(),
        };
        let run = TaskRun {
            id: TaskRunId::generate(),
            task_id: task.id.clone(),
            number: 0,
            status: TaskRunStatus::Queued,
            error_type: None,
            error_message: None,
            resumed_from_run_id: None,
            workspace: None,
            total_cost_micros_usd: 0,
            prior_cost_micros_usd: 0,
            model: None,
            provider: None,
            cancel_requested: false,
            created_at: now,
            started_at: None,
            finished_at: None,
        };
        let new = NewTaskRun {
            run,
            priority: 0,
            approval: None,
            events: vec![NewTaskEvent::new("run.queued", json!({}))],
        };
        (task, new)
    }

    pub async fn concurrent_claims_hand_each_queued_run_to_one_worker(b: Backend) {
        let mut runs = Vec::new();
        for _ in 0..20 {
            let (task, new) = queued_task("default");
            b.store.create_task(&task).await.expect("task");
            let (run, events) = b.store.create_task_run(new).await.expect("run");
            assert_eq!((run.number, events.len()), (1, 1));
            runs.push(run.id);
        }
        let depth = b.store.task_queue_depth().await.expect("depth");
        assert_eq!((depth.waiting, depth.leased), (20, 0));
        let mut claimers = Vec::new();
        for w in 0..4 {
            let store = b.store.clone();
            claimers.push(tokio::spawn(async move {
                let mut got = Vec::new();
                while let Some(c) = store
                    .claim_task_run(&format!("w{w}"), 60_000)
                    .await
                    .expect("claims")
                {
                    assert!(!c.reclaimed);
                    got.push(c.run.id);
                }
                got
            }));
        }
        let mut claimed = Vec::new();
        for c in claimers {
            claimed.extend(c.await.expect("claimer"));
        }
        claimed.sort();
        runs.sort();
        assert_eq!(claimed, runs, "every run claimed exactly once");
        let depth = b.store.task_queue_depth().await.expect("depth");
        assert_eq!((depth.waiting, depth.leased), (0, 20), "all leased now");
    }

    /// Events a client appends land after the run's own, in order, under the
    /// log's sequence; a run of another task appends nothing.
    pub async fn task_lists_filter_by_status_kind_and_directory_and_page_by_cursor(b: Backend) {
        use hecate::domain::task::{ExecutionKind, TaskListFilter, TaskRunStatus};
        // Five tasks a second apart: shell, git, shell, git, shell; in /a, /b, /a, /b, /a;
        // the first three with a queued run.
        let mut ids = Vec::new();
        for i in 0..5 {
            let (mut task, new) = queued_task("default");
            task.created_at = format!("2026-01-01T00:00:0{i}Z");
            task.spec.working_directory = if i % 2 == 0 { "/a" } else { "/b" }.into();
            if i % 2 == 1 {
                task.spec.execution_kind = Some(ExecutionKind::Git);
                task.spec.git_command = "status".into();
            }
            b.store.create_task(&task).await.expect("task");
            if i < 3 {
                b.store.create_task_run(new).await.expect("run");
            }
            ids.push(task.id);
        }
        let list = |f: TaskListFilter| {
            let store = b.store.clone();
            async move {
                store
                    .list_tasks(TaskListFilter {
                        namespace: "default".into(),
                        ..f
                    })
                    .await
                    .expect("list")
                    .into_iter()
                    .map(|t| (t.id, t.latest_run_status))
                    .collect::<Vec<_>>()
            }
        };
        let all = list(TaskListFilter {
            limit: 10,
            ..Default::default()
        })
        .await;
        let newest_first: Vec<_> = ids.iter().rev().cloned().collect();
        assert_eq!(
            all.iter().map(|t| t.0.clone()).collect::<Vec<_>>(),
            newest_first
        );
        assert_eq!(
            all[4].1,
            Some(TaskRunStatus::Queued),
            "the status is read with the task"
        );
        assert_eq!(all[0].1, None, "never ran");
        let mut paged = Vec::new();
        let mut before = None;
        loop {
            let page = list(TaskListFilter {
                limit: 2,
                before: before.clone(),
                ..Default::default()
            })
            .await;
            if page.is_empty() {
                break;
            }
            before = page.last().map(|t| t.0.clone());
            paged.extend(page.into_iter().map(|t| t.0));
        }
        assert_eq!(
            paged, newest_first,
            "the cursor pages through every task once"
        );
        let queued = list(TaskListFilter {
            status: Some(TaskRunStatus::Queued),
            limit: 10,
            ..Default::default()
        })
        .await;
        assert_eq!(queued.len(), 3);
        let git = list(TaskListFilter {
            execution_kind: Some(ExecutionKind::Git),
            limit: 10,
            ..Default::default()
        })
        .await;
        assert_eq!(
            git.iter().map(|t| t.0.clone()).collect::<Vec<_>>(),
            [ids[3].clone(), ids[1].clone()]
        );
        let in_a_queued = list(TaskListFilter {
            working_directory: Some("/a".into()),
            status: Some(TaskRunStatus::Queued),
            limit: 10,
            ..Default::default()
        })
        .await;
        assert_eq!(
            in_a_queued.iter().map(|t| t.0.clone()).collect::<Vec<_>>(),
            [ids[2].clone(), ids[0].clone()]
        );
        let other = b
            .store
            .list_tasks(TaskListFilter {
                namespace: "other".into(),
                limit: 10,
                ..Default::default()
            })
            .await
            .expect("list");
        assert!(other.is_empty());
    }

    pub async fn mcp_tool_policies_are_replaced_per_tool_and_kept_per_namespace(b: Backend) {
        use hecate::store::McpToolPolicy;
        let p = |ns: &str, tool: &str, policy: &str, at: &str| McpToolPolicy {
            namespace: ns.into(),
            server: "fx".into(),
            tool: tool.into(),
            policy: policy.into(),
            updated_at: at.into(),
        };
        b.store
            .set_mcp_tool_policy(&p("default", "write", "require_approval", "t1"))
            .await
            .expect("set");
        b.store
            .set_mcp_tool_policy(&p("default", "echo", "block", "t2"))
            .await
            .expect("set");
        b.store
            .set_mcp_tool_policy(&p("default", "write", "block", "t3"))
            .await
            .expect("replace");
        b.store
            .set_mcp_tool_policy(&p("other", "echo", "auto", "t4"))
            .await
            .expect("set");
        let listed = b
            .store
            .list_mcp_tool_policies("default")
            .await
            .expect("list");
        assert_eq!(
            listed,
            [
                p("default", "echo", "block", "t2"),
                p("default", "write", "block", "t3")
            ]
        );
        let other = b.store.list_mcp_tool_policies("other").await.expect("list");
        assert_eq!(other, [p("other", "echo", "auto", "t4")]);
    }

    pub async fn appended_task_events_follow_the_runs_own_in_order(b: Backend) {
        use hecate::domain::ids::TaskId;
        let (task, new) = queued_task("default");
        b.store.create_task(&task).await.expect("task");
        let (run, first) = b.store.create_task_run(new).await.expect("run");
        let appended = b
            .store
            .append_task_events(
                &task.id,
                &run.id,
                vec![
                    NewTaskEvent::new("ci.started", json!({"job": 1})),
                    NewTaskEvent::new("ci.finished", json!({"ok": true})),
                ],
            )
            .await
            .expect("append");
        let types: Vec<&str> = appended.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(types, ["ci.started", "ci.finished"]);
        assert!(appended[0].sequence > first[0].sequence);
        assert!(appended[1].sequence > appended[0].sequence);
        let of_run = TaskEventFilter {
            namespace: "default".into(),
            run_id: Some(run.id.clone()),
            limit: 10,
            ..Default::default()
        };
        let listed = b
            .store
            .list_task_events(of_run.clone())
            .await
            .expect("list");
        assert_eq!(listed.len(), 3);
        assert_eq!(listed[2].data, json!({"ok": true}));
        let newest = b
            .store
            .list_task_events(TaskEventFilter {
                limit: 2,
                newest_first: true,
                ..of_run.clone()
            })
            .await
            .expect("newest");
        let types: Vec<&str> = newest.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(
            types,
            ["ci.finished", "ci.started"],
            "the newest, newest first"
        );
        let err = b
            .store
            .append_task_events(
                &TaskId::from("task_other"),
                &run.id,
                vec![NewTaskEvent::new("ci.x", json!({}))],
            )
            .await
            .expect_err("another task's run");
        assert_eq!(err.error_type, hecate::domain::error::ErrorType::NotFound);
        let after = b.store.list_task_events(of_run).await.expect("list");
        assert_eq!(after.len(), 3, "the refused append wrote nothing");
    }

    /// A reader that follows the task event log by its sequence (as the feeds'
    /// replay cursor does) while many writers append never skips an event: a
    /// sequence is never committed after a larger one was visible.
    pub async fn a_follower_of_the_task_event_log_never_skips_an_event(b: Backend) {
        const WRITERS: usize = 6;
        const RUNS: usize = 8;
        let mut writers = Vec::new();
        for _ in 0..WRITERS {
            let store = b.store.clone();
            writers.push(tokio::spawn(async move {
                for _ in 0..RUNS {
                    let (task, new) = queued_task("default");
                    store.create_task(&task).await.expect("task");
                    store.create_task_run(new).await.expect("run");
                }
            }));
        }
        let filter = |after: i64| TaskEventFilter {
            namespace: "default".into(),
            after_sequence: after,
            limit: 10_000,
            ..Default::default()
        };
        let mut seen: Vec<i64> = Vec::new();
        loop {
            let done = writers.iter().all(|w| w.is_finished());
            let after = seen.last().copied().unwrap_or(0);
            let batch = b
                .store
                .list_task_events(filter(after))
                .await
                .expect("reads");
            seen.extend(batch.iter().map(|e| e.sequence));
            if done && batch.is_empty() {
                break;
            }
            tokio::task::yield_now().await;
        }
        for w in writers {
            w.await.expect("writer");
        }
        let all: Vec<i64> = b
            .store
            .list_task_events(filter(0))
            .await
            .expect("reads")
            .iter()
            .map(|e| e.sequence)
            .collect();
        assert_eq!(all.len(), WRITERS * RUNS);
        assert_eq!(seen, all, "the follower saw every event, in order");
    }

    pub async fn an_agent_checkpoint_ends_a_step_and_starts_the_next_in_one_write(b: Backend) {
        use hecate::domain::ids::{TaskArtifactId, TaskStepId};
        use hecate::domain::task::{TaskArtifact, TaskStep, TaskStepStatus};
        use hecate::store::tasks::{FinishedStep, RunCheckpoint, RunCost};
        let store = b.store.as_ref();
        let (task, new) = queued_task("default");
        store.create_task(&task).await.expect("task");
        store.create_task_run(new).await.expect("run");
        let run = store
            .claim_task_run("worker", 60_000)
            .await
            .expect("claims")
            .expect("a run")
            .run;
        let step = |index: i64, kind: &str| TaskStep {
            id: TaskStepId::generate(),
            run_id: run.id.clone(),
            task_id: task.id.clone(),
            index,
            kind: kind.into(),
            status: TaskStepStatus::Running,
            input: json!({"index": index}),
            exit_code: None,
            error_type: None,
            error_message: None,
            started_at: now_rfc3339(),
            finished_at: None,
        };
        let conversation = |text: &str| TaskArtifact {
            id: TaskArtifactId::generate(),
            task_id: task.id.clone(),
            run_id: run.id.clone(),
            step_id: None,
            kind: "agent_conversation".into(),
            name: "conversation".into(),
            content: text.into(),
            size_bytes: text.len() as i64,
            truncated: false,
            status: None,
            created_at: now_rfc3339(),
        };
        let checkpoint =
            |owner: &str, end: Option<TaskStep>, start: TaskStep, text: &str| RunCheckpoint {
                run_id: run.id.clone(),
                owner: owner.into(),
                step: end.map(|s| FinishedStep {
                    step: TaskStep {
                        status: TaskStepStatus::Completed,
                        finished_at: Some(now_rfc3339()),
                        ..s
                    },
                    artifacts: vec![],
                    events: vec![NewTaskEvent::new("step.finished", json!({}))],
                }),
                start: Some(start),
                replace: vec![conversation(text)],
                cost: Some(RunCost {
                    total_cost_micros_usd: 7,
                    model: "m".into(),
                    provider: "p".into(),
                }),
                events: vec![NewTaskEvent::new("step.started", json!({}))],
            };
        let model = step(1, "model");
        store
            .checkpoint_task_run(checkpoint("worker", None, model.clone(), "one"))
            .await
            .expect("first step starts");
        let told = store
            .checkpoint_task_run(checkpoint("worker", Some(model), step(2, "tool"), "two"))
            .await
            .expect("the model step ends as the tool step starts");
        let types: Vec<_> = told.iter().map(|e| e.event_type.as_str()).collect();
        assert_eq!(types, ["step.finished", "step.started"]);
        let steps = store.list_task_steps(&run.id).await.expect("steps");
        let shape: Vec<_> = steps
            .iter()
            .map(|s| (s.index, s.kind.as_str(), s.status))
            .collect();
        assert_eq!(
            shape,
            [
                (1, "model", TaskStepStatus::Completed),
                (2, "tool", TaskStepStatus::Running)
            ]
        );
        let kept = |arts: Vec<TaskArtifact>| -> Vec<String> {
            arts.into_iter()
                .filter(|a| a.kind == "agent_conversation")
                .map(|a| a.content)
                .collect()
        };
        let arts = store
            .list_task_artifacts(&task.id, Some(&run.id))
            .await
            .expect("artifacts");
        assert_eq!(
            kept(arts),
            ["two"],
            "the conversation is replaced, not added"
        );
        let stored = store.get_task_run(&task.id, &run.id).await.expect("run");
        assert_eq!(stored.total_cost_micros_usd, 7);
        // A worker that lost the lease neither ends nor starts a step.
        let tool = steps[1].clone();
        let e = store
            .checkpoint_task_run(checkpoint("other", Some(tool), step(3, "model"), "three"))
            .await
            .expect_err("not the holder");
        assert_eq!(e.error_type, ErrorType::Conflict);
        let after = store.list_task_steps(&run.id).await.expect("steps");
        assert_eq!(after.len(), 2);
        assert_eq!(after[1].status, TaskStepStatus::Running);
        let arts = store
            .list_task_artifacts(&task.id, Some(&run.id))
            .await
            .expect("artifacts");
        assert_eq!(kept(arts), ["two"]);
    }

    pub async fn an_expired_task_lease_is_reclaimed_and_only_the_holder_finishes(b: Backend) {
        use hecate::domain::ids::TaskStepId;
        use hecate::domain::task::{TaskRunStatus, TaskStep, TaskStepStatus};
        let store = b.store.as_ref();
        let (task, new) = queued_task("default");
        store.create_task(&task).await.expect("task");
        store.create_task_run(new).await.expect("run");
        let first = store
            .claim_task_run("dead", -1)
            .await
            .expect("claims")
            .expect("a run");
        let step = TaskStep {
            id: TaskStepId::generate(),
            run_id: first.run.id.clone(),
            task_id: task.id.clone(),
            index: 1,
            kind: "shell".into(),
            status: TaskStepStatus::Running,
            input: json!({}),
            exit_code: None,
            error_type: None,
            error_message: None,
            started_at: now_rfc3339(),
            finished_at: None,
        };
        store.start_task_step(&step, vec![]).await.expect("step");
        // The lease is already expired: another worker takes the run over.
        let second = store
            .claim_task_run("alive", 60_000)
            .await
            .expect("claims")
            .expect("reclaimed");
        assert!(second.reclaimed);
        assert_eq!(second.run.id, first.run.id);
        let steps = store.list_task_steps(&first.run.id).await.expect("steps");
        assert_eq!(steps[0].error_type.as_deref(), Some("worker_lease_expired"));
        assert!(
            store
                .claim_task_run("third", 60_000)
                .await
                .expect("claims")
                .is_none()
        );
        let e = store
            .renew_task_lease(&first.run.id, "dead", 60_000)
            .await
            .expect_err("not the holder");
        assert_eq!(e.error_type, ErrorType::Conflict);
        let e = store
            .finish_task_run(TaskRunEnd {
                run_id: first.run.id.clone(),
                owner: "dead".into(),
                status: TaskRunStatus::Completed,
                error: None,
                events: vec![],
            })
            .await
            .expect_err("not the holder");
        assert_eq!(e.error_type, ErrorType::Conflict);
        store
            .finish_task_run(TaskRunEnd {
                run_id: first.run.id.clone(),
                owner: "alive".into(),
                status: TaskRunStatus::Completed,
                error: None,
                events: vec![],
            })
            .await
            .expect("the holder finishes");
        let run = store
            .get_task_run(&task.id, &first.run.id)
            .await
            .expect("run");
        assert_eq!(run.status, TaskRunStatus::Completed);
        let types: Vec<_> = store
            .list_task_events(TaskEventFilter {
                namespace: "default".into(),
                run_id: Some(run.id.clone()),
                limit: 100,
                ..Default::default()
            })
            .await
            .expect("events")
            .into_iter()
            .map(|e| e.event_type)
            .collect();
        assert_eq!(
            types,
            [
                "run.queued",
                "run.started",
                "gap.run_disconnected",
                "run.started"
            ]
        );
        // Another namespace sees neither the task nor its events.
        assert!(store.get_task("other", &task.id).await.is_err());
        let none = store
            .list_task_events(TaskEventFilter {
                namespace: "other".into(),
                limit: 100,
                ..Default::default()
            })
            .await
            .expect("events");
        assert!(none.is_empty());
    }
}

/// Instantiates every case of the suite for each `backend => opener` pair.
macro_rules! conformance {
    ($($backend:ident => $open:expr;)+) => {
        $(
            mod $backend {
                use super::*;

                conformance!(@cases $open;
                    append_assigns_gap_free_sequences_and_links_calls,
                    a_window_reads_only_its_messages_runs_and_calls,
                    an_exchange_whose_call_fails_stores_no_message,
                    deleting_a_session_cascades,
                    namespaces_are_isolated,
                    history_strategies_load_windows_and_checkpoints,
                    token_budget_loads_the_newest_messages_that_fit,
                    a_sessions_memory_strategy_round_trips,
                    leases_exclude_other_owners_until_released_or_expired,
                    reconcile_fails_orphaned_runs_and_cancels_pending_approvals_as_hub_restarted,
                    reconcile_keeps_the_streamed_text_of_an_interrupted_turn,
                    retention_prunes_old_and_surplus_resolved_approvals_and_expired_grants,
                    run_events_keep_the_engines_numbers_and_deltas_can_be_left_out,
                    audit_records_round_trip_newest_first_per_namespace,
                    health_names_the_backend_and_reports_integrity,
                    concurrent_appends_keep_sequences_monotonic_and_gap_free,
                    a_read_sees_every_committed_write,
                    a_turn_begins_and_finishes_in_two_writes,
                    begin_turn_keeps_the_segment_of_the_same_target,
                    begin_turn_on_a_session_held_elsewhere_writes_nothing,
                    begin_turn_after_an_expired_owner_closes_its_open_run,
                    a_failing_begin_turn_stores_nothing,
                    a_failing_finish_turn_stores_nothing,
                    concurrent_claims_hand_each_queued_run_to_one_worker,
                    a_follower_of_the_task_event_log_never_skips_an_event,
                    appended_task_events_follow_the_runs_own_in_order,
                    task_lists_filter_by_status_kind_and_directory_and_page_by_cursor,
                    mcp_tool_policies_are_replaced_per_tool_and_kept_per_namespace,
                    an_expired_task_lease_is_reclaimed_and_only_the_holder_finishes,
                    an_agent_checkpoint_ends_a_step_and_starts_the_next_in_one_write,
                    a_chat_exchange_creates_the_session_and_links_answer_to_call,
                    a_stale_chat_exchange_writes_nothing,
                    chat_sessions_list_newest_first_per_namespace_and_delete_both_streams,
                    traces_filter_by_request_session_and_time_newest_first,
                    traces_filter_by_model_provider_and_status,
                    trace_costs_sum_per_day_provider_and_model_under_the_filter,
                    a_replayed_batch_of_traces_is_stored_once,
                    a_chat_session_made_ahead_keeps_its_header_and_a_patch_changes_what_it_names,
                    a_traces_route_round_trips_and_spend_sums_its_costs,
                    capability_records_are_replaced_per_source_and_deleted,
                    provider_cooldowns_keep_the_latest_end_and_expire,
                    api_keys_keep_one_live_name_and_revoke_once,
                    a_flow_chat_turn_writes_message_memory_and_position_together,
                    a_stale_or_unknown_flow_chat_write_stores_nothing,
                    flow_chats_and_memory_do_not_cross_namespaces,
                    an_agents_flow_chats_list_most_recently_updated_first,
                    loading_by_role_keeps_only_those_roles_on_either_side_of_a_cursor,
                    a_summary_buffer_loads_at_most_max_messages_before_its_first_summary,
                    session_choices_keep_their_order_per_scope_and_go_with_their_session,
                    a2a_contexts_tasks_and_push_configs_are_kept_and_go_with_their_session,
                );
            }
        )+
    };
    (@cases $open:expr; $($case:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                cases::$case($open.await).await;
            }
        )+
    };
}

conformance! {
    sqlite_file => backends::sqlite_file();
    sqlite_file_one_reader => backends::sqlite_file_one_reader();
    sqlite_memory => backends::sqlite_memory();
    postgres => backends::postgres();
}
