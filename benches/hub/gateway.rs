//! `gateway`: what Hecate's model gateway (`/v1`) adds to a model request,
//! against the same request sent straight to the fixture model server, in one
//! run. Paths, all in front of the same echo fixture:
//!
//! - `direct`: the fixture itself;
//! - `splice`: `hecate-fixtures tcp-splice`, a relay that copies bytes and
//!   parses nothing (what the extra hop alone costs here);
//! - `floor`: `hecate-fixtures http-proxy`, a forwarder that reads HTTP and
//!   nothing more (what any HTTP hop costs here);
//! - `hecate`: `hecate serve`'s `/v1/chat/completions` (routing, route
//!   candidates, the trace journalled before the answer and stored in a batch
//!   just after);
//! - `hecate_session`: the same with `X-Hecate-Session-Id` (a fresh session per
//!   request: session, messages, provider call and trace in one transaction);
//! - `litellm`: LiteLLM's proxy (`litellm[proxy]`, installed by
//!   `scripts/test-deps/litellm.sh`), when installed.
//!
//! Each round measures every path in turn: sequential non-streaming latency,
//! streaming time to first token and tokens/s, and `clients` concurrent clients'
//! throughput. Figures are medians over the rounds; "added" is a path's figure
//! minus the direct one of the same round. No thresholds: the figures go into
//! the docs.

use crate::support::{
    Group, Listening, TempDir, fixture_bin, fixture_model_server, free_port,
    serve_on_ephemeral_port,
};
use anyhow::{Context, bail};
use futures::StreamExt;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// The model the fixture answers as.
const MODEL: &str = "fixture-model";
/// How long a peer may take to start.
const START_TIMEOUT: Duration = Duration::from_secs(120);
/// LiteLLM's proxy refuses to start without a master key; clients send it.
const LITELLM_KEY: &str = "sk-hecate-bench-3f9a1c7e5b2d48a6b0e4";
/// Where `scripts/test-deps/litellm.sh` installs the proxy.
const LITELLM: &str = "target/test-deps/litellm/venv/bin/litellm";
/// What the install script installed (its stamp).
const LITELLM_STAMP: &str = "target/test-deps/litellm/.hecate-test-deps";

/// Arguments of the `gateway` benchmark.
#[derive(Debug, Clone, clap::Args)]
pub struct GatewayArgs {
    /// Sequential non-streaming requests per path and round.
    #[arg(long, default_value_t = 400)]
    pub requests: usize,
    /// Sequential streaming requests per path and round.
    #[arg(long, default_value_t = 100)]
    pub streams: usize,
    /// Words in each prompt (the echoed answer streams one chunk per word).
    #[arg(long, default_value_t = 64)]
    pub words: usize,
    /// Concurrent clients of the throughput loop.
    #[arg(long, default_value_t = 8)]
    pub clients: usize,
    /// Requests per client in the throughput loop.
    #[arg(long, default_value_t = 100)]
    pub concurrent_requests: usize,
    /// Rounds; every figure is the median over them.
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// `auto` (LiteLLM when installed), `off`, or `require` (fail without it).
    #[arg(long, default_value = "auto")]
    pub litellm: String,
    /// The hecate-fixtures binary (default: the one of this build).
    #[arg(long)]
    pub fixture_bin: Option<PathBuf>,
    /// Print JSON instead of a text table.
    #[arg(long)]
    pub json: bool,
}

/// One path under test.
struct Target {
    name: &'static str,
    /// Base URL including `/v1`.
    v1: String,
    model: String,
    /// The bearer token it wants.
    key: &'static str,
    /// Name a fresh chat session per request.
    sessions: bool,
}

