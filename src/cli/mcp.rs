//! `hecate mcp`: Hecate as an MCP server on stdio (stdout carries frames only;
//! logs go to stderr), plus `probe` (one upstream, uncached), `call` (one tool
//! call through the engine), `servers` (the aggregated upstreams and the pool),
//! `calls` (the audit log of proxied calls), `http` (the Streamable HTTP
//! endpoint alone, for tests and benchmarks), and `login` / `logout` (OAuth
//! sign-ins of HTTP upstreams).
//!
//! Namespace: the global `--namespace` applies; the default `default` is the
//! CLI's and HTTP API's, so MCP clients share sessions with them.

use super::output::{Format, print_resource};
use super::{AppContext, GlobalArgs};
use crate::adapters::process::env::current_env;
use crate::bridges::mcp::{McpHttpConfig, McpServerOptions, http_router, serve_stdio};
use anyhow::Context;
use tokio_util::sync::CancellationToken;

mod ad_hoc;
pub(crate) mod call;
mod login;

pub use ad_hoc::AdHocServer;

/// Arguments of `hecate mcp`.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// What to do (serve on stdio when absent).
    #[command(subcommand)]
    pub command: Option<McpCommand>,
}

/// `hecate mcp` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum McpCommand {
    /// Serve MCP on stdio (the default).
    Serve,
    /// Start one MCP server outside the pool, list its tools and stop it:
    /// `hecate mcp probe -- COMMAND [ARGS...]` or `hecate mcp probe --url URL`.
    Probe(ProbeArgs),
    /// Call one tool of an MCP server through the engine (pool, policy, audit):
    /// `hecate mcp call --server NAME TOOL`, `hecate mcp call --url URL TOOL` or
    /// `hecate mcp call TOOL -- COMMAND [ARGS...]`, arguments as `--args JSON`.
    Call(call::CallArgs),
    /// List the configured upstream servers with their tools, and the client pool.
    Servers {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Show the audit log of proxied upstream tool calls, newest first.
    Calls {
        /// How many records.
        #[arg(long, default_value_t = 50)]
        limit: usize,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Serve the Streamable HTTP endpoint (`/mcp`, `/mcp/NAME`) alone on loopback.
    Http(HttpArgs),
    /// Sign in to an OAuth-protected HTTP server: prints the authorization URL
    /// and completes when the browser comes back to a loopback redirect.
    Login(login::LoginArgs),
    /// Forget the stored OAuth sign-in of a server.
    Logout {
        /// The configured server name.
        server: String,
    },
}

/// Arguments of `hecate mcp probe`.
#[derive(Debug, clap::Args)]
pub struct ProbeArgs {
    /// The server to probe.
    #[command(flatten)]
    pub server: AdHocServer,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

/// Arguments of `hecate mcp http`.
#[derive(Debug, clap::Args)]
pub struct HttpArgs {
    /// Loopback address to listen on.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: String,
}

/// Builds the context with the configured upstreams registered on the engine.
async fn context(cli: &GlobalArgs) -> anyhow::Result<AppContext> {
    let ctx = AppContext::build(cli).await?;
    ctx.engine
        .mcp()
        .configure(&ctx.namespace, ctx.config.mcp_servers()?)
        .await?;
    Ok(ctx)
}

/// The bearer token of HTTP endpoints: `HECATE_TOKEN`, else `[server] token`.
fn token(ctx: &AppContext) -> Option<String> {
    std::env::var("HECATE_TOKEN")
        .ok()
        .or_else(|| ctx.config.file.server.token.clone())
        .filter(|t| !t.is_empty())
}

pub async fn run(cli: &GlobalArgs, args: &McpArgs) -> anyhow::Result<i32> {
    match &args.command {
        None | Some(McpCommand::Serve) => serve(cli).await,
        Some(McpCommand::Probe(a)) => probe(cli, a).await,
        Some(McpCommand::Call(a)) => call::run(cli, a).await,
        Some(McpCommand::Servers { format }) => servers(cli, *format).await,
        Some(McpCommand::Calls { limit, format }) => calls(cli, *limit, *format).await,
        Some(McpCommand::Http(a)) => http(cli, a).await,
        Some(McpCommand::Login(a)) => login::login(&context(cli).await?, a).await,
        Some(McpCommand::Logout { server }) => login::logout(&context(cli).await?, server).await,
    }
}

async fn serve(cli: &GlobalArgs) -> anyhow::Result<i32> {
    let ctx = context(cli).await?;
    tracing::info!(namespace = %ctx.namespace, "serving MCP on stdio");
    let result = serve_stdio(
        ctx.engine.clone(),
        McpServerOptions {
            namespace: ctx.namespace.clone(),
            transport: "stdio".into(),
            upstream: None,
            tool_loading: ctx.config.mcp_tool_loading(&current_env())?,
        },
    )
    .await;
    ctx.engine.shutdown().await;
    result?;
    Ok(0)
}

async fn probe(cli: &GlobalArgs, a: &ProbeArgs) -> anyhow::Result<i32> {
    let Some(spec) = a.server.spec()? else {
        anyhow::bail!("give either --url URL or -- COMMAND [ARGS...]");
    };
    let ctx = AppContext::build(cli).await?;
    let report = ctx.engine.mcp().probe(&spec).await?;
    match a.format {
        Format::Json => print_resource("mcp_probe", &report)?,
        Format::Text => {
            let mut out = String::new();
            out.push_str(&format!("server: {}\n", report.server));
            for t in &report.tools {
                out.push_str(&format!(
                    "  {}  {}\n",
                    t["name"].as_str().unwrap_or("?"),
                    t["description"]
                        .as_str()
                        .unwrap_or("")
                        .lines()
                        .next()
                        .unwrap_or("")
                ));
            }
            super::output::print_text(&out)?;
        }
    }
    Ok(0)
}

async fn servers(cli: &GlobalArgs, format: Format) -> anyhow::Result<i32> {
    let ctx = context(cli).await?;
    let catalog = ctx.engine.mcp().tools().await;
    let servers: Vec<serde_json::Value> = ctx
        .engine
        .mcp().servers()
        .iter()
        .map(|s| {
            let error = catalog.failures.iter().find(|f| f.server == s.name).map(|f| &f.error);
            serde_json::json!({
                "name": s.name,
                "policy": s.policy.as_str(),
                "state": crate::engine::mcp::ServerState::of(error).as_str(),
                "tools": catalog.tools.iter().filter(|t| t.server == s.name).map(|t| serde_json::json!({"name": t.exposed, "tool": t.tool, "policy": t.policy.as_str()})).collect::<Vec<_>>(),
                "error": error,
            })
        })
        .collect();
    let pool = ctx.engine.mcp().pool_stats();
    match format {
        Format::Json => print_resource(
            "mcp_servers",
            &serde_json::json!({"servers": servers, "pool": pool}),
        )?,
        Format::Text => {
            let mut out = String::new();
            for s in &servers {
                out.push_str(&format!(
                    "{} ({})\n",
                    s["name"].as_str().unwrap_or("?"),
                    s["policy"].as_str().unwrap_or("?")
                ));
                if let Some(e) = s["error"].get("message") {
                    let state = match s["state"].as_str() {
                        Some("auth_required") => "auth_required",
                        _ => "unavailable",
                    };
                    out.push_str(&format!(
                        "  {state}: {}\n",
                        crate::domain::redact::redact_urls_in(e.as_str().unwrap_or(""))
                    ));
                }
                for t in s["tools"].as_array().into_iter().flatten() {
                    out.push_str(&format!("  {}\n", t["name"].as_str().unwrap_or("?")));
                }
            }
            out.push_str(&format!(
                "pool: {} entries, {} in use, {} idle\n",
                pool.entries, pool.in_use, pool.idle
            ));
            super::output::print_text(&out)?;
        }
    }
    ctx.engine.shutdown().await;
    Ok(0)
}

async fn calls(cli: &GlobalArgs, limit: usize, format: Format) -> anyhow::Result<i32> {
    let ctx = AppContext::build(cli).await?;
    let records = ctx.engine.mcp().list_calls(&ctx.namespace, limit).await?;
    match format {
        Format::Json => print_resource("list", &records)?,
        Format::Text => {
            let mut out = String::new();
            for r in &records {
                out.push_str(&format!(
                    "{}  {:<32} {:<9} {:<10} {:>6} ms  {}\n",
                    r.started_at, r.exposed_name, r.decision, r.outcome, r.duration_ms, r.client
                ));
            }
            super::output::print_text(&out)?;
        }
    }
    Ok(0)
}

async fn http(cli: &GlobalArgs, a: &HttpArgs) -> anyhow::Result<i32> {
    let ctx = context(cli).await?;
    let addr: std::net::SocketAddr = a
        .listen
        .parse()
        .with_context(|| format!("--listen {:?} is not an address", a.listen))?;
    if !addr.ip().is_loopback() {
        anyhow::bail!(
            "hecate mcp http listens on loopback only; use hecate serve for remote access"
        );
    }
    let limits = super::serve::limits(&ctx.config)?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .with_context(|| format!("binding {addr}"))?;
    let local = listener.local_addr()?;
    let shutdown = CancellationToken::new();
    let app = axum::Router::new().nest_service(
        "/mcp",
        http_router(
            ctx.engine.clone(),
            McpHttpConfig {
                namespace: ctx.namespace.clone(),
                token: token(&ctx),
                bound: local,
                shutdown: shutdown.clone(),
                tool_loading: ctx.config.mcp_tool_loading(&current_env())?,
                idp: None,
            },
        ),
    );
    eprintln!("hecate MCP endpoint on http://{local}/mcp");
    super::output::print_text(&format!("{{\"listening\":\"http://{local}/mcp\"}}\n"))?;
    let stop = shutdown.clone();
    crate::bridges::serve::serve(listener, app, limits, async move {
        let _ = tokio::signal::ctrl_c().await;
        stop.cancel();
    })
    .await;
    ctx.engine.shutdown().await;
    Ok(0)
}
