//! `hecate keys create|list|revoke`: named API keys of a shared hub, written to
//! the same store `hecate serve` reads them from (a running server honours a key
//! created or revoked here on its next request).

use super::output::{Format, print_json, print_resource, print_text};
use super::{AppContext, GlobalArgs};
use crate::bridges::resources::keys::KeyDto;
use crate::domain::api_key::{Identity, KeyScope};
use std::fmt::Write as _;

/// The `keys` subcommands.
#[derive(Debug, clap::Subcommand)]
pub enum KeysCommand {
    /// Create a key and print its token (shown only now).
    Create {
        /// Its name: letters, digits, '-', '_', '.' or '@'.
        name: String,
        /// Scope items, repeatable or comma-separated: one role (read, the default,
        /// operator or admin) and any of namespace:NAME, server:NAME (hecate for
        /// Hecate's own tools) and tool:SERVER/TOOL.
        #[arg(long = "scope", value_delimiter = ',')]
        scope: Vec<String>,
        /// Lifetime (`90m`, `12h`, `30d`); no expiry when absent.
        #[arg(long, value_parser = humantime::parse_duration)]
        expires_in: Option<std::time::Duration>,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// List every key, revoked and expired ones included.
    List {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Revoke a key by id or name.
    Revoke {
        /// Key id or name.
        key: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
}

/// Runs a `keys` subcommand.
pub async fn run(cli: &GlobalArgs, cmd: &KeysCommand) -> anyhow::Result<i32> {
    let ctx = AppContext::build(cli).await?;
    let keys = ctx.engine.keys();
    match cmd {
        KeysCommand::Create {
            name,
            scope,
            expires_in,
            format,
        } => {
            let scope = KeyScope::parse(scope)?;
            let issued = keys
                .create(name, scope, *expires_in, &Identity::Admin.label())
                .await?;
            let dto = KeyDto::from(&issued.key);
            match format {
                Format::Json => print_json(&serde_json::json!({
                    "object": "api_key",
                    "data": dto,
                    "token": issued.token,
                }))?,
                Format::Text => print_text(&format!(
                    "created key {} ({}), scope {}{}\n\n{}\n\nThe token is shown only now: send it as `Authorization: Bearer <token>`.\n",
                    dto.name,
                    dto.id,
                    dto.scope.join(" "),
                    dto.expires_at
                        .as_deref()
                        .map(|at| format!(", expires {at}"))
                        .unwrap_or_default(),
                    issued.token
                ))?,
            }
        }
        KeysCommand::List { format } => {
            let list: Vec<KeyDto> = keys.list().await?.iter().map(KeyDto::from).collect();
            match format {
                Format::Json => print_json(&serde_json::json!({
                    "object": "api_keys",
                    "data": list,
                }))?,
                Format::Text => {
                    let mut out = String::new();
                    for k in &list {
                        let _ = writeln!(
                            out,
                            "{}  {:<20} {:<8} {:<8} {}{}",
                            k.id,
                            k.name,
                            k.role.as_str(),
                            serde_json::to_value(k.state)?.as_str().unwrap_or_default(),
                            k.scope.join(" "),
                            k.last_used_at
                                .as_deref()
                                .map(|at| format!("  (last used {at})"))
                                .unwrap_or_default()
                        );
                    }
                    if list.is_empty() {
                        out.push_str("no keys\n");
                    }
                    print_text(&out)?;
                }
            }
        }
        KeysCommand::Revoke { key, format } => {
            let revoked = keys.revoke(key).await?;
            match format {
                Format::Json => print_resource("api_key", &KeyDto::from(&revoked))?,
                Format::Text => {
                    print_text(&format!("revoked key {} ({})\n", revoked.name, revoked.id))?
                }
            }
        }
    }
    Ok(0)
}