/// Reads a peer's `{"listening": URL}` line.
async fn listening(mut process: Group) -> anyhow::Result<Listening> {
    let stdout = process.child().stdout.take().context("stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let line = tokio::time::timeout(START_TIMEOUT, lines.next_line())
        .await
        .context("no ready line")??
        .context("exited before its ready line")?;
    let v: Value = serde_json::from_str(&line)?;
    let base = v["listening"].as_str().context("no address")?.to_string();
    Ok(Listening { process, base })
}

/// Starts a floor relay: `http-proxy` (reads HTTP, nothing else) or
/// `tcp-splice` (copies bytes; `upstream` is then `host:port`).
async fn start_floor(bin: &Path, kind: &str, upstream: &str) -> anyhow::Result<Listening> {
    let p = Group::spawn(
        Command::new(bin)
            .args([kind, "--listen", "127.0.0.1:0", "--upstream", upstream])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null()),
    )
    .with_context(|| format!("starting the {kind} floor"))?;
    listening(p).await
}

async fn start_hecate(dir: &Path, fixture: &str) -> anyhow::Result<Listening> {
    std::fs::write(dir.join("config.toml"), "")?;
    let base_url = format!("{fixture}/v1");
    serve_on_ephemeral_port(
        dir,
        &[
            ("PROVIDER_FIX_BASE_URL", base_url.as_str()),
            ("PROVIDER_FIX_MODELS", MODEL),
        ],
        START_TIMEOUT,
    )
    .await
}

/// Whether the install script finished (its stamp is written last).
fn litellm_installed() -> bool {
    Path::new(LITELLM_STAMP).exists() && Path::new(LITELLM).exists()
}

