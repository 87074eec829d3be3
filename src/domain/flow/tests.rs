//! Parsing, validation, the respond schema and routing of flow files.

use super::*;
use serde_json::{Map, Value, json};
use std::path::Path;

const SUPPORT: &str = include_str!("../../../docs/examples/flows/support.toml");
const SHOP: &str = include_str!("../../../docs/examples/flows/shop.toml");

fn support() -> AgentFlow {
    parse_flow("support", Path::new("flows/support.toml"), SUPPORT).expect("the example parses")
}

fn error_of(text: &str) -> FlowError {
    parse_flow("bad", Path::new("flows/bad.toml"), text).expect_err("must not load")
}

/// A flow whose one conversation `w` has `stages` in order, the last an end stage.
fn stages_flow(stages: &[&str]) -> String {
    let mut text = String::from("welcome = \"w\"\n[[conversations]]\nname = \"w\"\n");
    for name in stages {
        text.push_str(&format!("[[conversations.stages]]\nname = \"{name}\"\n"));
    }
    text + "end = true\n"
}

/// Conversation `w` with stages `a` and `b`, `b` the end.
fn two_stages() -> String {
    stages_flow(&["a", "b"])
}

#[test]
fn the_example_flow_loads_with_its_conversations_and_start() {
    let f = support();
    assert_eq!(f.id, "support");
    assert_eq!(f.display_name(), "Ada from Support");
    assert_eq!(f.conversations.len(), 2);
    let w = f.conversation("welcome").expect("welcome");
    assert_eq!(w.start_stage().expect("start").name, "greet");
    assert_eq!(
        f.stage("plan", "choose").expect("choose").fields[0].field_type(),
        FieldType::Enum
    );
}

#[test]
fn a_duplicate_stage_name_names_file_and_stage() {
    let e = error_of(&two_stages().replace("name = \"b\"", "name = \"a\""));
    assert_eq!(e.file, Path::new("flows/bad.toml"));
    assert_eq!(e.field, "conversations[w].stages[a].name");
    assert!(e.message.contains("duplicate stage name `a`"), "{e}");
    assert!(
        e.to_string()
            .starts_with("flows/bad.toml: conversations[w].stages[a].name:")
    );
}

#[test]
fn an_edge_to_a_missing_stage_is_named() {
    let e = error_of(&format!(
        "{}[[conversations.edges]]\nfrom = \"a\"\nto = \"zz\"\n",
        two_stages()
    ));
    assert_eq!(e.field, "conversations[w].edges[0].to");
    assert!(e.message.contains("no stage is named `zz`"), "{e}");
    let e = error_of(&format!(
        "{}[[conversations.edges]]\nfrom = \"a\"\nto_conversation = \"nope\"\n",
        two_stages()
    ));
    assert_eq!(e.field, "conversations[w].edges[0].to_conversation");
}

#[test]
fn a_cycle_without_a_way_out_is_refused_with_the_cycle() {
    let text = stages_flow(&["a", "b", "c"])
        + "[[conversations.edges]]\nfrom = \"a\"\nto = \"b\"\n"
        + "[[conversations.edges]]\nfrom = \"b\"\nto = \"a\"\n";
    let e = error_of(&text);
    assert_eq!(e.field, "conversations[w].stages[a]");
    assert!(e.message.contains("cycle a -> b -> a"), "{e}");
    // The same cycle with a way out loads.
    let ok = format!("{text}[[conversations.edges]]\nfrom = \"b\"\nto = \"c\"\n");
    parse_flow("ok", Path::new("ok.toml"), &ok).expect("a cycle with an exit is fine");
}

#[test]
fn a_stage_with_no_path_to_an_end_is_refused() {
    let e = error_of(&two_stages().replace("end = true", ""));
    assert!(e.message.contains("cannot reach an end stage"), "{e}");
}

