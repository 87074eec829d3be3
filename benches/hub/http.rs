//! `http`: what the HTTP API costs, against a direct path in the same
//! run. It starts the fixture model server and the real `hecate serve` (temporary
//! config and data dir), seeds one session through the engine before the server
//! starts, then measures over loopback with keep-alive connections, each loop
//! bounded in time:
//!
//! - `GET …/sessions/{id}` of the seeded session vs `GET /healthz`;
//! - `POST …/sessions/{id}/messages` on the echo fixture vs the same streaming Chat
//!   Completions request sent straight to the fixture (one session per connection,
//!   posts sequential within it, since a session runs one turn at a time);
//! - `GET /v1/models` with a named API key vs without a credential (the key
//!   check: a store read per request);
//! - SSE fan-out: from posting a message until the first update and the `done`
//!   reached every one of N subscribers;
//! - the server's resident memory idle and with the largest subscriber count connected.
//!
//! No thresholds: the figures go into the docs.

use crate::load::{expect_ok, http_client, load, load_get, ratios, rss_kib, timed};
use crate::support::{
    Listening, TempDir, fixture_bin, fixture_model_server, num, percentile, serve_on_ephemeral_port,
};
use anyhow::Context;
use futures::StreamExt;
use hecate::adapters::providers::pricing::Pricebook;
use hecate::adapters::providers::{ProviderClient, ProviderConfig, ProviderKind};
use hecate::domain::memory::HistoryStrategy;
use hecate::engine::{CreateSession, Engine, EngineConfig, SendMessage};
use hecate::runtimes::model::{DEFAULT_MAX_TOKENS, ModelRuntime};
use hecate::store::sqlite::DB_FILE;
use hecate::store::{SqliteStore, Store};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Namespace, provider and model the benchmark's sessions use.
pub(crate) const NAMESPACE: &str = "default";
pub(crate) const PROVIDER: &str = "fix";
pub(crate) const MODEL: &str = "fixture-model";
/// How long any single step may wait for the server before the run fails.
pub(crate) const STEP_TIMEOUT: Duration = Duration::from_secs(300);

/// Arguments of the `http` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct HttpArgs {
    /// Messages in the session read by `GET …/sessions/{id}` (two per turn).
    #[arg(long, default_value_t = 1000)]
    pub messages: usize,
    /// Duration of each timed request loop, in milliseconds.
    #[arg(long, default_value_t = 5000)]
    pub duration_ms: u64,
    /// Concurrent keep-alive connections in each request loop.
    #[arg(long, default_value_t = 4)]
    pub connections: usize,
    /// Posts per session in the message loop before a connection moves to a fresh
    /// session, so answer bodies stay comparable over the run.
    #[arg(long, default_value_t = 10)]
    pub turns_per_session: usize,
    /// Subscriber counts for the SSE fan-out; the largest is also the memory figure.
    #[arg(long, value_delimiter = ',', default_value = "1,100,1000")]
    pub subscribers: Vec<usize>,
    /// The hecate-fixtures binary (default: the one of this build).
    #[arg(long)]
    pub fixture_bin: Option<PathBuf>,
    /// Print JSON instead of a text table.
    #[arg(long)]
    pub json: bool,
}

/// Starts `hecate serve` on an ephemeral loopback port (connection cap raised
/// past the subscriber counts), with `env` added to its environment, and waits
/// for its address.
pub(crate) async fn start_serve(
    dir: &Path,
    fixture_v1: &str,
    env: &[(&str, &str)],
) -> anyhow::Result<Listening> {
    start_serve_with(dir, fixture_v1, env, "").await
}

/// [`start_serve`] with `config` (TOML) added to its config file.
pub(crate) async fn start_serve_with(
    dir: &Path,
    fixture_v1: &str,
    env: &[(&str, &str)],
    config: &str,
) -> anyhow::Result<Listening> {
    // The fan-out opens one connection per subscriber; the default cap (1024)
    // would refuse some of them at the largest count.
    std::fs::write(
        dir.join("config.toml"),
        format!("[server]\nmax_connections = 100000\n{config}"),
    )
    .context("writing the benchmark config")?;
    let mut all = vec![("PROVIDER_FIX_BASE_URL", fixture_v1)];
    all.extend_from_slice(env);
    serve_on_ephemeral_port(dir, &all, STEP_TIMEOUT).await
}

