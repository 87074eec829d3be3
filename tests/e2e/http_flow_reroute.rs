//! Drifting client-hosted chats over HTTP against the real `hecate serve`, with
//! the shop example flow (two conversations with goal signals and a fallback):
//! an off-track chat re-routed by a goal signal, one that matches nothing moved
//! to the fallback, a chat in the fallback moved out by a goal signal, each move
//! in the route history; and flow files with bad re-routing refused at load.

use crate::support::common::Home;
use crate::support::http::{Api, serve};
use serde_json::{Value, json};

const SHOP_FLOW: &str = include_str!("../../docs/examples/flows/shop.toml");

fn ok(a: crate::support::http::Answer) -> Value {
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["data"].clone()
}

/// `sendChatMessage`.
async fn send(api: &Api, chat: &str, text: &str) -> Value {
    ok(api
        .post(
            &format!("/hecate/v1/chats/{chat}/messages"),
            json!({"userMessage": text}),
        )
        .await)
}

/// `processChatResponse`.
async fn process(api: &Api, chat: &str, payload: Value) -> Value {
    ok(api
        .post(&format!("/hecate/v1/chats/{chat}/responses"), payload)
        .await)
}

fn system(turn: &Value) -> &str {
    turn["systemMessage"].as_str().expect("systemMessage")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drifting_chats_follow_goal_signals_and_fall_back_with_every_move_in_the_route() {
    let home = Home::empty();
    let flows = home.path("flows");
    std::fs::create_dir_all(&flows).expect("flows dir");
    std::fs::write(flows.join("shop.toml"), SHOP_FLOW).expect("flow");
    home.write_config("");
    let served = serve(&home);
    let api = Api::new(&served);

    let catalog = ok(api.get("/hecate/v1/flows").await);
    let help = &catalog["agents"][0]["conversations"][2];
    assert_eq!(
        (&help["name"], &help["is_fallback"]),
        (&json!("help"), &json!(true)),
        "{catalog}"
    );
    assert_eq!(
        catalog["agents"][0]["conversations"][1]["goal_signals"],
        json!(["refund", "money back"])
    );

    let started = ok(api
        .post("/hecate/v1/chats", json!({"agentId": "shop"}))
        .await);
    let chat = started["chatId"].as_str().expect("chatId").to_string();
    assert_eq!(
        (&started["conversationName"], &started["stageName"]),
        (&json!("orders"), &json!("number"))
    );
    process(
        &api,
        &chat,
        json!({"message": "Hi! What's your order number?"}),
    )
    .await;

    // On track, a goal signal of another conversation moves nothing.
    let stay = send(&api, &chat, "I might want a refund later").await;
    assert!(stay["reroute"].is_null(), "{stay}");
    assert_eq!(stay["conversationName"], "orders");

    // Off track: the next message follows the goal signal it matches.
    let drift = process(
        &api,
        &chat,
        json!({"message": "Sure, we can talk.", "onTrack": false, "offTrackReason": "small talk"}),
    )
    .await;
    assert_eq!(drift["onTrack"], false);
    let moved = send(&api, &chat, "Actually, can I get my MONEY back?").await;
    assert_eq!(
        moved["reroute"],
        json!({"fromConversation": "orders", "fromStage": "number",
               "conversationHandoff": "refunds", "reason": "goal_signal",
               "goalSignal": "money back"}),
        "{moved}"
    );
    assert_eq!(
        (&moved["conversationName"], &moved["stageName"]),
        (&json!("refunds"), &json!("reason"))
    );
    assert!(system(&moved).contains("Current stage: reason"), "{moved}");
    assert!(
        !system(&moved).contains("drifted off track"),
        "a move puts the chat back on track: {moved}"
    );
    assert!(
        system(&moved).contains("orders/number -> refunds/reason (goal signal \"money back\")"),
        "the model sees the route: {moved}"
    );
    assert_eq!(
        moved["tools"][0]["function"]["parameters"]["properties"]["data"]["properties"]["reason"]["type"],
        "string"
    );

    // Off track again, matching nothing: to the fallback conversation.
    process(
        &api,
        &chat,
        json!({"message": "Why the refund?", "onTrack": false, "offTrackReason": "weather"}),
    )
    .await;
    let fell = send(&api, &chat, "lovely weather today").await;
    assert_eq!(fell["reroute"]["reason"], "fallback", "{fell}");
    assert!(fell["reroute"]["goalSignal"].is_null());
    assert_eq!(fell["reroute"]["fromConversation"], "refunds");
    assert_eq!(
        (&fell["conversationName"], &fell["stageName"]),
        (&json!("help"), &json!("triage"))
    );
    assert!(system(&fell).contains("Conversation: help"), "{fell}");

    // In the fallback and off track, a message that matches nothing stays, with
    // the steer-back note.
    process(
        &api,
        &chat,
        json!({"message": "I can track orders or take refunds.", "onTrack": false, "offTrackReason": "rambling"}),
    )
    .await;
    let idle = send(&api, &chat, "hmm, not sure").await;
    assert!(idle["reroute"].is_null(), "{idle}");
    assert_eq!(idle["conversationName"], "help");
    assert!(
        system(&idle).contains("drifted off track (rambling)"),
        "{idle}"
    );

    // In the fallback, on track: a goal signal moves the chat out.
    process(&api, &chat, json!({"message": "Orders or refunds?"})).await;
    let out = send(&api, &chat, "Where is my order?!").await;
    assert_eq!(out["reroute"]["reason"], "goal_signal", "{out}");
    assert_eq!(out["reroute"]["goalSignal"], "where is my order");
    assert_eq!(out["reroute"]["fromConversation"], "help");
    assert_eq!(
        (&out["conversationName"], &out["stageName"]),
        (&json!("orders"), &json!("number"))
    );

    // The chat goes on from there: its edges still route and end it.
    let done = process(
        &api,
        &chat,
        json!({"message": "It's on its way. Bye!", "data": {"order": "A-17"}}),
    )
    .await;
    assert_eq!(done["chatEnded"], true, "{done}");

    let stored = ok(api.get(&format!("/hecate/v1/chats/{chat}")).await);
    assert_eq!(
        stored["route"],
        json!([
            "orders/number",
            "refunds/reason (goal signal \"money back\")",
            "help/triage (fallback)",
            "orders/number (goal signal \"where is my order\")",
            "orders/status"
        ]),
        "{stored}"
    );
    let stages: Vec<(&str, &str)> = stored["messages"]
        .as_array()
        .expect("messages")
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| {
            (
                m["content"].as_str().expect("content"),
                m["stage"].as_str().expect("stage"),
            )
        })
        .collect();
    assert_eq!(
        stages,
        [
            ("I might want a refund later", "number"),
            ("Actually, can I get my MONEY back?", "reason"),
            ("lovely weather today", "triage"),
            ("hmm, not sure", "triage"),
            ("Where is my order?!", "number"),
        ],
        "a message that moved the chat is stored in the stage it moved to"
    );
}

