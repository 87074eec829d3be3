//! Route candidates over real HTTP: two fixture model servers configured as
//! providers `a` and `b` that both serve model `m`. A request for the bare `m`
//! has both as candidates; each is checked before it is tried (deny patterns,
//! tool capability, the daily budget, cooldowns), a provider that answers 429
//! or 5xx is recorded as failed and the next one answers, and the provider is
//! then skipped for its cooldown. `GET /hecate/v1/traces` shows every
//! candidate with its outcome and skip reason.

use crate::support::common::{Home, ModelServer};
use crate::support::http::{Answer, Api, Served, serve};
use serde_json::{Value, json};

/// Providers `a` (on `fa`) and `b` (on `fb`), both serving `m`, with `config`
/// as the config file.
fn two_providers(fa: &ModelServer, fb: &ModelServer, config: &str) -> (Home, Served, Api) {
    let mut home = Home::empty();
    for (name, fx) in [("A", fa), ("B", fb)] {
        home.set(&format!("PROVIDER_{name}_KIND"), "openai");
        home.set(
            &format!("PROVIDER_{name}_BASE_URL"),
            &format!("{}/v1", fx.base),
        );
        home.set(&format!("PROVIDER_{name}_MODELS"), "m");
    }
    home.write_config(config);
    let served = serve(&home);
    let api = Api::new(&served);
    (home, served, api)
}

fn chat(model: &str) -> Value {
    json!({"model": model, "messages": [{"role": "user", "content": "hello there"}]})
}

/// The trace of the answer's request.
async fn trace_of(api: &Api, a: &Answer) -> Value {
    let id = a.header("x-request-id").expect("request id");
    let t = api.get(&format!("/hecate/v1/traces?request_id={id}")).await;
    assert_eq!(t.status, 200, "{}", t.body);
    t.body["data"][0].clone()
}

