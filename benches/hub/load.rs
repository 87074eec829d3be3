//! Timed request loops over keep-alive HTTP connections, shared by the benchmarks
//! that drive `hecate serve`: concurrent workers for a fixed time, latency
//! percentiles, ratios against a baseline loop, and the server's resident memory.

use crate::support::{num, percentile};
use anyhow::Context;
use futures::future::BoxFuture;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One request of a load loop: `worker` is the connection index, `n` the number
/// of requests this worker sent before. It answers the time of its measured part,
/// so set-up it does first (a fresh session) stays out of the figures.
pub type Request =
    Arc<dyn Fn(usize, usize) -> BoxFuture<'static, anyhow::Result<Duration>> + Send + Sync>;

/// Runs `request` on `connections` concurrent workers for `duration`; each worker
/// sends its requests one after another. Returns requests/s (the sum of every
/// worker's own rate over its measured time) and latency percentiles in
/// milliseconds.
pub async fn load(
    connections: usize,
    duration: Duration,
    request: Request,
) -> anyhow::Result<Value> {
    let deadline = Instant::now() + duration;
    let workers = (0..connections.max(1)).map(|w| {
        let request = request.clone();
        tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut busy = Duration::ZERO;
            while Instant::now() < deadline || samples.is_empty() {
                let took = request(w, samples.len()).await?;
                busy += took;
                samples.push(took.as_secs_f64() * 1e3);
            }
            anyhow::Ok((samples, busy))
        })
    });
    let mut all = Vec::new();
    let mut rps = 0.0;
    for r in futures::future::join_all(workers).await {
        let (samples, busy) = r??;
        rps += samples.len() as f64 / busy.as_secs_f64().max(1e-9);
        all.extend(samples);
    }
    all.sort_by(f64::total_cmp);
    Ok(json!({
        "requests": all.len(),
        "requests_per_s": rps,
        "p50_ms": percentile(&all, 0.5),
        "p99_ms": percentile(&all, 0.99),
    }))
}

/// [`load`] of plain `GET url` requests.
pub async fn load_get(
    http: &reqwest::Client,
    url: &str,
    connections: usize,
    duration: Duration,
) -> anyhow::Result<Value> {
    let (http, url) = (http.clone(), url.to_string());
    load(
        connections,
        duration,
        Arc::new(move |_, _| Box::pin(timed(http.get(&url)))),
    )
    .await
}

/// Times `req` from sending to the last byte of a 200 answer.
pub async fn timed(req: reqwest::RequestBuilder) -> anyhow::Result<Duration> {
    let started = Instant::now();
    expect_ok(req).await?;
    Ok(started.elapsed())
}

/// `target` against `baseline`: rates as target/baseline, latencies likewise.
pub fn ratios(target: &Value, baseline: &Value) -> Value {
    let r = |k: &str| num(target, k) / num(baseline, k).max(1e-9);
    json!({
        "requests_per_s": r("requests_per_s"),
        "p50": r("p50_ms"),
        "p99": r("p99_ms"),
    })
}

/// A keep-alive client for `connections` parallel connections.
pub fn http_client(connections: usize) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .pool_max_idle_per_host(connections.max(1) * 2)
        .tcp_nodelay(true)
        .build()?)
}

/// Sends `req` and fails unless it answers 200; the body is read to the end.
pub async fn expect_ok(req: reqwest::RequestBuilder) -> anyhow::Result<Vec<u8>> {
    let resp = req.send().await?;
    let status = resp.status();
    let body = resp.bytes().await?;
    anyhow::ensure!(
        status.is_success(),
        "HTTP {status}: {}",
        String::from_utf8_lossy(&body[..body.len().min(500)])
    );
    Ok(body.to_vec())
}

/// Resident set size of `pid` in KiB, from `/proc/PID/status`.
pub fn rss_kib(pid: u32) -> anyhow::Result<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .context("no VmRSS in /proc status")
}
