//! `hecate doctor`: diagnoses this machine for Hecate, one line per check with a
//! status (ok / warn / error), a message and, when not ok, the fix: the config file,
//! the store, Node.js and npm, bubblewrap, the agent terminal sandbox, every catalog
//! adapter, every provider, the HTTP token and the OAuth sign-ins of HTTP MCP upstreams. URLs are shown with credentials redacted; keys and tokens never.
//!
//! Required checks, whose failure makes doctor exit non-zero: the config (it must
//! parse and validate; exit 2), the store (it must open and pass its integrity
//! check; exit 8) and, when providers are configured, at least one ready provider
//! (exit 5). Everything else (Node, npm, bubblewrap, the terminal sandbox, adapters,
//! single providers, the token) is advisory: a warning, exit 0.

mod adapters;
mod check;
mod machine;
mod mcp;
mod providers;
mod terminals;

use super::GlobalArgs;
use super::context::{DB_FILE, default_config_path, default_data_dir, open_store};
use super::output::{Format, print_resource, print_text};
use crate::adapters::acp::LauncherOptions;
use crate::adapters::acp::agent::catalog::{BUILTIN_MANIFESTS, Catalog};
use crate::adapters::process::env::current_env;
use crate::adapters::providers::ProviderClient;
use crate::config::{Config, DEFAULT_LISTEN, adapters_dir_beside};
use crate::domain::redact::redact_urls_in;
use check::{Check, Status};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

/// Arguments of `hecate doctor`.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Seconds to wait for each provider's model listing.
    #[arg(long, default_value_t = 5)]
    pub timeout: u64,
}

/// The config line (required) and the config when it loaded (also when a section
/// then failed validation).
fn config_check(path: &std::path::Path, env: &HashMap<String, String>) -> (Check, Option<Config>) {
    let fix = format!(
        "Fix the file (the message names the line and key) or move it aside; another file \
         can be chosen with --config or HECATE_CONFIG. Reading: {}",
        path.display()
    );
    let config = match Config::load(path, env) {
        Ok(c) => c,
        Err(e) => {
            return (
                Check::error("config", redact_urls_in(&e.to_string()), fix).required(),
                None,
            );
        }
    };
    let invalid = config
        .approval_mode()
        .err()
        .or_else(|| config.mcp_servers().err())
        .or_else(|| config.mcp_pool().err())
        .or_else(|| config.store_pool(env).err())
        .or_else(|| config.history().err())
        .or_else(|| config.terminal_sandbox(env).err());
    if let Some(e) = invalid {
        // The file parsed and its providers and adapters are still worth checking.
        return (
            Check::error("config", redact_urls_in(&e.to_string()), fix).required(),
            Some(config),
        );
    }
    let message = if config.file_exists {
        format!("{} (found)", path.display())
    } else {
        format!(
            "{} (not found; using defaults and the environment)",
            path.display()
        )
    };
    (Check::ok("config", message).required(), Some(config))
}

/// The store line (required), the data directory and the health report for JSON.
async fn store_check(
    cli: &GlobalArgs,
    config: Option<&Config>,
) -> (Check, String, serde_json::Value) {
    let fix_open = "Check that the data directory exists and is writable (--data-dir or \
                    HECATE_DATA_DIR), and that no other program holds the database locked; \
                    for a PostgreSQL store (--store, HECATE_STORE_URL, [store] url), that the \
                    server runs and the URL's user, password and database are right.";
    match open_store(cli, config).await {
        Err(e) => {
            let dir = cli.data_dir.clone().unwrap_or_else(default_data_dir);
            let msg = format!("{e:#}");
            (
                Check::error("store", format!("cannot open: {msg}"), fix_open).required(),
                dir.display().to_string(),
                serde_json::json!({ "error": msg }),
            )
        }
        Ok((dir, store)) => {
            let dir = dir.display().to_string();
            match store.health().await {
                Err(e) => (
                    Check::error("store", format!("health check failed: {e}"), fix_open).required(),
                    dir,
                    serde_json::json!({ "error": e.to_string() }),
                ),
                Ok(h) => {
                    let report = serde_json::to_value(&h).unwrap_or_default();
                    let mut found = format!(
                        "{} schema v{} at {} ({} bytes), integrity {}",
                        h.backend, h.schema_version, h.location, h.size_bytes, h.integrity
                    );
                    if let Some(p) = &h.pool {
                        found.push_str(&format!(
                            ", pool of at most {} connections ({} kept idle; {} open now)",
                            p.max_conns, p.max_idle, p.open
                        ));
                    }
                    let check = if h.integrity == "ok" {
                        Check::ok("store", found).required()
                    } else {
                        Check::error(
                            "store",
                            found,
                            format!(
                                "The database is damaged: stop Hecate, move {DB_FILE} out of \
                                 {dir} (or restore a backup) and start again."
                            ),
                        )
                        .required()
                    };
                    (check, dir, report)
                }
            }
        }
    }
}

/// The HTTP token line: set or not (never its value).
fn token_check(config: Option<&Config>, env: &HashMap<String, String>) -> Check {
    let from_env = env.get("HECATE_TOKEN").is_some_and(|t| !t.is_empty());
    let from_file = config
        .and_then(|c| c.file.server.token.as_deref())
        .is_some_and(|t| !t.is_empty());
    match (from_env, from_file) {
        (true, _) => Check::ok("http token", "set (HECATE_TOKEN)"),
        (false, true) => Check::ok("http token", "set ([server] token)"),
        (false, false) => Check::ok(
            "http token",
            "not set: `hecate serve` listens on loopback only (set [server] token or \
             HECATE_TOKEN before --allow-remote)",
        ),
    }
}

