//! What the A2A server keeps, on every backend: a conversation bound once
//! (the first binding wins, per namespace and agent), tasks overwritten only
//! by a newer version and never turned back from a final state, listed newest
//! first with their filters and a bounded page, push notification configs kept
//! in the order registered and replaced in place, and everything going with
//! its session.

use super::Backend;
use hecate::domain::ErrorType;
use hecate::domain::a2a_task::{A2aContext, A2aPushConfigRow, A2aTaskQuery, A2aTaskRow};
use hecate::domain::ids::SessionId;
use hecate::domain::session::{RuntimeKind, Session};
use hecate::domain::time::now_rfc3339;
use hecate::store::Store;
use serde_json::json;

fn context(ns: &str, agent: &str, ctx: &str, s: &SessionId) -> A2aContext {
    A2aContext {
        namespace: ns.into(),
        agent: agent.into(),
        context_id: ctx.into(),
        session_id: s.clone(),
        created_at: now_rfc3339(),
    }
}

fn task(ns: &str, id: &str, ctx: &str, s: &SessionId, state: &str, version: i64) -> A2aTaskRow {
    A2aTaskRow {
        namespace: ns.into(),
        id: id.into(),
        agent: "hecate".into(),
        context_id: ctx.into(),
        session_id: s.clone(),
        state: state.into(),
        terminal: state == "TASK_STATE_COMPLETED",
        record: json!({"answer": format!("{id} v{version}")}),
        version,
        created_at: now_rfc3339(),
        updated_at: now_rfc3339(),
    }
}

fn config(ns: &str, task: &str, id: &str, url: &str) -> A2aPushConfigRow {
    A2aPushConfigRow {
        namespace: ns.into(),
        task_id: task.into(),
        config_id: id.into(),
        config: json!({"id": id, "taskId": task, "url": url, "token": "tok"}),
        created_at: now_rfc3339(),
    }
}

fn query(ctx: Option<&str>, state: Option<&str>, offset: usize, limit: usize) -> A2aTaskQuery {
    A2aTaskQuery {
        namespace: "default".into(),
        agent: "hecate".into(),
        context_id: ctx.map(Into::into),
        state: state.map(Into::into),
        offset,
        limit,
    }
}

async fn ids(store: &dyn Store, q: A2aTaskQuery) -> (Vec<String>, u64) {
    let page = store.list_a2a_tasks(&q).await.expect("lists");
    (page.tasks.into_iter().map(|t| t.id).collect(), page.total)
}

