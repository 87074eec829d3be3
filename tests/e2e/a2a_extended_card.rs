//! The authenticated extended card of Hecate's A2A server
//! (`src/bridges/a2a/extended.rs`) against the real `hecate serve`: the public
//! card advertises it only when a credential is required (a token or an
//! identity provider); with the token, an operator key and a read key it is
//! served over JSON-RPC (`GetExtendedAgentCard`) and HTTP+JSON (`GET
//! …/extendedAgentCard`), listing the other agents' skills only to a caller
//! that may send to them and saying who it was served to; a missing or bad
//! credential is 401, a key for another namespace 403, and an open server
//! answers `UnsupportedOperation`.

use super::a2a_server::{ON_MODEL_PATH, a2a_home, code, result, rpc};
use crate::support::agent::{WIRES, agent_home_with};
use crate::support::common::ModelServer;
use crate::support::http::{Answer, Api, serve};
use serde_json::{Value, json};

/// The URI of the extension saying who the card was served to.
const ACCESS: &str = "urn:hecate:a2a:access:v1";

/// The REST path of the default agent's extended card.
const REST: &str = "/a2a/hecate/extendedAgentCard";

/// The skill ids of a card.
fn skill_ids(card: &Value) -> Vec<String> {
    card["skills"]
        .as_array()
        .unwrap_or_else(|| panic!("no skills in {card}"))
        .iter()
        .filter_map(|s| s["id"].as_str().map(String::from))
        .collect()
}

/// The parameters of the access extension of an extended card.
fn access(card: &Value) -> Value {
    card["capabilities"]["extensions"]
        .as_array()
        .and_then(|e| e.iter().find(|x| x["uri"] == ACCESS))
        .unwrap_or_else(|| panic!("no access extension in {card}"))["params"]
        .clone()
}

/// A refusal for the credential: 401, `UNAUTHENTICATED`, the bearer challenge.
fn unauthenticated(a: &Answer) {
    assert_eq!(a.status, 401, "{}", a.body);
    assert_eq!(a.body["error"]["status"], "UNAUTHENTICATED", "{}", a.body);
    assert_eq!(a.header("www-authenticate"), Some("Bearer"));
}

#[tokio::test]
async fn the_extended_card_shows_each_caller_what_it_may_use() {
    let server = ModelServer::start_listing(Some(json!([])), "gpt-fixture");
    let mut home = a2a_home(&server, "");
    home.set("HECATE_TOKEN", "ext-token");
    let key = |name: &str, scope: &str| -> String {
        let v = home.json(&["keys", "create", name, "--scope", scope, "--format", "json"]);
        v["token"].as_str().expect("token").to_string()
    };
    let operator = key("ext-op", "operator");
    let reader = key("ext-reader", "read,namespace:default");
    let elsewhere = key("ext-elsewhere", "operator,namespace:team-b");
    let s = serve(&home);
    let public = Api::new(&s);
    let admin = Api::new(&s).with_token("ext-token");

    let card = public.get("/.well-known/agent-card.json").await;
    assert_eq!(card.status, 200, "{}", card.body);
    assert_eq!(card.body["capabilities"]["extendedAgentCard"], true);
    assert!(
        card.body["capabilities"].get("extensions").is_none(),
        "{}",
        card.body
    );
    let public_skills = skill_ids(&card.body);
    assert!(
        !public_skills.iter().any(|id| id.contains('#')),
        "the public card lists only its own agent's skills: {public_skills:?}"
    );
    let public_bearer = card.body["securitySchemes"]["bearer"].to_string();
    assert!(!public_bearer.contains("API key"), "{public_bearer}");

    // The token over both bindings: the same card, every agent's skills.
    let rest = admin.get(REST).await;
    assert_eq!(rest.status, 200, "{}", rest.body);
    let full = rest.body;
    assert_eq!(full["name"], card.body["name"]);
    assert_eq!(
        full["supportedInterfaces"],
        card.body["supportedInterfaces"]
    );
    assert_eq!(full["capabilities"]["extendedAgentCard"], true);
    let ids = skill_ids(&full);
    assert_eq!(ids[..public_skills.len()], public_skills[..], "{ids:?}");
    let on_model = "hecate:fix/gpt-fixture#coding";
    assert!(ids.iter().any(|id| id == on_model), "{ids:?}");
    let params = access(&full);
    assert_eq!(params["identity"], "admin", "{params}");
    assert_eq!(params["role"], "admin", "{params}");
    assert_eq!(params["namespace"], "default", "{params}");
    assert_eq!(params["agents"][0], "hecate", "{params}");
    assert!(
        params["agents"]
            .as_array()
            .is_some_and(|a| a.contains(&json!("hecate:fix/gpt-fixture"))),
        "{params}"
    );
    assert_eq!(
        params["operations"]["JSONRPC"].as_array().map(Vec::len),
        Some(11),
        "{params}"
    );
    let bearer = full["securitySchemes"]["bearer"]["httpAuthSecurityScheme"]["description"]
        .as_str()
        .unwrap_or_default();
    assert!(bearer.contains("named API key"), "{bearer}");
    let over_rpc = result(&rpc(&admin, "hecate", "GetExtendedAgentCard", json!({})).await);
    assert_eq!(over_rpc, full, "both bindings serve the same card");

    // Another agent's extended card lists the default agent's skills.
    let other = admin
        .get(&format!("/a2a/{ON_MODEL_PATH}/extendedAgentCard"))
        .await;
    assert_eq!(other.status, 200, "{}", other.body);
    let other_ids = skill_ids(&other.body);
    assert!(
        other_ids.iter().any(|id| id == "hecate#coding"),
        "{other_ids:?}"
    );
    assert!(!other_ids.iter().any(|id| id == on_model), "{other_ids:?}");

    // An operator key sees every agent too, as itself.
    let op = Api::new(&s).with_token(&operator);
    let by_key = result(&rpc(&op, "hecate", "GetExtendedAgentCard", json!({})).await);
    assert_eq!(access(&by_key)["identity"], "key:ext-op");
    assert_eq!(skill_ids(&by_key), ids);

    // A read key may send to no agent: only this agent's own skills, and what
    // it may call says so. Its JSON-RPC call needs operator, like every one.
    let read = Api::new(&s).with_token(&reader);
    let a = read.get(REST).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(skill_ids(&a.body), public_skills);
    let params = access(&a.body);
    assert_eq!(params["identity"], "key:ext-reader", "{params}");
    assert_eq!(params["role"], "read", "{params}");
    assert_eq!(params["agents"], json!(["hecate"]), "{params}");
    assert_eq!(params["operations"]["JSONRPC"], json!([]), "{params}");
    assert_eq!(
        params["operations"]["HTTP+JSON"],
        json!([
            "GetTask",
            "ListTasks",
            "SubscribeToTask",
            "GetExtendedAgentCard"
        ]),
        "{params}"
    );
    let a = rpc(&read, "hecate", "GetExtendedAgentCard", json!({})).await;
    assert_eq!(a.status, 403, "{}", a.body);
    assert_eq!(a.body["error"]["status"], "PERMISSION_DENIED", "{}", a.body);

    // A key for another namespace sees nothing.
    let a = Api::new(&s).with_token(&elsewhere).get(REST).await;
    assert_eq!(a.status, 403, "{}", a.body);
    assert_eq!(a.body["error"]["status"], "PERMISSION_DENIED", "{}", a.body);

    // No credential, a wrong token, an unknown key: 401 on both bindings.
    unauthenticated(&public.get(REST).await);
    unauthenticated(&rpc(&public, "hecate", "GetExtendedAgentCard", json!({})).await);
    let wrong = Api::new(&s).with_token("not-the-token");
    unauthenticated(&wrong.get(REST).await);
    unauthenticated(&rpc(&wrong, "hecate", "GetExtendedAgentCard", json!({})).await);
    unauthenticated(&Api::new(&s).with_token("key_0000.nope").get(REST).await);

    // An unknown agent is still 404 behind the credential.
    let a = admin.get("/a2a/nobody/extendedAgentCard").await;
    assert_eq!(a.status, 404, "{}", a.body);
}

