//! Access tokens of a team's identity provider on `hecate serve` (`[server.idp]`):
//! the test plays the provider with keys it generates (ES256 and EdDSA, with
//! ring) and a JWKS and discovery document on a small axum server of its own.
//! A token's `hecate:*` scopes become its role and limits: an operator token
//! acts and is recorded as `idp:SUBJECT`, a read token gets 403 with
//! `required_role`, one limited to a server sees only that server's tools over
//! `/mcp`. Forged, expired, premature, wrong-audience, wrong-issuer,
//! unknown-kid, `alg: none` and other-resource tokens each get 401 with their
//! own `reason`; a provider whose keys cannot be fetched (refused or silent)
//! gives 401 `jwks_unavailable` within the fetch time-out; a rotated key is
//! fetched on its unknown `kid`. The static token and named keys keep working,
//! RFC 9728 metadata is served (404 without a provider), and a 401 points at it
//! in `WWW-Authenticate`.

use crate::support::common::{Home, ModelServer, workspace};
use crate::support::http::{Answer, Api, Served, serve};
use crate::support::mcp::fixture_upstream;
use axum::extract::State;
use axum::routing::get;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use ring::rand::SystemRandom;
use ring::signature::{ECDSA_P256_SHA256_FIXED_SIGNING, EcdsaKeyPair, Ed25519KeyPair, KeyPair};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const ADMIN: &str = "adm1n-static-token";
const AUDIENCE: &str = "https://hecate.test/mcp";

/// A signing key of the test's identity provider.
enum Key {
    Ec(EcdsaKeyPair),
    Ed(Ed25519KeyPair),
}

/// A key with its `kid`.
struct Signer {
    kid: String,
    key: Key,
}

impl Signer {
    fn es256(kid: &str) -> Self {
        let rng = SystemRandom::new();
        let pkcs8 =
            EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng).expect("ec key");
        let pair = EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, pkcs8.as_ref(), &rng)
            .expect("ec pair");
        Self {
            kid: kid.into(),
            key: Key::Ec(pair),
        }
    }

    fn eddsa(kid: &str) -> Self {
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).expect("ed key");
        let pair = Ed25519KeyPair::from_pkcs8(pkcs8.as_ref()).expect("ed pair");
        Self {
            kid: kid.into(),
            key: Key::Ed(pair),
        }
    }

    fn alg(&self) -> &'static str {
        match self.key {
            Key::Ec(_) => "ES256",
            Key::Ed(_) => "EdDSA",
        }
    }

    /// The public key as a JWK.
    fn jwk(&self) -> Value {
        match &self.key {
            Key::Ec(pair) => {
                let point = pair.public_key().as_ref();
                json!({"kty": "EC", "crv": "P-256", "kid": self.kid, "use": "sig", "alg": "ES256",
                       "x": B64.encode(&point[1..33]), "y": B64.encode(&point[33..])})
            }
            Key::Ed(pair) => json!({"kty": "OKP", "crv": "Ed25519", "kid": self.kid,
                                    "x": B64.encode(pair.public_key().as_ref())}),
        }
    }

    /// A compact JWS of `claims` under `header` (its `alg` and `kid` filled in
    /// when absent).
    fn sign_with(&self, mut header: Value, claims: &Value) -> String {
        let h = header.as_object_mut().expect("header object");
        h.entry("alg").or_insert(json!(self.alg()));
        h.entry("kid").or_insert(json!(self.kid));
        h.entry("typ").or_insert(json!("at+jwt"));
        let input = format!(
            "{}.{}",
            B64.encode(header.to_string()),
            B64.encode(claims.to_string())
        );
        let sig = match &self.key {
            Key::Ec(pair) => pair
                .sign(&SystemRandom::new(), input.as_bytes())
                .expect("sign")
                .as_ref()
                .to_vec(),
            Key::Ed(pair) => pair.sign(input.as_bytes()).as_ref().to_vec(),
        };
        format!("{input}.{}", B64.encode(sig))
    }

    fn sign(&self, claims: &Value) -> String {
        self.sign_with(json!({}), claims)
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock")
        .as_secs()
}

