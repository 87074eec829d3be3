//! `GET /hecate/v1/traces/costs` over the real `hecate serve` and the fixture
//! model server: the sums per day, provider and model equal what the listed
//! traces add up to, under the list's own filters; the answer's `until` pins
//! the sums; bad groupings, statuses and times are 400s naming the field.

use crate::support::common::{Home, ModelServer};
use crate::support::http::{Api, serve};
use serde_json::{Value, json};
use std::collections::BTreeMap;

const PRICES: &str = r#"
[pricing."oai/gpt-fix"]
input_usd_per_mtok = 1000000.0
output_usd_per_mtok = 1000000.0
"#;

/// Every trace the list gives for `query` (paged through).
async fn all_traces(api: &Api, query: &str) -> Vec<Value> {
    let mut out = Vec::new();
    loop {
        let page = api
            .get(&format!(
                "/hecate/v1/traces?limit=1000&offset={}{query}",
                out.len()
            ))
            .await;
        assert_eq!(page.status, 200, "{}", page.body);
        let rows = page.body["data"].as_array().expect("data").clone();
        let done = rows.len() < 1000;
        out.extend(rows);
        if done {
            return out;
        }
    }
}

/// The sums per `key` of `traces`: (requests, unpriced, tokens, micro-USD).
fn sums(
    traces: &[Value],
    key: impl Fn(&Value) -> String,
) -> BTreeMap<String, (u64, u64, u64, i64)> {
    let mut out = BTreeMap::new();
    for t in traces {
        let e = out.entry(key(t)).or_insert((0, 0, 0, 0));
        e.0 += 1;
        e.2 += t["total_tokens"].as_u64().expect("tokens");
        match t["cost_micros_usd"].as_i64() {
            Some(c) => e.3 += c,
            None => e.1 += 1,
        }
    }
    out
}

/// The groups of a costs answer, by key.
fn groups(body: &Value) -> BTreeMap<String, (u64, u64, u64, i64)> {
    body["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| {
            (
                g["key"].as_str().expect("key").to_string(),
                (
                    g["requests"].as_u64().expect("requests"),
                    g["unpriced"].as_u64().expect("unpriced"),
                    g["tokens"].as_u64().expect("tokens"),
                    g["cost_micros_usd"].as_i64().expect("cost"),
                ),
            )
        })
        .collect()
}

#[tokio::test]
async fn costs_per_day_provider_and_model_add_up_to_the_listed_traces() {
    let fx = ModelServer::start(Some(json!([{"text": "answer", "repeat": true}])));
    let home = Home::with_both_kinds(&fx);
    home.write_config(PRICES);
    let served = serve(&home);
    let api = Api::new(&served);

    // Nothing yet: no groups, a zero total, and the moment it was taken.
    let empty = api.get("/hecate/v1/traces/costs").await;
    assert_eq!(empty.status, 200, "{}", empty.body);
    assert_eq!(empty.body["object"], "trace_costs");
    assert_eq!(empty.body["by"], "day");
    assert_eq!(empty.body["groups"], json!([]));
    assert_eq!(empty.body["total"]["requests"], 0);
    let before_any = empty.body["until"].as_str().expect("until").to_string();

    for (path, model, n) in [
        ("/v1/chat/completions", "gpt-fix", 5),
        ("/v1/chat/completions", "shared", 2),
        ("/v1/messages", "ant/claude-fix", 3),
    ] {
        for i in 0..n {
            let rb = api
                .request(reqwest::Method::POST, path)
                .header("anthropic-version", "2023-06-01");
            let a = api
                .send(rb.json(&json!({"model": model, "max_tokens": 20,
                    "messages": [{"role": "user", "content": format!("q{i}")}]})))
                .await;
            assert_eq!(a.status, 200, "{}", a.body);
        }
    }

    let traces = all_traces(&api, "").await;
    assert_eq!(traces.len(), 10);
    for (by, key) in [
        (
            "day",
            Box::new(|t: &Value| t["started_at"].as_str().expect("text")[..10].to_string())
                as Box<dyn Fn(&Value) -> String>,
        ),
        (
            "provider",
            Box::new(|t: &Value| t["provider"].as_str().expect("text").to_string()),
        ),
        (
            "model",
            Box::new(|t: &Value| t["model"].as_str().expect("text").to_string()),
        ),
    ] {
        let c = api.get(&format!("/hecate/v1/traces/costs?by={by}")).await;
        assert_eq!(c.status, 200, "{}", c.body);
        assert_eq!(c.body["by"], by);
        assert_eq!(groups(&c.body), sums(&traces, &key), "by {by}: {}", c.body);
        let total = &c.body["total"];
        assert_eq!(total["requests"], 10, "{total}");
        let priced: i64 = traces
            .iter()
            .filter_map(|t| t["cost_micros_usd"].as_i64())
            .sum();
        assert!(priced > 0, "gpt-fix is priced");
        assert_eq!(total["cost_micros_usd"].as_i64(), Some(priced));
        assert_eq!(
            total["unpriced"].as_u64(),
            Some(3 + 2),
            "claude-fix and shared have no price"
        );
        assert_eq!(
            total["cost_usd"],
            format!("{}.{:06}", priced / 1_000_000, priced % 1_000_000)
        );
    }
    // Dearest first: the priced provider leads.
    let by_provider = api.get("/hecate/v1/traces/costs?by=provider").await;
    assert_eq!(by_provider.body["groups"][0]["key"], "oai");

    // The list's filters narrow the sums exactly as they narrow the list.
    for query in [
        "&provider=ant",
        "&model=gpt-fix",
        "&status=completed",
        "&status=failed",
    ] {
        let listed = all_traces(&api, query).await;
        let c = api
            .get(&format!("/hecate/v1/traces/costs?by=model{query}"))
            .await;
        assert_eq!(c.status, 200, "{}", c.body);
        assert_eq!(
            groups(&c.body),
            sums(&listed, |t| t["model"].as_str().expect("text").to_string()),
            "{query}"
        );
    }

    // `until` pins the sums: a bound from before the requests sums nothing, and
    // the bound an answer names gives the same answer again.
    let pinned = api
        .get(&format!("/hecate/v1/traces/costs?until={before_any}"))
        .await;
    assert_eq!(pinned.body["groups"], json!([]), "{}", pinned.body);
    let now = api.get("/hecate/v1/traces/costs?by=model").await;
    let until = now.body["until"].as_str().expect("until");
    let again = api
        .get(&format!("/hecate/v1/traces/costs?by=model&until={until}"))
        .await;
    assert_eq!(again.body["groups"], now.body["groups"]);

    // Bad queries are 400s that say what is wrong.
    for (query, needle) in [
        ("by=week", "by"),
        ("status=done", "status"),
        ("since=yesterday", "since"),
        ("until=2026-13-01", "until"),
    ] {
        let bad = api.get(&format!("/hecate/v1/traces/costs?{query}")).await;
        assert_eq!(bad.status, 400, "{query}: {}", bad.body);
        assert_eq!(bad.body["error"]["type"], "invalid_request", "{query}");
        let message = bad.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(needle), "{query}: {message}");
    }
}