#[test]
fn an_unknown_field_type_is_named_with_the_choices() {
    let text = two_stages().replace(
        "name = \"a\"\n",
        "name = \"a\"\nfields = [{ name = \"age\", type = \"int\" }]\n",
    );
    let e = error_of(&text);
    assert_eq!(e.field, "conversations[w].stages[a].fields[age].type");
    assert!(e.message.contains("unknown field type `int`"), "{e}");
    assert!(e.message.contains("integer"), "{e}");
}

#[test]
fn unknown_keys_bad_toml_and_a_missing_welcome_are_refused() {
    let e = error_of(&two_stages().replace("end = true", "end = true\ncolour = 1"));
    assert!(e.message.contains("colour"), "{e}");
    assert!(e.field.starts_with("line "), "{e}");
    let e = error_of(&two_stages().replace("welcome = \"w\"", "welcome = \"x\""));
    assert_eq!(e.field, "welcome");
    let e = error_of(&format!(
        "{}[[conversations.edges]]\nfrom = \"a\"\nto = \"b\"\nwhen = {{ filled = [\"ghost\"] }}\n",
        two_stages()
    ));
    assert!(e.message.contains("`ghost` is not a field"), "{e}");
}

#[test]
fn the_respond_schema_lists_the_stage_fields_and_choices() {
    let f = support();
    let conv = f.conversation("welcome").expect("conv");
    let stage = conv.stage("about").expect("about");
    let tools = respond_tools(conv, stage);
    assert_eq!(tools[0]["function"]["name"], "respond");
    let p = &tools[0]["function"]["parameters"];
    assert_eq!(p["required"], json!(["message"]));
    assert_eq!(
        p["properties"]["data"]["properties"]["age"]["type"],
        "integer"
    );
    assert_eq!(
        p["properties"]["data"]["properties"]["newsletter"]["type"],
        "boolean"
    );
    assert_eq!(p["properties"]["next_stage"]["enum"], json!(["about"]));
    let greet = conv.stage("greet").expect("greet");
    assert_eq!(
        respond_tools(conv, greet)[0]["function"]["parameters"]["properties"]["next_stage"]["enum"],
        json!(["greet", "about"])
    );
}

#[test]
fn respond_payloads_are_checked_field_by_field() {
    let f = support();
    let conv = f.conversation("welcome").expect("conv");
    let about = conv.stage("about").expect("about");
    let ok = check_respond(
        conv,
        about,
        &json!({"message": "hi", "data": {"age": 41, "newsletter": false}, "onTrack": true}),
    )
    .expect("valid");
    assert_eq!(ok.data["age"], 41);
    assert!(ok.on_track);
    let cases = [
        (json!({"data": {}}), "message"),
        (json!({"message": 3}), "message"),
        (
            json!({"message": "x", "data": {"age": "forty"}}),
            "data.age",
        ),
        (json!({"message": "x", "data": {"age": 4.5}}), "data.age"),
        (json!({"message": "x", "data": {"name": "Bo"}}), "data.name"),
        (json!({"message": "x", "data": []}), "data"),
        (json!({"message": "x", "next_stage": "done"}), "next_stage"),
        (json!({"message": "x", "mood": "ok"}), "mood"),
        (json!("text"), "(payload)"),
    ];
    for (payload, field) in cases {
        let e = check_respond(conv, about, &payload).expect_err(&payload.to_string());
        assert_eq!(e.field, field, "{payload}: {e}");
    }
    let plan = f.conversation("plan").expect("plan");
    let choose = plan.stage("choose").expect("choose");
    let e = check_respond(
        plan,
        choose,
        &json!({"message": "x", "data": {"plan": "gold"}}),
    )
    .expect_err("not a value");
    assert!(e.message.contains("not one of"), "{e}");
}

fn data(v: Value) -> Map<String, Value> {
    v.as_object().cloned().expect("object")
}

