//! `mcp --ts`: the `mcp` benchmark with the official TypeScript SDK client
//! (`benches/mcp-ts/bench.mjs` run with the pinned Node 22) against
//! `@modelcontextprotocol/server-everything`, so the figures compare with the
//! Node bridges: direct stdio, `hecate mcp` stdio, `hecate serve`'s `/mcp` and
//! `/mcp/everything`, supergateway `--stateful` and server-everything's own
//! Streamable HTTP mode, plus the rmcp floors of `mcp.rs` in front of the same
//! upstream.

use crate::mcp::{Floors, McpArgs, Setup, add_ratios, cold_starts, hecate_serve, http_server};
use crate::support::fixture_bin;
use anyhow::Context;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// An absolute form of a path given relative to the current directory.
fn absolute(p: &Path, what: &str) -> anyhow::Result<PathBuf> {
    std::fs::canonicalize(p).with_context(|| {
        format!(
            "{what} {} not found (install the peers with scripts/test-deps/mcp.sh, \
             or pass its path)",
            p.display()
        )
    })
}

/// Runs the benchmark with the TypeScript SDK client against server-everything
/// and the Node bridges and returns its report.
pub async fn bench(args: &McpArgs) -> anyhow::Result<Value> {
    let node = absolute(&args.node, "--node")?;
    let modules = absolute(&args.node_modules, "--node-modules")?;
    let script = absolute(&args.ts_script, "--ts-script")?;
    let everything = absolute(
        &modules.join("@modelcontextprotocol/server-everything/dist/index.js"),
        "server-everything",
    )?;
    let supergateway = absolute(&modules.join("supergateway/dist/index.js"), "supergateway")?;
    let everything_s = everything.display().to_string();
    let setup = Setup::new()?;
    setup.write_config("everything", &node, &[&everything_s, "stdio"])?;
    let (n, k) = (args.calls.max(1), args.clients.max(1));

    let direct_cmd = || {
        let mut c = tokio::process::Command::new(&node);
        c.arg(&everything).arg("stdio");
        c
    };
    let cold = json!({
        "starts": args.starts.max(1),
        "hecate_mcp": cold_starts(|| setup.hecate_cmd(&["mcp"]), args.starts.max(1)).await?,
        "direct": cold_starts(direct_cmd, args.starts.max(1)).await?,
    });

    let floors = Floors {
        fixture: fixture_bin(args.fixture_bin.as_deref()),
        upstream: vec![
            node.display().to_string(),
            everything_s.clone(),
            "stdio".into(),
        ],
    };
    let (hecate_http, url) = hecate_serve(&setup).await?;
    let (floor_http, floor_url) = floors.rmcp_proxy_http().await?;
    let (server_floor, server_floor_url) = floors.rmcp_server_http().await?;
    let (gateway, gateway_port) = http_server("supergateway", |port| {
        let mut c = tokio::process::Command::new(&node);
        c.arg(&supergateway)
            .arg("--stateful")
            .arg("--stdio")
            .arg(format!(
                "{} {} stdio",
                sh_quote(&node),
                sh_quote(&everything)
            ))
            .arg("--outputTransport")
            .arg("streamableHttp")
            .arg("--port")
            .arg(port.to_string())
            .arg("--logLevel")
            .arg("none");
        c
    })
    .await?;
    let (everything_http, everything_port) =
        http_server("server-everything streamableHttp", |port| {
            let mut c = tokio::process::Command::new(&node);
            c.arg(&everything)
                .arg("streamableHttp")
                .env("PORT", port.to_string());
            c
        })
        .await?;

    let hecate_env = json!({
        "HECATE_CONFIG": setup.config(),
        "HECATE_DATA_DIR": setup.data(),
    });
    let config = json!({
        "node_modules": modules,
        "calls": n,
        "clients": k,
        "warmup": n.min(500),
        "targets": [
            {"name": "direct_stdio", "tool": "echo",
             "stdio": {"command": node, "args": [everything, "stdio"]}},
            {"name": "hecate_stdio", "tool": "everything__echo",
             "stdio": {"command": setup.hecate, "args": ["mcp"], "env": hecate_env}},
            {"name": "hecate_http", "tool": "everything__echo", "url": url},
            {"name": "hecate_http_passthrough", "tool": "echo",
             "url": format!("{url}/everything")},
            {"name": "supergateway_stateful", "tool": "echo",
             "url": format!("http://127.0.0.1:{gateway_port}/mcp")},
            {"name": "everything_http", "tool": "echo",
             "url": format!("http://127.0.0.1:{everything_port}/mcp")},
            {"name": "pipe_relay_stdio", "tool": "echo", "stdio": ts_stdio(&floors.pipe_relay())},
            {"name": "rmcp_proxy_stdio", "tool": "echo", "stdio": ts_stdio(&floors.rmcp_proxy())},
            {"name": "rmcp_proxy_http", "tool": "echo", "url": floor_url},
            {"name": "rmcp_server_http", "tool": "echo", "url": server_floor_url},
        ],
    });
    let config_path = setup.dir.join("ts-bench.json");
    std::fs::write(&config_path, serde_json::to_vec_pretty(&config)?)?;
    // The SDK's HTTP transport adds an abort listener per call to one signal, so
    // long runs print thousands of MaxListenersExceeded warnings that would bury
    // a real error in the output kept for failures.
    let out = tokio::process::Command::new(&node)
        .arg("--no-warnings")
        .arg(&script)
        .arg(&config_path)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .context("running the TypeScript SDK benchmark")?;
    hecate_http.stop().await;
    floor_http.stop().await;
    server_floor.stop().await;
    gateway.stop().await;
    everything_http.stop().await;
    anyhow::ensure!(
        out.status.success(),
        "the TypeScript SDK benchmark failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let report: Value = text
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .context("no JSON report from the TypeScript SDK benchmark")?;
    let mut paths = report["results"]
        .as_object()
        .cloned()
        .context("no results in the TypeScript SDK report")?;
    add_ratios(&mut paths);
    Ok(json!({
        "client": "typescript-sdk",
        "sdk_version": report["sdk_version"],
        "node": report["node"],
        "upstream": "server-everything",
        "calls": n,
        "clients": k,
        "paths": paths,
        "cold_start": cold,
    }))
}

/// A command as the TypeScript script's stdio target (`command`, `args`).
fn ts_stdio(cmd: &tokio::process::Command) -> Value {
    let std = cmd.as_std();
    json!({
        "command": std.get_program().to_string_lossy(),
        "args": std.get_args().map(|a| a.to_string_lossy()).collect::<Vec<_>>(),
    })
}

/// Single-quotes a path for the shell command line supergateway runs.
fn sh_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', r"'\''"))
}
