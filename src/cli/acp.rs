//! `hecate acp`: Hecate as an ACP agent on stdio, for Zed, JetBrains and any ACP
//! client. Stdout carries protocol frames only; logs go to stderr.

use super::{AppContext, Cli};
use crate::bridges::acp::{BridgeConfig, serve_stdio};
use std::time::Duration;

/// Arguments of `hecate acp`.
#[derive(Debug, clap::Args)]
pub struct AcpArgs {
    /// Default target for new threads: `model:PROVIDER/MODEL`, `agent:ADAPTER_ID`,
    /// `hecate:PROVIDER/MODEL` (Hecate's own agent) or `hecate` (on the default
    /// model); else `[acp] default_target`, else the first available target.
    #[arg(long, env = "HECATE_ACP_TARGET")]
    pub target: Option<String>,
}

pub async fn run(cli: &Cli, args: &AcpArgs) -> anyhow::Result<i32> {
    let ctx = AppContext::build(cli).await?;
    ctx.log_terminal_sandbox().await;
    let config = BridgeConfig {
        namespace: ctx.namespace.clone(),
        default_target: args
            .target
            .clone()
            .or_else(|| ctx.config.file.acp.default_target.clone()),
        discovery_timeout: Duration::from_secs(2),
    };
    tracing::info!("serving ACP on stdio");
    serve_stdio(ctx.engine.clone(), config).await?;
    Ok(0)
}
