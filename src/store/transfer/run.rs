//! The copy itself: refuse a source that is the target, open the source, check
//! and migrate the target, stream the rows across, compare the sums and commit
//! or roll back.

use super::catalog::TABLES;
use super::rows::{TableSum, ToTarget};
use super::{postgres_side, sqlite_side};
use crate::domain::error::{HecateError, Result};
use crate::domain::redact::redact_url;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use tokio::sync::{mpsc, oneshot};
use tokio::task::JoinHandle;

/// Batches in flight between the reading and the writing side.
const IN_FLIGHT: usize = 4;

/// One end of a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// A SQLite database file.
    Sqlite(PathBuf),
    /// A PostgreSQL database, by URL.
    Postgres(String),
}

impl Endpoint {
    /// Where it is, passwords left out.
    pub fn location(&self) -> String {
        match self {
            Self::Sqlite(p) => p.display().to_string(),
            Self::Postgres(url) => redact_url(url),
        }
    }
}

/// One table of the report.
#[derive(Debug, Clone, Serialize)]
pub struct TableReport {
    /// Table name.
    pub table: &'static str,
    /// Rows read from the source.
    pub source_rows: u64,
    /// Rows the target holds.
    pub target_rows: u64,
    /// SHA-256 of the source's rows.
    pub source_sha256: String,
    /// SHA-256 of the target's rows.
    pub target_sha256: String,
    /// Whether count and checksum agree.
    pub matches: bool,
}

/// What a copy did.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The source's location.
    pub source: String,
    /// The target's location.
    pub target: String,
    /// Whether the target committed (only when every table matches).
    pub committed: bool,
    /// Per table, in copy order.
    pub tables: Vec<TableReport>,
}

impl Report {
    /// Whether every table's count and checksum agree.
    pub fn verified(&self) -> bool {
        self.tables.iter().all(|t| t.matches)
    }
}

/// The opened source.
enum Source {
    Sqlite(PathBuf, rusqlite::Connection),
    Postgres(crate::store::PostgresStore),
}

/// Copies every table of `from` into the empty store `to`.
pub async fn copy(from: &Endpoint, to: &Endpoint) -> Result<Report> {
    refuse_same(from, to)?;
    let source = match from {
        Endpoint::Sqlite(path) => {
            let path = path.clone();
            let conn = blocking({
                let path = path.clone();
                move || sqlite_side::open_source(&path)
            })
            .await?;
            Source::Sqlite(path, conn)
        }
        Endpoint::Postgres(url) => Source::Postgres(postgres_side::open_source(url).await?),
    };
    let (sender, receiver) = mpsc::channel(IN_FLIGHT);
    let writer: JoinHandle<Result<()>> = match to {
        Endpoint::Sqlite(path) => {
            let path = path.clone();
            blocking({
                let path = path.clone();
                move || sqlite_side::prepare_target(&path)
            })
            .await?;
            tokio::task::spawn_blocking(move || sqlite_side::write_all(&path, receiver))
        }
        Endpoint::Postgres(url) => {
            let store = postgres_side::prepare_target(url).await?;
            tokio::spawn(async move { postgres_side::write_all(&store, receiver).await })
        }
    };
    let read = match source {
        Source::Sqlite(path, mut conn) => {
            let to = sender.clone();
            blocking(move || sqlite_side::read_all(&path, &mut conn, &to)).await
        }
        Source::Postgres(store) => postgres_side::read_all(&store, &sender).await,
    };
    let source_sums = match read {
        Ok(sums) => sums,
        Err(e) => {
            drop(sender);
            return Err(writer_error(writer, e).await);
        }
    };
    let (reply, answer) = oneshot::channel();
    let target_sums = match ask(&sender, ToTarget::Finish(reply), answer).await {
        Ok(sums) => sums?,
        Err(e) => return Err(writer_error(writer, e).await),
    };
    let tables = compare(&source_sums, &target_sums);
    let mut report = Report {
        source: from.location(),
        target: to.location(),
        committed: false,
        tables,
    };
    if report.verified() {
        let (reply, answer) = oneshot::channel();
        match ask(&sender, ToTarget::Commit(reply), answer).await {
            Ok(committed) => committed?,
            Err(e) => return Err(writer_error(writer, e).await),
        }
        report.committed = true;
    }
    drop(sender);
    joined(writer.await)?;
    Ok(report)
}