/// Claims of a token for `sub` granting `scope`, valid for an hour.
fn claims(issuer: &str, sub: &str, scope: &str) -> Value {
    json!({"iss": issuer, "sub": sub, "aud": AUDIENCE, "scope": scope,
           "iat": now(), "exp": now() + 3600, "client_id": "test-client"})
}

/// What the provider's server publishes, and how often its keys were fetched.
#[derive(Clone, Default)]
struct Published {
    jwks: Arc<Mutex<Value>>,
    issuer: Arc<Mutex<String>>,
    fetches: Arc<AtomicUsize>,
}

/// The test's identity provider: a JWKS at `/jwks` and an OpenID discovery
/// document at `/.well-known/openid-configuration`, on its own thread.
struct Provider {
    issuer: String,
    published: Published,
}

impl Provider {
    fn start(keys: &[&Signer]) -> Self {
        let published = Published::default();
        *published.jwks.lock().expect("lock") =
            json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()});
        let state = published.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                tx.send(listener.local_addr().expect("addr"))
                    .expect("send addr");
                let app = axum::Router::new()
                    .route("/jwks", get(jwks))
                    .route("/.well-known/openid-configuration", get(discovery))
                    .with_state(state);
                axum::serve(listener, app).await.expect("serve");
            });
        });
        let addr = rx.recv().expect("provider address");
        let issuer = format!("http://{addr}");
        *published.issuer.lock().expect("lock") = issuer.clone();
        Self { issuer, published }
    }

    fn publish(&self, keys: &[&Signer]) {
        *self.published.jwks.lock().expect("lock") =
            json!({"keys": keys.iter().map(|k| k.jwk()).collect::<Vec<_>>()});
    }

    fn fetches(&self) -> usize {
        self.published.fetches.load(Ordering::SeqCst)
    }

    fn claims(&self, sub: &str, scope: &str) -> Value {
        claims(&self.issuer, sub, scope)
    }
}

async fn jwks(State(p): State<Published>) -> axum::Json<Value> {
    p.fetches.fetch_add(1, Ordering::SeqCst);
    axum::Json(p.jwks.lock().expect("lock").clone())
}

async fn discovery(State(p): State<Published>) -> axum::Json<Value> {
    let issuer = p.issuer.lock().expect("lock").clone();
    axum::Json(
        json!({"issuer": issuer, "jwks_uri": format!("{issuer}/jwks"),
                      "token_endpoint": format!("{issuer}/token")}),
    )
}

/// A `[server.idp]` section for `issuer` with `extra` lines.
fn idp_section(issuer: &str, extra: &str) -> String {
    format!("[server.idp]\nissuer = \"{issuer}\"\naudience = \"{AUDIENCE}\"\n{extra}\n")
}

fn reason(a: &Answer) -> &str {
    a.body["error"]["reason"].as_str().unwrap_or("")
}

fn cli_key(home: &Home, name: &str, scope: &str) -> String {
    let v = home.json(&["keys", "create", name, "--scope", scope, "--format", "json"]);
    v["token"].as_str().expect("token").to_string()
}

fn bearer(s: &Served, token: &str) -> Api {
    Api::new(s).with_token(token)
}