/// The process exit code: 2 config, 8 store, 5 no ready provider, else 0.
fn exit_code(checks: &[Check]) -> i32 {
    let blocking = |name: &str| checks.iter().any(|c| c.name == name && c.is_blocking());
    if blocking("config") {
        2
    } else if blocking("store") {
        8
    } else if blocking("providers") {
        5
    } else {
        0
    }
}

/// Runs every check and prints the report; returns the exit code.
pub async fn run(cli: &GlobalArgs, args: &DoctorArgs) -> anyhow::Result<i32> {
    let env = current_env();
    let config_path = cli.config.clone().unwrap_or_else(default_config_path);
    let (config_line, config) = config_check(&config_path, &env);
    let (store_line, data_dir, store_report) = store_check(cli, config.as_ref()).await;

    let (catalog, manifest_errors) =
        Catalog::load(BUILTIN_MANIFESTS, Some(&adapters_dir_beside(&config_path)));
    let launcher = LauncherOptions {
        cache_dir: config
            .as_ref()
            .and_then(|c| c.file.agents.cache_dir.clone()),
        path: None,
    };
    let agent_env = config
        .as_ref()
        .map(|c| c.agent_env(&env))
        .unwrap_or_default();
    let path = std::env::var_os("PATH");
    let http = ProviderClient::default_http()?;
    let timeout = Duration::from_secs(args.timeout.max(1));
    let provider_configs = config
        .as_ref()
        .map(|c| c.providers.clone())
        .unwrap_or_default();
    let disabled = config
        .as_ref()
        .map(|c| c.disabled_providers.clone())
        .unwrap_or_default();
    // The address `hecate serve` would listen on (its --listen is not known here).
    let listen = config
        .as_ref()
        .and_then(|c| c.file.server.listen.as_deref())
        .unwrap_or(DEFAULT_LISTEN)
        .parse()
        .ok();
    let provider_futures = provider_configs.into_iter().map(|p| {
        let source = config
            .as_ref()
            .and_then(|c| c.provider_sources.get(&p.name).cloned())
            .unwrap_or_default();
        let not_probed = providers::NotProbed::of(&p, &disabled, listen);
        providers::provider_status(http.clone(), p, source, timeout, not_probed)
    });
    let home = dirs::home_dir();
    let (node, npm, bwrap, terminal_sandbox, adapter_lines, statuses) = futures::join!(
        machine::node(&catalog, path.as_ref()),
        machine::npm(path.as_ref()),
        machine::bubblewrap(path.as_ref()),
        terminals::sandbox(config.as_ref(), &env),
        adapters::check_all(&catalog, &launcher, &env, &agent_env, home.as_deref()),
        futures::future::join_all(provider_futures),
    );

    let mut checks = vec![config_line, store_line, node, npm, bwrap, terminal_sandbox];
    checks.extend(adapter_lines);
    checks.extend(manifest_errors.iter().map(|e| {
        Check::warn(
            "adapter manifest",
            format!("ignored: {e}"),
            "Fix or remove the manifest file.",
        )
    }));
    checks.extend(statuses.iter().map(providers::line));
    checks.push(match &config {
        Some(_) => providers::summary(&statuses),
        None => Check::warn(
            "providers",
            "Not checked: the config did not load.",
            "Fix the config line above.",
        ),
    });
    checks.push(token_check(config.as_ref(), &env));
    let store = open_store(cli, config.as_ref()).await.ok().map(|(_, s)| s);
    checks.extend(mcp::sign_ins(config.as_ref(), store, timeout).await);
    let code = exit_code(&checks);

    if args.format == Format::Json {
        print_resource(
            "doctor",
            &serde_json::json!({
                "version": env!("CARGO_PKG_VERSION"),
                "ok": code == 0,
                "exit_code": code,
                "config_path": config_path,
                "config_exists": config.as_ref().is_some_and(|c| c.file_exists),
                "data_dir": data_dir,
                "store": store_report,
                "checks": checks,
                "providers": statuses,
            }),
        )?;
    } else {
        print_text(&render(&checks, code))?;
    }
    Ok(code)
}

/// The text report: one line per check, its fix beneath when not ok, and a tally.
fn render(checks: &[Check], code: i32) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "hecate {}", env!("CARGO_PKG_VERSION"));
    let width = checks.iter().map(|c| c.name.len()).max().unwrap_or(0);
    for c in checks {
        let _ = writeln!(
            out,
            "{:<5} {:<width$}  {}",
            c.status.as_str(),
            c.name,
            c.message
        );
        if let Some(fix) = &c.fix {
            let _ = writeln!(out, "{:<5} {:<width$}  fix: {fix}", "", "");
        }
    }
    let count = |s: Status| checks.iter().filter(|c| c.status == s).count();
    let _ = writeln!(
        out,
        "{} ok, {} warn, {} error; {}",
        count(Status::Ok),
        count(Status::Warn),
        count(Status::Error),
        if code == 0 {
            "every required check (config, store, providers) passes".to_string()
        } else {
            format!("a required check failed (exit {code})")
        }
    );
    out
}
