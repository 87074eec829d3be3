//! An upstream MCP server that wants an OAuth sign-in Hecate does not have: a
//! loopback stub answering every request `401` with a `WWW-Authenticate`
//! challenge, beside a working fixture server. The server's state in
//! `GET /hecate/v1/mcp/servers` is `auth_required` with the fix, an HTTP error
//! about it is `424 auth_required` (never Hecate's own 401), `hecate mcp call`
//! exits 6 naming the type and the fix, and `hecate mcp servers`, the
//! `upstream_status` tool of `hecate mcp` and `hecate doctor` say
//! `auth_required` too.

use crate::support::common::{Home, text};
use crate::support::http::{Api, serve};
use crate::support::mcp::{McpProc, fixture_upstream, store_sign_in, store_unreadable_sign_in};
use serde_json::{Value, json};

/// A loopback MCP endpoint that refuses every request for want of a token.
struct Locked {
    url: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Locked {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Locked {
    /// Serves on its own thread, so blocking CLI runs in a test do not stall it.
    fn start() -> Self {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.set_nonblocking(true).expect("nonblocking");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let challenge = format!(
            "Bearer error=\"invalid_token\", resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\""
        );
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
                let app = axum::Router::new().fallback(move || {
                    let challenge = challenge.clone();
                    async move {
                        (
                            axum::http::StatusCode::UNAUTHORIZED,
                            [(axum::http::header::WWW_AUTHENTICATE, challenge)],
                            axum::Json(json!({"error": "invalid_token"})),
                        )
                    }
                });
                let _ = axum::serve(listener, app)
                    .with_graceful_shutdown(async {
                        let _ = stopped.await;
                    })
                    .await;
            });
        });
        Self {
            url: format!("{base}/mcp"),
            stop: Some(stop),
            thread: Some(thread),
        }
    }
}

/// A home with the locked server `locked` and the fixture server `fx`.
fn home(locked: &Locked) -> Home {
    let home = Home::empty();
    home.write_config(&format!(
        "[mcp_servers.locked]\nurl = \"{}\"\n\n{}",
        locked.url,
        fixture_upstream("fx", &[], "")
    ));
    home
}

fn server<'a>(listing: &'a Value, name: &str) -> &'a Value {
    listing["data"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("{name} in {listing}"))
}

