//! `hecate store migrate`, `hecate store status` and `hecate store copy`: the schema of the store
//! the flags name (`--store`, `HECATE_STORE_URL`, `[store] url`, else SQLite in
//! the data directory). Every command migrates on open too; `status` does not,
//! so it shows what a database holds before a new build touches it.

use super::GlobalArgs;
use super::context::{data_dir, load_config, store_pool};
use super::output::{Format, print_resource, print_text};
use super::store_copy::{self, CopyArgs};
use super::store_target::StoreTarget;
use crate::domain::error::HecateError;
use crate::store::pool_settings::PoolSettings;
use crate::store::postgres::migrations as pg_migrations;
use crate::store::sqlite::migrations as sqlite_migrations;
use crate::store::{PostgresStore, SqliteStore, Store};
use serde::Serialize;
use std::fmt::Write as _;

/// `hecate store ...`.
#[derive(Debug, clap::Subcommand)]
pub enum StoreCommand {
    /// Apply the migrations this build knows (starting any command does too).
    Migrate {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Show the backend, where it is, its schema version and applied migrations.
    Status {
        /// Output format.
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Copy every table of one store into an empty other (SQLite and PostgreSQL,
    /// either way), checking row counts and checksums on both sides.
    Copy(CopyArgs),
}

/// One applied migration.
#[derive(Debug, Serialize)]
struct Migration {
    version: i64,
    /// Its name (PostgreSQL records one; SQLite keeps only the version).
    name: Option<String>,
    /// When it was applied (PostgreSQL only).
    applied_at: Option<String>,
}

/// What `status` and `migrate` report.
#[derive(Debug, Serialize)]
struct Status {
    backend: &'static str,
    location: String,
    schema_version: i64,
    known_version: i64,
    pending: i64,
    /// The connection pool a command opens on a PostgreSQL store (`[store]
    /// max_conns`, `max_idle`, or their `HECATE_STORE_*` variables).
    #[serde(skip_serializing_if = "Option::is_none")]
    pool: Option<PoolSettings>,
    migrations: Vec<Migration>,
}

/// Runs a `hecate store` subcommand.
pub async fn run(cli: &GlobalArgs, cmd: &StoreCommand) -> anyhow::Result<i32> {
    let format = match cmd {
        StoreCommand::Copy(args) => return store_copy::run(args).await,
        StoreCommand::Migrate { format } | StoreCommand::Status { format } => *format,
    };
    let config = load_config(cli)?;
    let target = StoreTarget::resolve(cli, Some(&config), &data_dir(cli))?;
    let pool = store_pool(Some(&config))?;
    if matches!(cmd, StoreCommand::Migrate { .. }) {
        target.open(pool).await?;
    }
    let mut status = status(&target).await?;
    if matches!(target, StoreTarget::Postgres(_)) {
        status.pool = Some(pool);
    }
    match format {
        Format::Json => print_resource("store_status", &status)?,
        Format::Text => print_text(&render(&status))?,
    }
    Ok(0)
}

/// Reads the schema state of `target` without migrating it.
async fn status(target: &StoreTarget) -> Result<Status, HecateError> {
    let (schema_version, known_version, migrations) = match target {
        StoreTarget::Postgres(url) => {
            let store = PostgresStore::connect_unmigrated(url).await?;
            let applied = store.applied_migrations().await?;
            let version = applied.last().map_or(0, |a| a.version);
            let migrations = applied
                .into_iter()
                .map(|a| Migration {
                    version: a.version,
                    name: Some(a.name),
                    applied_at: Some(a.applied_at),
                })
                .collect();
            (version, pg_migrations::latest_version(), migrations)
        }
        StoreTarget::SqliteFile(path) => {
            let version = sqlite_migrations::file_version(path)
                .map_err(|e| HecateError::store(format!("cannot read {}: {e}", path.display())))?
                .unwrap_or(0);
            (
                version,
                sqlite_migrations::latest_version(),
                sqlite_applied(version),
            )
        }
        StoreTarget::SqliteMemory => {
            let version = SqliteStore::open_in_memory()?
                .health()
                .await?
                .schema_version;
            (
                version,
                sqlite_migrations::latest_version(),
                sqlite_applied(version),
            )
        }
    };
    Ok(Status {
        backend: target.backend(),
        location: target.location(),
        schema_version,
        known_version,
        pending: (known_version - schema_version).max(0),
        pool: None,
        migrations,
    })
}

fn sqlite_applied(version: i64) -> Vec<Migration> {
    (1..=version)
        .map(|version| Migration {
            version,
            name: None,
            applied_at: None,
        })
        .collect()
}

fn render(s: &Status) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "backend:        {}", s.backend);
    let _ = writeln!(out, "location:       {}", s.location);
    let state = if s.schema_version > s.known_version {
        "newer than this build: upgrade Hecate before starting it on this store".to_string()
    } else if s.pending > 0 {
        format!("{} pending: `hecate store migrate` applies them", s.pending)
    } else {
        "up to date".to_string()
    };
    let _ = writeln!(
        out,
        "schema version: {} (this build knows {}; {state})",
        s.schema_version, s.known_version
    );
    if let Some(p) = &s.pool {
        let _ = writeln!(
            out,
            "pool:           at most {} connections, {} kept idle",
            p.max_conns, p.max_idle
        );
    }
    if s.migrations.is_empty() {
        let _ = writeln!(out, "migrations:     none applied");
    } else {
        let _ = writeln!(out, "migrations:");
        for m in &s.migrations {
            let _ = writeln!(
                out,
                "  {:>3}  {}  {}",
                m.version,
                m.applied_at.as_deref().unwrap_or("-"),
                m.name.as_deref().unwrap_or("-")
            );
        }
    }
    out
}