/// A prompt of about forty words, so each echoed answer streams as many deltas.
pub(crate) fn prompt(i: usize) -> String {
    let words: Vec<String> = (0..40).map(|w| format!("word{w}")).collect();
    format!("turn {i}: {}", words.join(" "))
}

/// Writes a session of `turns` model turns (two messages each) into `store`, which
/// the server will open next, through the engine, so it holds real runs and run
/// events; `history` is its working-memory strategy (the default when `None`).
pub(crate) async fn seed(
    store: Arc<dyn Store>,
    fixture_v1: &str,
    turns: usize,
    history: Option<HistoryStrategy>,
) -> anyhow::Result<String> {
    let http = ProviderClient::default_http()?;
    let provider = ProviderConfig {
        name: PROVIDER.into(),
        kind: ProviderKind::Openai,
        base_url: fixture_v1.to_string(),
        api_key: None,
        models: vec![],
    };
    let runtime = ModelRuntime::new(
        vec![ProviderClient::new(http, provider)],
        Pricebook::default(),
    );
    let (engine, _) = Engine::start(store, runtime.into(), EngineConfig::default()).await?;
    let session = engine
        .create_session(
            NAMESPACE,
            CreateSession {
                title: Some("bench http".into()),
                model: Some(format!("{PROVIDER}/{MODEL}")),
                history,
                ..Default::default()
            },
        )
        .await?;
    for i in 0..turns {
        let mut turn = engine
            .send_message(
                NAMESPACE,
                &session.id,
                SendMessage {
                    content: prompt(i),
                    ..Default::default()
                },
            )
            .await?;
        if let Some(e) = turn.wait().await.error {
            return Err(e.into());
        }
    }
    Ok(session.id.to_string())
}

/// Creates a read-only named API key over HTTP (the server has no static
/// token, so the request is the admin's) and returns its token.
async fn create_key(http: &reqwest::Client, base: &str) -> anyhow::Result<String> {
    let body = expect_ok(
        http.post(format!("{base}/hecate/v1/keys"))
            .json(&json!({"name": "bench", "scope": ["read"]})),
    )
    .await?;
    let v: Value = serde_json::from_slice(&body)?;
    Ok(v["token"]
        .as_str()
        .context("created key has no token")?
        .to_string())
}

/// Creates a model session over HTTP and returns its id.
pub(crate) async fn create_session(http: &reqwest::Client, base: &str) -> anyhow::Result<String> {
    create_session_with(http, base, json!({})).await
}

/// [`create_session`] with `extra` fields in the creating request.
pub(crate) async fn create_session_with(
    http: &reqwest::Client,
    base: &str,
    extra: Value,
) -> anyhow::Result<String> {
    let mut body = json!({"model": format!("{PROVIDER}/{MODEL}"), "title": "bench http"});
    if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    let body = expect_ok(
        http.post(format!("{base}/hecate/v1/agent-chat/sessions"))
            .json(&body),
    )
    .await?;
    let v: Value = serde_json::from_slice(&body)?;
    Ok(v["data"]["id"]
        .as_str()
        .context("created session has no id")?
        .to_string())
}

/// Times `POST …/sessions/{id}/messages` on `conns` keep-alive connections for
/// `duration`: each connection posts to its own session (created with
/// `session_body`) and moves to a fresh one every `per_session` posts, so answer
/// sizes stay comparable over the run; creating a session is not timed.
pub(crate) async fn post_turns(
    http: &reqwest::Client,
    base: &str,
    conns: usize,
    duration: Duration,
    per_session: usize,
    session_body: Value,
) -> anyhow::Result<Value> {
    let slots: Arc<Vec<tokio::sync::Mutex<String>>> =
        Arc::new((0..conns).map(|_| tokio::sync::Mutex::default()).collect());
    for slot in slots.iter() {
        *slot.lock().await = create_session_with(http, base, session_body.clone()).await?;
    }
    let (http, base) = (http.clone(), base.to_string());
    load(
        conns,
        duration,
        Arc::new(move |w, n| {
            let (http, base, slots, body) = (
                http.clone(),
                base.clone(),
                slots.clone(),
                session_body.clone(),
            );
            Box::pin(async move {
                let mut slot = slots[w].lock().await;
                if n > 0 && n.is_multiple_of(per_session) {
                    *slot = create_session_with(&http, &base, body).await?;
                }
                timed(
                    http.post(format!(
                        "{base}/hecate/v1/agent-chat/sessions/{}/messages",
                        *slot
                    ))
                    .json(&json!({"content": prompt(n)})),
                )
                .await
            })
        }),
    )
    .await
}

