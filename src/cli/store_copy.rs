//! `hecate store copy --from URL --to URL`: moves an installation between stores
//! (SQLite and PostgreSQL, either way) and reports per table the row counts and
//! checksums of both sides; exits non-zero when any differ.

use super::output::{Format, print_resource, print_text};
use super::store_target::StoreTarget;
use crate::domain::error::HecateError;
use crate::store::transfer::{self, Endpoint, Report};
use std::fmt::Write as _;

/// The exit code of a copy whose sums differ (the store-failure code).
const MISMATCH_EXIT: i32 = 8;

/// The arguments of `hecate store copy`.
#[derive(Debug, clap::Args)]
pub struct CopyArgs {
    /// The store to read: `sqlite:PATH` or `postgres://USER:PASSWORD@HOST:PORT/DB`.
    #[arg(long, value_name = "URL")]
    from: String,
    /// The empty store to write, in the same forms; created and migrated as needed.
    #[arg(long, value_name = "URL")]
    to: String,
    /// Output format of the report.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

/// Runs the copy and prints its report.
pub async fn run(args: &CopyArgs) -> anyhow::Result<i32> {
    let from = endpoint(&args.from, "--from")?;
    let to = endpoint(&args.to, "--to")?;
    let report = transfer::copy(&from, &to).await?;
    match args.format {
        Format::Json => print_resource("store_copy", &report)?,
        Format::Text => print_text(&render(&report))?,
    }
    if report.verified() {
        return Ok(0);
    }
    eprintln!(
        "error [store_error]: the copy did not match its source; the target was rolled back \
         and holds nothing of it"
    );
    Ok(MISMATCH_EXIT)
}

/// A store URL as a copy endpoint; the in-memory store is refused.
fn endpoint(url: &str, flag: &str) -> Result<Endpoint, HecateError> {
    match StoreTarget::parse(url.trim())? {
        StoreTarget::SqliteFile(path) => Ok(Endpoint::Sqlite(path)),
        StoreTarget::Postgres(url) => Ok(Endpoint::Postgres(url)),
        StoreTarget::SqliteMemory => Err(HecateError::invalid(format!(
            "{flag} names the in-memory store, which no other process can see"
        ))
        .with_operator_action("Copy from or to a SQLite file (sqlite:PATH) or PostgreSQL.")),
    }
}

fn render(r: &Report) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "from: {}", r.source);
    let _ = writeln!(out, "to:   {}", r.target);
    let _ = writeln!(
        out,
        "{:<28} {:>10} {:>10}  {:<16} {:<16}  ok",
        "table", "source", "target", "source sha256", "target sha256"
    );
    for t in &r.tables {
        let _ = writeln!(
            out,
            "{:<28} {:>10} {:>10}  {:<16} {:<16}  {}",
            t.table,
            t.source_rows,
            t.target_rows,
            &t.source_sha256[..16],
            &t.target_sha256[..16],
            if t.matches { "yes" } else { "NO" }
        );
    }
    let rows: u64 = r.tables.iter().map(|t| t.source_rows).sum();
    let verdict = if r.committed {
        format!(
            "copied {rows} rows in {} tables; every count and checksum matches",
            r.tables.len()
        )
    } else {
        "MISMATCH: rolled back, the target holds nothing of this copy".to_string()
    };
    let _ = writeln!(out, "{verdict}");
    out
}
