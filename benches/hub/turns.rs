//! `turns`: what one model turn over `/hecate/v1` costs, and whether that cost
//! stays flat as the session grows and as sessions multiply. It starts the fixture
//! model server and the real `hecate serve` (SQLite file, or PostgreSQL with
//! `--store`), seeds one long session through the engine, then measures over
//! loopback with keep-alive connections:
//!
//! - the direct path: the same streaming Chat Completions request sent straight to
//!   the fixture, one connection;
//! - `POST …/sessions/{id}/messages` on a fresh session (a new one per turn) and on
//!   the long session, one connection; Hecate's added time is each median minus
//!   the direct median, and the answer's size is reported for both. Every session
//!   gives the model only the prompt (`buffer_window` of 1), as the direct request
//!   does, so what grows with the session is Hecate's work, not the model's input;
//! - failover: a fresh session whose provider `dead` refuses connections (a
//!   closed loopback port) and whose model the fixture's provider also serves;
//!   each turn fails over to the fixture before its first token. Its added time
//!   is its median minus the fresh session's;
//! - a soak: `--sessions` sessions each sending turns one after another for
//!   `--soak-ms`, counting every failed turn, against the direct path at the same
//!   concurrency, with the server's peak resident memory;
//! - the floor (`turn_floor`): the same single-connection loop and soak against a
//!   minimal server that only stores the prompt, streams the same model answer
//!   and stores it, in two SQLite transactions; what it adds is the least a
//!   durable turn over HTTP costs on this machine.
//!
//! No thresholds: the figures go into the docs.

use crate::http::{MODEL, STEP_TIMEOUT, create_session_with, prompt, seed, start_serve_with};
use crate::load::{Request, expect_ok, http_client, load, rss_kib, timed};
use crate::store::open;
use crate::support::{TempDir, fixture_bin, fixture_model_server, num, percentile};
use crate::turn_floor;
use anyhow::Context;
use hecate::domain::memory::HistoryStrategy;
use hecate::runtimes::model::DEFAULT_MAX_TOKENS;
use hecate::store::sqlite::DB_FILE;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the soak samples the server's resident memory.
const RSS_SAMPLE_EVERY: Duration = Duration::from_millis(200);

/// Arguments of the `turns` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct TurnsArgs {
    /// Messages in the long session (two per turn), seeded before the server starts.
    #[arg(long, default_value_t = 10_000)]
    pub messages: usize,
    /// Duration of each single-connection loop, in milliseconds.
    #[arg(long, default_value_t = 5000)]
    pub duration_ms: u64,
    /// Concurrent sessions in the soak, one keep-alive connection each.
    #[arg(long, default_value_t = 200)]
    pub sessions: usize,
    /// Duration of the soak, in milliseconds.
    #[arg(long, default_value_t = 60_000)]
    pub soak_ms: u64,
    /// A PostgreSQL URL for the server's store (an empty database; its tables are
    /// created). Without it the store is a SQLite file in a temporary directory.
    #[arg(long)]
    pub store: Option<String>,
    /// The hecate-fixtures binary (default: the one of this build).
    #[arg(long)]
    pub fixture_bin: Option<PathBuf>,
    /// Print JSON instead of a text table.
    #[arg(long)]
    pub json: bool,
}

/// Runs the benchmark and returns its report.
pub async fn bench(args: &TurnsArgs) -> anyhow::Result<Value> {
    let fixture_path = fixture_bin(args.fixture_bin.as_deref());
    let dir = TempDir::new("turns")?;
    std::fs::create_dir_all(dir.path().join("data"))?;
    run(args, &fixture_path, dir.path()).await
}

/// The streaming Chat Completions request a turn sends, straight to the fixture.
fn direct_request(http: &reqwest::Client, fixture_v1: &str, n: usize) -> reqwest::RequestBuilder {
    http.post(format!("{fixture_v1}/chat/completions"))
        .json(&json!({
            "model": MODEL,
            "messages": [{"role": "user", "content": prompt(n)}],
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": DEFAULT_MAX_TOKENS,
        }))
}

/// The creating request's field that gives the model only the prompt.
fn one_message() -> Value {
    json!({"history": {"strategy": "buffer_window", "window": 1}})
}

/// `POST …/messages` of turn `n` on session `id`.
fn post_turn(http: &reqwest::Client, base: &str, id: &str, n: usize) -> reqwest::RequestBuilder {
    http.post(format!(
        "{base}/hecate/v1/agent-chat/sessions/{id}/messages"
    ))
    .json(&json!({"content": prompt(n)}))
}