#[tokio::test]
async fn a_server_without_a_sign_in_is_auth_required_on_every_surface() {
    let locked = Locked::start();
    let home = home(&locked);
    let s = serve(&home);
    let api = Api::new(&s);

    let listing = api.get("/hecate/v1/mcp/servers").await;
    assert_eq!(listing.status, 200, "{}", listing.body);
    let row = server(&listing.body, "locked");
    assert_eq!(row["state"], "auth_required", "{row}");
    assert!(
        row["operator_action"]
            .as_str()
            .is_some_and(|a| a.contains("hecate mcp login locked")),
        "{row}"
    );
    assert!(
        row["error"].as_str().is_some_and(|e| e.contains("401")),
        "{row}"
    );
    assert_eq!(row["tools"], json!([]), "{row}");
    let fx = server(&listing.body, "fx");
    assert_eq!(fx["state"], "ok", "{fx}");
    assert!(fx.get("operator_action").is_none(), "{fx}");

    // The state's values are the OpenAPI document's enum.
    let doc = api.get("/hecate/v1/openapi.json").await;
    let schema = &doc.body["components"]["schemas"];
    let state = &schema["McpServerDto"]["properties"]["state"];
    let values = match state.get("$ref").and_then(Value::as_str) {
        Some(r) => &schema[r.rsplit('/').next().unwrap_or_default()]["enum"],
        None => &state["enum"],
    };
    assert_eq!(values, &json!(["ok", "auth_required", "failed"]), "{state}");

    // An API call that needs the server answers its error: 424, not 401.
    let put = api
        .request(
            reqwest::Method::PUT,
            "/hecate/v1/mcp/servers/locked/tools/whoami/policy",
        )
        .json(&json!({"policy": "block"}));
    let refused = api.send(put).await;
    assert_eq!(refused.status, 424, "{}", refused.body);
    assert_eq!(refused.error_type(), "auth_required", "{}", refused.body);
    assert_eq!(refused.body["error"]["server"], "locked");
    assert!(
        refused.body["error"]["operator_action"]
            .as_str()
            .is_some_and(|a| a.contains("hecate mcp login locked")),
        "{}",
        refused.body
    );

    let call = home.run(&["mcp", "call", "--server", "locked", "whoami"]);
    let (stdout, stderr) = text(&call);
    assert_eq!(call.status.code(), Some(6), "{stdout}{stderr}");
    assert!(stderr.contains("error [auth_required]"), "{stderr}");
    assert!(stderr.contains("hecate mcp login locked"), "{stderr}");

    let servers = home.json(&["mcp", "servers", "--format", "json"]);
    let rows = servers["data"]["servers"].as_array().expect("servers");
    let row = rows
        .iter()
        .find(|r| r["name"] == "locked")
        .unwrap_or_else(|| panic!("{servers}"));
    assert_eq!(row["state"], "auth_required", "{row}");
    assert_eq!(row["error"]["type"], "auth_required", "{row}");
    assert_eq!(
        rows.iter().find(|r| r["name"] == "fx").map(|r| &r["state"]),
        Some(&json!("ok")),
        "{servers}"
    );

    // `hecate mcp`'s own status tool says the same.
    let mut mcp = McpProc::start(&home, json!({}));
    let status = mcp.call_ok("upstream_status", json!({}));
    let rows = status["structuredContent"]["servers"]
        .as_array()
        .expect("servers")
        .clone();
    let row = rows
        .iter()
        .find(|r| r["name"] == "locked")
        .unwrap_or_else(|| panic!("{status}"));
    assert_eq!(row["state"], "auth_required", "{row}");
    assert_eq!(row["error"]["type"], "auth_required", "{row}");
    assert_eq!(row["error"]["server"], "locked", "{row}");
    assert_eq!(
        rows.iter().find(|r| r["name"] == "fx").map(|r| &r["state"]),
        Some(&json!("ok")),
        "{status}"
    );
    drop(mcp);

    // A PATH and HOME of temp dirs: no agent of this machine is probed.
    let bin = home.path("bin");
    std::fs::create_dir_all(&bin).expect("bin dir");
    let doctor = home
        .cmd(&["doctor", "--timeout", "5", "--format", "json"])
        .env("PATH", &bin)
        .env("HOME", home.dir.path())
        .output()
        .expect("doctor");
    let report: Value = serde_json::from_slice(&doctor.stdout).expect("doctor JSON");
    let line = report["data"]["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["name"] == "mcp locked")
        .unwrap_or_else(|| panic!("{report}"));
    assert_eq!(line["status"], "warn", "{line}");
    assert!(
        line["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("auth_required: ")),
        "{line}"
    );
    assert_eq!(
        line["fix"].as_str(),
        row_fix(&listing.body, "locked"),
        "doctor and the listing name the same fix"
    );
}

/// The fix the listing gives server `name`.
fn row_fix<'a>(listing: &'a Value, name: &str) -> Option<&'a str> {
    server(listing, name)["operator_action"].as_str()
}

#[tokio::test]
async fn a_stored_sign_in_is_listed_without_its_tokens_and_the_api_forgets_it() {
    let locked = Locked::start();
    let home = home(&locked);
    let s = serve(&home);
    let api = Api::new(&s);

    // No sign-in stored yet: the HTTP server says so; a stdio server has none.
    let listing = api.get("/hecate/v1/mcp/servers").await;
    assert_eq!(
        server(&listing.body, "locked")["sign_in"],
        json!({"state": "missing"}),
        "{}",
        listing.body
    );
    assert!(server(&listing.body, "fx").get("sign_in").is_none());

    store_sign_in(&home, "locked");
    let listing = api.get("/hecate/v1/mcp/servers").await;
    let sign_in = &server(&listing.body, "locked")["sign_in"];
    assert_eq!(sign_in["state"], "signed_in", "{sign_in}");
    assert_eq!(sign_in["issuer"], "https://issuer.example", "{sign_in}");
    assert_eq!(sign_in["refreshable"], true, "{sign_in}");
    let expires = sign_in["expires_at"].as_str().expect("an expiry");
    let expires =
        time::OffsetDateTime::parse(expires, &time::format_description::well_known::Rfc3339)
            .expect("RFC 3339");
    let in_an_hour = time::OffsetDateTime::now_utc() + time::Duration::hours(1);
    assert!(
        (expires - in_an_hour).abs() < time::Duration::minutes(2),
        "the stored token's hour: {sign_in}"
    );
    assert!(
        !listing.body.to_string().contains("secret-"),
        "no token is shown: {}",
        listing.body
    );

    // Signing out forgets it, as `hecate mcp logout` does; twice is harmless.
    let out = api.delete("/hecate/v1/mcp/servers/locked/sign-in").await;
    assert_eq!(out.status, 200, "{}", out.body);
    assert_eq!(
        out.body,
        json!({"object": "mcp_sign_out", "server": "locked", "removed": true})
    );
    let listing = api.get("/hecate/v1/mcp/servers").await;
    assert_eq!(
        server(&listing.body, "locked")["sign_in"]["state"],
        "missing"
    );
    let again = api.delete("/hecate/v1/mcp/servers/locked/sign-in").await;
    assert_eq!(again.body["removed"], false, "{}", again.body);
    let unknown = api.delete("/hecate/v1/mcp/servers/nope/sign-in").await;
    assert_eq!(unknown.status, 404, "{}", unknown.body);
    assert_eq!(
        unknown.body["error"]["type"], "not_found",
        "{}",
        unknown.body
    );
}

