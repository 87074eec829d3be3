//! `hecate mcp bench`: `tools/call echo` latency (median, p99) and throughput,
//! sequentially and with concurrent clients, on three paths to the same fixture
//! upstream: direct stdio, through `hecate mcp` on stdio, and through the
//! Streamable HTTP endpoint. Ratios are against the direct path in the same run.

use super::super::output::{print_resource, print_text};
use anyhow::Context;
use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Instant;
use tokio::io::AsyncBufReadExt;

/// Arguments of `hecate mcp bench`.
#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Sequential calls per path.
    #[arg(long, default_value_t = 2000)]
    pub calls: usize,
    /// Concurrent clients for the throughput figure.
    #[arg(long, default_value_t = 8)]
    pub clients: usize,
    /// The hecate-fixtures binary (default: next to hecate).
    #[arg(long)]
    pub fixture_bin: Option<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

type Client = RunningService<RoleClient, ()>;

struct Setup {
    hecate: PathBuf,
    fixture: PathBuf,
    dir: PathBuf,
}

impl Setup {
    fn hecate_cmd(&self, args: &[&str]) -> tokio::process::Command {
        let mut c = tokio::process::Command::new(&self.hecate);
        c.args(args)
            .env("HECATE_CONFIG", self.dir.join("config.toml"))
            .env("HECATE_DATA_DIR", self.dir.join("data"))
            .env_remove("HECATE_NAMESPACE")
            .stderr(Stdio::null())
            .kill_on_drop(true);
        c
    }
}

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

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
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
        "median_us": percentile(&lat, 0.5).round(),
        "p99_us": percentile(&lat, 0.99).round(),
        "calls_per_s": (calls as f64 / wall).round(),
    }))
}

/// Calls per second with `clients` connections sharing `calls` calls.
async fn concurrent(clients: Vec<Client>, tool: &str, calls: usize) -> anyhow::Result<f64> {
    let per = (calls / clients.len().max(1)).max(1);
    let start = Instant::now();
    let tasks: Vec<_> = clients
        .into_iter()
        .map(|c| {
            let tool = tool.to_string();
            tokio::spawn(async move {
                for i in 0..per {
                    echo(&c, &tool, i).await?;
                }
                let _ = c.cancel().await;
                anyhow::Ok(())
            })
        })
        .collect();
    let count = tasks.len() * per;
    for r in futures::future::join_all(tasks).await {
        r??;
    }
    Ok((count as f64 / start.elapsed().as_secs_f64()).round())
}

async fn http_endpoint(setup: &Setup) -> anyhow::Result<(tokio::process::Child, String)> {
    let mut cmd = setup.hecate_cmd(&["mcp", "http"]);
    cmd.stdout(Stdio::piped());
    let mut child = cmd.spawn().context("spawning hecate mcp http")?;
    let stdout = child.stdout.take().context("no stdout")?;
    let mut line = String::new();
    tokio::io::BufReader::new(stdout)
        .read_line(&mut line)
        .await?;
    let v: Value = serde_json::from_str(&line).context("ready line")?;
    let url = v["listening"]
        .as_str()
        .context("listening url")?
        .to_string();
    Ok((child, url))
}

fn fixture_path(args: &BenchArgs) -> anyhow::Result<PathBuf> {
    let p = match &args.fixture_bin {
        Some(p) => p.clone(),
        None => std::env::current_exe()?
            .parent()
            .map(|d| d.join("hecate-fixtures"))
            .context("no directory for the hecate binary")?,
    };
    anyhow::ensure!(
        p.exists(),
        "{} not found: build it (cargo build --bin hecate-fixtures) or pass --fixture-bin",
        p.display()
    );
    Ok(p)
}

fn write_config(dir: &Path, fixture: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    let cfg = format!(
        "[mcp_servers.up]\ncommand = {:?}\nargs = [\"mcp-server\"]\n",
        fixture.display().to_string()
    );
    std::fs::write(dir.join("config.toml"), cfg)?;
    Ok(())
}

/// Runs the benchmark and prints the report.
pub async fn run(args: &BenchArgs) -> anyhow::Result<i32> {
    let fixture = fixture_path(args)?;
    let dir = std::env::temp_dir().join(format!("hecate-mcp-bench-{}", std::process::id()));
    write_config(&dir, &fixture)?;
    let setup = Setup {
        hecate: std::env::current_exe()?,
        fixture,
        dir: dir.clone(),
    };
    let direct = || {
        let mut c = tokio::process::Command::new(&setup.fixture);
        c.arg("mcp-server").stderr(Stdio::null());
        stdio_client(c)
    };
    let via_stdio = || stdio_client(setup.hecate_cmd(&["mcp"]));
    let (_server, url) = http_endpoint(&setup).await?;
    let via_http = || async {
        ().serve(StreamableHttpClientTransport::from_uri(url.as_str()))
            .await
            .context("HTTP initialize")
    };
    let mut report = serde_json::Map::new();
    let n = args.calls;
    let k = args.clients.max(1);

    let c = direct().await?;
    let mut d = sequential(&c, "echo", n).await?;
    let _ = c.cancel().await;
    let clients = futures::future::try_join_all((0..k).map(|_| direct())).await?;
    d["concurrent_calls_per_s"] = json!(concurrent(clients, "echo", n).await?);
    report.insert("direct_stdio".into(), d);

    let c = via_stdio().await?;
    let mut s = sequential(&c, "up__echo", n).await?;
    let _ = c.cancel().await;
    let clients = futures::future::try_join_all((0..k).map(|_| via_stdio())).await?;
    s["concurrent_calls_per_s"] = json!(concurrent(clients, "up__echo", n).await?);
    report.insert("hecate_stdio".into(), s);

    let c = via_http().await?;
    let mut h = sequential(&c, "up__echo", n).await?;
    let _ = c.cancel().await;
    let clients = futures::future::try_join_all((0..k).map(|_| via_http())).await?;
    h["concurrent_calls_per_s"] = json!(concurrent(clients, "up__echo", n).await?);
    report.insert("hecate_http".into(), h);

    let base = report["direct_stdio"]["median_us"]
        .as_f64()
        .unwrap_or(1.0)
        .max(1.0);
    for key in ["hecate_stdio", "hecate_http"] {
        if let Some(v) = report.get_mut(key) {
            let ratio = v["median_us"].as_f64().unwrap_or(0.0) / base;
            v["median_vs_direct"] = json!((ratio * 10.0).round() / 10.0);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let report = json!({"calls": n, "clients": k, "paths": report});
    if args.json {
        print_resource("mcp_bench", &report)?;
    } else {
        let mut out = format!(
            "tools/call echo, {n} sequential calls, {k} concurrent clients\n\
             {:<14} {:>10} {:>9} {:>12} {:>14} {:>10}\n",
            "path",
            "median µs",
            "p99 µs",
            "calls/s (1)",
            format!("calls/s ({k})"),
            "vs direct"
        );
        for (key, v) in report["paths"].as_object().into_iter().flatten() {
            let f = |k: &str| v[k].as_f64().unwrap_or(0.0);
            out.push_str(&format!(
                "{key:<14} {:>10.0} {:>9.0} {:>12.0} {:>14.0} {:>9.1}x\n",
                f("median_us"),
                f("p99_us"),
                f("calls_per_s"),
                f("concurrent_calls_per_s"),
                v.get("median_vs_direct")
                    .and_then(Value::as_f64)
                    .unwrap_or(1.0)
            ));
        }
        print_text(&out)?;
    }
    Ok(0)
}
