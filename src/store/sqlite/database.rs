//! The `SqliteStore` handle: opening a file or `:memory:`, setting up the writer
//! and reader connections, and the backend's health report.

use super::op_error::{OpResult, StoreOpError};
use super::pool::{Job, Pool};
use super::{migrations, vector_ext};
use crate::domain::error::{HecateError, Result};
use crate::store::{Store, StoreFailure, StoreHealth};
use async_trait::async_trait;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::sync::Mutex;
use std::time::Duration;
use tokio::sync::oneshot;

/// The database file name inside a data directory.
pub const DB_FILE: &str = "hecate.db";

/// How long a writer waits for another process's write lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Pause between two attempts to set up a connection another process holds locked.
const OPEN_RETRY_PAUSE: Duration = Duration::from_millis(25);

/// Reader connections of a file-backed store unless told otherwise.
pub const DEFAULT_READERS: usize = 4;

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
    pub(super) pool: Pool,
    location: String,
    /// A reader connection the calling thread uses itself for the short,
    /// hot reads ([`SqliteStore::read_inline`]); `None` for `:memory:`.
    pub(super) inline: Option<Mutex<Connection>>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("location", &self.location)
            .field("readers", &self.pool.reader_count())
            .finish()
    }
}

impl SqliteStore {
    /// Opens (creating if needed) and migrates the database file at `path`, with
    /// [`DEFAULT_READERS`] reader connections.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_with_readers(path, DEFAULT_READERS)
    }

    /// Opens (creating if needed) and migrates the database file at `path`, with
    /// `readers` reader connections (at least one).
    pub fn open_with_readers(path: &Path, readers: usize) -> Result<Self> {
        vector_ext::register_vec();
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
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let writer = Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_CREATE)
            .map_err(|e| open_error(&location, e))?;
        let writer = setup_writer(writer, &location, true)?;
        let readers = (0..readers.max(1))
            .map(|_| {
                let conn = Connection::open_with_flags(path, flags)
                    .map_err(|e| open_error(&location, e))?;
                setup_reader(conn).map_err(|e| open_error(&location, e))
            })
            .collect::<Result<Vec<_>>>()?;
        let inline = Connection::open_with_flags(path, flags)
            .and_then(setup_reader)
            .and_then(|c| {
                // Never wait for a lock on the caller's thread: a busy read
                // goes to the reader threads instead.
                c.busy_timeout(Duration::ZERO)?;
                Ok(c)
            })
            .map_err(|e| open_error(&location, e))?;
        let mut store = Self::start(writer, readers, location)?;
        store.inline = Some(Mutex::new(inline));
        Ok(store)
    }

    /// Opens a fresh in-memory database (the in-memory backend: same code, no file).
    /// Reads run on the writer connection: see `docs/architecture.md`.
    pub fn open_in_memory() -> Result<Self> {
        vector_ext::register_vec();
        let conn = Connection::open_in_memory().map_err(|e| open_error(MEMORY_LOCATION, e))?;
        let writer = setup_writer(conn, MEMORY_LOCATION, false)?;
        Self::start(writer, Vec::new(), MEMORY_LOCATION.to_string())
    }

    fn start(writer: Connection, readers: Vec<Connection>, location: String) -> Result<Self> {
        let pool = Pool::start(writer, readers, "hecate-store").map_err(|e| {
            HecateError::store(format!(
                "cannot start the store threads for {location}: {e}"
            ))
        })?;
        Ok(Self {
            pool,
            location,
            inline: None,
        })
    }

    /// The database location this store was opened on.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Runs `f` on the writer connection (every write goes here, in order).
    pub(crate) async fn write<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> OpResult<T> + Send + 'static,
    ) -> Result<T> {
        self.run(true, f).await
    }

    /// Runs `f` on a free reader connection (on the writer for `:memory:`).
    pub(crate) async fn read<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Connection) -> OpResult<T> + Send + 'static,
    ) -> Result<T> {
        self.run(false, f).await
    }

    /// Runs `f` on the calling thread's own reader connection when it is free,
    /// saving the hand-off to a reader thread and back; otherwise (taken by
    /// another caller, a busy database, or `:memory:`) like [`Self::read`].
    /// Only for reads that take microseconds: a key lookup, never a scan.
    pub(crate) async fn read_inline<T: Send + 'static>(
        &self,
        f: impl Fn(&mut Connection) -> OpResult<T> + Send + 'static,
    ) -> Result<T> {
        let answer = self
            .inline
            .as_ref()
            .and_then(|m| m.try_lock().ok())
            .map(|mut conn| f(&mut conn));
        self.settle_or_queue(answer, false, f).await
    }

    /// Runs write `f` on the calling thread when the writer connection is free,
    /// saving the hand-off to the writer thread and back; otherwise (the writer
    /// busy with another write, or another process holding the database's write
    /// lock, which is never waited for here) queues it like [`Self::write`].
    /// For the short writes of a turn; `f` may run twice, the first try rolled
    /// back.
    pub(crate) async fn write_inline<T: Send + 'static>(
        &self,
        f: impl Fn(&mut Connection) -> OpResult<T> + Send + 'static,
    ) -> Result<T> {
        let answer = self.pool.try_writer().map(|mut conn| {
            // A lock held by another process goes to the writer thread, which
            // waits for it; this thread never does.
            let _ = conn.busy_timeout(Duration::ZERO);
            let answer = f(&mut conn);
            let _ = conn.busy_timeout(BUSY_TIMEOUT);
            answer
        });
        self.settle_or_queue(answer, true, f).await
    }

    /// The answer of a try in place, or — when there was none (the connection
    /// was taken) or the database was busy — `f` queued on the writer
    /// (`write`) or a reader thread.
    async fn settle_or_queue<T: Send + 'static>(
        &self,
        answer: Option<OpResult<T>>,
        write: bool,
        f: impl FnOnce(&mut Connection) -> OpResult<T> + Send + 'static,
    ) -> Result<T> {
        match answer {
            Some(Err(StoreOpError::Sqlite(e))) if is_busy(&e) => self.run(write, f).await,
            Some(answer) => answer.map_err(|e| self.failure(e)),
            None => self.run(write, f).await,
        }
    }

    /// Queues `f` and awaits its answer, converting SQLite errors into store
    /// errors that name the database file.
    async fn run<T: Send + 'static>(
        &self,
        write: bool,
        f: impl FnOnce(&mut Connection) -> OpResult<T> + Send + 'static,
    ) -> Result<T> {
        let (tx, rx) = oneshot::channel();
        let job: Job = Box::new(move |c| {
            let _ = tx.send(f(c));
        });
        let queued = if write {
            self.pool.write(job)
        } else {
            self.pool.read(job)
        };
        let answer = if queued { rx.await.ok() } else { None };
        let Some(answer) = answer else {
            return Err(HecateError::store(format!(
                "{}: the store connection stopped before answering",
                self.location
            )));
        };
        answer.map_err(|e| self.failure(e))
    }

    /// A failed operation as a store error naming the database file.
    fn failure(&self, e: StoreOpError) -> HecateError {
        match e {
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
        }
    }
}