#[tokio::test]
async fn an_operator_token_acts_as_its_subject_and_a_read_token_may_not() {
    let model = ModelServer::start(None);
    let signer = Signer::es256("k1");
    let idp = Provider::start(&[&signer]);
    let mut home = Home::with_openai(&model);
    home.set("HECATE_TOKEN", ADMIN);
    home.write_config(&idp_section(&idp.issuer, ""));
    let s = serve(&home);
    let alice = bearer(
        &s,
        &signer.sign(&idp.claims("alice", "openid hecate:operator")),
    );
    let bob = bearer(&s, &signer.sign(&idp.claims("bob", "hecate:read")));
    let (_ws, ws) = workspace();

    // An operator token creates a session, sends a message, makes a grant and
    // starts a task; the records name `idp:alice`.
    let session = alice.create_session(json!({})).await;
    let a = alice.say(&session, "hello").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let grant = json!({"scope": "workspace_tool", "workspace": ws.display().to_string(),
                       "tool_kind": "read", "decision": "approve"});
    let a = alice
        .post("/hecate/v1/agent-chat/grants", grant.clone())
        .await;
    assert_eq!(a.status, 201, "{}", a.body);
    assert_eq!(a.body["data"]["created_by"], "idp:alice", "{}", a.body);
    let a = alice
        .post(
            "/hecate/v1/tasks",
            json!({"execution_kind": "shell", "shell_command": "true"}),
        )
        .await;
    assert_eq!(a.status, 201, "{}", a.body);
    let task = a.body["data"]["id"].as_str().expect("task").to_string();
    let a = alice
        .post(&format!("/hecate/v1/tasks/{task}/start"), json!({}))
        .await;
    assert_eq!(a.status, 202, "{}", a.body);
    let run = a.body["data"]["id"].as_str().expect("run").to_string();
    let events = alice
        .get(&format!("/hecate/v1/tasks/{task}/runs/{run}/events"))
        .await;
    let created = events.body["data"]
        .as_array()
        .expect("events")
        .iter()
        .find(|e| e["type"] == "run.created" || e["event_type"] == "run.created")
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(
        created["data"]["started_by"], "idp:alice",
        "{}",
        events.body
    );

    // A read token reads, and may not act: 403 naming the role it lacks, and
    // the challenge asks for the scope.
    let a = bob.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let a = bob.post("/hecate/v1/agent-chat/grants", grant).await;
    assert_eq!(a.status, 403, "{}", a.body);
    assert_eq!(a.error_type(), "forbidden");
    assert_eq!(a.body["error"]["required_role"], "operator", "{}", a.body);
    assert!(
        a.body["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("idp:bob"),
        "{}",
        a.body
    );
    let challenge = a.header("www-authenticate").unwrap_or_default();
    assert!(
        challenge.contains("insufficient_scope") && challenge.contains("scope=\"hecate:operator\""),
        "{challenge}"
    );

    // A token limited to another namespace is refused by this server.
    let elsewhere = bearer(
        &s,
        &signer.sign(&idp.claims("carol", "hecate:read hecate:namespace:team-b")),
    );
    let a = elsewhere.get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(a.status, 403, "{}", a.body);
    assert_eq!(a.body["error"]["namespace"], "default");
    // A malformed Hecate scope is refused rather than ignored.
    let a = bearer(&s, &signer.sign(&idp.claims("dan", "hecate:server:")))
        .get("/hecate/v1/agent-chat/sessions")
        .await;
    assert_eq!((a.status, reason(&a)), (401, "bad_scope"), "{}", a.body);

    // The static token and a named key keep working beside the provider.
    let a = bearer(&s, ADMIN).get("/hecate/v1/keys").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let key = cli_key(&home, "ci", "read");
    let a = bearer(&s, &key).get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(a.status, 200, "{}", a.body);
    let a = Api::new(&s).get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(a.status, 401, "no credential: {}", a.body);
}

#[tokio::test]
async fn every_bad_token_gets_401_with_its_own_reason() {
    let signer = Signer::eddsa("k1");
    let stranger = Signer::eddsa("k1");
    let idp = Provider::start(&[&signer]);
    let home = Home::empty();
    home.write_config(&idp_section(&idp.issuer, ""));
    // No static token: the provider alone guards the server.
    let s = serve(&home);
    let good = idp.claims("alice", "hecate:read");
    let ok = bearer(&s, &signer.sign(&good))
        .get("/hecate/v1/agent-chat/sessions")
        .await;
    assert_eq!(ok.status, 200, "{}", ok.body);

    let with = |patch: Value| {
        let mut c = good.clone();
        for (k, v) in patch.as_object().expect("patch") {
            c[k] = v.clone();
        }
        c
    };
    let none_alg = format!(
        "{}.{}.",
        B64.encode(json!({"alg": "none", "typ": "JWT"}).to_string()),
        B64.encode(good.to_string())
    );
    let cases = [
        ("forged signature", stranger.sign(&good), "bad_signature"),
        (
            "expired",
            signer.sign(&with(json!({"exp": now() - 3600, "iat": now() - 7200}))),
            "expired",
        ),
        (
            "not yet valid",
            signer.sign(&with(json!({"nbf": now() + 3600}))),
            "not_yet_valid",
        ),
        (
            "no expiry",
            signer.sign(&with(json!({"exp": null}))),
            "missing_claim",
        ),
        (
            "wrong audience",
            signer.sign(&with(json!({"aud": "some-client-id"}))),
            "wrong_audience",
        ),
        (
            "another resource",
            signer.sign(&with(json!({"aud": ["https://other.test/mcp"]}))),
            "other_resource",
        ),
        (
            "wrong issuer",
            signer.sign(&with(json!({"iss": "https://idp.evil.test"}))),
            "wrong_issuer",
        ),
        (
            "unknown kid",
            signer.sign_with(json!({"kid": "rotated-away"}), &good),
            "unknown_kid",
        ),
        ("alg none", none_alg, "algorithm_not_allowed"),
        (
            "HS256",
            signer.sign_with(json!({"alg": "HS256"}), &good),
            "algorithm_not_allowed",
        ),
        (
            "malformed",
            "eyJhbGciOi.eyJpc3Mi.c2ln".to_string(),
            "malformed",
        ),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (what, token, want) in cases {
        let a = bearer(&s, &token)
            .get("/hecate/v1/agent-chat/sessions")
            .await;
        assert_eq!(a.status, 401, "{what}: {}", a.body);
        assert_eq!(a.error_type(), "unauthorized", "{what}: {}", a.body);
        assert_eq!(reason(&a), want, "{what}: {}", a.body);
        assert!(a.body["error"]["operator_action"].is_string(), "{what}");
        let challenge = a.header("www-authenticate").unwrap_or_default();
        assert_eq!(
            challenge,
            "Bearer error=\"invalid_token\", resource_metadata=\"https://hecate.test/.well-known/oauth-protected-resource/hecate/v1\"",
            "{what}"
        );
        seen.insert(want);
    }
    assert_eq!(seen.len(), 10, "{seen:?}");

    // A wrong static-looking token is still `WrongToken`, and no credential
    // at all is 401 with the challenge that starts an OAuth client's sign-in.
    let a = bearer(&s, "not-a-jwt")
        .get("/hecate/v1/agent-chat/sessions")
        .await;
    assert_eq!(a.status, 401, "{}", a.body);
    let a = Api::new(&s).get("/hecate/v1/agent-chat/sessions").await;
    assert_eq!(a.status, 401, "{}", a.body);
    assert_eq!(
        a.header("www-authenticate"),
        Some(
            "Bearer resource_metadata=\"https://hecate.test/.well-known/oauth-protected-resource/hecate/v1\""
        )
    );

    // Unknown kids are refused from the cache: at most one fetch per
    // `jwks_refresh_secs` (10 s by default), however many arrive.
    let before = idp.fetches();
    for i in 0..5 {
        let a = bearer(
            &s,
            &signer.sign_with(json!({"kid": format!("nobody-{i}")}), &good),
        )
        .get("/hecate/v1/agent-chat/sessions")
        .await;
        assert_eq!(reason(&a), "unknown_kid", "{}", a.body);
    }
    assert!(
        idp.fetches() - before <= 1,
        "{} fetches",
        idp.fetches() - before
    );
}

#[tokio::test]
async fn mcp_takes_tokens_filters_tools_by_their_scope_and_points_401s_at_the_metadata() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let signer = Signer::es256("k1");
    let idp = Provider::start(&[&signer]);
    let home = Home::empty();
    home.write_config(&format!(
        "{}{}{}",
        fixture_upstream("fx", &[], ""),
        fixture_upstream("gx", &[], ""),
        idp_section(&idp.issuer, "")
    ));
    let s = serve(&home);
    let url = format!("{}/mcp", s.base);

    let raw = reqwest::Client::new()
        .post(&url)
        .header("accept", "application/json, text/event-stream")
        .json(
            &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"}}}),
        )
        .send()
        .await
        .expect("send");
    assert_eq!(raw.status(), 401);
    assert_eq!(
        raw.headers()
            .get("www-authenticate")
            .and_then(|v| v.to_str().ok()),
        Some(
            "Bearer resource_metadata=\"https://hecate.test/.well-known/oauth-protected-resource/mcp\""
        )
    );

    let token = signer.sign(&idp.claims("carol", "hecate:operator hecate:server:fx"));
    let client = ()
        .serve(StreamableHttpClientTransport::with_client(
            reqwest::Client::new(),
            StreamableHttpClientTransportConfig::with_uri(url.as_str()).auth_header(token),
        ))
        .await
        .expect("connect");
    let names: Vec<String> = client
        .list_all_tools()
        .await
        .expect("tools")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.iter().any(|n| n == "fx__echo"), "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("fx__")), "{names:?}");
    let r = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("fx__echo").with_arguments(
                json!({"message": "ok"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect("fx__echo");
    assert_eq!(r.content[0].as_text().map(|t| t.text.as_str()), Some("ok"));
    let e = client
        .call_tool(
            rmcp::model::CallToolRequestParams::new("gx__echo").with_arguments(
                json!({"message": "no"})
                    .as_object()
                    .cloned()
                    .unwrap_or_default(),
            ),
        )
        .await
        .expect_err("gx is out of scope");
    assert!(
        e.to_string().contains("the access token of idp:carol"),
        "{e}"
    );
    client.cancel().await.expect("close");

    // The audit log names the token's holder.
    let expired = signer.sign(&json!({"iss": idp.issuer, "sub": "carol", "aud": AUDIENCE,
        "exp": now() - 600}));
    let a = bearer(&s, &expired).get("/hecate/v1/mcp/calls").await;
    assert_eq!((a.status, reason(&a)), (401, "expired"), "{}", a.body);
    let auditor = bearer(&s, &signer.sign(&idp.claims("audit", "hecate:read")));
    let a = auditor.get("/hecate/v1/mcp/calls").await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert!(
        a.body["data"]
            .as_array()
            .expect("calls")
            .iter()
            .any(|c| c["client"].as_str().unwrap_or("").contains("idp:carol")),
        "{}",
        a.body
    );

    // A refused token on /mcp: the JSON-RPC error carries the reason.
    let bad = reqwest::Client::new()
        .post(&url)
        .bearer_auth(signer.sign(&json!({"iss": idp.issuer, "sub": "x",
            "aud": "https://other.test/mcp", "exp": now() + 60})))
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .expect("send");
    assert_eq!(bad.status(), 401);
    let challenge = bad
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    let body: Value = bad.json().await.expect("json");
    assert_eq!(body["error"]["data"]["reason"], "other_resource", "{body}");
}

#[tokio::test]
async fn protected_resource_metadata_is_public_and_only_with_a_provider() {
    let signer = Signer::es256("k1");
    let idp = Provider::start(&[&signer]);
    let mut home = Home::empty();
    home.set("HECATE_TOKEN", ADMIN);
    home.write_config(&idp_section(&idp.issuer, "resource_name = \"Team hub\""));
    let s = serve(&home);
    let open = Api::new(&s);
    for suffix in ["", "/mcp", "/hecate/v1"] {
        let a = open
            .get(&format!("/.well-known/oauth-protected-resource{suffix}"))
            .await;
        assert_eq!(a.status, 200, "{suffix}: {}", a.body);
        assert_eq!(a.body["resource"], AUDIENCE);
        assert_eq!(a.body["authorization_servers"], json!([idp.issuer]));
        assert_eq!(a.body["bearer_methods_supported"], json!(["header"]));
        assert_eq!(
            a.body["scopes_supported"],
            json!(["hecate:read", "hecate:operator", "hecate:admin"])
        );
        assert_eq!(a.body["resource_name"], "Team hub");
    }
    // The Host rules of the console apply: a rebinding name is refused.
    let a = open
        .send(
            open.request(
                reqwest::Method::GET,
                "/.well-known/oauth-protected-resource/mcp",
            )
            .header("host", "rebind.example"),
        )
        .await;
    assert_eq!(a.status, 403, "{}", a.body);
    assert_eq!(a.error_type(), "forbidden");

    // Without a provider the paths are the API's 404.
    let plain = Home::empty();
    let p = serve(&plain);
    for suffix in ["", "/mcp", "/hecate/v1"] {
        let a = Api::new(&p)
            .get(&format!("/.well-known/oauth-protected-resource{suffix}"))
            .await;
        assert_eq!(a.status, 404, "{suffix}: {}", a.body);
        assert_eq!(a.error_type(), "not_found", "{}", a.body);
    }
}

#[tokio::test]
async fn keys_come_from_discovery_rotate_on_an_unknown_kid_and_an_unreachable_provider_is_a_bounded_401()
 {
    // Discovery: no jwks_url, the issuer's OpenID configuration names it. A
    // key added later is fetched on its unknown kid (refresh allowed at once).
    let first = Signer::es256("k1");
    let idp = Provider::start(&[&first]);
    let home = Home::empty();
    home.write_config(&idp_section(&idp.issuer, "jwks_refresh_secs = 0"));
    let s = serve(&home);
    let claims = idp.claims("alice", "hecate:read");
    let a = bearer(&s, &first.sign(&claims))
        .get("/hecate/v1/agent-chat/sessions")
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let second = Signer::eddsa("k2");
    let a = bearer(&s, &second.sign(&claims))
        .get("/hecate/v1/agent-chat/sessions")
        .await;
    assert_eq!((a.status, reason(&a)), (401, "unknown_kid"), "{}", a.body);
    idp.publish(&[&first, &second]);
    let a = bearer(&s, &second.sign(&claims))
        .get("/hecate/v1/agent-chat/sessions")
        .await;
    assert_eq!(a.status, 200, "the rotated key is fetched: {}", a.body);

    // A provider that refuses connections, and one that never answers: 401
    // `jwks_unavailable`, within the fetch time-out, never a 500 or a hang.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let silent_addr = silent.local_addr().expect("addr");
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in silent.incoming().take(8).flatten() {
            held.push(conn);
        }
        std::thread::sleep(Duration::from_secs(60));
    });
    for jwks in [
        format!("http://{closed}/jwks"),
        format!("http://{silent_addr}/jwks"),
    ] {
        let home = Home::empty();
        home.write_config(&idp_section(
            &idp.issuer,
            &format!("jwks_url = \"{jwks}\"\nfetch_timeout_ms = 800"),
        ));
        let s = serve(&home);
        let started = Instant::now();
        let a = bearer(&s, &first.sign(&claims))
            .get("/hecate/v1/agent-chat/sessions")
            .await;
        assert_eq!(a.status, 401, "{jwks}: {}", a.body);
        assert_eq!(reason(&a), "jwks_unavailable", "{}", a.body);
        assert!(
            a.body["error"]["message"]
                .as_str()
                .unwrap_or_default()
                .contains(&jwks),
            "{}",
            a.body
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        // The static-token-less server still answers what needs no token.
        let h = Api::new(&s).get("/healthz").await;
        assert_eq!(h.status, 200);
    }
}
