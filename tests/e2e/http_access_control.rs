//! Access control of the API: with a token every `/hecate/v1` request needs it
//! (401 otherwise) while `/healthz` stays open; Host and Origin must be loopback
//! names on a loopback-bound server (403 otherwise, DNS-rebinding protection).

use crate::support::common::Home;
use crate::support::http::{Api, serve};

#[tokio::test]
async fn a_configured_token_is_required_on_the_api_but_not_on_healthz() {
    let mut home = Home::empty();
    home.set("HECATE_TOKEN", "s3cret-token");
    let s = serve(&home);
    let anonymous = Api::new(&s);

    let a = anonymous.get("/healthz").await;
    assert_eq!(a.status, 200);
    assert_eq!(a.body["status"], "ok");

    for path in [
        "/hecate/v1/system/stats",
        "/hecate/v1/agent-chat/sessions",
        "/hecate/v1/openapi.json",
        "/hecate/v1/unknown",
    ] {
        let a = anonymous.get(path).await;
        assert_eq!(a.status, 401, "{path}: {}", a.body);
        assert_eq!(a.error_type(), "unauthorized");
        assert_eq!(a.header("www-authenticate"), Some("Bearer"));
        assert!(a.body["error"]["request_id"].is_string());
    }

    let wrong = Api::new(&s).with_token("s3cret-tokeN");
    let a = wrong.get("/hecate/v1/system/stats").await;
    assert_eq!(a.status, 401);
    assert!(
        a.body["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("wrong"))
    );

    let basic = anonymous
        .send(
            anonymous
                .request(reqwest::Method::GET, "/hecate/v1/system/stats")
                .header("authorization", "Basic czNjcmV0LXRva2Vu"),
        )
        .await;
    assert_eq!(basic.status, 401);

    let right = Api::new(&s).with_token("s3cret-token");
    let a = right.get("/hecate/v1/system/stats").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let a = right.get("/hecate/v1/unknown").await;
    assert_eq!(a.status, 404);
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused_on_a_loopback_server() {
    let home = Home::empty();
    let s = serve(&home);
    let api = Api::new(&s);
    let port = s.base.rsplit(':').next().unwrap_or("0").to_string();

    let a = api
        .send(
            api.request(reqwest::Method::GET, "/hecate/v1/system/stats")
                .header("host", format!("rebind.attacker.example:{port}")),
        )
        .await;
    assert_eq!(a.status, 403, "{}", a.body);
    assert_eq!(a.error_type(), "forbidden");

    for host in [format!("localhost:{port}"), format!("127.0.0.1:{port}")] {
        let a = api
            .send(
                api.request(reqwest::Method::GET, "/hecate/v1/system/stats")
                    .header("host", host.clone()),
            )
            .await;
        assert_eq!(a.status, 200, "{host}: {}", a.body);
    }

    let a = api
        .send(
            api.request(reqwest::Method::GET, "/hecate/v1/agent-chat/sessions")
                .header("origin", "https://attacker.example"),
        )
        .await;
    assert_eq!(a.status, 403);
    assert_eq!(a.error_type(), "forbidden");

    let a = api
        .send(
            api.request(reqwest::Method::GET, "/hecate/v1/agent-chat/sessions")
                .header("origin", "null"),
        )
        .await;
    assert_eq!(a.status, 403);

    // A UI served from another loopback port may call the API (CORS allows it).
    let a = api
        .send(
            api.request(reqwest::Method::GET, "/hecate/v1/agent-chat/sessions")
                .header("origin", "http://localhost:5173"),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(
        a.header("access-control-allow-origin"),
        Some("http://localhost:5173")
    );

    // Liveness is not behind the API's access rules.
    let a = api
        .send(
            api.request(reqwest::Method::GET, "/healthz")
                .header("host", "anything.example"),
        )
        .await;
    assert_eq!(a.status, 200);
}
