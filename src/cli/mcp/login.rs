//! `hecate mcp login SERVER` and `hecate mcp logout SERVER`: the OAuth sign-in
//! of a configured HTTP upstream. The authorization URL is printed on stdout
//! (no browser is opened: Hecate carries no browser launcher); the sign-in
//! completes when the browser reaches the loopback redirect.

use super::super::AppContext;
use super::super::output::print_text;
use std::time::Duration;

/// Arguments of `hecate mcp login`.
#[derive(Debug, clap::Args)]
pub struct LoginArgs {
    /// The configured server name (`[mcp_servers.NAME]` with a `url`).
    pub server: String,
    /// Scopes to ask for (the server's advertised ones when absent).
    #[arg(long = "scope")]
    pub scopes: Vec<String>,
    /// How long to wait for the browser, in seconds.
    #[arg(long, default_value_t = 300)]
    pub timeout: u64,
}

/// Runs the sign-in and reports the issuer it completed with.
pub async fn login(ctx: &AppContext, a: &LoginArgs) -> anyhow::Result<i32> {
    let mut shown = Ok(());
    let outcome = ctx
        .engine
        .mcp()
        .login(
            &a.server,
            a.scopes.clone(),
            Duration::from_secs(a.timeout),
            |url| {
                shown = print_text(&format!(
                    "Open this URL in a browser to sign in to {}:\n{url}\n",
                    a.server
                ));
            },
        )
        .await;
    shown?;
    let outcome = outcome?;
    print_text(&format!(
        "Signed in to {} (issuer {}).\n",
        a.server, outcome.issuer
    ))?;
    ctx.engine.shutdown().await;
    Ok(0)
}

/// Forgets the stored sign-in.
pub async fn logout(ctx: &AppContext, server: &str) -> anyhow::Result<i32> {
    let had = ctx.engine.mcp().logout(server).await?;
    print_text(&if had {
        format!("Signed out of {server}.\n")
    } else {
        format!("No sign-in was stored for {server}.\n")
    })?;
    ctx.engine.shutdown().await;
    Ok(0)
}