pub async fn a2a_contexts_tasks_and_push_configs_are_kept_and_go_with_their_session(b: Backend) {
    let store = b.store.as_ref();
    let s = Session::new_idle("default", SessionId::generate(), "t", RuntimeKind::Agent);
    let other = Session::new_idle("default", SessionId::generate(), "t", RuntimeKind::Agent);
    store.create_session(&s).await.expect("creates");
    store.create_session(&other).await.expect("creates");

    // Contexts: the first binding wins; per agent and namespace.
    assert_eq!(
        store
            .get_a2a_context("default", "hecate", "ctx")
            .await
            .expect("reads"),
        None
    );
    let bound = store
        .bind_a2a_context(&context("default", "hecate", "ctx", &s.id))
        .await
        .expect("binds");
    assert_eq!(bound, s.id);
    let again = store
        .bind_a2a_context(&context("default", "hecate", "ctx", &other.id))
        .await
        .expect("binds");
    assert_eq!(again, s.id, "the first binding wins");
    assert_eq!(
        store
            .get_a2a_context("default", "hecate", "ctx")
            .await
            .expect("reads"),
        Some(s.id.clone())
    );
    assert_eq!(
        store
            .get_a2a_context("default", "agent:x", "ctx")
            .await
            .expect("reads"),
        None
    );
    let missing = store
        .bind_a2a_context(&context("default", "hecate", "c2", &SessionId::generate()))
        .await
        .expect_err("no such session");
    assert_eq!(missing.error_type, ErrorType::NotFound, "{missing}");
    let foreign = store
        .bind_a2a_context(&context("elsewhere", "hecate", "c3", &s.id))
        .await
        .expect_err("another namespace's session");
    assert_eq!(foreign.error_type, ErrorType::NotFound, "{foreign}");

    // Tasks: newer versions overwrite, older ones and un-ending ones do not.
    store
        .put_a2a_task(&task(
            "default",
            "t1",
            "ctx",
            &s.id,
            "TASK_STATE_WORKING",
            1,
        ))
        .await
        .expect("puts");
    let created = store
        .get_a2a_task("default", "t1")
        .await
        .expect("reads")
        .expect("stored")
        .created_at;
    store
        .put_a2a_task(&task(
            "default",
            "t1",
            "ctx",
            &s.id,
            "TASK_STATE_COMPLETED",
            3,
        ))
        .await
        .expect("puts");
    store
        .put_a2a_task(&task(
            "default",
            "t1",
            "ctx",
            &s.id,
            "TASK_STATE_INPUT_REQUIRED",
            2,
        ))
        .await
        .expect("an older version is left out");
    store
        .put_a2a_task(&task(
            "default",
            "t1",
            "ctx",
            &s.id,
            "TASK_STATE_WORKING",
            9,
        ))
        .await
        .expect("a final state is not turned back");
    let t1 = store
        .get_a2a_task("default", "t1")
        .await
        .expect("reads")
        .expect("stored");
    assert_eq!(t1.state, "TASK_STATE_COMPLETED");
    assert!(t1.terminal);
    assert_eq!(t1.version, 3);
    assert_eq!(t1.record, json!({"answer": "t1 v3"}));
    assert_eq!(t1.created_at, created, "the creation time stays");
    assert_eq!(
        store.get_a2a_task("other", "t1").await.expect("reads"),
        None
    );
    let orphan = store
        .put_a2a_task(&task(
            "default",
            "t0",
            "ctx",
            &SessionId::generate(),
            "TASK_STATE_WORKING",
            1,
        ))
        .await
        .expect_err("no such session");
    assert_eq!(orphan.error_type, ErrorType::NotFound, "{orphan}");

    // Lists: newest first, filtered, paged, counted.
    for (id, ctx, sid) in [("t2", "ctx", &s.id), ("t3", "other", &other.id)] {
        tokio::time::sleep(std::time::Duration::from_millis(3)).await;
        store
            .put_a2a_task(&task("default", id, ctx, sid, "TASK_STATE_WORKING", 1))
            .await
            .expect("puts");
    }
    assert_eq!(
        ids(store, query(None, None, 0, 10)).await,
        (vec!["t3".into(), "t2".into(), "t1".into()], 3)
    );
    assert_eq!(
        ids(store, query(None, None, 1, 1)).await,
        (vec!["t2".into()], 3)
    );
    assert_eq!(
        ids(store, query(Some("ctx"), None, 0, 10)).await,
        (vec!["t2".into(), "t1".into()], 2)
    );
    assert_eq!(
        ids(store, query(None, Some("TASK_STATE_COMPLETED"), 0, 10)).await,
        (vec!["t1".into()], 1)
    );
    let mut other_agent = query(None, None, 0, 10);
    other_agent.agent = "agent:x".into();
    assert_eq!(ids(store, other_agent).await, (Vec::new(), 0));

    // Push configs: in the order registered, replaced in place, deleted once.
    for c in [
        config("default", "t1", "b", "http://127.0.0.1:1/b"),
        config("default", "t1", "a", "http://127.0.0.1:1/a"),
        config("default", "t1", "b", "http://127.0.0.1:1/b2"),
    ] {
        store.put_a2a_push_config(&c).await.expect("puts");
    }
    let listed = store
        .list_a2a_push_configs("default", "t1")
        .await
        .expect("lists");
    let got: Vec<(String, serde_json::Value)> = listed
        .into_iter()
        .map(|c| (c.config_id, c.config["url"].clone()))
        .collect();
    assert_eq!(
        got,
        [
            ("b".to_string(), json!("http://127.0.0.1:1/b2")),
            ("a".to_string(), json!("http://127.0.0.1:1/a")),
        ]
    );
    assert!(
        store
            .list_a2a_push_configs("other", "t1")
            .await
            .expect("lists")
            .is_empty()
    );
    let unknown = store
        .put_a2a_push_config(&config("default", "nope", "a", "http://127.0.0.1:1/a"))
        .await
        .expect_err("no such task");
    assert_eq!(unknown.error_type, ErrorType::NotFound, "{unknown}");
    assert!(
        store
            .delete_a2a_push_config("default", "t1", "a")
            .await
            .expect("deletes")
    );
    assert!(
        !store
            .delete_a2a_push_config("default", "t1", "a")
            .await
            .expect("deletes")
    );

    // Everything goes with its session.
    store
        .delete_session("default", &s.id)
        .await
        .expect("deletes");
    assert_eq!(
        store
            .get_a2a_context("default", "hecate", "ctx")
            .await
            .expect("reads"),
        None
    );
    assert_eq!(
        store.get_a2a_task("default", "t1").await.expect("reads"),
        None
    );
    assert!(
        store
            .list_a2a_push_configs("default", "t1")
            .await
            .expect("lists")
            .is_empty()
    );
    assert_eq!(
        ids(store, query(None, None, 0, 10)).await,
        (vec!["t3".into()], 1)
    );
}
