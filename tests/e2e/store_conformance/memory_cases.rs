//! The long-term recall cases of the store suite, run on every SQLite
//! configuration and on PostgreSQL with pgvector (its own cluster, see
//! `tests/support/postgres.rs`): vectors are found nearest first within their
//! scope only, replaced per message, skipped for a session of another
//! namespace and deleted with their session. PostgreSQL without pgvector keeps
//! vectors and answers the search as unavailable, naming the fix.

use super::{Backend, backends};
use hecate::domain::ids::{MessageId, SessionId};
use hecate::domain::message::Role;
use hecate::domain::recall::{MemoryEntry, MemoryVector, RecallQuery};
use hecate::domain::session::{RuntimeKind, Session};
use hecate::store::{PostgresStore, Store, VectorSearch};
use std::sync::Arc;

async fn session(store: &dyn Store, ns: &str) -> Session {
    let s = Session::new_idle(ns, SessionId::generate(), "t", RuntimeKind::Model);
    store.create_session(&s).await.expect("creates");
    s
}

fn vector(s: &Session, user: &str, id: &str, text: &str, embedding: &[f32]) -> MemoryVector {
    MemoryVector {
        entry: MemoryEntry {
            namespace: s.namespace.clone(),
            user: user.into(),
            session_id: s.id.clone(),
            message_id: MessageId::from(id),
            sequence: 0,
            role: Role::User,
            text: text.into(),
            created_at: format!("2026-11-27T07:00:0{}Z", id.len() % 10),
        },
        model: "embed".into(),
        embedding: embedding.to_vec(),
    }
}

fn query(ns: &str, user: &str, embedding: &[f32], k: usize) -> RecallQuery {
    RecallQuery {
        namespace: ns.into(),
        user: user.into(),
        model: "embed".into(),
        embedding: embedding.to_vec(),
        session: None,
        exclude_session: None,
        k,
    }
}

/// The message ids a search found, nearest first.
async fn found(store: &dyn Store, q: &RecallQuery) -> Vec<String> {
    match store.search_memory(q).await.expect("searches") {
        VectorSearch::Hits(hits) => hits
            .iter()
            .map(|h| h.entry.message_id.to_string())
            .collect(),
        VectorSearch::Unavailable(why) => panic!("vector search unavailable: {why}"),
    }
}

pub async fn vectors_are_found_nearest_first_within_their_scope(b: Backend) {
    let store = b.store.as_ref();
    let s1 = session(store, "ns-a").await;
    let s2 = session(store, "ns-a").await;
    let other_ns = session(store, "ns-b").await;
    let stored = store
        .put_memory_vectors(&[
            vector(&s1, "", "m-x", "x", &[1.0, 0.0, 0.0]),
            vector(&s1, "", "m-xy", "xy", &[0.8, 0.6, 0.0]),
            vector(&s2, "", "m-y", "y", &[0.0, 1.0, 0.0]),
            vector(&s2, "", "m-z", "z", &[0.0, 0.0, 1.0]),
            vector(&s1, "alice", "m-alice", "alice's", &[1.0, 0.0, 0.0]),
            vector(&other_ns, "", "m-b", "b", &[1.0, 0.0, 0.0]),
            MemoryVector {
                model: "other-model".into(),
                ..vector(&s2, "", "m-other-model", "o", &[1.0, 0.0, 0.0])
            },
        ])
        .await
        .expect("stores");
    assert_eq!(stored, 7);

    let q = query("ns-a", "", &[1.0, 0.0, 0.0], 3);
    assert_eq!(found(store, &q).await, ["m-x", "m-xy", "m-y"]);
    let VectorSearch::Hits(hits) = store.search_memory(&q).await.expect("searches") else {
        panic!("unavailable")
    };
    assert!((hits[0].score - 1.0).abs() < 1e-5, "{}", hits[0].score);
    assert!((hits[1].score - 0.8).abs() < 1e-5, "{}", hits[1].score);
    assert_eq!(hits[0].entry.text, "x");
    assert_eq!(hits[0].entry.session_id, s1.id);
    assert_eq!(hits[0].entry.namespace, "ns-a");

    // A user's scope, another namespace's, a session filter and an exclusion.
    assert_eq!(
        found(store, &query("ns-a", "alice", &[1.0, 0.0, 0.0], 5)).await,
        ["m-alice"]
    );
    assert_eq!(
        found(store, &query("ns-b", "", &[1.0, 0.0, 0.0], 5)).await,
        ["m-b"]
    );
    assert!(
        found(store, &query("ns-c", "", &[1.0, 0.0, 0.0], 5))
            .await
            .is_empty()
    );
    let only_s2 = RecallQuery {
        session: Some(s2.id.clone()),
        ..query("ns-a", "", &[1.0, 0.0, 0.0], 5)
    };
    assert_eq!(found(store, &only_s2).await, ["m-y", "m-z"]);
    let not_s1 = RecallQuery {
        exclude_session: Some(s1.id.clone()),
        ..query("ns-a", "", &[0.0, 0.0, 1.0], 5)
    };
    assert_eq!(found(store, &not_s1).await, ["m-z", "m-y"]);
    // Vectors of another length are never compared.
    assert!(
        found(store, &query("ns-a", "", &[1.0, 0.0], 5))
            .await
            .is_empty()
    );

    assert_eq!(store.count_memory_vectors("ns-a").await.expect("counts"), 6);
    assert_eq!(store.count_memory_vectors("ns-b").await.expect("counts"), 1);
}