/// `(provider, outcome, skip_reason)` of each candidate of a trace.
fn candidates(trace: &Value) -> Vec<(String, String, String)> {
    trace["route_candidates"]
        .as_array()
        .expect("route_candidates")
        .iter()
        .map(|c| {
            (
                c["provider"].as_str().unwrap_or_default().to_string(),
                c["outcome"].as_str().unwrap_or_default().to_string(),
                c["skip_reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn c(provider: &str, outcome: &str, reason: &str) -> (String, String, String) {
    (provider.into(), outcome.into(), reason.into())
}

fn routing_row<'a>(status: &'a Value, name: &str) -> &'a Value {
    status["data"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["name"] == name))
        .unwrap_or_else(|| panic!("{name} missing from {status}"))
}

#[tokio::test]
async fn a_throttled_provider_fails_over_to_the_next_and_is_skipped_while_it_cools_down() {
    let fa = ModelServer::start(Some(json!([
        {"repeat": true, "status": 429, "error_message": "slow down", "retry_after": "120"},
    ])));
    let fb = ModelServer::start(None);
    let (_h, _s, api) = two_providers(&fa, &fb, "");

    let first = api.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(first.header("x-hecate-provider"), Some("b"));
    let t = trace_of(&api, &first).await;
    assert_eq!(t["route_reason"], "requested_model");
    assert_eq!(t["provider"], "b");
    assert_eq!(t["status"], "completed");
    assert_eq!(
        candidates(&t),
        [
            c("a", "failed", "provider_rate_limited"),
            c("b", "selected", "")
        ]
    );
    assert!(
        t["route_candidates"][0]["detail"]
            .as_str()
            .is_some_and(|d| d.contains("429")),
        "{t}"
    );

    let second = api.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(second.status, 200, "{}", second.body);
    let t = trace_of(&api, &second).await;
    assert_eq!(
        candidates(&t),
        [
            c("a", "skipped", "provider_rate_limited"),
            c("b", "selected", "")
        ],
        "a is cooling down for its Retry-After"
    );
    assert_eq!(
        fa.requests().len(),
        1,
        "the cooling provider was not asked again"
    );

    let pinned = api.post("/v1/chat/completions", chat("a/m")).await;
    assert_eq!(pinned.status, 429, "{}", pinned.body);
    assert_eq!(pinned.body["error"]["code"], "provider_rate_limited");
    let wait: u64 = pinned
        .header("retry-after")
        .and_then(|r| r.parse().ok())
        .expect("retry-after");
    assert!((1..=120).contains(&wait), "{wait}");
    assert_eq!(
        pinned.body["error"]["route_candidates"][0]["skip_reason"],
        "provider_rate_limited"
    );
    let t = trace_of(&api, &pinned).await;
    assert_eq!(t["status"], "failed");
    assert_eq!(t["route_reason"], "pinned_provider");
    assert_eq!(candidates(&t), [c("a", "skipped", "provider_rate_limited")]);

    let status = api.get("/hecate/v1/providers/status").await;
    let a = routing_row(&status.body, "a");
    assert_eq!(a["routing_ready"], false, "{a}");
    assert_eq!(a["routing_blocked_reason"], "provider_rate_limited");
    assert_eq!(routing_row(&status.body, "b")["routing_ready"], true);
}

#[tokio::test]
async fn a_failing_provider_opens_its_circuit_and_the_next_one_answers() {
    let fa = ModelServer::start(Some(json!([
        {"repeat": true, "status": 503, "error_message": "overloaded"},
    ])));
    let fb = ModelServer::start(None);
    let (_h, _s, api) = two_providers(
        &fa,
        &fb,
        "[gateway]\ncircuit_failures = 1\ncooldown_secs = 300\n",
    );

    let streamed = api
        .send(
            api.request(reqwest::Method::POST, "/v1/chat/completions")
                .json(&json!({"model": "m", "stream": true,
                              "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(streamed.status, 200);
    assert_eq!(streamed.header("x-hecate-provider"), Some("b"));
    let t = trace_of(&api, &streamed).await;
    assert_eq!(
        candidates(&t),
        [
            c("a", "failed", "provider_unhealthy"),
            c("b", "selected", "")
        ]
    );

    let next = api.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(next.status, 200);
    let t = trace_of(&api, &next).await;
    assert_eq!(
        candidates(&t),
        [c("a", "skipped", "circuit_open"), c("b", "selected", "")]
    );
    assert_eq!(fa.requests().len(), 1);

    let pinned = api
        .send(
            api.request(reqwest::Method::POST, "/v1/messages")
                .header("anthropic-version", "2023-06-01")
                .json(&json!({"model": "a/m", "max_tokens": 5,
                              "messages": [{"role": "user", "content": "hi"}]})),
        )
        .await;
    assert_eq!(pinned.status, 503, "{}", pinned.body);
    assert_eq!(pinned.body["error"]["type"], "overloaded_error");
    assert_eq!(pinned.body["error"]["hecate_type"], "route_impossible");
    assert_eq!(pinned.body["error"]["code"], "circuit_open");
    assert!(pinned.header("retry-after").is_some());

    // Both down: the last upstream failure is the answer, with both candidates.
    let down = ModelServer::start(Some(json!([
        {"repeat": true, "status": 500, "error_message": "boom"},
    ])));
    let (_h2, _s2, api2) = two_providers(&down, &fa, "");
    let failed = api2.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(failed.status, 502, "{}", failed.body);
    assert_eq!(failed.body["error"]["provider"], "b", "the last one tried");
    let t = trace_of(&api2, &failed).await;
    assert_eq!(t["status"], "failed");
    assert_eq!(
        candidates(&t),
        [
            c("a", "failed", "provider_unhealthy"),
            c("b", "failed", "provider_unhealthy")
        ]
    );
}

#[tokio::test]
async fn deny_patterns_and_the_daily_budget_skip_candidates_before_they_are_tried() {
    let fa = ModelServer::start(None);
    let fb = ModelServer::start(None);
    let (_h, _s, api) = two_providers(&fa, &fb, "[gateway]\ndeny = [\"a/*\"]\n");
    let a = api.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(a.status, 200);
    let t = trace_of(&api, &a).await;
    assert_eq!(
        candidates(&t),
        [c("a", "skipped", "policy_denied"), c("b", "selected", "")]
    );
    let denied = api.post("/v1/chat/completions", chat("a/m")).await;
    assert_eq!(denied.status, 422, "{}", denied.body);
    assert_eq!(denied.body["error"]["hecate_type"], "route_impossible");
    assert_eq!(denied.body["error"]["code"], "policy_denied");
    assert!(fa.requests().is_empty(), "a denied provider is never asked");

    // A budget of one micro-dollar: `a` is priced and answers until today's
    // spend reaches it; `b` has no price, so it cannot be preflighted at all.
    let fa = ModelServer::start(None);
    let fb = ModelServer::start(None);
    let (_h, _s, api) = two_providers(
        &fa,
        &fb,
        "[gateway]\ndaily_budget_usd = 0.000001\n\
         [pricing.\"a/m\"]\ninput_usd_per_mtok = 1000000.0\noutput_usd_per_mtok = 1000000.0\n",
    );
    let paid = api.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(paid.header("x-hecate-provider"), Some("a"), "{}", paid.body);
    let t = trace_of(&api, &paid).await;
    assert_eq!(
        candidates(&t),
        [
            c("a", "selected", ""),
            c("b", "skipped", "preflight_price_missing")
        ]
    );
    assert!(t["cost_micros_usd"].as_i64().is_some_and(|c| c >= 1), "{t}");
    let spent = api.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(spent.status, 422, "{}", spent.body);
    assert_eq!(spent.body["error"]["code"], "budget_denied");
    let t = trace_of(&api, &spent).await;
    assert_eq!(
        candidates(&t),
        [
            c("a", "skipped", "budget_denied"),
            c("b", "skipped", "preflight_price_missing")
        ]
    );
    assert_eq!(fa.requests().len(), 1);
    assert!(fb.requests().is_empty());
}

#[tokio::test]
async fn tool_requests_skip_models_marked_as_not_calling_tools() {
    let fa = ModelServer::start(None);
    let fb = ModelServer::start(None);
    let (_h, _s, api) = two_providers(
        &fa,
        &fb,
        "[providers.a.capabilities.\"m\"]\ntool_calling = \"none\"\n",
    );
    let tools = json!([{"type": "function", "function": {"name": "read_file",
        "parameters": {"type": "object", "properties": {}}}}]);
    let mut body = chat("m");
    body["tools"] = tools.clone();
    let a = api.post("/v1/chat/completions", body).await;
    assert_eq!(a.status, 200, "{}", a.body);
    assert_eq!(a.header("x-hecate-provider"), Some("b"));
    let t = trace_of(&api, &a).await;
    assert_eq!(
        candidates(&t),
        [
            c("a", "skipped", "capability_missing"),
            c("b", "selected", "")
        ]
    );
    let plain = api.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(
        plain.header("x-hecate-provider"),
        Some("a"),
        "without tools the model is fine"
    );
    let mut pinned = chat("a/m");
    pinned["tools"] = tools;
    let refused = api.post("/v1/chat/completions", pinned).await;
    assert_eq!(refused.status, 422, "{}", refused.body);
    let e = &refused.body["error"];
    assert_eq!(e["hecate_type"], "agent_chat.model_capability_required");
    assert_eq!(e["param"], "tools");
    assert_eq!(e["capabilities"]["tool_calling"], "none");
    assert_eq!(e["capabilities"]["source"], "config");
}

#[tokio::test]
async fn a_cooldown_one_replica_learns_is_honoured_by_another_on_the_same_store() {
    let fa = ModelServer::start(Some(json!([
        {"repeat": true, "status": 429, "error_message": "slow down", "retry_after": "120"},
    ])));
    let fb = ModelServer::start(None);
    let (home, _first, api) = two_providers(&fa, &fb, "[gateway]\ncooldown_sync_ms = 50\n");
    // A second `hecate serve` on the same home: the same store.
    let second = serve(&home);
    let other = Api::new(&second);

    let first = api.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(first.status, 200, "{}", first.body);
    assert_eq!(fa.requests().len(), 1, "the first replica learnt the 429");

    // The other replica adopts the cooldown without asking `a` itself.
    let mut adopted = Value::Null;
    for _ in 0..200 {
        let status = other.get("/hecate/v1/providers/status").await;
        adopted = routing_row(&status.body, "a").clone();
        if adopted["routing_ready"] == false {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(adopted["routing_ready"], false, "{adopted}");
    assert_eq!(adopted["routing_blocked_reason"], "provider_rate_limited");

    let answered = other.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    let t = trace_of(&other, &answered).await;
    assert_eq!(
        candidates(&t),
        [
            c("a", "skipped", "provider_rate_limited"),
            c("b", "selected", "")
        ],
        "the second replica skips the provider the first one found throttled"
    );
    let pinned = other.post("/v1/chat/completions", chat("a/m")).await;
    assert_eq!(pinned.status, 429, "{}", pinned.body);
    let wait: u64 = pinned
        .header("retry-after")
        .and_then(|r| r.parse().ok())
        .expect("retry-after");
    assert!(
        (100..=120).contains(&wait),
        "the first replica's Retry-After: {wait}"
    );
    assert_eq!(fa.requests().len(), 1, "`a` was asked once in all");
}

/// Creates a model session for the bare model `model` and sends it one prompt;
/// answers the session as created and the reply message.
async fn chat_turn(api: &Api, model: &str) -> (Value, Value) {
    let a = api
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({"runtime_kind": "model", "model": model}),
        )
        .await;
    assert_eq!(a.status, 200, "{}", a.body);
    let created = a.body["data"].clone();
    let id = created["id"].as_str().expect("id");
    let r = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/messages"),
            json!({"content": "hello there"}),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.body);
    (created, r.body["data"]["messages"][1].clone())
}

#[tokio::test]
async fn a_chat_turn_resolves_a_bare_model_two_providers_serve_as_the_gateway_does() {
    // Both healthy: the chat turn and /v1 both take the first candidate.
    let fa = ModelServer::start(None);
    let fb = ModelServer::start(None);
    let (_h, _s, api) = two_providers(&fa, &fb, "");
    let (created, reply) = chat_turn(&api, "m").await;
    assert_eq!(
        (&created["provider"], &created["model"]),
        (&json!("a"), &json!("m"))
    );
    assert_eq!(reply["status"], "completed", "{reply}");
    assert_eq!(reply["provider"], "a", "{reply}");
    let v1 = api.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(v1.header("x-hecate-provider"), Some("a"));
    assert_eq!((fa.requests().len(), fb.requests().len()), (2, 0));

    // The first one cooling down (a 429 /v1 met): both go to the second.
    let fa = ModelServer::start(Some(json!([
        {"repeat": true, "status": 429, "error_message": "slow down", "retry_after": "120"},
    ])));
    let fb = ModelServer::start(None);
    let (_h, _s, api) = two_providers(&fa, &fb, "");
    let v1 = api.post("/v1/chat/completions", chat("m")).await;
    assert_eq!(v1.header("x-hecate-provider"), Some("b"));
    let (created, reply) = chat_turn(&api, "m").await;
    assert_eq!(created["provider"], "b", "{created}");
    assert_eq!(reply["provider"], "b", "{reply}");
    assert_eq!(fa.requests().len(), 1, "only /v1's first try reached a");

    // A pinned provider is still taken as named.
    let (created, _) = chat_turn(&api, "a/m").await;
    assert_eq!(created["provider"], "a");
}

#[tokio::test]
async fn a_model_only_discovery_lists_routes_and_an_unknown_one_gets_suggestions_on_every_face() {
    // Neither provider declares models: `dead` cannot be reached, `fix` lists
    // `fake-model` when asked.
    let fix = ModelServer::start_listing(None, "fake-model,other-model");
    let mut home = Home::empty();
    home.set("PROVIDER_DEAD_KIND", "openai");
    home.set("PROVIDER_DEAD_BASE_URL", "http://127.0.0.1:9/v1");
    home.set("PROVIDER_FIX_KIND", "openai");
    home.set("PROVIDER_FIX_BASE_URL", &format!("{}/v1", fix.base));
    let served = serve(&home);
    let api = Api::new(&served);

    // A bare model one provider lists runs there, as /v1 would send it.
    let (created, reply) = chat_turn(&api, "fake-model").await;
    assert_eq!(created["provider"], "fix", "{created}");
    assert_eq!(reply["status"], "completed", "{reply}");

    // A model nobody lists: 422 with the nearest listed models and readiness.
    let a = api
        .post(
            "/hecate/v1/agent-chat/sessions",
            json!({"runtime_kind": "model", "model": "fake-modle"}),
        )
        .await;
    assert_eq!(a.status, 422, "{}", a.body);
    let e = &a.body["error"];
    assert_eq!(e["type"], "model_not_configured", "{e}");
    assert_eq!(e["suggested_models"][0], "fix/fake-model", "{e}");
    assert!(
        !e["message"].as_str().unwrap_or_default().is_empty()
            && e["operator_action"]
                .as_str()
                .is_some_and(|a| a.contains("suggested_models")),
        "{e}"
    );
    let rows = e["providers"].as_array().expect("readiness rows");
    let row = |name: &str| rows.iter().find(|r| r["provider"] == name).cloned();
    assert_eq!(
        row("fix").map(|r| r["routing_ready"].clone()),
        Some(json!(true)),
        "{rows:?}"
    );
    assert_eq!(
        row("dead").map(|r| r["routing_blocked_reason"].clone()),
        Some(json!("provider_unhealthy")),
        "{rows:?}"
    );

    // The CLI: exit 5 with the suggestions printed.
    let out = home.run(&["chat", "--model", "fake-modle", "hello"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(5), "{stderr}");
    assert!(stderr.contains("model_not_configured"), "{stderr}");
    assert!(
        stderr.contains("suggested models: fix/fake-model"),
        "{stderr}"
    );
}

/// A model turn takes the route `/v1` takes: when the session's provider fails
/// before the first token, the next provider serving the model answers the
/// same turn, the trace shows both candidates, and the session moves to the
/// one that answered. A turn whose request names the provider is pinned to it.
/// `hecate chat --model m` fails over the same way.
#[tokio::test]
async fn a_chat_turn_fails_over_to_the_next_provider_before_the_first_token() {
    let fa = ModelServer::start(Some(json!([
        {"repeat": true, "status": 503, "error_message": "down for maintenance"},
    ])));
    let fb = ModelServer::start(None);
    let (home, _s, api) = two_providers(&fa, &fb, "");
    let (created, reply) = chat_turn(&api, "m").await;
    assert_eq!(created["provider"], "a", "routing took the first candidate");
    assert_eq!(reply["status"], "completed", "{reply}");
    assert_eq!(reply["provider"], "b", "{reply}");
    let id = created["id"].as_str().expect("id");
    let request_id = reply["request_id"].as_str().expect("request id");
    let t = api
        .get(&format!("/hecate/v1/traces?request_id={request_id}"))
        .await;
    let trace = &t.body["data"][0];
    assert_eq!(trace["provider"], "b", "{trace}");
    assert_eq!(trace["status"], "completed", "{trace}");
    assert_eq!(
        candidates(trace),
        [
            c("a", "failed", "provider_unhealthy"),
            c("b", "selected", "")
        ]
    );
    let session = api
        .get(&format!("/hecate/v1/agent-chat/sessions/{id}"))
        .await;
    assert_eq!(session.body["data"]["provider"], "b", "{}", session.body);
    assert_eq!(fa.requests().len(), 1);

    // The next turn goes to `b` first: `a` is not asked again.
    let r = api.say(id, "again").await;
    assert_eq!(last_message_of(&r.body)["provider"], "b", "{}", r.body);
    assert_eq!(fa.requests().len(), 1);

    // Naming the provider pins the turn: `a` fails it, nobody else is tried.
    let r = api
        .post(
            &format!("/hecate/v1/agent-chat/sessions/{id}/messages"),
            json!({"content": "only a", "provider": "a"}),
        )
        .await;
    let pinned = last_message_of(&r.body);
    assert_eq!(pinned["status"], "failed", "{pinned}");
    let request_id = pinned["request_id"].as_str().expect("request id");
    let t = api
        .get(&format!("/hecate/v1/traces?request_id={request_id}"))
        .await;
    let trace = &t.body["data"][0];
    assert_eq!(trace["route_reason"], "pinned_provider", "{trace}");
    assert_eq!(candidates(trace), [c("a", "failed", "provider_unhealthy")]);
    assert_eq!(fa.requests().len(), 2);

    // The CLI's turn fails over too.
    let out = home.run(&["chat", "--model", "m", "from the terminal"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!stdout.trim().is_empty(), "an answer from b");
    assert_eq!(
        fb.requests().len(),
        3,
        "b answered the HTTP turns and the CLI's"
    );
}

/// The last message of a turn's answer.
fn last_message_of(body: &Value) -> Value {
    body["data"]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null)
}
