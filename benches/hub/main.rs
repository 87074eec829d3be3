//! The hub benchmarks: what Hecate costs on each of its paths, measured against
//! the direct path in the same run, with the `hecate` and `hecate-fixtures`
//! binaries of this build. No thresholds: the figures go into the docs.
//!
//! `cargo bench --bench hub -- <store|model|gateway|agent|agent-loop|acp|http|a2a|turns|mcp [--ts]|tasks|memory> [options]`
//! runs one benchmark (Cargo passes `--bench`, and builds with the optimised
//! bench profile). Run without `--bench`, as `cargo test --bench hub` and
//! `cargo test --all-targets` do, it runs every benchmark once with tiny counts
//! as a smoke test (arguments that are not flags select steps by name) and
//! exits non-zero if one fails.

mod a2a;
mod acp;
mod agent;
mod agent_floor;
mod agent_loop;
mod gateway;
mod http;
mod load;
mod mcp;
mod mcp_ts;
mod memory;
mod model;
mod smoke;
mod store;
mod support;
mod tasks;
mod turn_floor;
mod turns;

use clap::{CommandFactory, Parser, Subcommand};
use serde_json::Value;
use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Instant;
use support::{envelope, fixture_bin, fixture_model_server, print_text};

/// Hecate's benchmarks, each against the direct path in the same run.
#[derive(Debug, Parser)]
#[command(name = "hub", bin_name = "cargo bench --bench hub --")]
struct Cli {
    /// The benchmark to run.
    #[command(subcommand)]
    bench: Bench,
}

/// The benchmarks.
#[derive(Debug, Subcommand)]
enum Bench {
    /// Append throughput and last-50 load latency across session sizes.
    Store(store::StoreArgs),
    /// Model-turn overhead of Hecate vs the same streaming request sent directly.
    Model(model::ModelArgs),
    /// The model gateway (`/v1`) vs the fixture direct, an HTTP forwarding floor
    /// and LiteLLM's proxy: latency, time to first token, tokens/s, 8-client throughput.
    Gateway(gateway::GatewayArgs),
    /// External-agent streaming overhead through Hecate vs Hecate's ACP client direct
    /// to the same fixture agent, time to first chunk, and probe time per agent.
    Agent(agent::AgentArgs),
    /// Hecate's own agent (an `agent_loop` task run) vs a hand-written loop on the
    /// same scripted model: added time per LLM turn and per tool call.
    AgentLoop(agent_loop::AgentLoopArgs),
    /// `hecate acp` vs the direct path: cold start to `initialize` and a streamed turn.
    Acp(acp::AcpArgs),
    /// A turn of Hecate's agent over A2A (`message:send`) vs the same turn over
    /// `/hecate/v1` (`POST …/messages` on an agent session).
    A2a(a2a::A2aArgs),
    /// The HTTP API vs its direct paths: `GET` of a large session vs `/healthz`,
    /// `POST …/messages` vs the fixture model direct, SSE fan-out and server memory.
    Http(http::HttpArgs),
    /// A model turn over `/hecate/v1` on a fresh and on a long session vs the
    /// fixture direct, and many sessions sending turns at once (errors, p99, memory).
    Turns(turns::TurnsArgs),
    /// `tools/call echo` directly, through `hecate mcp` stdio and through the HTTP
    /// endpoint, against the rmcp floors (`--ts`: with the TypeScript SDK client).
    Mcp(mcp::McpArgs),
    /// The task queue drained by one and two worker pools on one SQLite file, and
    /// one `shell` task vs the same command spawned directly.
    Tasks(tasks::TasksArgs),
    /// Context loads per working-memory strategy on large vs small sessions,
    /// recall queries over a growing vector table, and model turns with recall
    /// indexing on vs off.
    Memory(memory::MemoryArgs),
}

impl Bench {
    /// Whether the report is wanted as JSON.
    fn json(&self) -> bool {
        match self {
            Bench::Store(a) => a.json,
            Bench::Model(a) => a.json,
            Bench::Gateway(a) => a.json,
            Bench::Agent(a) => a.json,
            Bench::AgentLoop(a) => a.json,
            Bench::Acp(a) => a.json,
            Bench::Http(a) => a.json,
            Bench::A2a(a) => a.json,
            Bench::Turns(a) => a.json,
            Bench::Mcp(a) => a.json,
            Bench::Tasks(a) => a.json,
            Bench::Memory(a) => a.json,
        }
    }