/// What one subscriber saw after the message was posted.
struct Seen {
    first_update: Option<Instant>,
    done: Option<Instant>,
}

/// Opens `n` subscribers on a fresh session, posts one message, and times the
/// first update and the `done` at every subscriber; `serve_pid` is sampled for
/// memory once all are connected.
async fn fanout(base: &str, n: usize, serve_pid: u32) -> anyhow::Result<Value> {
    let http = http_client(1)?;
    let id = create_session(&http, base).await?;
    let url = format!("{base}/hecate/v1/agent-chat/sessions/{id}/stream");
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel::<()>(n.max(1));
    let subscribers: Vec<_> = (0..n)
        .map(|_| {
            let (http, url, ready) = (http.clone(), url.clone(), ready_tx.clone());
            tokio::spawn(async move {
                let resp = http.get(&url).send().await?.error_for_status()?;
                let mut events = eventsource_stream::Eventsource::eventsource(resp.bytes_stream());
                let first = events.next().await.context("stream ended early")??;
                anyhow::ensure!(first.event == "snapshot", "first event {}", first.event);
                ready.send(()).await.ok();
                let mut seen = Seen {
                    first_update: None,
                    done: None,
                };
                while let Some(e) = events.next().await {
                    let e = e?;
                    seen.first_update.get_or_insert_with(Instant::now);
                    if e.event == "done" {
                        seen.done = Some(Instant::now());
                        break;
                    }
                }
                anyhow::Ok(seen)
            })
        })
        .collect();
    drop(ready_tx);
    tokio::time::timeout(STEP_TIMEOUT, async {
        for _ in 0..n {
            ready_rx.recv().await.context("a subscriber failed")?;
        }
        anyhow::Ok(())
    })
    .await
    .context("subscribers did not all connect")??;
    let rss_connected = rss_kib(serve_pid)?;
    let posted = Instant::now();
    expect_ok(
        http.post(format!(
            "{base}/hecate/v1/agent-chat/sessions/{id}/messages"
        ))
        .json(&json!({"content": "fan out to every subscriber"})),
    )
    .await?;
    let mut first = Vec::with_capacity(n);
    let mut done = Vec::with_capacity(n);
    let joined = tokio::time::timeout(STEP_TIMEOUT, futures::future::join_all(subscribers))
        .await
        .context("subscribers did not all see done")?;
    for r in joined {
        let seen = r??;
        let at = |t: Option<Instant>| t.map(|t| t.duration_since(posted).as_secs_f64() * 1e3);
        first.push(at(seen.first_update).context("a subscriber saw no update")?);
        done.push(at(seen.done).context("a subscriber saw no done")?);
    }
    first.sort_by(f64::total_cmp);
    done.sort_by(f64::total_cmp);
    Ok(json!({
        "subscribers": n,
        "first_update_all_ms": first.last().copied().unwrap_or(0.0),
        "first_update_median_ms": percentile(&first, 0.5),
        "done_all_ms": done.last().copied().unwrap_or(0.0),
        "done_median_ms": percentile(&done, 0.5),
        "serve_rss_kib_connected": rss_connected,
    }))
}

/// Runs the benchmark and returns its report.
pub async fn bench(args: &HttpArgs) -> anyhow::Result<Value> {
    let fixture_path = fixture_bin(args.fixture_bin.as_deref());
    let dir = TempDir::new("http")?;
    std::fs::create_dir_all(dir.path().join("data"))?;
    run(args, &fixture_path, dir.path()).await
}