pub async fn a_message_keeps_one_vector_and_its_session_takes_it_along(b: Backend) {
    let store = b.store.as_ref();
    let s = session(store, "ns-a").await;
    store
        .put_memory_vectors(&[vector(&s, "", "m1", "first", &[1.0, 0.0])])
        .await
        .expect("stores");
    store
        .put_memory_vectors(&[vector(&s, "", "m1", "second", &[0.0, 1.0])])
        .await
        .expect("replaces");
    assert_eq!(store.count_memory_vectors("ns-a").await.expect("counts"), 1);
    let VectorSearch::Hits(hits) = store
        .search_memory(&query("ns-a", "", &[0.0, 1.0], 5))
        .await
        .expect("searches")
    else {
        panic!("unavailable")
    };
    assert_eq!(hits[0].entry.text, "second");
    assert!((hits[0].score - 1.0).abs() < 1e-5);

    // A vector naming a session of another namespace (or none) is skipped.
    let mut foreign = vector(&s, "", "m2", "x", &[1.0, 0.0]);
    foreign.entry.namespace = "ns-b".into();
    let mut orphan = vector(&s, "", "m3", "x", &[1.0, 0.0]);
    orphan.entry.session_id = SessionId::generate();
    let stored = store
        .put_memory_vectors(&[foreign, orphan])
        .await
        .expect("skips");
    assert_eq!(stored, 0);
    assert_eq!(store.count_memory_vectors("ns-b").await.expect("counts"), 0);

    store.delete_session("ns-a", &s.id).await.expect("deletes");
    assert_eq!(store.count_memory_vectors("ns-a").await.expect("counts"), 0);
}

/// Instantiates every recall case for each `backend => opener` pair.
macro_rules! memory_conformance {
    ($($backend:ident => $open:expr;)+) => {
        $(
            mod $backend {
                use super::*;

                memory_conformance!(@cases $open;
                    vectors_are_found_nearest_first_within_their_scope,
                    a_message_keeps_one_vector_and_its_session_takes_it_along,
                );
            }
        )+
    };
    (@cases $open:expr; $($case:ident),+ $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                super::$case($open.await).await;
            }
        )+
    };
}

memory_conformance! {
    sqlite_file => backends::sqlite_file();
    sqlite_memory => backends::sqlite_memory();
    postgres_pgvector => postgres_pgvector();
}

/// A fresh database on the pgvector-capable cluster.
async fn postgres_pgvector() -> Backend {
    let url = tokio::task::spawn_blocking(crate::support::postgres::fresh_vector_database_url)
        .await
        .expect("database");
    let store = PostgresStore::connect(&url).await.expect("connects");
    Backend {
        store: Arc::new(store),
        _dir: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn postgres_without_pgvector_keeps_vectors_and_names_the_fix() {
    let b = backends::postgres().await;
    let store = b.store.as_ref();
    let s = session(store, "ns-a").await;
    let stored = store
        .put_memory_vectors(&[vector(&s, "", "m1", "x", &[1.0, 0.0])])
        .await
        .expect("stores without the extension");
    assert_eq!(stored, 1);
    match store
        .search_memory(&query("ns-a", "", &[1.0, 0.0], 5))
        .await
        .expect("answers")
    {
        VectorSearch::Unavailable(why) => {
            assert!(why.contains("pgvector"), "{why}");
            assert!(why.contains("CREATE EXTENSION vector"), "{why}");
        }
        VectorSearch::Hits(h) => panic!("this server has no pgvector, yet found {h:?}"),
    }
}
