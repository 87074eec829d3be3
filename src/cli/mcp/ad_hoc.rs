//! An MCP server named on the command line rather than in the config.

use crate::adapters::mcp::ServerSpec;
use std::collections::BTreeMap;

/// A server named on the command line rather than in the config: `--url` (with
/// `--header`s) or a command after `--` (with `--env`s).
#[derive(Debug, clap::Args)]
pub struct AdHocServer {
    /// URL of a Streamable HTTP server (instead of a command).
    #[arg(long)]
    pub url: Option<String>,
    /// Header for `--url`, `NAME=VALUE` (values may reference `$VAR`).
    #[arg(long = "header", requires = "url")]
    pub headers: Vec<String>,
    /// Environment for the command, `NAME=VALUE` (values may reference `$VAR`).
    #[arg(long = "env")]
    pub env: Vec<String>,
    /// The server's command and its arguments, after `--`.
    #[arg(last = true)]
    pub command: Vec<String>,
}

impl AdHocServer {
    /// How to reach the server; `None` when neither `--url` nor a command is given.
    pub fn spec(&self) -> anyhow::Result<Option<ServerSpec>> {
        Ok(Some(match (&self.url, self.command.split_first()) {
            (None, None) => return Ok(None),
            (Some(url), None) => ServerSpec::Http {
                url: url.clone(),
                headers: pairs(&self.headers, "--header")?,
            },
            (None, Some((command, args))) => ServerSpec::Stdio {
                command: command.clone(),
                args: args.to_vec(),
                env: pairs(&self.env, "--env")?,
                cwd: None,
            },
            (Some(_), Some(_)) => anyhow::bail!("give either --url URL or -- COMMAND [ARGS...]"),
        }))
    }
}

/// Parses `NAME=VALUE` items; `what` names the option in the error.
fn pairs(items: &[String], what: &str) -> anyhow::Result<BTreeMap<String, String>> {
    items
        .iter()
        .map(|kv| {
            kv.split_once('=')
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| anyhow::anyhow!("{what} {kv:?} is not NAME=VALUE"))
        })
        .collect()
}