/// Starts the peers, seeds the session and runs every measurement.
async fn run(args: &HttpArgs, fixture_path: &Path, dir: &Path) -> anyhow::Result<Value> {
    let fixture = fixture_model_server(fixture_path).await?;
    let fixture_v1 = format!("{}/v1", fixture.base);
    let turns = args.messages.div_ceil(2).max(1);
    let seeding = Instant::now();
    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.join("data").join(DB_FILE))?);
    let session = seed(store, &fixture_v1, turns, None).await?;
    let seed_s = seeding.elapsed().as_secs_f64();
    let mut serve = start_serve(dir, &fixture_v1, &[]).await?;
    let serve_pid = serve.process.child().id().context("serve has no pid")?;
    let start_rss = rss_kib(serve_pid)?;
    let base = serve.base.clone();
    let duration = Duration::from_millis(args.duration_ms.max(1));
    let conns = args.connections.max(1);
    let http = http_client(conns)?;

    // GET the big session vs /healthz.
    let get_url = format!("{base}/hecate/v1/agent-chat/sessions/{session}");
    let body = expect_ok(http.get(&get_url)).await?;
    let body_bytes = body.len();
    let got: Value = serde_json::from_slice(&body)?;
    let stored = got["data"]["messages"].as_array().map_or(0, Vec::len);
    let healthz_url = format!("{base}/healthz");
    let healthz = load_get(&http, &healthz_url, conns, duration).await?;
    let get_session = load_get(&http, &get_url, conns, duration).await?;

    // POST …/messages vs the same request straight to the fixture.
    let direct = {
        let (http, url) = (http.clone(), format!("{fixture_v1}/chat/completions"));
        load(
            conns,
            duration,
            Arc::new(move |_, n| {
                let req = http.post(&url).json(&json!({
                    "model": MODEL,
                    "messages": [{"role": "user", "content": prompt(n)}],
                    "stream": true,
                    "stream_options": {"include_usage": true},
                    "max_tokens": DEFAULT_MAX_TOKENS,
                }));
                Box::pin(timed(req))
            }),
        )
        .await?
    };
    // The credential check: `GET /v1/models` with a named key (one store read
    // per request, a throttled last-used write) vs the same request bare (the
    // server has no static token, so a bare request is admitted at once).
    let key = create_key(&http, &base).await?;
    let models_url = format!("{base}/v1/models");
    let bare_models = load_get(&http, &models_url, conns, duration).await?;
    let keyed_models = {
        let (http, url) = (http.clone(), models_url.clone());
        load(
            conns,
            duration,
            Arc::new(move |_, _| Box::pin(timed(http.get(&url).bearer_auth(&key)))),
        )
        .await?
    };

    let per_session = args.turns_per_session.max(1);
    let post_messages = post_turns(&http, &base, conns, duration, per_session, json!({})).await?;

    // SSE fan-out and memory.
    let idle_rss = rss_kib(serve_pid)?;
    let mut fanouts = Vec::new();
    for &n in &args.subscribers {
        fanouts.push(fanout(&base, n.max(1), serve_pid).await?);
    }
    let largest = fanouts
        .iter()
        .max_by_key(|f| f["subscribers"].as_u64().unwrap_or(0))
        .cloned()
        .unwrap_or(Value::Null);
    let subs = largest["subscribers"].as_u64().unwrap_or(0);
    let connected = largest["serve_rss_kib_connected"].as_u64().unwrap_or(0);
    serve.process.stop().await;
    fixture.process.stop().await;
    Ok(json!({
        "benchmark": "http",
        "build": if cfg!(debug_assertions) { "debug" } else { "release" },
        "parameters": {
            "messages": args.messages,
            "duration_ms": args.duration_ms,
            "connections": conns,
            "turns_per_session": per_session,
            "subscribers": args.subscribers,
        },
        "seed_seconds": seed_s,
        "get_session": {
            "messages": stored,
            "body_bytes": body_bytes,
            "target": get_session,
            "baseline_healthz": healthz,
            "ratio_vs_baseline": ratios(&get_session, &healthz),
        },
        "post_message": {
            "target": post_messages,
            "baseline_direct": direct,
            "ratio_vs_baseline": ratios(&post_messages, &direct),
            "note": "hecate: persisted turn on the echo fixture plus the session in the answer; \
                     direct: the same streaming Chat Completions request to the fixture",
        },
        "named_key": {
            "target": keyed_models,
            "baseline_no_credential": bare_models,
            "ratio_vs_baseline": ratios(&keyed_models, &bare_models),
            "note": "GET /v1/models with a named API key in Authorization vs without one",
        },
        "sse_fanout": fanouts,
        "memory": {
            "serve_rss_kib_start": start_rss,
            "serve_rss_kib_idle": idle_rss,
            "subscribers": subs,
            "serve_rss_kib_connected": connected,
            "per_subscriber_kib": (connected as f64 - idle_rss as f64) / subs.max(1) as f64,
        },
    }))
}

