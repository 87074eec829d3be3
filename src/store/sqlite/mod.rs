//! The SQLite backend: one connection per store behind a mutex, WAL, foreign keys,
//! busy timeout, `BEGIN IMMEDIATE` for every write that assigns sequences.

mod approvals;
mod audit;
mod leases;
mod messages;
pub mod migrations;
mod runs;
mod sessions;

use crate::domain::error::{HecateError, Result};
use crate::store::{Store, StoreFailure, StoreHealth};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// How long a writer waits for another process's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Pause between two attempts to set up a connection another process holds locked.
const OPEN_RETRY_PAUSE: Duration = Duration::from_millis(25);

/// Whether `e` is SQLite's "busy" or "locked" (another connection holds the lock).
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

/// The location string of the in-memory backend.
pub const MEMORY_LOCATION: &str = ":memory:";

/// A Hecate store in one SQLite database (a file, or `:memory:`).
pub struct SqliteStore {
    conn: Mutex<Connection>,
    location: String,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("location", &self.location)
            .finish()
    }
}

impl SqliteStore {
    /// Opens (creating if needed) and migrates the database file at `path`.
    pub fn open(path: &Path) -> Result<Self> {
        let location = path.display().to_string();
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(|e| {
                HecateError::store(format!(
                    "cannot create data directory {}: {e}",
                    dir.display()
                ))
            })?;
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX
                | OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(|e| open_error(&location, e))?;
        Self::init(conn, location, true)
    }

    /// Opens a fresh in-memory database (the in-memory backend: same code, no file).
    pub fn open_in_memory() -> Result<Self> {
        let conn = Connection::open_in_memory().map_err(|e| open_error(MEMORY_LOCATION, e))?;
        Self::init(conn, MEMORY_LOCATION.to_string(), false)
    }

    fn init(mut conn: Connection, location: String, wal: bool) -> Result<Self> {
        let setup = |conn: &mut Connection| -> rusqlite::Result<()> {
            conn.busy_timeout(BUSY_TIMEOUT)?;
            if wal {
                let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
                if !mode.eq_ignore_ascii_case("wal") {
                    tracing::warn!(mode, "SQLite did not switch to WAL");
                }
                conn.pragma_update(None, "synchronous", "NORMAL")?;
            }
            conn.pragma_update(None, "foreign_keys", "ON")?;
            migrations::migrate(conn)?;
            Ok(())
        };
        // Switching a new file to WAL and the first migration take locks whose
        // conflicts SQLite reports as busy without calling the busy handler, so a
        // second process opening the file at that moment retries here.
        let started = std::time::Instant::now();
        loop {
            match setup(&mut conn) {
                Ok(()) => break,
                Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => {
                    std::thread::sleep(OPEN_RETRY_PAUSE);
                }
                Err(e) => return Err(open_error(&location, e)),
            }
        }
        Ok(Self {
            conn: Mutex::new(conn),
            location,
        })
    }

    /// The database location this store was opened on.
    pub fn location(&self) -> &str {
        &self.location
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the connection, converting SQLite errors into store errors that
    /// name the database file.
    pub(crate) fn with<T>(
        &self,
        f: impl FnOnce(&mut Connection) -> std::result::Result<T, StoreOpError>,
    ) -> Result<T> {
        let mut conn = self.lock();
        f(&mut conn).map_err(|e| match e {
            StoreOpError::Domain(d) => d,
            StoreOpError::Sqlite(source) => StoreFailure::Sqlite {
                location: self.location.clone(),
                source,
            }
            .into(),
            StoreOpError::Json(source) => StoreFailure::Json {
                location: self.location.clone(),
                source,
            }
            .into(),
        })
    }
}

/// An error inside a store operation: SQLite, stored JSON, or an already classified
/// domain error (not found, conflict).
#[derive(Debug)]
pub(crate) enum StoreOpError {
    Sqlite(rusqlite::Error),
    Json(serde_json::Error),
    Domain(HecateError),
}

impl From<rusqlite::Error> for StoreOpError {
    fn from(e: rusqlite::Error) -> Self {
        Self::Sqlite(e)
    }
}

impl From<serde_json::Error> for StoreOpError {
    fn from(e: serde_json::Error) -> Self {
        Self::Json(e)
    }
}

impl From<HecateError> for StoreOpError {
    fn from(e: HecateError) -> Self {
        Self::Domain(e)
    }
}

/// Result type inside store operations.
pub(crate) type OpResult<T> = std::result::Result<T, StoreOpError>;

fn open_error(location: &str, e: rusqlite::Error) -> HecateError {
    let hint = match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => {
            " (the file is not a SQLite database or is corrupt; move it aside to start fresh)"
        }
        Some(rusqlite::ErrorCode::ReadOnly) | Some(rusqlite::ErrorCode::CannotOpen) => {
            " (check that the file and its directory are writable)"
        }
        Some(rusqlite::ErrorCode::PermissionDenied) => " (permission denied)",
        _ => "",
    };
    HecateError::store(format!("cannot open database {location}: {e}{hint}"))
        .with_detail("database", location)
}

impl Store for SqliteStore {
    fn health(&self) -> Result<StoreHealth> {
        let (version, integrity) = self.with(|c| {
            let v: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let i: String = c.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
            Ok((v, i))
        })?;
        let size_bytes = if self.location == MEMORY_LOCATION {
            self.with(|c| {
                let pages: i64 = c.query_row("PRAGMA page_count", [], |r| r.get(0))?;
                let size: i64 = c.query_row("PRAGMA page_size", [], |r| r.get(0))?;
                Ok((pages * size) as u64)
            })?
        } else {
            std::fs::metadata(&self.location)
                .map(|m| m.len())
                .unwrap_or(0)
        };
        Ok(StoreHealth {
            backend: "sqlite".into(),
            location: self.location.clone(),
            schema_version: version,
            size_bytes,
            integrity,
        })
    }
}

#[cfg(test)]
mod tests;
