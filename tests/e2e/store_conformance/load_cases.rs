//! Message loading by `LoadOptions` and the working-memory limits, on every
//! backend: a role filter keeps only its roles on either side of a cursor and
//! within the limit, never another session's; a `summary_buffer` without a
//! summary loads at most its `max_messages`, and from its newest summary on
//! once it has one.

use super::Backend;
use super::cases::snap;
use hecate::domain::ids::SessionId;
use hecate::domain::message::{Message, NewMessage, Role};
use hecate::domain::session::{RuntimeKind, Session};
use hecate::store::history::HistoryStrategy;
use hecate::store::{LoadOptions, Store};

async fn session_with(store: &dyn Store, messages: Vec<NewMessage>) -> Session {
    let s = Session::new_idle("default", SessionId::generate(), "t", RuntimeKind::Model);
    store.create_session(&s).await.expect("creates");
    if !messages.is_empty() {
        store
            .append_exchange(&s.id, messages, None)
            .await
            .expect("appends");
    }
    s
}

fn seqs(ms: &[Message]) -> Vec<i64> {
    ms.iter().map(|m| m.sequence).collect()
}

pub async fn loading_by_role_keeps_only_those_roles_on_either_side_of_a_cursor(b: Backend) {
    let store = b.store.as_ref();
    let roles = [
        Role::User,
        Role::Assistant,
        Role::Tool,
        Role::Assistant,
        Role::User,
        Role::Assistant,
        Role::System,
    ];
    let messages = roles
        .iter()
        .enumerate()
        .map(|(i, r)| NewMessage::text(*r, format!("m{i}"), snap()))
        .collect();
    let s = session_with(store, messages).await;
    let other = session_with(
        store,
        vec![NewMessage::text(Role::Assistant, "elsewhere", snap())],
    )
    .await;
    let load = async |o: LoadOptions| seqs(&store.load_messages(&s.id, &o).await.expect("loads"));
    let answers = vec![Role::Assistant];
    let asks = vec![Role::User, Role::Tool];

    assert_eq!(
        load(LoadOptions::before(None, 10).with_roles(answers.clone())).await,
        [1, 3, 5]
    );
    assert_eq!(
        load(LoadOptions::before(None, 2).with_roles(answers.clone())).await,
        [3, 5],
        "the newest that match, in order"
    );
    assert_eq!(
        load(LoadOptions::before(Some(3), 10).with_roles(answers.clone())).await,
        [1]
    );
    assert_eq!(
        load(LoadOptions::after(None, 2).with_roles(asks.clone())).await,
        [0, 2],
        "the oldest that match"
    );
    assert_eq!(
        load(LoadOptions::after(Some(2), usize::MAX).with_roles(asks.clone())).await,
        [4]
    );
    assert_eq!(
        load(LoadOptions::after(None, 100).with_roles(vec![Role::System])).await,
        [6]
    );
    assert_eq!(
        load(LoadOptions::after(None, 100)).await,
        (0..7).collect::<Vec<_>>(),
        "no roles: every role"
    );
    // The plain reads are the same loads without roles.
    assert_eq!(
        seqs(
            &store
                .list_messages(&s.id, Some(4), 10)
                .await
                .expect("after")
        ),
        [5, 6]
    );
    assert_eq!(
        seqs(
            &store
                .list_messages_before(&s.id, Some(2), 10)
                .await
                .expect("before")
        ),
        [0, 1]
    );
    let got = store
        .load_messages(&s.id, &LoadOptions::after(None, 10).with_roles(answers))
        .await
        .expect("loads");
    assert!(got.iter().all(|m| m.role == Role::Assistant), "{got:?}");
    assert!(
        got.iter().all(|m| m.session_id == s.id),
        "never another session's: {got:?}"
    );
    let theirs = store
        .load_messages(
            &other.id,
            &LoadOptions::before(None, 10).with_roles(vec![Role::User]),
        )
        .await
        .expect("loads");
    assert!(theirs.is_empty(), "{theirs:?}");
}

pub async fn a_summary_buffer_loads_at_most_max_messages_before_its_first_summary(b: Backend) {
    let store = b.store.as_ref();
    let batch = (0..30)
        .map(|i| NewMessage::text(Role::User, format!("m{i}"), snap()))
        .collect();
    let s = session_with(store, batch).await;
    let strategy = HistoryStrategy::SummaryBuffer {
        summarize_every: 4,
        max_messages: 7,
    };
    let once = store.load_history(&s.id, strategy).await.expect("loads");
    assert_eq!(seqs(&once), (23..30).collect::<Vec<_>>());
    assert_eq!(strategy.load(store, &s.id).await.expect("loads"), once);
    let default = store
        .load_history(&s.id, HistoryStrategy::summary_buffer())
        .await
        .expect("loads");
    assert_eq!(default.len(), 30, "the default limit (100) holds all 30");

    // A summary, then more than max_messages after it: all of them load.
    let mut summary = NewMessage::text(Role::System, "Summary: so far", snap());
    summary.is_summary = true;
    let mut after = vec![summary];
    after.extend((0..10).map(|i| NewMessage::text(Role::User, format!("n{i}"), snap())));
    store
        .append_exchange(&s.id, after, None)
        .await
        .expect("appends");
    let once = store.load_history(&s.id, strategy).await.expect("loads");
    assert_eq!(seqs(&once), (30..41).collect::<Vec<_>>());
    assert_eq!(strategy.load(store, &s.id).await.expect("loads"), once);
}