#[test]
fn routing_follows_the_first_edge_whose_condition_holds() {
    let f = support();
    let stay = route(&f, "welcome", "greet", &data(json!({})), None);
    assert!(!stay.transitioned);
    assert_eq!(stay.stage, "greet");
    let on = route(&f, "welcome", "greet", &data(json!({"name": "Bo"})), None);
    assert_eq!((on.stage.as_str(), on.transitioned), ("about", true));
    let empty = route(&f, "welcome", "greet", &data(json!({"name": " "})), None);
    assert!(!empty.transitioned, "a blank value is not filled");
    let hand = route(&f, "welcome", "about", &data(json!({"age": 3})), None);
    assert_eq!(hand.conversation, "plan");
    assert_eq!(hand.stage, "choose");
    assert_eq!(hand.handoff.as_deref(), Some("plan"));
    assert!(!hand.ended);
    let unsuggested = route(&f, "plan", "choose", &data(json!({"plan": "pro"})), None);
    assert!(
        !unsuggested.transitioned,
        "the edge waits for the model's next_stage"
    );
    let end = route(
        &f,
        "plan",
        "choose",
        &data(json!({"plan": "pro"})),
        Some("done"),
    );
    assert_eq!(end.stage, "done");
    assert!(end.ended && end.transitioned);
}

#[test]
fn anonymous_chats_keep_their_data_to_themselves() {
    let mut chat = FlowChat {
        namespace: "default".into(),
        id: "c1".into(),
        agent_id: "support".into(),
        app_id: String::new(),
        user_id: ANONYMOUS_USER.into(),
        position: FlowPosition {
            conversation: "w".into(),
            stage: "a".into(),
            ended: false,
            on_track: true,
            off_track_reason: None,
            route: vec![],
        },
        version: 1,
        created_at: String::new(),
        updated_at: String::new(),
    };
    assert_eq!(chat.memory_owner().user_id, "anonymous:c1");
    chat.app_id = "shop".into();
    chat.user_id = "u7".into();
    assert_eq!(chat.memory_owner().user_id, "u7");
    assert_eq!(chat.memory_owner().app_id, "shop");
}

/// The shop example with `from` replaced by `to`, which must not load.
fn shop_error(from: &str, to: &str) -> FlowError {
    assert!(SHOP.contains(from), "the example has {from:?}");
    error_of(&SHOP.replacen(from, to, 1))
}

#[test]
fn the_shop_example_loads_with_its_fallback_and_goal_signals() {
    let f = parse_flow("shop", Path::new("flows/shop.toml"), SHOP).expect("the example parses");
    let help = f.conversation("help").expect("help");
    assert!(help.is_fallback);
    let orders = f.conversation("orders").expect("orders");
    assert_eq!(
        f.fallback_for(orders).map(|c| c.name.as_str()),
        Some("help")
    );
    assert_eq!(orders.goal_signals[1], "where is my order");
}

#[test]
fn fallback_references_must_name_a_fallback_conversation() {
    let e = shop_error("fallback = \"help\"", "fallback = \"helpdesk\"");
    assert_eq!(e.field, "fallback");
    assert!(
        e.message.contains("no conversation is named `helpdesk`"),
        "{e}"
    );
    let e = shop_error("fallback = \"help\"", "fallback = \"orders\"");
    assert_eq!(e.field, "fallback");
    assert!(e.message.contains("mark it `is_fallback = true`"), "{e}");
    let e = shop_error(
        "name = \"refunds\"\n",
        "name = \"refunds\"\nfallback = \"nowhere\"\n",
    );
    assert_eq!(e.field, "conversations[refunds].fallback");
    assert!(
        e.message.contains("no conversation is named `nowhere`"),
        "{e}"
    );
    let e = shop_error(
        "is_fallback = true",
        "is_fallback = true\nfallback = \"help\"",
    );
    assert_eq!(e.field, "conversations[help].fallback");
    assert!(e.message.contains("takes no `fallback`"), "{e}");
}