/// Renders the report as a text table.
pub fn table(report: &Value) -> String {
    let mut out = String::new();
    let f = |v: &Value, k: &str| num(v, k);
    out.push_str(&format!(
        "http benchmark ({} build, {} connections, {} ms per loop)\n\n",
        report["build"].as_str().unwrap_or("?"),
        report["parameters"]["connections"],
        report["parameters"]["duration_ms"],
    ));
    out.push_str(&format!(
        "{:<44} {:>10} {:>10} {:>10}\n",
        "request loop", "req/s", "p50 ms", "p99 ms"
    ));
    let g = &report["get_session"];
    let p = &report["post_message"];
    let rows = [
        (
            format!(
                "GET session ({} messages, {} B)",
                g["messages"], g["body_bytes"]
            ),
            &g["target"],
        ),
        (
            "GET /healthz (baseline)".to_string(),
            &g["baseline_healthz"],
        ),
        (
            "GET /v1/models with a named key".to_string(),
            &report["named_key"]["target"],
        ),
        (
            "GET /v1/models, no credential (baseline)".to_string(),
            &report["named_key"]["baseline_no_credential"],
        ),
        ("POST …/messages (echo fixture)".to_string(), &p["target"]),
        (
            "direct Chat Completions (baseline)".to_string(),
            &p["baseline_direct"],
        ),
    ];
    for (name, v) in rows {
        out.push_str(&format!(
            "{:<44} {:>10.0} {:>10.3} {:>10.3}\n",
            name,
            f(v, "requests_per_s"),
            f(v, "p50_ms"),
            f(v, "p99_ms"),
        ));
    }
    for (name, r) in [
        ("GET session / healthz", &g["ratio_vs_baseline"]),
        ("POST message / direct", &p["ratio_vs_baseline"]),
    ] {
        out.push_str(&format!(
            "{:<44} {:>10.3} {:>10.2} {:>10.2}  (ratios)\n",
            name,
            f(r, "requests_per_s"),
            f(r, "p50"),
            f(r, "p99"),
        ));
    }
    out.push_str(&format!(
        "\n{:<14} {:>18} {:>18} {:>14} {:>14}\n",
        "subscribers", "first update (all)", "done (all) ms", "done p50 ms", "serve RSS KiB"
    ));
    for s in report["sse_fanout"].as_array().into_iter().flatten() {
        out.push_str(&format!(
            "{:<14} {:>18.1} {:>18.1} {:>14.1} {:>14}\n",
            s["subscribers"].as_u64().unwrap_or(0),
            f(s, "first_update_all_ms"),
            f(s, "done_all_ms"),
            f(s, "done_median_ms"),
            s["serve_rss_kib_connected"].as_u64().unwrap_or(0),
        ));
    }
    let m = &report["memory"];
    out.push_str(&format!(
        "\nserve RSS: {} KiB at start, {} KiB idle after the loops, {} KiB with {} subscribers \
         ({:.1} KiB each)\n",
        m["serve_rss_kib_start"],
        m["serve_rss_kib_idle"],
        m["serve_rss_kib_connected"],
        m["subscribers"],
        f(m, "per_subscriber_kib"),
    ));
    out
}