    /// The `object` of the JSON envelope.
    fn object(&self) -> &'static str {
        match self {
            Bench::Mcp(_) => "mcp_bench",
            _ => "bench",
        }
    }

    /// Runs the benchmark and returns its report.
    async fn measure(&self) -> anyhow::Result<Value> {
        match self {
            Bench::Store(a) => store::bench(a).await,
            Bench::Model(a) => model::bench(a).await,
            Bench::Gateway(a) => gateway::bench(a).await,
            Bench::Agent(a) => agent::bench(a).await,
            Bench::AgentLoop(a) => agent_loop::bench(a).await,
            Bench::Acp(a) => acp::bench(a).await,
            Bench::Http(a) => http::bench(a).await,
            Bench::A2a(a) => a2a::bench(a).await,
            Bench::Turns(a) => turns::bench(a).await,
            Bench::Mcp(a) if a.ts => mcp_ts::bench(a).await,
            Bench::Mcp(a) => mcp::bench(a).await,
            Bench::Tasks(a) => tasks::bench(a).await,
            Bench::Memory(a) => memory::bench(a).await,
        }
    }

    /// The report as text: a table where the benchmark has one, else pretty JSON.
    fn text(&self, report: &Value) -> anyhow::Result<String> {
        Ok(match self {
            Bench::Http(_) => http::table(report),
            Bench::A2a(_) => a2a::table(report),
            Bench::Turns(_) => turns::table(report),
            Bench::Gateway(_) => gateway::table(report),
            Bench::Mcp(_) => mcp::table(report),
            _ => format!("{}\n", serde_json::to_string_pretty(report)?),
        })
    }
}

/// Runs one benchmark as the command line says and prints its report.
async fn run(cli: Cli) -> anyhow::Result<()> {
    let report = cli.bench.measure().await?;
    if cli.bench.json() {
        let v = envelope(cli.bench.object(), &report);
        print_text(&format!("{}\n", serde_json::to_string_pretty(&v)?))
    } else {
        print_text(&cli.bench.text(&report)?)
    }
}

/// Runs one smoke step: parses its command line, runs the benchmark and checks
/// the report in both renderings.
async fn smoke_step(step: &smoke::Step) -> anyhow::Result<()> {
    smoke::ready(step.name)?;
    let cli = Cli::try_parse_from(std::iter::once("hub".to_string()).chain(step.argv.clone()))?;
    let report = cli.bench.measure().await?;
    let text = cli.bench.text(&report)?;
    smoke::check(step.name, &envelope(cli.bench.object(), &report), &text)
}

/// Runs the smoke steps whose names contain one of `filters` (all when empty);
/// answers whether every one passed.
async fn smoke(filters: &[String]) -> anyhow::Result<bool> {
    Cli::command().debug_assert();
    let started = Instant::now();
    let model = fixture_model_server(&fixture_bin(None)).await?;
    let steps = smoke::plan(&format!("{}/v1", model.base));
    let (mut passed, mut failed) = (0, Vec::new());
    for step in steps
        .iter()
        .filter(|s| filters.is_empty() || filters.iter().any(|f| s.name.contains(f.as_str())))
    {
        let t = Instant::now();
        match smoke_step(step).await {
            Ok(()) => {
                passed += 1;
                print_text(&format!(
                    "smoke {:<8} ok ({:.1} s)\n",
                    step.name,
                    t.elapsed().as_secs_f64()
                ))?;
            }
            Err(e) => {
                print_text(&format!("smoke {:<8} FAILED: {e:#}\n", step.name))?;
                failed.push(step.name);
            }
        }
    }
    model.process.stop().await;
    print_text(&format!(
        "hub smoke: {passed} passed, {} failed{} in {:.1} s \
         (cargo bench --bench hub -- <benchmark> for figures)\n",
        failed.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!(" ({})", failed.join(", "))
        },
        started.elapsed().as_secs_f64()
    ))?;
    Ok(failed.is_empty())
}

fn main() -> ExitCode {
    // reqwest is built without a default TLS backend, as in the `hecate` binary:
    // ring must be installed before any client exists.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let args: Vec<OsString> = std::env::args_os().collect();
    let measuring = args.iter().any(|a| a == "--bench");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hub: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let result = if measuring {
        let cli = Cli::parse_from(args.into_iter().filter(|a| a != "--bench"));
        runtime.block_on(run(cli)).map(|()| true)
    } else {
        let filters: Vec<String> = args
            .iter()
            .skip(1)
            .filter_map(|a| a.to_str())
            .filter(|a| !a.starts_with('-'))
            .map(str::to_string)
            .collect();
        runtime.block_on(smoke(&filters))
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("hub: {e:#}");
            ExitCode::FAILURE
        }
    }
}
