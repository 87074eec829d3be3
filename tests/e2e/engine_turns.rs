//! The engine as a library over the fixture model server: the busy rule, cancel,
//! guardrails, namespace isolation, event order and the summarization flag.

use crate::support::common::ModelServer;
use hecate::adapters::providers::pricing::Pricebook;
use hecate::adapters::providers::{ProviderClient, ProviderConfig, ProviderKind};
use hecate::domain::event::{EngineEvent, RuntimeEvent};
use hecate::domain::ids::{RunId, SessionId};
use hecate::domain::run::RunStatus;
use hecate::domain::session::{Guardrails, Session};
use hecate::domain::{ErrorType, HecateError};
use hecate::engine::bus::Received;
use hecate::engine::{CreateSession, Engine, EngineConfig, SendMessage, TurnHandle};
use hecate::runtimes::model::ModelRuntime;
use hecate::store::{SqliteStore, Store};
use serde_json::json;
use std::sync::Arc;

async fn engine(server: &ModelServer) -> Engine {
    engine_on(
        server,
        Arc::new(SqliteStore::open_in_memory().expect("store")),
        EngineConfig::default(),
    )
    .await
}

async fn engine_on(server: &ModelServer, store: Arc<dyn Store>, config: EngineConfig) -> Engine {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let http = ProviderClient::default_http().expect("http");
    let runtime = ModelRuntime::new(
        vec![ProviderClient::new(
            http,
            ProviderConfig {
                name: "fix".into(),
                kind: ProviderKind::Openai,
                base_url: format!("{}/v1", server.base),
                api_key: None,
                models: vec![],
            },
        )],
        Pricebook::default(),
    );
    Engine::start(store, runtime.into(), config)
        .await
        .expect("engine")
        .0
}

fn prompt(s: &str) -> SendMessage {
    SendMessage {
        content: s.into(),
        ..Default::default()
    }
}

/// Creates a model session without guardrails in namespace `ns`.
async fn new_session(engine: &Engine, what: &str) -> Session {
    engine
        .create_session("ns", model_session(None))
        .await
        .expect(what)
}

/// Starts a turn that sends `text` to session `id` in namespace `ns`.
async fn start_turn(engine: &Engine, id: &SessionId, text: &str, what: &str) -> TurnHandle {
    engine
        .send_message("ns", id, prompt(text))
        .await
        .expect(what)
}

fn model_session(guardrails: Option<Guardrails>) -> CreateSession {
    CreateSession {
        model: Some("fix/fixture-model".into()),
        guardrails,
        ..Default::default()
    }
}

#[tokio::test]
async fn a_cancel_naming_another_run_leaves_the_running_turn_alone() {
    let server = ModelServer::start(Some(json!([
        {"chunks": ["alpha ", "beta "], "chunk_delay_ms": 200}
    ])));
    let engine = engine(&server).await;
    let s = new_session(&engine, "session").await;
    let mut turn = start_turn(&engine, &s.id, "go", "starts").await;
    let other = engine
        .cancel_run("ns", &s.id, &RunId::generate())
        .await
        .expect_err("not that run");
    assert_eq!(other.error_type, ErrorType::SessionNotRunning);
    assert!(
        other.message.contains("is not running"),
        "{}",
        other.message
    );
    let result = turn.wait().await;
    assert_eq!(result.run.status, RunStatus::Completed);
    // Its own run id, once it ended, is not running either.
    let ended = engine
        .cancel_run("ns", &s.id, &turn.run_id)
        .await
        .expect_err("ended");
    assert_eq!(ended.error_type, ErrorType::SessionNotRunning);
}