/// `POST /turn/{id}` of turn `n` to the floor server.
fn post_floor_turn(
    http: &reqwest::Client,
    base: &str,
    id: &str,
    n: usize,
) -> reqwest::RequestBuilder {
    http.post(format!("{base}/turn/{id}"))
        .json(&json!({"content": prompt(n)}))
}

/// Builds the request of turn `n` on session `id` of the server at `base`.
type TurnRequest = fn(&reqwest::Client, &str, &str, usize) -> reqwest::RequestBuilder;

/// Starts the peers, seeds the long session and runs every measurement.
async fn run(args: &TurnsArgs, fixture_path: &Path, dir: &Path) -> anyhow::Result<Value> {
    let fixture = fixture_model_server(fixture_path).await?;
    let fixture_v1 = format!("{}/v1", fixture.base);
    let turns = args.messages.div_ceil(2).max(1);
    let seeding = Instant::now();
    let store = open(args.store.as_deref(), &dir.join("data").join(DB_FILE)).await?;
    // Every session here gives the model only the prompt (a window of one
    // message), as the direct request does: what grows with the session is then
    // Hecate's own work, not the model's input.
    let long = seed(
        store,
        &fixture_v1,
        turns,
        Some(HistoryStrategy::BufferWindow { window: 1 }),
    )
    .await?;
    let seed_s = seeding.elapsed().as_secs_f64();
    // A provider that refuses connections, serving the model the fixture serves
    // too; its circuit never opens, so every failover turn tries it first.
    let dead_v1 = format!("http://{}/v1", closed_loopback_port()?);
    let mut env: Vec<(&str, &str)> = vec![
        ("PROVIDER_FIX_MODELS", MODEL),
        ("PROVIDER_DEAD_KIND", "openai"),
        ("PROVIDER_DEAD_BASE_URL", &dead_v1),
        ("PROVIDER_DEAD_MODELS", MODEL),
    ];
    env.extend(args.store.as_deref().map(|url| ("HECATE_STORE_URL", url)));
    let never_open = "[gateway]\ncircuit_failures = 1000000000\n";
    let mut serve = start_serve_with(dir, &fixture_v1, &env, never_open).await?;
    let serve_pid = serve.process.child().id().context("serve has no pid")?;
    let base = serve.base.clone();
    let duration = Duration::from_millis(args.duration_ms.max(1));
    let http = http_client(1)?;

    let direct = {
        let (http, v1) = (http.clone(), fixture_v1.clone());
        let request: Request = Arc::new(move |_, n| Box::pin(timed(direct_request(&http, &v1, n))));
        load(1, duration, request).await?
    };
    let fresh = {
        let (http, base) = (http.clone(), base.clone());
        let request: Request = Arc::new(move |_, n| {
            let (http, base) = (http.clone(), base.clone());
            Box::pin(async move {
                let id = create_session_with(&http, &base, one_message()).await?;
                timed(post_turn(&http, &base, &id, n)).await
            })
        });
        load(1, duration, request).await?
    };
    let on_long = {
        let (http, base, id) = (http.clone(), base.clone(), long.clone());
        let request: Request =
            Arc::new(move |_, n| Box::pin(timed(post_turn(&http, &base, &id, n))));
        load(1, duration, request).await?
    };
    let failover = {
        let (http, base) = (http.clone(), base.clone());
        let request: Request = Arc::new(move |_, n| {
            let (http, base) = (http.clone(), base.clone());
            Box::pin(async move {
                let mut body = one_message();
                body["model"] = json!(format!("dead/{MODEL}"));
                let id = create_session_with(&http, &base, body).await?;
                let started = Instant::now();
                let answer = expect_ok(post_turn(&http, &base, &id, n)).await?;
                let took = started.elapsed();
                answered_by_fix(&answer)?;
                Ok(took)
            })
        });
        load(1, duration, request).await?
    };
    let fresh_id = create_session_with(&http, &base, one_message()).await?;
    let fresh_bytes = expect_ok(post_turn(&http, &base, &fresh_id, 0))
        .await?
        .len();
    let long_bytes = expect_ok(post_turn(&http, &base, &long, 0)).await?.len();

    let sessions = args.sessions.max(1);
    let soak_for = Duration::from_millis(args.soak_ms.max(1));
    let mut ids = Vec::with_capacity(sessions);
    for _ in 0..sessions {
        ids.push(create_session_with(&http, &base, one_message()).await?);
    }
    let mut soak_report = soak(&base, post_turn, ids, soak_for, Some(serve_pid)).await?;
    serve.process.stop().await;
    let direct_soak = {
        let http = http_client(sessions)?;
        let v1 = fixture_v1.clone();
        let request: Request = Arc::new(move |_, n| Box::pin(timed(direct_request(&http, &v1, n))));
        load(sessions, duration, request).await?
    };
    soak_report["added_p99_ms"] = json!(num(&soak_report, "p99_ms") - num(&direct_soak, "p99_ms"));
    soak_report["direct"] = direct_soak.clone();

    // The floor, with Hecate stopped: the same loops against the minimal server.
    let floor = turn_floor::start(&dir.join("floor.db"), &fixture_v1, MODEL)?;
    let floor_fresh = {
        let (http, base) = (http.clone(), floor.base.clone());
        let request: Request = Arc::new(move |_, n| {
            Box::pin(timed(post_floor_turn(&http, &base, &format!("s{n}"), n)))
        });
        load(1, duration, request).await?
    };
    let floor_ids = (0..sessions).map(|i| format!("soak{i}")).collect();
    let mut floor_soak = soak(&floor.base, post_floor_turn, floor_ids, soak_for, None).await?;
    floor_soak["added_p99_ms"] = json!(num(&floor_soak, "p99_ms") - num(&direct_soak, "p99_ms"));
    drop(floor);
    fixture.process.stop().await;
    let added = |target: &Value| num(target, "p50_ms") - num(&direct, "p50_ms");
    Ok(json!({
        "benchmark": "turns",
        "build": if cfg!(debug_assertions) { "debug" } else { "release" },
        "store": if args.store.is_some() { "postgres" } else { "sqlite" },
        "parameters": {
            "messages": turns * 2,
            "duration_ms": args.duration_ms,
            "sessions": sessions,
            "soak_ms": args.soak_ms,
        },
        "seed_seconds": seed_s,
        "direct": direct,
        "fresh_session": fresh,
        "long_session": on_long,
        "failover": failover,
        "added_p50_ms": {
            "fresh_session": added(&fresh),
            "long_session": added(&on_long),
            "failover_over_fresh": num(&failover, "p50_ms") - num(&fresh, "p50_ms"),
        },
        "answer_bytes": {
            "fresh_session": fresh_bytes,
            "long_session": long_bytes,
        },
        "soak": soak_report,
        "floor": {
            "one_connection": floor_fresh,
            "added_p50_ms": num(&floor_fresh, "p50_ms") - num(&direct, "p50_ms"),
            "soak": floor_soak,
        },
    }))
}