/// One broken variant of the shop flow per re-routing rule, each refused at
/// load with its file, field and reason, and its agent answering
/// `chat.flow_invalid` with the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flow_files_with_bad_rerouting_are_refused_at_load_naming_file_and_field() {
    let broken = [
        (
            "ghostly",
            SHOP_FLOW.replace("fallback = \"help\"", "fallback = \"helpdesk\""),
            "fallback",
            "no conversation is named `helpdesk`",
        ),
        (
            "unmarked",
            SHOP_FLOW.replace("fallback = \"help\"", "fallback = \"orders\""),
            "fallback",
            "conversation `orders` is not a fallback conversation",
        ),
        (
            "endless",
            SHOP_FLOW.replace("name = \"triage\"\n", "name = \"triage\"\nend = true\n"),
            "conversations[help].start",
            "a fallback conversation cannot start in an end stage (`triage`)",
        ),
        (
            "blank",
            SHOP_FLOW.replace("\"delivery\"]", "\"delivery\", \"  \"]"),
            "conversations[orders].goal_signals[3]",
            "has no words",
        ),
        (
            "twice",
            SHOP_FLOW.replace("\"delivery\"]", "\"delivery\", \"TRACK\"]"),
            "conversations[orders].goal_signals[3]",
            "duplicate goal signal \"TRACK\"",
        ),
        (
            "shared",
            SHOP_FLOW.replace("\"money back\"]", "\"money back\", \"delivery\"]"),
            "conversations[refunds].goal_signals[2]",
            "also a signal of conversation `orders`",
        ),
    ];
    let home = Home::empty();
    let flows = home.path("flows");
    std::fs::create_dir_all(&flows).expect("flows dir");
    for (agent, text, _, _) in &broken {
        assert_ne!(text, SHOP_FLOW, "{agent}: the variant changes the file");
        std::fs::write(flows.join(format!("{agent}.toml")), text).expect("flow");
    }
    home.write_config("");
    let served = serve(&home);
    let api = Api::new(&served);

    let catalog = ok(api.get("/hecate/v1/flows").await);
    assert_eq!(catalog["agents"], json!([]), "{catalog}");
    for (agent, _, field, message) in &broken {
        let error = catalog["errors"]
            .as_array()
            .expect("errors")
            .iter()
            .find(|e| e["agent_id"] == *agent)
            .unwrap_or_else(|| panic!("{agent} is not among the load errors: {catalog}"));
        assert_eq!(error["field"], *field, "{agent}: {error}");
        assert!(
            error["message"]
                .as_str()
                .is_some_and(|m| m.contains(message)),
            "{agent}: {error}"
        );
        assert!(
            error["file"]
                .as_str()
                .is_some_and(|f| f.ends_with(&format!("{agent}.toml"))),
            "{agent}: {error}"
        );
        let refused = api
            .post("/hecate/v1/chats", json!({"agentId": agent}))
            .await;
        assert_eq!(
            (refused.status, refused.error_type()),
            (422, "chat.flow_invalid"),
            "{agent}: {}",
            refused.body
        );
        assert_eq!(refused.body["error"]["field"], *field, "{agent}");
        let text = refused.body["error"]["message"].as_str().expect("message");
        assert!(
            text.contains(&format!("{agent}.toml")) && text.contains(message),
            "{agent}: {text}"
        );
    }
}