#[tokio::test]
async fn a_second_send_while_a_turn_runs_is_busy_and_cancel_keeps_the_partial_answer() {
    let server = ModelServer::start(Some(json!([
        {"chunks": ["alpha ", "beta ", "gamma ", "delta "], "chunk_delay_ms": 400},
        {"repeat": true, "text": "ok"}
    ])));
    let engine = engine(&server).await;
    let s = new_session(&engine, "session").await;
    let mut turn = start_turn(&engine, &s.id, "go", "starts").await;
    let busy = engine
        .send_message("ns", &s.id, prompt("again"))
        .await
        .expect_err("busy");
    assert_eq!(busy.error_type, ErrorType::AgentSessionBusy);
    // Wait for the first chunk, then cancel.
    loop {
        match turn.events.recv().await.expect("event") {
            Received::Event(EngineEvent::Runtime {
                update: RuntimeEvent::TextDelta { .. },
                ..
            }) => break,
            _ => continue,
        }
    }
    engine
        .cancel_run("ns", &s.id, &turn.run_id)
        .await
        .expect("cancels its own run");
    let result = turn.wait().await;
    assert_eq!(result.run.status, RunStatus::Cancelled);
    let answer = result.assistant.expect("partial answer stored");
    assert!(answer.content.starts_with("alpha"), "{}", answer.content);
    assert_eq!(answer.status.as_str(), "cancelled");
    let none = engine
        .cancel("ns", &s.id)
        .await
        .expect_err("nothing running");
    assert_eq!(none.error_type, ErrorType::SessionNotRunning);
    // The busy marker is gone: the session takes new turns.
    let mut next = start_turn(&engine, &s.id, "after", "free").await;
    next.wait().await;
}

#[tokio::test]
async fn events_arrive_in_order_and_are_persisted_on_the_run() {
    let server = ModelServer::start(Some(json!([
        // Paced: deltas already queued together are merged into one event, so
        // only chunks that arrive apart are events of their own.
        {"thinking": "hmm", "chunks": ["x", "y", "z"], "chunk_delay_ms": 100}
    ])));
    let engine = engine(&server).await;
    let s = new_session(&engine, "session").await;
    let mut watcher = engine.bus().subscribe(Some(s.id.clone()));
    let mut turn = start_turn(&engine, &s.id, "go", "starts").await;
    let result = turn.wait().await;
    assert_eq!(result.run.status, RunStatus::Completed);
    let mut kinds = Vec::new();
    let mut streamed = String::new();
    while let Some(Received::Event(ev)) = watcher.recv().await {
        let done = matches!(ev, EngineEvent::TurnFinished { .. });
        if let EngineEvent::Runtime {
            update: RuntimeEvent::TextDelta { text },
            ..
        } = &ev
        {
            streamed.push_str(text);
        }
        kinds.push(match ev {
            EngineEvent::TurnStarted { .. } => "started".to_string(),
            EngineEvent::Runtime { update, .. } => update.kind().to_string(),
            EngineEvent::TurnFinished { .. } => "finished".to_string(),
            EngineEvent::ApprovalRequested { .. } | EngineEvent::ApprovalResolved { .. } => {
                "approval".to_string()
            }
            EngineEvent::FilesReverted { .. } => "files_reverted".to_string(),
        });
        if done {
            break;
        }
    }
    assert_eq!(kinds.first().map(String::as_str), Some("started"));
    assert_eq!(kinds.last().map(String::as_str), Some("finished"));
    let text_deltas = kinds.iter().filter(|k| *k == "text_delta").count();
    assert!(
        text_deltas >= 2,
        "chunks sent apart stream apart: {kinds:?}"
    );
    assert_eq!(streamed, "xyz");
    let first_text = kinds.iter().position(|k| k == "text_delta");
    let first_thought = kinds.iter().position(|k| k == "thought_delta");
    assert!(first_thought < first_text, "{kinds:?}");
    let t = engine.transcript("ns", &s.id).await.expect("transcript");
    assert_eq!(t.messages[1].content, "xyz");
    assert_eq!(t.runs[0].status, RunStatus::Completed);
    assert!(t.runs[0].duration_ms.is_some());
}

/// Opens a session with `guardrails`, runs one turn in it, waits `pause_ms`,
/// and returns the error with which the engine refuses a second turn.
async fn second_turn_refusal(
    engine: &Engine,
    guardrails: Guardrails,
    pause_ms: u64,
    why: &str,
) -> HecateError {
    let s = engine
        .create_session("ns", model_session(Some(guardrails)))
        .await
        .expect("session");
    start_turn(engine, &s.id, "one", "first").await.wait().await;
    tokio::time::sleep(std::time::Duration::from_millis(pause_ms)).await;
    engine
        .send_message("ns", &s.id, prompt("two"))
        .await
        .expect_err(why)
}