/// What one soak worker saw: the times of its turns that answered 200 and its
/// failures (the first one's text kept).
#[derive(Default)]
struct WorkerTally {
    samples: Vec<f64>,
    errors: usize,
    first_error: Option<String>,
}

impl WorkerTally {
    /// Records the outcome of one timed request.
    fn record(&mut self, outcome: anyhow::Result<Duration>) {
        match outcome {
            Ok(took) => self.samples.push(took.as_secs_f64() * 1e3),
            Err(e) => {
                self.errors += 1;
                self.first_error.get_or_insert_with(|| format!("{e:#}"));
            }
        }
    }
}

/// One worker per session id, each sending `turn` requests to `base` one after
/// another for `soak`; the server's memory (`serve_pid`, when it is a process
/// of its own) is sampled throughout. A failed turn is counted, not fatal. The
/// caller adds the direct path at the same concurrency.
async fn soak(
    base: &str,
    turn: TurnRequest,
    ids: Vec<String>,
    soak: Duration,
    serve_pid: Option<u32>,
) -> anyhow::Result<Value> {
    let sessions = ids.len();
    let http = http_client(sessions)?;
    let rss = move || serve_pid.map_or(Ok(0), rss_kib);
    let rss_start = rss()?;
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let sampling = sampling.clone();
        tokio::spawn(async move {
            let mut peak = 0;
            while sampling.load(Ordering::Relaxed) {
                peak = peak.max(rss().unwrap_or(0));
                tokio::time::sleep(RSS_SAMPLE_EVERY).await;
            }
            peak
        })
    };
    let deadline = Instant::now() + soak;
    let workers = ids.into_iter().map(|id| {
        let (http, base) = (http.clone(), base.to_string());
        tokio::spawn(async move {
            let mut tally = WorkerTally::default();
            let mut n = 0;
            while Instant::now() < deadline {
                let sent = tokio::time::timeout(STEP_TIMEOUT, timed(turn(&http, &base, &id, n)));
                tally.record(
                    sent.await
                        .unwrap_or_else(|_| Err(anyhow::anyhow!("turn timed out"))),
                );
                n += 1;
            }
            tally
        })
    });
    let mut samples = Vec::new();
    let (mut errors, mut first_error) = (0, None);
    for tally in futures::future::join_all(workers).await {
        let tally = tally?;
        samples.extend(tally.samples);
        errors += tally.errors;
        first_error = first_error.or(tally.first_error);
    }
    sampling.store(false, Ordering::Relaxed);
    let rss_peak = sampler.await?;
    samples.sort_by(f64::total_cmp);
    Ok(json!({
        "sessions": sessions,
        "seconds": soak.as_secs_f64(),
        "turns": samples.len() + errors,
        "errors": errors,
        "first_error": first_error,
        "turns_per_s": samples.len() as f64 / soak.as_secs_f64(),
        "p50_ms": percentile(&samples, 0.5),
        "p99_ms": percentile(&samples, 0.99),
        "serve_rss_kib_start": rss_start,
        "serve_rss_kib_peak": rss_peak,
    }))
}