#[test]
fn several_fallbacks_need_the_flow_to_name_its_default() {
    let second = "\n[[conversations]]\nname = \"lost\"\nis_fallback = true\n\
                  [[conversations.stages]]\nname = \"again\"\n";
    let text = SHOP.replace("fallback = \"help\"", "") + second;
    let e = error_of(&text);
    assert_eq!(e.field, "fallback");
    assert!(
        e.message
            .contains("2 conversations are marked `is_fallback` (help, lost)"),
        "{e}"
    );
    parse_flow("ok", Path::new("ok.toml"), &(SHOP.to_string() + second))
        .expect("naming the default fallback settles it");
}

#[test]
fn goal_signals_must_have_words_and_be_unique_across_the_flow() {
    let e = shop_error("\"delivery\"]", "\"delivery\", \" ?! \"]");
    assert_eq!(e.field, "conversations[orders].goal_signals[3]");
    assert!(e.message.contains("has no words"), "{e}");
    let e = shop_error("\"delivery\"]", "\"delivery\", \"\"]");
    assert_eq!(e.field, "conversations[orders].goal_signals[3]");
    let e = shop_error("\"delivery\"]", "\"delivery\", \"Where is my ORDER?\"]");
    assert_eq!(e.field, "conversations[orders].goal_signals[3]");
    assert!(e.message.contains("duplicate goal signal"), "{e}");
    let e = shop_error("\"money back\"]", "\"money back\", \"Delivery\"]");
    assert_eq!(e.field, "conversations[refunds].goal_signals[2]");
    assert!(
        e.message.contains("also a signal of conversation `orders`"),
        "{e}"
    );
}

#[test]
fn a_fallback_conversation_takes_no_goal_signals() {
    let e = shop_error(
        "is_fallback = true",
        "is_fallback = true\ngoal_signals = [\"help\"]",
    );
    assert_eq!(e.field, "conversations[help].goal_signals");
    assert!(e.message.contains("never entered by goal signal"), "{e}");
}

#[test]
fn a_reroute_target_must_have_a_start_stage_that_does_not_end_the_chat() {
    let e = shop_error("is_fallback = true", "is_fallback = true\nstart = \"gone\"");
    assert_eq!(e.field, "conversations[help].start");
    assert!(e.message.contains("no stage is named `gone`"), "{e}");
    let e = shop_error("name = \"triage\"\n", "name = \"triage\"\nend = true\n");
    assert_eq!(e.field, "conversations[help].start");
    assert!(
        e.message
            .contains("a fallback conversation cannot start in an end stage (`triage`)"),
        "{e}"
    );
    let e = shop_error(
        "goal_signals = [\"refund\", \"money back\"]",
        "goal_signals = [\"refund\", \"money back\"]\nstart = \"filed\"",
    );
    assert_eq!(e.field, "conversations[refunds].start");
    assert!(
        e.message
            .contains("with goal signals cannot start in an end stage"),
        "{e}"
    );
}

#[test]
fn a_fallback_needs_a_goal_signal_or_an_edge_out_to_reach_an_end() {
    let text = SHOP
        .replace(
            "goal_signals = [\"track\", \"where is my order\", \"delivery\"]",
            "",
        )
        .replace("goal_signals = [\"refund\", \"money back\"]", "");
    let e = error_of(&text);
    assert_eq!(e.field, "conversations[help].stages[triage]");
    assert!(e.message.contains("cannot reach an end stage"), "{e}");
}

#[test]
fn a_summary_interval_out_of_bounds_is_named() {
    for bad in ["0", "10001"] {
        let e = error_of(&format!("summarize_every = {bad}\n{}", stages_flow(&["a"])));
        assert_eq!(e.field, "summarize_every", "{e}");
        assert!(e.message.contains("1 to 10000"), "{e}");
    }
    let f = parse_flow(
        "ok",
        Path::new("flows/ok.toml"),
        &format!("summarize_every = 5\n{}", stages_flow(&["a"])),
    )
    .expect("loads");
    assert_eq!(f.summarize_every, Some(5));
}