#[tokio::test]
async fn a_sign_out_waits_for_a_refresh_under_way_so_the_refreshed_tokens_go_too() {
    let locked = Locked::start();
    let home = home(&locked);
    let s = serve(&home);
    let api = Api::new(&s);
    store_sign_in(&home, "locked");
    let db = || rusqlite::Connection::open(home.data_dir().join("hecate.db")).expect("open db");
    // Another process is refreshing: it holds the rows' refresh lock.
    let until = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64
        + 60_000;
    db().execute(
        "UPDATE mcp_oauth_tokens SET refresh_owner = 'refresher', refresh_until_ms = ?1",
        [until],
    )
    .expect("hold the refresh lock");

    let base = s.base.clone();
    let sign_out = tokio::spawn(async move {
        reqwest::Client::new()
            .delete(format!("{base}/hecate/v1/mcp/servers/locked/sign-in"))
            .send()
            .await
            .expect("DELETE")
            .json::<Value>()
            .await
            .expect("JSON")
    });
    tokio::time::sleep(std::time::Duration::from_millis(600)).await;
    assert!(
        !sign_out.is_finished(),
        "the sign-out waits for the refresh"
    );
    // The refresh ends: it stores its new tokens, then lets the lock go.
    db().execute(
        "UPDATE mcp_oauth_tokens SET credentials = replace(credentials, 'secret-access-123', \
         'secret-access-refreshed'), refresh_owner = NULL, refresh_until_ms = NULL",
        [],
    )
    .expect("the refresh's save");
    let out = sign_out.await.expect("sign-out");
    assert_eq!(out["removed"], true, "{out}");
    let left: i64 = db()
        .query_row("SELECT COUNT(*) FROM mcp_oauth_tokens", [], |r| r.get(0))
        .expect("count");
    assert_eq!(left, 0, "the refreshed tokens are forgotten too");
    let listing = api.get("/hecate/v1/mcp/servers").await;
    assert_eq!(
        server(&listing.body, "locked")["sign_in"]["state"],
        "missing"
    );
}

#[tokio::test]
async fn a_sign_in_that_cannot_be_read_says_so_without_quoting_it_and_can_be_signed_out() {
    let locked = Locked::start();
    let home = home(&locked);
    let s = serve(&home);
    let api = Api::new(&s);
    store_unreadable_sign_in(&home, "locked");
    let listing = api.get("/hecate/v1/mcp/servers").await;
    assert_eq!(listing.status, 200, "{}", listing.body);
    let sign_in = &server(&listing.body, "locked")["sign_in"];
    assert_eq!(sign_in["state"], "unreadable", "{sign_in}");
    assert!(
        sign_in["error"]
            .as_str()
            .is_some_and(|e| e.contains("not readable")),
        "{sign_in}"
    );
    assert!(
        !listing.body.to_string().contains("secret-"),
        "what is stored is never quoted: {}",
        listing.body
    );
    let out = api.delete("/hecate/v1/mcp/servers/locked/sign-in").await;
    assert_eq!(out.body["removed"], true, "{}", out.body);
    let listing = api.get("/hecate/v1/mcp/servers").await;
    assert_eq!(
        server(&listing.body, "locked")["sign_in"]["state"],
        "missing"
    );
}
