//! The refusals of a copy, each naming its fix: a source whose schema is not
//! the one this build knows, a target that is newer or not empty, a copy whose
//! target went away.

use crate::domain::error::{ErrorType, HecateError, Result};

/// Refuses a source whose schema version is not `known`.
pub fn source_version(location: &str, version: i64, known: i64, url: &str) -> Result<()> {
    if version == known {
        return Ok(());
    }
    let e = HecateError::new(
        ErrorType::Conflict,
        format!(
            "the source store {location} has schema version {version}, this Hecate copies \
             version {known}"
        ),
    )
    .with_detail("schema_version", version)
    .with_detail("known_version", known);
    Err(if version < known {
        e.with_operator_action(format!(
            "Migrate the source first: `hecate --store {url} store migrate`, then copy again."
        ))
    } else {
        e.with_operator_action("A newer Hecate migrated the source: copy with that Hecate.")
    })
}

/// Refuses a target whose schema version is newer than `known`.
pub fn target_version(location: &str, version: i64, known: i64) -> Result<()> {
    if version <= known {
        return Ok(());
    }
    Err(HecateError::new(
        ErrorType::Conflict,
        format!(
            "the target store {location} has schema version {version}, newer than this \
             Hecate knows ({known})"
        ),
    )
    .with_operator_action("Copy into an empty database, or copy with the newer Hecate."))
}

/// Refuses a target holding rows in `tables`.
pub fn empty(location: &str, tables: &[&str]) -> Result<()> {
    if tables.is_empty() {
        return Ok(());
    }
    Err(HecateError::new(
        ErrorType::Conflict,
        format!(
            "the target store {location} is not empty: {} hold rows",
            tables.join(", ")
        ),
    )
    .with_operator_action(
        "Copy into an empty store: a new SQLite file, or a new PostgreSQL database \
         (`createdb NAME`), or drop and recreate the target database. There is no --force: \
         a copy never merges into or overwrites existing data.",
    )
    .with_detail("tables", tables.join(",")))
}

/// The error of a reader whose target stopped taking rows (the target's own
/// error, reported instead when there is one).
pub fn target_stopped() -> HecateError {
    HecateError::store("the target stopped taking rows")
}