#[tokio::test]
async fn an_open_server_offers_no_extended_card() {
    let server = ModelServer::start(Some(json!([])));
    let s = serve(&a2a_home(&server, ""));
    let api = Api::new(&s);
    let card = api.get("/.well-known/agent-card.json").await;
    assert_eq!(card.status, 200, "{}", card.body);
    assert_eq!(card.body["capabilities"]["extendedAgentCard"], false);
    assert!(card.body.get("securitySchemes").is_none(), "{}", card.body);

    let a = api.get(REST).await;
    assert_eq!(a.status, 400, "{}", a.body);
    assert_eq!(
        a.body["error"]["status"], "FAILED_PRECONDITION",
        "{}",
        a.body
    );
    assert_eq!(
        a.body["error"]["details"][0]["reason"], "UNSUPPORTED_OPERATION",
        "{}",
        a.body
    );
    assert!(
        a.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("no authenticated extended card")),
        "{}",
        a.body
    );
    let a = rpc(&api, "hecate", "GetExtendedAgentCard", json!({})).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(code(&a), -32004, "{}", a.body);
    assert_eq!(
        a.body["error"]["data"][0]["reason"], "UNSUPPORTED_OPERATION",
        "{}",
        a.body
    );
}

/// An identity provider alone also requires a credential: the card advertises
/// the extended card and a call without a credential is refused.
#[tokio::test]
async fn an_identity_provider_alone_advertises_the_extended_card() {
    let server = ModelServer::start(Some(json!([])));
    let mut home = agent_home_with(
        &server,
        WIRES[0],
        "",
        "[server.idp]\nissuer = \"http://127.0.0.1:9\"\naudience = \"https://hecate.test/a2a\"\n",
    );
    home.set("HECATE_GATEWAY_DEFAULT_MODEL", WIRES[0].2);
    let s = serve(&home);
    let api = Api::new(&s);
    let card = api.get("/.well-known/agent-card.json").await;
    assert_eq!(card.status, 200, "{}", card.body);
    assert_eq!(card.body["capabilities"]["extendedAgentCard"], true);
    let a = api.get(REST).await;
    assert_eq!(a.status, 401, "{}", a.body);
    assert_eq!(a.body["error"]["status"], "UNAUTHENTICATED", "{}", a.body);
}
