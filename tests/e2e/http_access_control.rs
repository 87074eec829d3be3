//! Access control of the API: with a token every `/hecate/v1` request needs it
//! (401 otherwise) while `/healthz` stays open; Host and Origin must be loopback
//! names on a loopback-bound server (403 otherwise, DNS-rebinding protection);
//! `/mcp` applies the same rules and answers with the same status and type code.

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

/// The refusal's HTTP status and type code: the error envelope on `/hecate/v1`,
/// the JSON-RPC error object (`"id": null`, type in `error.data`) on `/mcp`.
async fn refusal(r: reqwest::Response) -> (u16, String) {
    let status = r.status().as_u16();
    let mcp = r.url().path().starts_with("/mcp");
    let body: serde_json::Value = r.json().await.expect("a JSON body");
    let t = if mcp {
        assert!(body.get("id").is_some_and(|id| id.is_null()), "{body}");
        &body["error"]["data"]["type"]
    } else {
        assert!(body["error"]["request_id"].is_string(), "{body}");
        &body["error"]["type"]
    };
    (status, t.as_str().unwrap_or("").to_string())
}

#[tokio::test]
async fn mcp_and_the_api_accept_the_same_loopback_names_and_refuse_alike() {
    // rmcp's client builds its own reqwest client, which needs a provider.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut home = Home::empty();
    home.set("HECATE_TOKEN", "s3cret");
    let s = serve(&home);
    let http = reqwest::Client::new();
    let init = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}});
    let mcp = |host: &str, token: &str| {
        http.post(format!("{}/mcp", s.base))
            .header("host", host)
            .header("accept", "application/json, text/event-stream")
            .bearer_auth(token)
            .json(&init)
    };
    let api = |host: &str, token: &str| {
        http.get(format!("{}/hecate/v1/system/stats", s.base))
            .header("host", host)
            .bearer_auth(token)
    };
    for host in [
        "localhost",
        "foo.localhost",
        "localhost.",
        "127.0.0.1",
        "127.1.2.3",
        "[::1]",
    ] {
        let m = mcp(host, "s3cret").send().await.expect("send");
        assert_eq!(m.status(), 200, "/mcp with Host {host}");
        let a = api(host, "s3cret").send().await.expect("send");
        assert_eq!(a.status(), 200, "/hecate/v1 with Host {host}");
    }
    for (host, token, status, t) in [
        ("rebind.example", "s3cret", 403, "forbidden"),
        ("localhost.rebind.example", "s3cret", 403, "forbidden"),
        ("localhost", "wrong", 401, "unauthorized"),
    ] {
        for r in [mcp(host, token), api(host, token)] {
            let r = r.send().await.expect("send");
            let path = r.url().path().to_string();
            if status == 401 {
                assert_eq!(r.headers()["www-authenticate"], "Bearer", "{path}");
            }
            assert_eq!(refusal(r).await, (status, t.to_string()), "{path} {host}");
        }
    }
    let mut crowded_mcp = mcp("localhost", "s3cret");
    let mut crowded_api = api("localhost", "s3cret");
    for i in 0..150 {
        crowded_mcp = crowded_mcp.header(format!("x-pad-{i}"), "1");
        crowded_api = crowded_api.header(format!("x-pad-{i}"), "1");
    }
    for r in [crowded_mcp, crowded_api] {
        let r = r.send().await.expect("send");
        assert_eq!(refusal(r).await, (431, "invalid_request".to_string()));
    }
}