/// Checks that a failover turn's answer completed at the fixture's provider.
fn answered_by_fix(answer: &[u8]) -> anyhow::Result<()> {
    let v: Value = serde_json::from_slice(answer)?;
    let last = v["data"]["messages"]
        .as_array()
        .and_then(|m| m.last())
        .context("the answer has no messages")?;
    anyhow::ensure!(
        last["status"] == "completed" && last["provider"] == "fix",
        "the turn did not fail over to the fixture: {last}"
    );
    Ok(())
}

/// A loopback address nothing listens on (a port bound, then released), where
/// a connection is refused at once.
fn closed_loopback_port() -> anyhow::Result<std::net::SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    Ok(listener.local_addr()?)
}

/// Renders the report as a text table.
pub fn table(report: &Value) -> String {
    let mut out = String::new();
    let p = &report["parameters"];
    out.push_str(&format!(
        "turns benchmark ({} build, {} store, long session of {} messages)\n\n",
        report["build"].as_str().unwrap_or("?"),
        report["store"].as_str().unwrap_or("?"),
        p["messages"],
    ));
    out.push_str(&format!(
        "{:<40} {:>10} {:>10} {:>12} {:>12}\n",
        "one connection", "p50 ms", "p99 ms", "added p50", "answer B"
    ));
    let rows = [
        ("direct Chat Completions (baseline)", "direct", None, None),
        (
            "POST …/messages, fresh session",
            "fresh_session",
            Some("fresh_session"),
            Some("fresh_session"),
        ),
        (
            "POST …/messages, long session",
            "long_session",
            Some("long_session"),
            Some("long_session"),
        ),
        (
            "fresh session, first provider down",
            "failover",
            Some("failover_over_fresh"),
            None,
        ),
    ];
    for (name, key, added, bytes) in rows {
        let v = &report[key];
        let added = added.map_or(String::from("-"), |k| {
            format!("{:.3}", num(&report["added_p50_ms"], k))
        });
        let bytes = bytes.map_or(String::from("-"), |k| report["answer_bytes"][k].to_string());
        out.push_str(&format!(
            "{:<40} {:>10.3} {:>10.3} {:>12} {:>12}\n",
            name,
            num(v, "p50_ms"),
            num(v, "p99_ms"),
            added,
            bytes
        ));
    }
    let s = &report["soak"];
    out.push_str(&format!(
        "\nsoak: {} sessions for {:.0} s: {} turns ({:.0}/s), {} errors, p50 {:.2} ms, \
         p99 {:.2} ms (direct p99 {:.2} ms, added {:.2} ms), serve RSS {} → peak {} KiB\n",
        s["sessions"],
        num(s, "seconds"),
        s["turns"],
        num(s, "turns_per_s"),
        s["errors"],
        num(s, "p50_ms"),
        num(s, "p99_ms"),
        num(&s["direct"], "p99_ms"),
        num(s, "added_p99_ms"),
        s["serve_rss_kib_start"],
        s["serve_rss_kib_peak"],
    ));
    if let Some(e) = s["first_error"].as_str() {
        out.push_str(&format!("first error: {e}\n"));
    }
    let f = &report["floor"];
    let fs = &f["soak"];
    out.push_str(&format!(
        "\nfloor (a minimal durable turn server): one connection p50 {:.3} ms (added {:.3} ms); \
         soak {} turns ({:.0}/s), {} errors, p50 {:.2} ms, p99 {:.2} ms (added {:.2} ms)\n",
        num(&f["one_connection"], "p50_ms"),
        num(f, "added_p50_ms"),
        fs["turns"],
        num(fs, "turns_per_s"),
        fs["errors"],
        num(fs, "p50_ms"),
        num(fs, "p99_ms"),
        num(fs, "added_p99_ms"),
    ));
    if let Some(e) = fs["first_error"].as_str() {
        out.push_str(&format!("floor first error: {e}\n"));
    }
    out
}