/// Prepared statements a connection keeps compiled: every statement the hot
/// paths run (an agent loop's checkpoint alone runs eight kinds) stays cached
/// instead of being parsed again on each transaction.
const STATEMENT_CACHE: usize = 128;

/// Sets up the writer: busy timeout, WAL (for files), foreign keys, migrations.
/// Switching a new file to WAL and the first migration take locks whose conflicts
/// SQLite reports as busy without calling the busy handler, so a second process
/// opening the file at that moment retries here.
fn setup_writer(mut conn: Connection, location: &str, wal: bool) -> Result<Connection> {
    let setup = |conn: &mut Connection| -> rusqlite::Result<()> {
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        stable_plans(conn)?;
        if wal {
            let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
            if !mode.eq_ignore_ascii_case("wal") {
                tracing::warn!(mode, "SQLite did not switch to WAL");
            }
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            // Checkpoints are queued on the writer thread (see `pool`), so a
            // write borrowed by a caller's thread never runs one.
            conn.pragma_update(None, "wal_autocheckpoint", 0)?;
        }
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrations::migrate(conn)?;
        Ok(())
    };
    let started = std::time::Instant::now();
    loop {
        match setup(&mut conn) {
            Ok(()) => return refuse_newer_schema(conn, location),
            Err(e) if is_busy(&e) && started.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(OPEN_RETRY_PAUSE);
            }
            Err(e) => return Err(open_error(location, e)),
        }
    }
}

/// Fails when the database holds a schema version this build does not know (a
/// newer Hecate migrated it): an older build must not write to it.
fn refuse_newer_schema(conn: Connection, location: &str) -> Result<Connection> {
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| open_error(location, e))?;
    let known = migrations::latest_version();
    if version > known {
        return Err(HecateError::store(format!(
            "{location} has schema version {version}, newer than this Hecate knows \
             ({known}): a newer Hecate migrated it"
        ))
        .with_operator_action("Upgrade this Hecate before opening this database with it.")
        .with_detail("database", location)
        .with_detail("schema_version", version));
    }
    Ok(conn)
}

/// Sets up a reader: busy timeout, and `query_only` so a read job cannot write.
fn setup_reader(conn: Connection) -> rusqlite::Result<Connection> {
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    stable_plans(&conn)?;
    conn.pragma_update(None, "query_only", "ON")?;
    Ok(conn)
}

/// Keeps a cached statement's query plan across new bindings (SQLite's query
/// planner stability guarantee). Without it, a statement on a table with a
/// partial index, or with a bound `LIMIT`, is parsed and planned again each
/// time it is bound to new values — measured at about a tenth of the server's
/// CPU per model turn. A plan then depends on the SQL alone; the queries whose
/// speed needs a partial index name it (`INDEXED BY`), which fails loudly rather
/// than falling back to a scan.
fn stable_plans(conn: &Connection) -> rusqlite::Result<()> {
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    Ok(())
}

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

#[async_trait]
impl Store for SqliteStore {
    async fn health(&self) -> Result<StoreHealth> {
        let memory = self.location == MEMORY_LOCATION;
        let (version, integrity, memory_bytes) = self
            .read(move |c| {
                let v: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0))?;
                let i: String = c.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
                let bytes = if memory {
                    let pages: i64 = c.query_row("PRAGMA page_count", [], |r| r.get(0))?;
                    let size: i64 = c.query_row("PRAGMA page_size", [], |r| r.get(0))?;
                    (pages * size) as u64
                } else {
                    0
                };
                Ok((v, i, bytes))
            })
            .await?;
        let size_bytes = if memory {
            memory_bytes
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
            pool: None,
        })
    }
}