/// Sends `message` and awaits its answer; an error when the writer is gone.
async fn ask<T>(
    sender: &mpsc::Sender<ToTarget>,
    message: ToTarget,
    answer: oneshot::Receiver<T>,
) -> Result<T> {
    sender
        .send(message)
        .await
        .map_err(|_| super::checks::target_stopped())?;
    answer.await.map_err(|_| super::checks::target_stopped())
}

/// The per-table comparison of the two sides' sums.
fn compare(source: &[TableSum], target: &[TableSum]) -> Vec<TableReport> {
    TABLES
        .iter()
        .zip(source.iter().zip(target))
        .map(|(table, (s, t))| TableReport {
            table: table.name,
            source_rows: s.rows,
            target_rows: t.rows,
            source_sha256: s.sha256.clone(),
            target_sha256: t.sha256.clone(),
            matches: s == t,
        })
        .collect()
}

/// The writer's own error when it failed, else `fallback`.
async fn writer_error(writer: JoinHandle<Result<()>>, fallback: HecateError) -> HecateError {
    match joined(writer.await) {
        Err(e) => e,
        Ok(()) => fallback,
    }
}

fn joined<T>(r: std::result::Result<Result<T>, tokio::task::JoinError>) -> Result<T> {
    r.map_err(|e| HecateError::store(format!("a copy task stopped: {e}")))?
}

/// Runs blocking SQLite work off the runtime.
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    joined(tokio::task::spawn_blocking(f).await)
}

/// Refuses a copy whose source and target are one database.
fn refuse_same(from: &Endpoint, to: &Endpoint) -> Result<()> {
    let same = match (from, to) {
        (Endpoint::Sqlite(a), Endpoint::Sqlite(b)) => canonical(a) == canonical(b),
        (Endpoint::Postgres(a), Endpoint::Postgres(b)) => {
            database_of(a).is_some() && database_of(a) == database_of(b)
        }
        _ => false,
    };
    if !same {
        return Ok(());
    }
    Err(HecateError::invalid(format!(
        "the source and the target are the same database ({})",
        to.location()
    ))
    .with_operator_action(
        "Name a different, empty database after --to: a copy reads one store and writes another.",
    ))
}

/// A path made absolute with its links resolved, for a file that may not exist yet.
fn canonical(path: &Path) -> PathBuf {
    if let Ok(p) = path.canonicalize() {
        return p;
    }
    match (path.parent(), path.file_name()) {
        (Some(dir), Some(name)) => {
            let dir = if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            };
            dir.canonicalize()
                .map(|d| d.join(name))
                .unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// The hosts, ports and database a PostgreSQL URL names (`None` when it does
/// not parse; connecting reports that).
fn database_of(url: &str) -> Option<(String, Vec<u16>, String)> {
    let c = tokio_postgres::Config::from_str(url).ok()?;
    let user = c.get_user().unwrap_or_default().to_string();
    let db = c.get_dbname().map_or(user, str::to_string);
    let mut ports = c.get_ports().to_vec();
    if ports.is_empty() {
        ports.push(5432);
    }
    Some((format!("{:?}", c.get_hosts()), ports, db))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_database_is_recognised_however_it_is_written() {
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("a.db");
        std::fs::write(&file, b"").expect("file");
        let dotted = dir.path().join(".").join("a.db");
        assert!(refuse_same(&Endpoint::Sqlite(file.clone()), &Endpoint::Sqlite(dotted)).is_err());
        let other = dir.path().join("b.db");
        assert!(refuse_same(&Endpoint::Sqlite(file), &Endpoint::Sqlite(other)).is_ok());
        let pg = |u: &str| Endpoint::Postgres(u.to_string());
        assert!(
            refuse_same(
                &pg("postgres://u:p@h:5432/db"),
                &pg("postgres://other:pw@h/db")
            )
            .is_err()
        );
        assert!(refuse_same(&pg("postgres://u:p@h/db"), &pg("postgres://u:p@h/db2")).is_ok());
        assert!(refuse_same(&pg("postgres://u:p@h/db"), &pg("postgres://u:p@h:5433/db")).is_ok());
    }
}
