//! The stored choices of sessions' options on every backend: one row per
//! (session, scope, kind, name), listed per scope in the order they were last
//! set (a choice set again moves last), booleans and strings kept as they
//! were, a choice for a session that does not exist refused as not found, a
//! delete answering whether there was a row, and every row going with its
//! session.

use super::Backend;
use hecate::domain::ErrorType;
use hecate::domain::ids::SessionId;
use hecate::domain::session::{RuntimeKind, Session};
use hecate::domain::time::now_rfc3339;
use hecate::store::{ChoiceKind, SessionChoice, Store};
use serde_json::{Value, json};

fn choice(s: &SessionId, scope: &str, kind: ChoiceKind, name: &str, value: Value) -> SessionChoice {
    SessionChoice {
        session_id: s.clone(),
        scope: scope.into(),
        kind,
        name: name.into(),
        value,
        chosen_at: now_rfc3339(),
    }
}

/// The (kind, name, value) of the choices of `s` under `scope`, in order.
async fn listed(store: &dyn Store, s: &SessionId, scope: &str) -> Vec<(ChoiceKind, String, Value)> {
    store
        .list_session_choices(s, scope)
        .await
        .expect("lists")
        .into_iter()
        .map(|c| (c.kind, c.name, c.value))
        .collect()
}

pub async fn session_choices_keep_their_order_per_scope_and_go_with_their_session(b: Backend) {
    let store = b.store.as_ref();
    let s = Session::new_idle(
        "default",
        SessionId::generate(),
        "t",
        RuntimeKind::ExternalAgent,
    );
    store.create_session(&s).await.expect("creates");
    let agent = "agent:fixture";
    assert!(listed(store, &s.id, agent).await.is_empty());

    for c in [
        choice(&s.id, agent, ChoiceKind::Option, "model", json!("large")),
        choice(&s.id, agent, ChoiceKind::Mode, "", json!("auto")),
        choice(&s.id, agent, ChoiceKind::Option, "fast", json!(true)),
        // An option called `mode` is not the mode.
        choice(&s.id, agent, ChoiceKind::Option, "mode", json!("ask")),
        choice(
            &s.id,
            "hecate",
            ChoiceKind::Option,
            "thought_level",
            json!("high"),
        ),
    ] {
        store.put_session_choice(&c).await.expect("puts");
    }
    assert_eq!(
        listed(store, &s.id, agent).await,
        [
            (ChoiceKind::Option, "model".into(), json!("large")),
            (ChoiceKind::Mode, String::new(), json!("auto")),
            (ChoiceKind::Option, "fast".into(), json!(true)),
            (ChoiceKind::Option, "mode".into(), json!("ask")),
        ]
    );
    store
        .put_session_choice(&choice(
            &s.id,
            agent,
            ChoiceKind::Option,
            "model",
            json!("small"),
        ))
        .await
        .expect("replaces");
    assert_eq!(
        listed(store, &s.id, agent).await,
        [
            (ChoiceKind::Mode, String::new(), json!("auto")),
            (ChoiceKind::Option, "fast".into(), json!(true)),
            (ChoiceKind::Option, "mode".into(), json!("ask")),
            (ChoiceKind::Option, "model".into(), json!("small")),
        ],
        "a choice set again replaces its value and moves last"
    );
    let stored = store
        .list_session_choices(&s.id, "hecate")
        .await
        .expect("lists");
    assert_eq!(stored.len(), 1);
    assert_eq!(
        (stored[0].session_id.as_str(), stored[0].scope.as_str()),
        (s.id.as_str(), "hecate")
    );
    assert!(!stored[0].chosen_at.is_empty());
    assert!(listed(store, &s.id, "agent:other").await.is_empty());

    let e = store
        .put_session_choice(&choice(
            &SessionId::generate(),
            agent,
            ChoiceKind::Mode,
            "",
            json!("auto"),
        ))
        .await
        .expect_err("no such session");
    assert_eq!(e.error_type, ErrorType::NotFound, "{e}");

    assert!(
        store
            .delete_session_choice(&s.id, agent, ChoiceKind::Mode, "")
            .await
            .expect("deletes")
    );
    assert!(
        !store
            .delete_session_choice(&s.id, agent, ChoiceKind::Mode, "")
            .await
            .expect("nothing left")
    );
    assert_eq!(
        listed(store, &s.id, agent).await.len(),
        3,
        "the option called mode stays"
    );

    store
        .delete_session("default", &s.id)
        .await
        .expect("deletes the session");
    assert!(listed(store, &s.id, agent).await.is_empty());
    assert!(listed(store, &s.id, "hecate").await.is_empty());
}
