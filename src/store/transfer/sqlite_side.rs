//! The SQLite end of a copy: its own connections on the database file (not the
//! store's pool), run on blocking threads. The source is read in one read
//! transaction, a consistent snapshot; the target is written in one `BEGIN
//! IMMEDIATE` transaction that commits only when told.

use super::catalog::{Kind, TABLES, Table};
use super::checks;
use super::rows::{BATCH_ROWS, Checksum, Row, TableSum, ToTarget, Value};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::store::sqlite::migrations;
use crate::store::{SqliteStore, StoreFailure};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags, params_from_iter};
use std::path::Path;
use std::time::Duration;
use tokio::sync::mpsc;

/// How long a statement waits for another process's lock.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

fn failure(path: &Path, source: rusqlite::Error) -> HecateError {
    StoreFailure::Sqlite {
        location: path.display().to_string(),
        source,
    }
    .into()
}

/// Opens the source read-only, refusing a missing file and a schema other than
/// the one this build knows.
pub fn open_source(path: &Path) -> Result<Connection> {
    let version = migrations::file_version(path)
        .map_err(|e| failure(path, e))?
        .ok_or_else(|| {
            HecateError::new(
                ErrorType::NotFound,
                format!("no SQLite store at {}", path.display()),
            )
            .with_operator_action("Name an existing Hecate database file after --from sqlite:.")
        })?;
    checks::source_version(
        &path.display().to_string(),
        version,
        migrations::latest_version(),
        &format!("sqlite:{}", path.display()),
    )?;
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| failure(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| failure(path, e))?;
    Ok(conn)
}

/// Reads every table in one snapshot, sending its rows to `to`; answers each
/// table's sum of what was sent.
pub fn read_all(
    path: &Path,
    conn: &mut Connection,
    to: &mpsc::Sender<ToTarget>,
) -> Result<Vec<TableSum>> {
    let tx = conn.transaction().map_err(|e| failure(path, e))?;
    let mut sums = Vec::with_capacity(TABLES.len());
    for (index, table) in TABLES.iter().enumerate() {
        let mut batch = Vec::with_capacity(BATCH_ROWS);
        let sum = scan(path, &tx, table, |row| {
            batch.push(row);
            if batch.len() == BATCH_ROWS {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_ROWS));
                to.blocking_send(ToTarget::Rows(index, full))
                    .map_err(|_| checks::target_stopped())?;
            }
            Ok(())
        })?;
        if !batch.is_empty() {
            to.blocking_send(ToTarget::Rows(index, batch))
                .map_err(|_| checks::target_stopped())?;
        }
        sums.push(sum);
    }
    Ok(sums)
}

/// Reads `table` in its order, handing each row to `each`; answers its sum.
fn scan(
    path: &Path,
    conn: &Connection,
    table: &Table,
    mut each: impl FnMut(Row) -> Result<()>,
) -> Result<TableSum> {
    let sql = format!(
        "SELECT {} FROM {} ORDER BY {}",
        table.column_list(),
        table.name,
        table.sqlite_order()
    );
    let mut stmt = conn.prepare(&sql).map_err(|e| failure(path, e))?;
    let mut rows = stmt.query([]).map_err(|e| failure(path, e))?;
    let mut sum = Checksum::default();
    while let Some(r) = rows.next().map_err(|e| failure(path, e))? {
        let mut row = Vec::with_capacity(table.columns.len());
        for (i, column) in table.columns.iter().enumerate() {
            let v = r.get_ref(i).map_err(|e| failure(path, e))?;
            row.push(match v {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => Value::Int(n),
                ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) if column.kind == Kind::Vector => Value::Bytes(b.to_vec()),
                ValueRef::Real(_) | ValueRef::Blob(_) => {
                    return Err(HecateError::store(format!(
                        "{}: {}.{} holds a {:?} value where Hecate writes {:?}",
                        path.display(),
                        table.name,
                        column.name,
                        v.data_type(),
                        column.kind
                    )));
                }
            });
        }
        sum.add(&row);
        each(row)?;
    }
    Ok(sum.finish())
}

/// The catalog tables of `conn` that exist and hold rows.
fn nonempty_tables(path: &Path, conn: &Connection) -> Result<Vec<&'static str>> {
    let mut found = Vec::new();
    for table in TABLES {
        let exists: bool = conn
            .query_row(
                "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1)",
                [table.name],
                |r| r.get(0),
            )
            .map_err(|e| failure(path, e))?;
        if !exists {
            continue;
        }
        let any: bool = conn
            .query_row(
                &format!("SELECT EXISTS (SELECT 1 FROM {})", table.name),
                [],
                |r| r.get(0),
            )
            .map_err(|e| failure(path, e))?;
        if any {
            found.push(table.name);
        }
    }
    Ok(found)
}

/// Checks that the target file is absent or empty and not newer than this
/// build, then creates or migrates it.
pub fn prepare_target(path: &Path) -> Result<()> {
    let location = path.display().to_string();
    if let Some(version) = migrations::file_version(path).map_err(|e| failure(path, e))? {
        checks::target_version(&location, version, migrations::latest_version())?;
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY)
            .map_err(|e| failure(path, e))?;
        checks::empty(&location, &nonempty_tables(path, &conn)?)?;
    }
    drop(SqliteStore::open_with_readers(path, 1)?);
    Ok(())
}

/// Writes what arrives on `from` into the target in one transaction; commits on
/// `Commit`, rolls back when the channel closes first.
pub fn write_all(path: &Path, mut from: mpsc::Receiver<ToTarget>) -> Result<()> {
    let mut conn = Connection::open(path).map_err(|e| failure(path, e))?;
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(|e| failure(path, e))?;
    conn.pragma_update(None, "foreign_keys", "ON")
        .map_err(|e| failure(path, e))?;
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(|e| failure(path, e))?;
    checks::empty(&path.display().to_string(), &nonempty_tables(path, &tx)?)?;
    while let Some(message) = from.blocking_recv() {
        match message {
            ToTarget::Rows(index, rows) => insert(path, &tx, &TABLES[index], rows)?,
            ToTarget::Finish(reply) => {
                let sums = TABLES
                    .iter()
                    .map(|table| scan(path, &tx, table, |_| Ok(())))
                    .collect();
                let _ = reply.send(sums);
            }
            ToTarget::Commit(reply) => {
                let _ = reply.send(tx.commit().map_err(|e| failure(path, e)));
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Inserts rows into `table`. `AUTOINCREMENT` columns given explicitly move
/// SQLite's own counter past them.
fn insert(path: &Path, conn: &Connection, table: &Table, rows: Vec<Row>) -> Result<()> {
    let placeholders = vec!["?"; table.columns.len()].join(", ");
    let sql = format!(
        "INSERT INTO {} ({}) VALUES ({placeholders})",
        table.name,
        table.column_list()
    );
    let mut stmt = conn.prepare_cached(&sql).map_err(|e| failure(path, e))?;
    for row in rows {
        let values = row.into_iter().map(|v| match v {
            Value::Null => rusqlite::types::Value::Null,
            Value::Int(n) => rusqlite::types::Value::Integer(n),
            Value::Text(s) => rusqlite::types::Value::Text(s),
            Value::Bytes(b) => rusqlite::types::Value::Blob(b),
        });
        stmt.execute(params_from_iter(values))
            .map_err(|e| failure(path, e))?;
    }
    Ok(())
}
