//! Client-hosted chats over HTTP against the real `hecate serve` with a flow file
//! in a temporary config dir: a whole conversation (start, welcome turn, sends,
//! `respond` payloads that extract data and move stages, a conversation hand-off,
//! a summary request after 20 messages, the end), identities, and bad input that
//! stores nothing.

use crate::support::common::Home;
use crate::support::http::{Answer, Api, serve};
use serde_json::{Value, json};

const SUPPORT_FLOW: &str = include_str!("../../docs/examples/flows/support.toml");

/// A home with `flows/support.toml`, a broken `flows/loopy.toml`, an app `shop`
/// and a user `ann`.
fn flow_home() -> Home {
    let mut home = Home::empty();
    let flows = home.path("flows");
    std::fs::create_dir_all(&flows).expect("flows dir");
    std::fs::write(flows.join("support.toml"), SUPPORT_FLOW).expect("flow");
    std::fs::write(
        flows.join("loopy.toml"),
        "welcome = \"w\"\n[[conversations]]\nname = \"w\"\n[[conversations.stages]]\nname = \"a\"\n\
         [[conversations.stages]]\nname = \"b\"\n[[conversations.edges]]\nfrom = \"a\"\nto = \"b\"\n\
         [[conversations.edges]]\nfrom = \"b\"\nto = \"a\"\n",
    )
    .expect("broken flow");
    home.write_config(
        "[chat.apps.shop]\nkey = \"$SHOP_KEY\"\n\n[chat.users.ann]\ntoken = \"ann-token\"\n",
    );
    home.set("SHOP_KEY", "shop-secret");
    home
}

async fn post_as(api: &Api, header: Option<(&str, &str)>, path: &str, body: Value) -> Answer {
    let mut rb = api.request(reqwest::Method::POST, path).json(&body);
    if let Some((k, v)) = header {
        rb = rb.header(k, v);
    }
    api.send(rb).await
}

async fn get_as(api: &Api, header: Option<(&str, &str)>, path: &str) -> Answer {
    let mut rb = api.request(reqwest::Method::GET, path);
    if let Some((k, v)) = header {
        rb = rb.header(k, v);
    }
    api.send(rb).await
}

