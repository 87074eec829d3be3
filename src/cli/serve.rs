//! `hecate serve`: the HTTP server (REST + SSE) on loopback, or on another address
//! with `--allow-remote` and a token.

use super::{AppContext, GlobalArgs};
use crate::adapters::process::env::current_env;
use crate::bridges::http::{ConsoleSource, HttpConfig, router};
use crate::bridges::serve::{ServeLimits, serve};
use crate::config::DEFAULT_LISTEN;
use anyhow::Context;
use std::net::SocketAddr;
use tokio_util::sync::CancellationToken;

/// Arguments of `hecate serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// Address to listen on (default from `[server] listen`, else 127.0.0.1:8765).
    #[arg(long)]
    pub listen: Option<String>,
    /// Allow a non-loopback address (requires a configured token or `[server.idp]`).
    #[arg(long)]
    pub allow_remote: bool,
}

pub async fn run(cli: &GlobalArgs, args: &ServeArgs) -> anyhow::Result<i32> {
    let ctx = AppContext::build(cli).await?;
    ctx.log_terminal_sandbox().await;
    // Upstream MCP servers must be known before the router mounts `/mcp/NAME`.
    ctx.engine
        .mcp()
        .configure(&ctx.namespace, ctx.config.mcp_servers()?)
        .await?;
    let listen = args
        .listen
        .clone()
        .or_else(|| ctx.config.file.server.listen.clone())
        .unwrap_or_else(|| DEFAULT_LISTEN.to_string());
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("--listen {listen:?} is not an address like 127.0.0.1:8765"))?;
    let token = std::env::var("HECATE_TOKEN")
        .ok()
        .or_else(|| ctx.config.file.server.token.clone())
        .filter(|t| !t.is_empty());
    let idp = ctx
        .config
        .file
        .server
        .idp
        .as_ref()
        .map(|s| s.settings(&ctx.config.path))
        .transpose()?;
    let allowed =
        addr.ip().is_loopback() || (args.allow_remote && (token.is_some() || idp.is_some()));
    if !allowed {
        return Err(crate::domain::HecateError::invalid(format!(
            "refusing to listen on non-loopback {addr}: pass --allow-remote and configure a token \
             ([server] token or HECATE_TOKEN) or an identity provider ([server.idp])"
        ))
        .into());
    }
    let limits = limits(&ctx.config)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr()?;
    // A provider whose base URL points back here would loop: its readiness says so.
    ctx.engine.gateway().set_own_address(local);
    if ctx.config.file.agents.gateway_url.is_none() {
        // Agents opted into `[agents.gateway]` reach this server's `/v1`.
        let mut reach = local;
        if reach.ip().is_unspecified() {
            reach.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
        }
        ctx.engine
            .agents()
            .point_at_gateway(&format!("http://{reach}"), token.as_deref());
    }
    let health = ctx.engine.store_health().await?;
    // Signal handlers are in place before the address is announced, so a client
    // that stops the server right after reading it gets a graceful exit.
    let signal = shutdown_signal()?;
    let shutdown = CancellationToken::new();
    let mcp_tool_loading = ctx.config.mcp_tool_loading(&current_env())?;
    let acp_default_target =
        super::acp::checked_default_target(None, ctx.config.file.acp.default_target.as_deref())?;
    let app = router(
        ctx.engine.clone(),
        HttpConfig {
            namespace: ctx.namespace.clone(),
            token,
            bound: local,
            shutdown: shutdown.clone(),
            console: console_source(),
            mcp_tool_loading,
            acp_default_target,
            idp,
        },
    );
    eprintln!(
        "hecate {} listening on http://{local}",
        env!("CARGO_PKG_VERSION")
    );
    eprintln!("store: {} ({})", health.location, health.backend);
    tracing::info!(%local, "serving");
    // Task runs are executed by the serving processes; each claims from the
    // store's queue, so several servers on one store share the work.
    let workers = ctx.engine.tasks().start_workers(shutdown.clone());
    let env: std::collections::HashMap<String, String> = std::env::vars().collect();
    let retention = ctx
        .engine
        .approvals()
        .start_retention(ctx.config.approval_retention(&env)?, shutdown.clone());
    // Turns of processes that died elsewhere are closed once their lease expires.
    let sweep = ctx.engine.start_owner_sweep(shutdown.clone());
    // Provider cooldowns learnt here reach the other processes on the store,
    // and theirs reach this one.
    let cooldowns = ctx.engine.gateway().start_cooldown_sync(shutdown.clone());
    let stop = shutdown.clone();
    serve(listener, app, limits, async move {
        signal.await;
        // Open event streams end so the graceful shutdown does not wait on them.
        stop.cancel();
    })
    .await;
    // Workers stop with the server (a task run in progress is stopped and left
    // for the next claim); supervised agent processes end with it too.
    shutdown.cancel();
    for w in workers {
        let _ = w.await;
    }
    let _ = retention.await;
    let _ = sweep.await;
    let _ = cooldowns.await;
    ctx.engine.shutdown().await;
    eprintln!("hecate stopped");
    Ok(0)
}

/// Registers SIGINT and SIGTERM now and resolves when either arrives.
#[cfg(unix)]
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut int = signal(SignalKind::interrupt()).context("installing the SIGINT handler")?;
    let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
    Ok(async move {
        tokio::select! {
            _ = int.recv() => {},
            _ = term.recv() => {},
        }
    })
}

/// Resolves on Ctrl-C.
#[cfg(not(unix))]
fn shutdown_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    Ok(async {
        let _ = tokio::signal::ctrl_c().await;
    })
}

/// The connection limits of `[server]` (and `HECATE_SERVER_*`) in the form the
/// HTTP bridge takes.
pub(crate) fn limits(config: &crate::config::Config) -> anyhow::Result<ServeLimits> {
    let env: std::collections::HashMap<String, String> = std::env::vars().collect();
    let l = config.server_limits(&env)?;
    Ok(ServeLimits {
        header_read_timeout: l.header_read_timeout,
        body_read_timeout: l.body_read_timeout,
        max_connections: l.max_connections,
    })
}

/// The console's files: the embedded copy, or the folder `HECATE_CONSOLE_DIR`
/// names (read on every request, for working on the console without rebuilding).
fn console_source() -> ConsoleSource {
    match std::env::var_os("HECATE_CONSOLE_DIR") {
        Some(dir) if !dir.is_empty() => ConsoleSource::Folder(dir.into()),
        _ => ConsoleSource::Embedded,
    }
}