/// Guardrails with only what `set` changes from the defaults.
fn guardrails(set: impl FnOnce(&mut Guardrails)) -> Guardrails {
    let mut g = Guardrails::default();
    set(&mut g);
    g
}

#[tokio::test]
async fn guardrails_stop_turns_with_their_stable_errors() {
    let server = ModelServer::start(None);
    let engine = engine(&server).await;
    // (guardrails, pause before the second turn, what stops it, its error, a detail it reports)
    let cases = [
        (
            guardrails(|g| g.max_turns = Some(1)),
            0,
            "limit",
            ErrorType::SessionLimitExceeded,
            Some(("turns_used", 1)),
        ),
        (
            guardrails(|g| g.idle_timeout_ms = Some(50)),
            120,
            "idle",
            ErrorType::SessionIdleTimeout,
            Some(("limit_ms", 50)),
        ),
        (
            guardrails(|g| g.max_duration_ms = Some(50)),
            120,
            "duration",
            ErrorType::SessionDurationLimitExceeded,
            None,
        ),
    ];
    for (guardrails, pause_ms, why, error_type, detail) in cases {
        let e = second_turn_refusal(&engine, guardrails, pause_ms, why).await;
        assert_eq!(e.error_type, error_type, "{why}");
        if let Some((key, value)) = detail {
            assert_eq!(e.details[key], value, "{why}");
        }
    }
}

#[tokio::test]
async fn namespaces_never_see_each_other() {
    let server = ModelServer::start(None);
    let engine = engine(&server).await;
    let a = engine
        .create_session("agent-a", model_session(None))
        .await
        .expect("a");
    for op in [
        engine.get_session("agent-b", &a.id).await.map(|_| ()),
        engine
            .send_message("agent-b", &a.id, prompt("x"))
            .await
            .map(|_| ()),
        engine.cancel("agent-b", &a.id).await,
        engine.delete_session("agent-b", &a.id).await,
    ] {
        assert_eq!(op.expect_err("isolated").error_type, ErrorType::NotFound);
    }
    assert!(
        engine
            .list_sessions("agent-b", 10)
            .await
            .expect("list")
            .is_empty()
    );
    assert_eq!(
        engine
            .list_sessions("agent-a", 10)
            .await
            .expect("list")
            .len(),
        1
    );
}

#[tokio::test]
async fn the_turn_result_flags_summarization_every_twenty_messages() {
    let server = ModelServer::start(None);
    let engine = engine(&server).await;
    let s = new_session(&engine, "session").await;
    let mut flags = Vec::new();
    for i in 0..11 {
        let r = engine
            .send_message("ns", &s.id, prompt(&format!("turn {i}")))
            .await
            .expect("turn")
            .wait()
            .await;
        flags.push(r.summarization_needed);
    }
    // Turn 10 (index 9) brings the session to 20 messages.
    let flagged: Vec<usize> = flags
        .iter()
        .enumerate()
        .filter(|(_, f)| **f)
        .map(|(i, _)| i)
        .collect();
    assert_eq!(flagged, [9]);
}

#[tokio::test]
async fn runtime_switches_follow_the_seed_rules() {
    let server = ModelServer::start(None);
    let engine = engine(&server).await;
    let s = new_session(&engine, "session").await;
    let e = engine
        .send_message(
            "ns",
            &s.id,
            SendMessage {
                content: "x".into(),
                runtime_kind: Some(hecate::domain::session::RuntimeKind::ExternalAgent),
                ..Default::default()
            },
        )
        .await
        .expect_err("no adapter");
    // Hecate Chat may hand a transcript to an external agent, but one must be named
    // and registered (this engine has no external runtime at all).
    assert_eq!(e.error_type, ErrorType::AdapterNotFound);
}