/// Starts LiteLLM's proxy with one model in front of the fixture, and waits
/// until it answers its liveness check.
async fn start_litellm(
    dir: &Path,
    fixture: &str,
    http: &reqwest::Client,
) -> anyhow::Result<Listening> {
    let config = dir.join("litellm.yaml");
    std::fs::write(
        &config,
        format!(
            "model_list:\n  - model_name: {MODEL}\n    litellm_params:\n      \
             model: openai/{MODEL}\n      api_base: {fixture}/v1\n      api_key: unused\n\
             litellm_settings:\n  telemetry: false\n  drop_params: true\n\
             general_settings:\n  master_key: {LITELLM_KEY}\n"
        ),
    )?;
    let port = free_port()?;
    // Absolute: the proxy runs in `dir`, where a relative program path would
    // not resolve.
    let program = std::fs::canonicalize(LITELLM).context("finding LiteLLM's proxy")?;
    let process = Group::spawn(
        Command::new(program)
            .arg("--config")
            .arg(&config)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(["--num_workers", "1"])
            .env("LITELLM_LOG", "ERROR")
            .env("LITELLM_LOCAL_MODEL_COST_MAP", "True")
            .env("NO_COLOR", "1")
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
    .context("starting LiteLLM's proxy")?;
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + START_TIMEOUT;
    loop {
        if let Ok(r) = http.get(format!("{base}/health/liveliness")).send().await
            && r.status().is_success()
        {
            break;
        }
        if Instant::now() > deadline {
            bail!("LiteLLM's proxy did not answer /health/liveliness within {START_TIMEOUT:?}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(Listening { process, base })
}

fn prompt(words: usize, i: usize) -> String {
    let w: Vec<String> = (0..words).map(|n| format!("w{n}")).collect();
    format!("{i} {}", w.join(" "))
}

fn body(t: &Target, words: usize, i: usize, stream: bool) -> Value {
    let mut b = json!({
        "model": t.model,
        "messages": [{"role": "user", "content": prompt(words, i)}],
        "max_tokens": 512,
    });
    if stream {
        b["stream"] = json!(true);
    }
    b
}

fn post(http: &reqwest::Client, t: &Target, body: &Value, tag: &str) -> reqwest::RequestBuilder {
    let rb = http
        .post(format!("{}/chat/completions", t.v1))
        .bearer_auth(t.key)
        .json(body);
    if t.sessions {
        rb.header("x-hecate-session-id", format!("bench_{tag}"))
    } else {
        rb
    }
}

/// One non-streaming request; its time in milliseconds.
async fn complete(
    http: &reqwest::Client,
    t: &Target,
    words: usize,
    tag: &str,
    i: usize,
) -> anyhow::Result<f64> {
    let b = body(t, words, i, false);
    let start = Instant::now();
    let r = post(http, t, &b, tag).send().await?;
    let status = r.status();
    let v: Value = r.json().await?;
    if !status.is_success() || v["choices"][0]["message"]["content"].as_str().is_none() {
        bail!("{}: HTTP {status}: {v}", t.name);
    }
    Ok(start.elapsed().as_secs_f64() * 1e3)
}

/// One streamed request: time to the first content chunk (ms) and content
/// chunks per second after it.
async fn stream(
    http: &reqwest::Client,
    t: &Target,
    words: usize,
    tag: &str,
    i: usize,
) -> anyhow::Result<(f64, f64)> {
    let b = body(t, words, i, true);
    let start = Instant::now();
    let r = post(http, t, &b, tag).send().await?;
    if !r.status().is_success() {
        bail!(
            "{}: HTTP {}: {}",
            t.name,
            r.status(),
            r.text().await.unwrap_or_default()
        );
    }
    let mut events = eventsource_stream::Eventsource::eventsource(r.bytes_stream());
    let (mut first, mut last, mut chunks) = (None, start, 0usize);
    while let Some(e) = events.next().await {
        let e = e?;
        if e.data.trim() == "[DONE]" {
            break;
        }
        let v: Value = serde_json::from_str(&e.data)?;
        if v["choices"][0]["delta"]["content"]
            .as_str()
            .is_some_and(|c| !c.is_empty())
        {
            let now = Instant::now();
            first.get_or_insert(now);
            last = now;
            chunks += 1;
        }
    }
    let first = first.with_context(|| format!("{}: a stream without content", t.name))?;
    let ttft = (first - start).as_secs_f64() * 1e3;
    let span = (last - first).as_secs_f64();
    let rate = if chunks > 1 && span > 0.0 {
        (chunks - 1) as f64 / span
    } else {
        0.0
    };
    Ok((ttft, rate))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    crate::support::percentile(&v, 0.5)
}

fn p99(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    crate::support::percentile(&v, 0.99)
}

/// One round of one path.
#[derive(Debug, Clone, Default)]
struct Round {
    p50_ms: f64,
    p99_ms: f64,
    ttft_ms: f64,
    tokens_per_s: f64,
    concurrent_rps: f64,
}

async fn measure(
    http: &reqwest::Client,
    t: &Target,
    a: &GatewayArgs,
    round: usize,
) -> anyhow::Result<Round> {
    // Warm the connection and the path.
    for i in 0..3 {
        complete(
            http,
            t,
            a.words,
            &format!("warm{round}_{i}_{}", uuid_like()),
            i,
        )
        .await?;
    }
    let mut lat = Vec::with_capacity(a.requests);
    for i in 0..a.requests.max(1) {
        lat.push(
            complete(
                http,
                t,
                a.words,
                &format!("r{round}_{i}_{}", uuid_like()),
                i,
            )
            .await?,
        );
    }
    let (mut ttft, mut rates) = (Vec::new(), Vec::new());
    for i in 0..a.streams.max(1) {
        let (f, r) = stream(
            http,
            t,
            a.words,
            &format!("s{round}_{i}_{}", uuid_like()),
            i,
        )
        .await?;
        ttft.push(f);
        rates.push(r);
    }
    let started = Instant::now();
    let clients = (0..a.clients.max(1)).map(|c| {
        let http = http.clone();
        let t = Target {
            name: t.name,
            v1: t.v1.clone(),
            model: t.model.clone(),
            key: t.key,
            sessions: t.sessions,
        };
        let (n, words) = (a.concurrent_requests.max(1), a.words);
        tokio::spawn(async move {
            for i in 0..n {
                complete(
                    &http,
                    &t,
                    words,
                    &format!("c{round}_{c}_{i}_{}", uuid_like()),
                    i,
                )
                .await?;
            }
            anyhow::Ok(n)
        })
    });
    let mut done = 0usize;
    for r in futures::future::join_all(clients).await {
        done += r??;
    }
    let concurrent_rps = done as f64 / started.elapsed().as_secs_f64().max(1e-9);
    Ok(Round {
        p50_ms: median(lat.clone()),
        p99_ms: p99(lat),
        ttft_ms: median(ttft),
        tokens_per_s: median(rates),
        concurrent_rps,
    })
}

/// A short unique suffix for session ids (fresh sessions per request).
fn uuid_like() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..12].to_string()
}

/// Runs the benchmark and returns its report.
pub async fn bench(a: &GatewayArgs) -> anyhow::Result<Value> {
    let bin = fixture_bin(a.fixture_bin.as_deref());
    let dir = TempDir::new("gateway")?;
    let http = reqwest::Client::builder()
        .pool_max_idle_per_host(64)
        .build()?;
    let fixture = fixture_model_server(&bin).await?;
    let floor = start_floor(&bin, "http-proxy", &fixture.base).await?;
    let fixture_addr = fixture.base.trim_start_matches("http://").to_string();
    let splice = start_floor(&bin, "tcp-splice", &fixture_addr).await?;
    let hecate = start_hecate(dir.path(), &fixture.base).await?;
    let litellm_wanted = match a.litellm.as_str() {
        "off" => false,
        "auto" => litellm_installed(),
        "require" => {
            if !litellm_installed() {
                bail!(
                    "LiteLLM's proxy is not installed at {LITELLM}: run ./scripts/test-deps/litellm.sh"
                );
            }
            true
        }
        other => bail!("--litellm {other:?}: use auto, off or require"),
    };
    let litellm = if litellm_wanted {
        Some(start_litellm(dir.path(), &fixture.base, &http).await?)
    } else {
        None
    };
    let mut targets = vec![
        Target {
            name: "direct",
            v1: format!("{}/v1", fixture.base),
            model: MODEL.into(),
            key: "unused",
            sessions: false,
        },
        Target {
            name: "splice",
            v1: format!("{}/v1", splice.base),
            model: MODEL.into(),
            key: "unused",
            sessions: false,
        },
        Target {
            name: "floor",
            v1: format!("{}/v1", floor.base),
            model: MODEL.into(),
            key: "unused",
            sessions: false,
        },
        Target {
            name: "hecate",
            v1: format!("{}/v1", hecate.base),
            model: format!("fix/{MODEL}"),
            key: "unused",
            sessions: false,
        },
        Target {
            name: "hecate_session",
            v1: format!("{}/v1", hecate.base),
            model: format!("fix/{MODEL}"),
            key: "unused",
            sessions: true,
        },
    ];
    if let Some(l) = &litellm {
        targets.push(Target {
            name: "litellm",
            v1: format!("{}/v1", l.base),
            model: MODEL.into(),
            key: LITELLM_KEY,
            sessions: false,
        });
    }
    let mut rounds: Vec<Vec<Round>> = vec![Vec::new(); targets.len()];
    for round in 0..a.rounds.max(1) {
        for (i, t) in targets.iter().enumerate() {
            rounds[i].push(measure(&http, t, a, round).await?);
        }
    }
    let direct = &rounds[0];
    let mut paths = serde_json::Map::new();
    for (i, t) in targets.iter().enumerate() {
        let r = &rounds[i];
        let per = |f: fn(&Round) -> f64| median(r.iter().map(f).collect());
        let added =
            |f: fn(&Round) -> f64| median(r.iter().zip(direct).map(|(x, d)| f(x) - f(d)).collect());
        let ratio = |f: fn(&Round) -> f64| {
            median(
                r.iter()
                    .zip(direct)
                    .map(|(x, d)| f(x) / f(d).max(1e-9))
                    .collect(),
            )
        };
        paths.insert(
            t.name.to_string(),
            json!({
                "p50_ms": per(|x| x.p50_ms),
                "p99_ms": per(|x| x.p99_ms),
                "ttft_ms": per(|x| x.ttft_ms),
                "tokens_per_s": per(|x| x.tokens_per_s),
                "concurrent_rps": per(|x| x.concurrent_rps),
                "added_p50_ms": added(|x| x.p50_ms),
                "added_ttft_ms": added(|x| x.ttft_ms),
                "throughput_vs_direct": ratio(|x| x.concurrent_rps),
                "tokens_per_s_vs_direct": ratio(|x| x.tokens_per_s),
            }),
        );
    }
    let hecate_added = paths["hecate"]["added_p50_ms"].as_f64().unwrap_or(0.0);
    let litellm_vs_hecate = paths
        .get("litellm")
        .and_then(|l| l["added_p50_ms"].as_f64())
        .map(|l| l / hecate_added.max(1e-3));
    let report = json!({
        "benchmark": "gateway",
        "rounds": a.rounds.max(1),
        "requests": a.requests.max(1),
        "streams": a.streams.max(1),
        "words": a.words,
        "clients": a.clients.max(1),
        "concurrent_requests": a.concurrent_requests.max(1),
        "paths": paths,
        "litellm": match &litellm {
            Some(_) => json!({"installed": true,
                              "version": std::fs::read_to_string(LITELLM_STAMP)
                                  .map(|s| s.trim().to_string())
                                  .unwrap_or_default(),
                              "added_latency_vs_hecate": litellm_vs_hecate}),
            None if a.litellm == "off" => json!({"installed": litellm_installed(), "skipped": "--litellm off"}),
            None => json!({"installed": false,
                           "missing": "LiteLLM's proxy is not installed: run ./scripts/test-deps/litellm.sh"}),
        },
        "goals": {
            "added_p50_ms_le_0_2": hecate_added <= 0.2,
            "added_ttft_ms_le_0_1": paths["hecate"]["added_ttft_ms"].as_f64().unwrap_or(f64::MAX) <= 0.1,
            "litellm_added_ge_10x_hecate": litellm_vs_hecate.map(|r| r >= 10.0),
            "throughput_ge_0_8x_direct": paths["hecate"]["throughput_vs_direct"].as_f64().unwrap_or(0.0) >= 0.8,
        },
        "note": "Medians over rounds; added = path minus direct in the same round. hecate journals each request's trace (route and candidates) before the answer and stores it in a batch just after; hecate_session also records a fresh chat session per request before the answer. splice = a relay copying bytes; floor = an HTTP forwarder that reads nothing.",
    });
    if let Some(l) = litellm {
        l.process.stop().await;
    }
    hecate.process.stop().await;
    floor.process.stop().await;
    splice.process.stop().await;
    fixture.process.stop().await;
    Ok(report)
}

/// The report as a table.
pub fn table(r: &Value) -> String {
    let mut out = format!(
        "gateway: {} rounds, {} requests + {} streams of {} words per path, {} clients x {}\n",
        r["rounds"],
        r["requests"],
        r["streams"],
        r["words"],
        r["clients"],
        r["concurrent_requests"]
    );
    out.push_str(&format!(
        "{:<15} {:>8} {:>8} {:>9} {:>8} {:>9} {:>10} {:>9} {:>8}\n",
        "path", "p50 ms", "+p50 ms", "ttft ms", "+ttft ms", "tok/s", "rps x8", "rps/dir", "p99 ms"
    ));
    if let Some(paths) = r["paths"].as_object() {
        for (name, p) in paths {
            let f = |k: &str| p[k].as_f64().unwrap_or(0.0);
            out.push_str(&format!(
                "{:<15} {:>8.3} {:>8.3} {:>9.3} {:>8.3} {:>9.0} {:>10.0} {:>9.2} {:>8.3}\n",
                name,
                f("p50_ms"),
                f("added_p50_ms"),
                f("ttft_ms"),
                f("added_ttft_ms"),
                f("tokens_per_s"),
                f("concurrent_rps"),
                f("throughput_vs_direct"),
                f("p99_ms"),
            ));
        }
    }
    match (
        r["litellm"]["missing"].as_str(),
        r["litellm"]["skipped"].as_str(),
    ) {
        (Some(m), _) => out.push_str(&format!("litellm: {m}\n")),
        (None, Some(s)) => out.push_str(&format!("litellm: not measured ({s})\n")),
        _ => out.push_str(&format!(
            "litellm: {}, added latency {:.1}x Hecate's\n",
            r["litellm"]["version"].as_str().unwrap_or("?"),
            r["litellm"]["added_latency_vs_hecate"]
                .as_f64()
                .unwrap_or(0.0)
        )),
    }
    out.push_str(&format!("goals: {}\n", r["goals"]));
    out
}
