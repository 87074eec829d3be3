//! The client-hosted chat cases of the store suite: a turn's writes land
//! together or not at all, and nothing crosses a namespace.

use super::Backend;
use hecate::domain::ErrorType;
use hecate::domain::flow::{
    FlowChat, FlowChatWrite, FlowPosition, FlowRole, MemoryOwner, NewFlowChatMessage,
};
use hecate::domain::time::now_rfc3339;
use serde_json::{Map, Value, json};

/// A client-hosted chat `id` of `namespace`, at the start of its flow.
pub(super) fn flow_chat(namespace: &str, id: &str) -> FlowChat {
    let now = now_rfc3339();
    FlowChat {
        namespace: namespace.into(),
        id: id.into(),
        agent_id: "support".into(),
        app_id: "shop".into(),
        user_id: "u1".into(),
        position: FlowPosition {
            conversation: "welcome".into(),
            stage: "greet".into(),
            ended: false,
            on_track: true,
            off_track_reason: None,
            route: vec!["welcome/greet".into()],
        },
        version: 1,
        created_at: now.clone(),
        updated_at: now,
    }
}

fn fields(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("object")
}

fn reply(c: &FlowChat, version: i64, data: Value, stage: &str) -> FlowChatWrite {
    let data = fields(data);
    FlowChatWrite {
        namespace: c.namespace.clone(),
        chat_id: c.id.clone(),
        expected_version: version,
        message: NewFlowChatMessage {
            role: FlowRole::Assistant,
            content: "reply".into(),
            stage: c.position.stage.clone(),
            data: Some(data.clone()),
        },
        memory: Some((c.memory_owner(), data)),
        position: Some(FlowPosition {
            stage: stage.into(),
            route: vec!["welcome/greet".into(), format!("welcome/{stage}")],
            ..c.position.clone()
        }),
    }
}

pub async fn a_flow_chat_turn_writes_message_memory_and_position_together(b: Backend) {
    let s = b.store;
    let c = flow_chat("default", "chat_1");
    s.create_flow_chat(&c).await.expect("create");
    let (after, m1) = s
        .write_flow_chat(reply(&c, 1, json!({"name": "Bo"}), "about"))
        .await
        .expect("write");
    assert_eq!((m1.sequence, after.version), (1, 2));
    assert_eq!(after.position.stage, "about");
    let (_, m2) = s
        .write_flow_chat(reply(&after, 2, json!({"name": "Bea", "age": 4}), "about"))
        .await
        .expect("second");
    assert_eq!(m2.sequence, 2);
    let stored = s.get_flow_chat("default", "chat_1").await.expect("get");
    assert_eq!(stored.version, 3);
    assert_eq!(
        stored.position.route,
        vec!["welcome/greet", "welcome/about"]
    );
    let messages = s
        .list_flow_chat_messages("default", "chat_1")
        .await
        .expect("list");
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1].data.as_ref().expect("data")["age"], 4);
    let memory = s
        .flow_memory("default", &c.memory_owner())
        .await
        .expect("memory");
    assert_eq!(Value::Object(memory), json!({"name": "Bea", "age": 4}));
}

pub async fn a_stale_or_unknown_flow_chat_write_stores_nothing(b: Backend) {
    let s = b.store;
    let c = flow_chat("default", "chat_2");
    s.create_flow_chat(&c).await.expect("create");
    s.write_flow_chat(reply(&c, 1, json!({"name": "Bo"}), "about"))
        .await
        .expect("first");
    let stale = s
        .write_flow_chat(reply(&c, 1, json!({"name": "Zed"}), "done"))
        .await
        .expect_err("stale");
    assert_eq!(stale.error_type, ErrorType::Conflict);
    let stored = s.get_flow_chat("default", "chat_2").await.expect("get");
    assert_eq!(
        (stored.version, stored.position.stage.as_str()),
        (2, "about")
    );
    assert_eq!(
        s.list_flow_chat_messages("default", "chat_2")
            .await
            .expect("list")
            .len(),
        1
    );
    let memory = s
        .flow_memory("default", &c.memory_owner())
        .await
        .expect("memory");
    assert_eq!(memory["name"], "Bo");
    let ghost = s
        .write_flow_chat(reply(
            &flow_chat("default", "chat_ghost"),
            1,
            json!({"name": "X"}),
            "about",
        ))
        .await
        .expect_err("unknown chat");
    assert_eq!(ghost.error_type, ErrorType::NotFound);
    let owner = MemoryOwner {
        app_id: "shop".into(),
        user_id: "u1".into(),
        agent_id: "support".into(),
    };
    assert_eq!(
        s.flow_memory("default", &owner).await.expect("memory")["name"],
        "Bo"
    );
}

pub async fn flow_chats_and_memory_do_not_cross_namespaces(b: Backend) {
    let s = b.store;
    let a = flow_chat("team-a", "chat_same");
    let other = flow_chat("team-b", "chat_same");
    s.create_flow_chat(&a).await.expect("a");
    s.create_flow_chat(&other)
        .await
        .expect("same id in another namespace");
    s.write_flow_chat(reply(&a, 1, json!({"name": "Ann"}), "about"))
        .await
        .expect("write a");
    let b_chat = s.get_flow_chat("team-b", "chat_same").await.expect("b");
    assert_eq!(
        (b_chat.version, b_chat.position.stage.as_str()),
        (1, "greet")
    );
    assert!(
        s.list_flow_chat_messages("team-b", "chat_same")
            .await
            .expect("b list")
            .is_empty()
    );
    assert!(
        s.flow_memory("team-b", &other.memory_owner())
            .await
            .expect("b memory")
            .is_empty()
    );
    let missing = s
        .get_flow_chat("team-c", "chat_same")
        .await
        .expect_err("no chat");
    assert_eq!(missing.error_type, ErrorType::NotFound);
    let cross = s
        .write_flow_chat(reply(
            &flow_chat("team-c", "chat_same"),
            1,
            json!({"name": "X"}),
            "about",
        ))
        .await
        .expect_err("no chat in team-c");
    assert_eq!(cross.error_type, ErrorType::NotFound);
    assert_eq!(
        s.list_flow_chat_messages("team-a", "chat_same")
            .await
            .expect("a list")
            .len(),
        1
    );
}

pub async fn an_agents_flow_chats_list_most_recently_updated_first(b: Backend) {
    let s = b.store;
    let old = FlowChat {
        updated_at: "2026-01-01T00:00:00Z".into(),
        ..flow_chat("team-a", "chat_old")
    };
    let new = FlowChat {
        updated_at: "2026-01-02T00:00:00Z".into(),
        ..flow_chat("team-a", "chat_new")
    };
    let elsewhere = flow_chat("team-b", "chat_b");
    let other_agent = FlowChat {
        agent_id: "sales".into(),
        ..flow_chat("team-a", "chat_sales")
    };
    for c in [&old, &new, &elsewhere, &other_agent] {
        s.create_flow_chat(c).await.expect("chat");
    }
    let ids = |list: Vec<FlowChat>| list.into_iter().map(|c| c.id).collect::<Vec<_>>();
    let listed = s
        .list_flow_chats("team-a", "support", 10)
        .await
        .expect("list");
    assert_eq!(ids(listed), ["chat_new", "chat_old"]);
    let one = s
        .list_flow_chats("team-a", "support", 1)
        .await
        .expect("list");
    assert_eq!(ids(one), ["chat_new"]);
    assert!(
        s.list_flow_chats("team-c", "support", 10)
            .await
            .expect("list")
            .is_empty()
    );
}