/// A turn's updates reach its caller over a path of their own: a reader that is
/// slow while another session floods the engine with events gets every chunk of
/// its own turn, in order (the bus would make it lag and drop them).
#[tokio::test]
async fn a_slow_reader_gets_every_chunk_of_its_turn_while_a_neighbour_floods() {
    let mine: Vec<String> = (0..2000).map(|i| format!("c{i} ")).collect();
    let flood = (0..20_000)
        .map(|i| format!("w{i}"))
        .collect::<Vec<_>>()
        .join(" ");
    let server = ModelServer::start(Some(json!([
        // Both turns start at once, so either request may reach the model first.
        {"match": {"contains": "mine"}, "chunks": mine, "repeat": true},
        {"match": {"contains": "flood"}, "text": flood, "repeat": true}
    ])));
    let engine = engine(&server).await;
    let a = new_session(&engine, "session a").await;
    let b = new_session(&engine, "session b").await;
    let mut turn = start_turn(&engine, &a.id, "mine", "turn a").await;
    let mut neighbour = start_turn(&engine, &b.id, "flood", "turn b").await;
    let mut text = String::new();
    let mut read = 0usize;
    while let Some(received) = turn.events.recv().await {
        read += 1;
        if read < 600 {
            // A slow editor while the neighbour streams 20,000 chunks.
            tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        }
        match received {
            Received::Event(EngineEvent::Runtime {
                update: RuntimeEvent::TextDelta { text: t },
                ..
            }) => text.push_str(&t),
            Received::Event(EngineEvent::TurnFinished { .. }) => break,
            Received::Lagged(n) => panic!("{n} events of this turn were dropped"),
            Received::Event(_) => {}
        }
    }
    assert_eq!(text, mine.concat(), "every chunk, in order");
    assert_eq!(turn.wait().await.run.status, RunStatus::Completed);
    assert_eq!(neighbour.wait().await.run.status, RunStatus::Completed);
}

/// A turn whose process lost the session's lease (another process took it after
/// this one stalled past its lease) stops, ends failed with
/// `agent_chat.session_busy_elsewhere`, keeps its partial answer, and does not
/// write over the session header the new owner keeps.
#[tokio::test]
async fn a_turn_that_loses_its_lease_stops_and_leaves_the_new_owners_header_alone() {
    let chunks: Vec<String> = (0..40).map(|i| format!("w{i} ")).collect();
    let server = ModelServer::start(Some(json!([
        {"chunks": chunks, "chunk_delay_ms": 50}
    ])));
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open_in_memory().expect("store"));
    let config = EngineConfig {
        lease_ttl_ms: 300,
        ..EngineConfig::default()
    };
    let owner = config.owner_id.clone();
    let engine = engine_on(&server, store.clone(), config).await;
    let s = new_session(&engine, "session").await;
    let mut turn = start_turn(&engine, &s.id, "go", "turn").await;
    // Wait for the first chunk, then play the other process: take the lease
    // over (as after an expiry) and write the header it keeps.
    loop {
        match turn.events.recv().await.expect("event") {
            Received::Event(EngineEvent::Runtime { .. }) => break,
            _ => continue,
        }
    }
    store.release_lease(&s.id, &owner).await.expect("release");
    assert_eq!(
        store
            .acquire_lease(&s.id, "other-process", 60_000)
            .await
            .expect("take"),
        None
    );
    let mut theirs = store.get_session("ns", &s.id).await.expect("session");
    theirs.title = "the new owner's title".into();
    store.update_session(&theirs).await.expect("their header");
    let result = turn.wait().await;
    assert_eq!(result.run.status, RunStatus::Failed);
    assert_eq!(
        result.error.as_ref().map(|e| e.error_type),
        Some(ErrorType::SessionBusyElsewhere)
    );
    let answer = result.assistant.expect("partial answer kept");
    assert!(answer.content.starts_with("w0 "), "{}", answer.content);
    assert!(!answer.content.contains("w39"), "the turn stopped early");
    let after = store.get_session("ns", &s.id).await.expect("session");
    assert_eq!(after.title, "the new owner's title", "header left alone");
    assert_eq!(
        store
            .acquire_lease(&s.id, "third", 60_000)
            .await
            .expect("lease"),
        Some("other-process".to_string()),
        "the new owner still holds the lease"
    );
}