fn ok(a: Answer) -> Value {
    assert_eq!(a.status, 200, "{}", a.body);
    a.body["data"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_client_hosted_conversation_extracts_routes_summarizes_and_ends() {
    let home = flow_home();
    let served = serve(&home);
    let api = Api::new(&served);

    let started = ok(api
        .post("/hecate/v1/chats", json!({"agentId": "support"}))
        .await);
    let chat = started["chatId"].as_str().expect("chatId").to_string();
    assert_eq!(started["conversationName"], "welcome");
    assert_eq!(started["stageName"], "greet");
    let system = started["systemMessage"].as_str().expect("system");
    assert!(system.contains("You are Ada"), "{system}");
    assert!(
        system.contains("Greet the user and ask for their name."),
        "{system}"
    );
    let respond = &started["tools"][0]["function"];
    assert_eq!(respond["name"], "respond");
    assert_eq!(
        respond["parameters"]["properties"]["data"]["properties"]["name"]["type"],
        "string"
    );

    // The welcome turn: no user message yet.
    let welcome = ok(api
        .post(
            &format!("/hecate/v1/chats/{chat}/responses"),
            json!({"message": "Hi! I'm Ada. What's your name?"}),
        )
        .await);
    assert_eq!(welcome["displayMessage"], "Hi! I'm Ada. What's your name?");
    assert_eq!(welcome["stageTransitioned"], false);
    assert_eq!(welcome["chatEnded"], false);

    let turn = ok(api
        .post(
            &format!("/hecate/v1/chats/{chat}/messages"),
            json!({"userMessage": "I'm Bo"}),
        )
        .await);
    assert_eq!(
        turn["messageHistory"],
        json!([{"role": "assistant", "content": "Hi! I'm Ada. What's your name?"}])
    );
    assert!(turn["summarizationNeeded"].is_null());
    let moved = ok(api
        .post(
            &format!("/hecate/v1/chats/{chat}/responses"),
            json!({"message": "Nice to meet you, Bo! How old are you?", "data": {"name": "Bo"}, "next_stage": "about"}),
        )
        .await);
    assert_eq!(moved["stageTransitioned"], true);
    assert_eq!(moved["newStageName"], "about");
    assert_eq!(moved["extractedData"], json!({"name": "Bo"}));

    let turn = ok(api
        .post(
            &format!("/hecate/v1/chats/{chat}/messages"),
            json!({"userMessage": "41, and yes please"}),
        )
        .await);
    let system = turn["systemMessage"].as_str().expect("system");
    assert!(system.contains("Current stage: about"), "{system}");
    assert!(system.contains("name: \"Bo\""), "{system}");
    assert_eq!(
        turn["tools"][0]["function"]["parameters"]["properties"]["data"]["properties"]["age"]["type"],
        "integer"
    );

    // A payload of the wrong type is refused naming the field, and stores nothing.
    let before = ok(api.get(&format!("/hecate/v1/chats/{chat}")).await);
    for (payload, field) in [
        (
            json!({"message": "ok", "data": {"age": "forty-one"}}),
            "data.age",
        ),
        (
            json!({"message": "ok", "data": {"age": 41, "plan": "pro"}}),
            "data.plan",
        ),
        (
            json!({"message": "ok", "next_stage": "nowhere"}),
            "next_stage",
        ),
        (json!({"data": {"age": 41}}), "message"),
    ] {
        let bad = api
            .post(
                &format!("/hecate/v1/chats/{chat}/responses"),
                payload.clone(),
            )
            .await;
        assert_eq!(bad.status, 400, "{payload}: {}", bad.body);
        assert_eq!(bad.error_type(), "chat.respond_invalid");
        assert_eq!(bad.body["error"]["field"], field, "{}", bad.body);
    }
    let after = ok(api.get(&format!("/hecate/v1/chats/{chat}")).await);
    assert_eq!(before["messages"], after["messages"]);
    assert_eq!(after["data"], json!({"name": "Bo"}));

    let handed = ok(api
        .post(
            &format!("/hecate/v1/chats/{chat}/responses"),
            json!({"message": "Great. Which plan would you like?", "data": {"age": 41, "newsletter": true}}),
        )
        .await);
    assert_eq!(handed["stageTransitioned"], true);
    assert_eq!(handed["newStageName"], "choose");
    assert_eq!(handed["conversationHandoff"], "plan");
    assert_eq!(
        handed["data"],
        json!({"age": 41, "name": "Bo", "newsletter": true})
    );

    // Chat in the choose stage until 20 messages are stored: only then a summary is asked for.
    let mut count = 5;
    let summary_turn = loop {
        let turn = ok(api
            .post(
                &format!("/hecate/v1/chats/{chat}/messages"),
                json!({"userMessage": format!("question {count}")}),
            )
            .await);
        count += 1;
        if count < 20 {
            assert!(
                turn["summarizationNeeded"].is_null(),
                "asked early at {count}: {turn}"
            );
        } else {
            break turn;
        }
        let stay = ok(api
            .post(&format!("/hecate/v1/chats/{chat}/responses"), json!({"message": format!("answer {count}"), "onTrack": false, "offTrackReason": "chit-chat"}))
            .await);
        count += 1;
        assert_eq!(stay["stageTransitioned"], false);
        assert_eq!(stay["onTrack"], false);
        assert_eq!(stay["offTrackReason"], "chit-chat");
    };
    let needed = &summary_turn["summarizationNeeded"];
    assert_eq!(needed["messageCount"], 20, "{summary_turn}");
    assert!(
        needed["prompt"]
            .as_str()
            .is_some_and(|p| p.contains("Summarize"))
    );
    assert!(
        summary_turn["systemMessage"]
            .as_str()
            .expect("system")
            .contains("drifted off track (chit-chat)")
    );
    let saved = ok(api
        .post(
            &format!("/hecate/v1/chats/{chat}/summary"),
            json!({"summary": "Bo, 41, wants a plan."}),
        )
        .await);
    assert_eq!(saved["saved"], true);
    ok(api
        .post(
            &format!("/hecate/v1/chats/{chat}/responses"),
            json!({"message": "Basic or pro?"}),
        )
        .await);
    let turn = ok(api
        .post(
            &format!("/hecate/v1/chats/{chat}/messages"),
            json!({"userMessage": "Pro, please"}),
        )
        .await);
    assert!(turn["summarizationNeeded"].is_null());
    let history = turn["messageHistory"].as_array().expect("history");
    assert_eq!(history.len(), 2, "{history:?}");
    assert_eq!(history[0]["role"], "system");
    assert!(
        history[0]["content"]
            .as_str()
            .expect("summary")
            .contains("Bo, 41, wants a plan.")
    );
    assert_eq!(history[1]["content"], "Basic or pro?");

    let end = ok(api
        .post(
            &format!("/hecate/v1/chats/{chat}/responses"),
            json!({"message": "Pro it is. Thanks, Bo!", "data": {"plan": "pro"}, "next_stage": "done"}),
        )
        .await);
    assert_eq!(end["stageTransitioned"], true);
    assert_eq!(end["newStageName"], "done");
    assert_eq!(end["chatEnded"], true);
    let closed = api
        .post(
            &format!("/hecate/v1/chats/{chat}/messages"),
            json!({"userMessage": "one more"}),
        )
        .await;
    assert_eq!(closed.status, 409);
    assert_eq!(closed.error_type(), "chat.chat_ended");

    let stored = ok(api.get(&format!("/hecate/v1/chats/{chat}")).await);
    assert_eq!(stored["chatEnded"], true);
    assert_eq!(
        stored["route"],
        json!(["welcome/greet", "welcome/about", "plan/choose", "plan/done"])
    );
    let messages = stored["messages"].as_array().expect("messages");
    assert_eq!(
        messages.len(),
        24,
        "every message is kept, the summary among them"
    );
    for (i, m) in messages.iter().enumerate() {
        assert_eq!(m["sequence"], i as i64 + 1);
    }
    assert_eq!(messages[20]["role"], "summary");
    assert_eq!(stored["data"]["plan"], "pro");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_chats_agents_broken_flows_and_bad_identities_get_stable_errors() {
    let home = flow_home();
    let served = serve(&home);
    let api = Api::new(&served);

    let missing = api
        .post(
            "/hecate/v1/chats/chat_nope/messages",
            json!({"userMessage": "hi"}),
        )
        .await;
    assert_eq!(
        (missing.status, missing.error_type()),
        (404, "chat.chat_not_found")
    );
    assert_eq!(missing.body["error"]["chatId"], "chat_nope");
    let missing = api
        .post(
            "/hecate/v1/chats/chat_nope/responses",
            json!({"message": "hi"}),
        )
        .await;
    assert_eq!(missing.error_type(), "chat.chat_not_found");

    let agent = api
        .post("/hecate/v1/chats", json!({"agentId": "ghost"}))
        .await;
    assert_eq!(
        (agent.status, agent.error_type()),
        (404, "chat.agent_not_found")
    );
    assert_eq!(agent.body["error"]["agentId"], "ghost");

    let broken = api
        .post("/hecate/v1/chats", json!({"agentId": "loopy"}))
        .await;
    assert_eq!(
        (broken.status, broken.error_type()),
        (422, "chat.flow_invalid")
    );
    let message = broken.body["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("loopy.toml") && message.contains("cycle a -> b -> a"),
        "{message}"
    );
    assert_eq!(broken.body["error"]["field"], "conversations[w].stages[a]");

    let conv = api
        .post(
            "/hecate/v1/chats",
            json!({"agentId": "support", "conversationName": "nope"}),
        )
        .await;
    assert_eq!((conv.status, conv.error_type()), (400, "invalid_request"));
    assert_eq!(conv.body["error"]["field"], "conversationName");
    let anon_user = api
        .post(
            "/hecate/v1/chats",
            json!({"agentId": "support", "userId": "u1"}),
        )
        .await;
    assert_eq!(anon_user.body["error"]["field"], "userId");
    let unknown_field = api
        .post(
            "/hecate/v1/chats",
            json!({"agentId": "support", "colour": 1}),
        )
        .await;
    assert_eq!(unknown_field.status, 400);

    let bad_key = post_as(
        &api,
        Some(("x-hecate-app-key", "wrong")),
        "/hecate/v1/chats",
        json!({"agentId": "support"}),
    )
    .await;
    assert_eq!(
        (bad_key.status, bad_key.error_type()),
        (401, "chat.identity_invalid")
    );
    let empty = api
        .post("/hecate/v1/chats", json!({"agentId": "support"}))
        .await;
    let chat = empty.body["data"]["chatId"]
        .as_str()
        .expect("chat")
        .to_string();
    let blank = api
        .post(
            &format!("/hecate/v1/chats/{chat}/messages"),
            json!({"userMessage": "  "}),
        )
        .await;
    assert_eq!(blank.body["error"]["field"], "userMessage");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn app_users_keep_personal_memory_and_chats_stay_with_their_caller() {
    let home = flow_home();
    let served = serve(&home);
    let api = Api::new(&served);
    let app = Some(("x-hecate-app-key", "shop-secret"));

    let first = ok(post_as(
        &api,
        app,
        "/hecate/v1/chats",
        json!({"agentId": "support", "userId": "u1"}),
    )
    .await);
    let chat = first["chatId"].as_str().expect("chat").to_string();
    ok(post_as(
        &api,
        app,
        &format!("/hecate/v1/chats/{chat}/responses"),
        json!({"message": "Name?", "data": {"name": "Uma"}}),
    )
    .await);

    // The same app user remembers; another user of the app and an anonymous chat do not.
    let again = ok(post_as(
        &api,
        app,
        "/hecate/v1/chats",
        json!({"agentId": "support", "userId": "u1"}),
    )
    .await);
    assert!(
        again["systemMessage"]
            .as_str()
            .expect("system")
            .contains("name: \"Uma\"")
    );
    let other = ok(post_as(
        &api,
        app,
        "/hecate/v1/chats",
        json!({"agentId": "support", "userId": "u2"}),
    )
    .await);
    assert!(
        !other["systemMessage"]
            .as_str()
            .expect("system")
            .contains("Uma")
    );
    let anon = ok(api
        .post("/hecate/v1/chats", json!({"agentId": "support"}))
        .await);
    assert!(
        !anon["systemMessage"]
            .as_str()
            .expect("system")
            .contains("Uma")
    );

    // The app's chat is invisible without its key or to a user token.
    for header in [None, Some(("x-hecate-user-token", "ann-token"))] {
        let hidden = get_as(&api, header, &format!("/hecate/v1/chats/{chat}")).await;
        assert_eq!(hidden.error_type(), "chat.chat_not_found", "{header:?}");
    }
    let seen = ok(get_as(&api, app, &format!("/hecate/v1/chats/{chat}")).await);
    assert_eq!(
        (seen["appId"].as_str(), seen["userId"].as_str()),
        (Some("shop"), Some("u1"))
    );

    // A user token (as a bearer token: this server has none of its own) binds the user id.
    let ann = api.clone().with_token("ann-token");
    let mine = ok(ann
        .post("/hecate/v1/chats", json!({"agentId": "support"}))
        .await);
    let ann_chat = mine["chatId"].as_str().expect("chat").to_string();
    let view = ok(ann.get(&format!("/hecate/v1/chats/{ann_chat}")).await);
    assert_eq!(view["userId"], "ann");
    assert!(view["appId"].is_null());
    let impostor = ann
        .post(
            "/hecate/v1/chats",
            json!({"agentId": "support", "userId": "bob"}),
        )
        .await;
    assert_eq!(impostor.body["error"]["field"], "userId");
    let anon_view = api.get(&format!("/hecate/v1/chats/{ann_chat}")).await;
    assert_eq!(anon_view.error_type(), "chat.chat_not_found");
}

/// Operators see the flow catalog as it loaded (the broken file with its field)
/// and an agent's chats, every caller's, newest first.
#[tokio::test]
async fn operators_list_the_flow_catalog_and_an_agents_chats() {
    let home = flow_home();
    let served = serve(&home);
    let api = Api::new(&served);
    let catalog = ok(api.get("/hecate/v1/flows").await);
    assert_eq!(catalog["agents"][0]["id"], "support", "{catalog}");
    assert_eq!(catalog["agents"][0]["welcome"], "welcome");
    assert_eq!(catalog["errors"][0]["agent_id"], "loopy", "{catalog}");
    assert!(
        catalog["errors"][0]["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("loopy.toml"))
    );

    let anonymous = ok(api
        .post("/hecate/v1/chats", json!({"agentId": "support"}))
        .await)["chatId"]
        .as_str()
        .expect("chatId")
        .to_string();
    let shop = ok(post_as(
        &api,
        Some(("x-hecate-app-key", "shop-secret")),
        "/hecate/v1/chats",
        json!({"agentId": "support"}),
    )
    .await)["chatId"]
        .as_str()
        .expect("chatId")
        .to_string();
    let chats = ok(api.get("/hecate/v1/flows/support/chats").await);
    let ids: Vec<&str> = chats
        .as_array()
        .expect("chats")
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert_eq!(ids, [shop.as_str(), anonymous.as_str()], "{chats}");
    assert_eq!(chats[0]["app_id"], "shop");
    assert_eq!(chats[0]["stage"], "greet");
    let one = ok(api.get("/hecate/v1/flows/support/chats?limit=1").await);
    assert_eq!(one.as_array().map(Vec::len), Some(1));

    let unknown = api.get("/hecate/v1/flows/nobody/chats").await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert_eq!(unknown.error_type(), "chat.agent_not_found");
    let broken = ok(api.get("/hecate/v1/flows/loopy/chats").await);
    assert_eq!(
        broken,
        json!([]),
        "a broken agent's old chats stay listable"
    );
    let bad = api.get("/hecate/v1/flows/support/chats?limit=0").await;
    assert_eq!(bad.status, 400, "{}", bad.body);
}

/// A flow's own `summarize_every` sets how often a summary is asked for; one
/// out of bounds keeps the file from loading, named with the field.
#[tokio::test]
async fn a_flow_sets_its_own_summary_interval() {
    let mut home = Home::empty();
    let flows = home.path("flows");
    std::fs::create_dir_all(&flows).expect("flows dir");
    let brief = format!("summarize_every = 3\n{SUPPORT_FLOW}");
    std::fs::write(flows.join("brief.toml"), brief).expect("flow");
    std::fs::write(
        flows.join("never.toml"),
        format!("summarize_every = 0\n{SUPPORT_FLOW}"),
    )
    .expect("flow");
    home.set("HECATE_LOG", "warn");
    let served = serve(&home);
    let api = Api::new(&served);
    let started = ok(api
        .post("/hecate/v1/chats", json!({"agentId": "brief"}))
        .await);
    let chat = started["chatId"].as_str().expect("chatId").to_string();
    let mut asked = None;
    for i in 0..3 {
        let turn = ok(api
            .post(
                &format!("/hecate/v1/chats/{chat}/messages"),
                json!({"userMessage": format!("hello {i}")}),
            )
            .await);
        if !turn["summarizationNeeded"].is_null() {
            asked = Some(turn["summarizationNeeded"]["messageCount"].clone());
            break;
        }
        ok(api
            .post(
                &format!("/hecate/v1/chats/{chat}/responses"),
                json!({"message": format!("answer {i}")}),
            )
            .await);
    }
    assert_eq!(
        asked,
        Some(json!(3)),
        "asked once three messages were stored"
    );
    let catalog = ok(api.get("/hecate/v1/flows").await);
    let errors = catalog["errors"].as_array().expect("errors");
    assert!(
        errors
            .iter()
            .any(|e| e["agent_id"] == "never" && e["field"] == "summarize_every"),
        "{catalog}"
    );
}
