//! The options every `hecate` command takes: where the configuration, the data
//! and the store are, the namespace, and how much it logs.

use super::telemetry;
use std::path::PathBuf;

/// The options every command takes (global: they may stand before or after the
/// subcommand).
#[derive(Debug, clap::Args)]
pub struct GlobalArgs {
    /// Configuration file (default: <config dir>/hecate/config.toml).
    #[arg(long, global = true, env = "HECATE_CONFIG", value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Data directory holding the SQLite store; `:memory:` for an in-memory store.
    #[arg(long, global = true, env = "HECATE_DATA_DIR", value_name = "DIR")]
    pub data_dir: Option<PathBuf>,
    /// The store to open instead of SQLite in the data directory:
    /// `postgres://USER:PASSWORD@HOST:PORT/DATABASE` or `sqlite:PATH` (default:
    /// `[store] url` in the config file).
    #[arg(
        long,
        global = true,
        env = "HECATE_STORE_URL",
        hide_env_values = true,
        value_name = "URL"
    )]
    pub store: Option<String>,
    /// Namespace that isolates sessions between clients.
    #[arg(
        long,
        global = true,
        env = "HECATE_NAMESPACE",
        default_value = "default"
    )]
    pub namespace: String,
    /// More log output on stderr (-v info, -vv debug, -vvv trace).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Log line format on stderr.
    #[arg(long, global = true, value_enum, default_value = "text")]
    pub log_format: telemetry::LogFormat,
}
