//! `hecate acp`: Hecate as an ACP agent on stdio, for Zed, JetBrains and any ACP
//! client; with `--remote URL`, a relay between stdio and a hub's `/acp`
//! WebSocket instead (`remote`). Stdout carries protocol frames only; logs go
//! to stderr.

mod remote;

use super::{AppContext, GlobalArgs};
use crate::bridges::acp::{BridgeConfig, serve_stdio};
use crate::domain::error::HecateError;
use crate::engine::targets::TargetRef;
use std::time::Duration;

/// Arguments of `hecate acp`.
#[derive(Debug, clap::Args)]
pub struct AcpArgs {
    /// Default target for new threads: `model:PROVIDER/MODEL`, `agent:ADAPTER_ID`,
    /// `hecate:PROVIDER/MODEL` (Hecate's own agent) or `hecate` (on the default
    /// model); else `[acp] default_target`, else the first available target.
    #[arg(long, env = "HECATE_ACP_TARGET")]
    pub target: Option<String>,
    /// Relay stdio to the ACP endpoint of a running `hecate serve` instead of
    /// serving here: `ws://HOST:PORT/acp` (`wss://` through TLS), or the server's
    /// `http(s)://HOST:PORT` address, to which `/acp` is added.
    #[arg(long, value_name = "URL")]
    pub remote: Option<String>,
    /// Bearer token for `--remote` (the hub's `[server] token`).
    #[arg(long, env = "HECATE_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
}

pub async fn run(cli: &GlobalArgs, args: &AcpArgs) -> anyhow::Result<i32> {
    if let Some(url) = &args.remote {
        // A relay needs no store, engine or configuration of its own.
        if args.target.is_some() {
            tracing::warn!("--target is not used with --remote: pick the target in the editor");
        }
        let token = args.token.as_deref().filter(|t| !t.is_empty());
        remote::relay(url, token).await?;
        return Ok(0);
    }
    let ctx = AppContext::build(cli).await?;
    let default_target = checked_default_target(
        args.target.as_deref(),
        ctx.config.file.acp.default_target.as_deref(),
    )?;
    ctx.log_terminal_sandbox().await;
    let config = BridgeConfig {
        namespace: ctx.namespace.clone(),
        default_target,
        discovery_timeout: Duration::from_secs(2),
    };
    tracing::info!("serving ACP on stdio");
    serve_stdio(ctx.engine.clone(), config).await?;
    Ok(0)
}

/// The default target of new threads: `explicit` (`--target`) over `file`
/// (`[acp] default_target`), refused at startup when it does not parse rather
/// than ignored.
pub(crate) fn checked_default_target(
    explicit: Option<&str>,
    file: Option<&str>,
) -> Result<Option<String>, HecateError> {
    let (target, source) = match (explicit, file) {
        (Some(t), _) => (t, "--target (HECATE_ACP_TARGET)"),
        (None, Some(t)) => (t, "[acp] default_target"),
        (None, None) => return Ok(None),
    };
    match TargetRef::parse(target) {
        Ok(_) => Ok(Some(target.to_string())),
        Err(e) => {
            let message = format!("{source} is invalid: {}", e.message);
            Err(HecateError { message, ..e }.with_operator_action(format!(
                "Set {source} to model:PROVIDER/MODEL, agent:ADAPTER_ID, hecate:PROVIDER/MODEL or hecate, or remove it to start on the first target on offer."
            )))
        }
    }
}
