//! The PostgreSQL end of a copy: one pooled connection of a [`PostgresStore`].
//! The source is read in one `REPEATABLE READ READ ONLY` transaction, a
//! consistent snapshot; the target is written with binary `COPY` in one
//! transaction that commits only when told.

use super::catalog::{Kind, TABLES, Table};
use super::checks;
use super::rows::{BATCH_ROWS, Checksum, Row, TableSum, ToTarget, Value};
use crate::domain::error::{HecateError, Result};
use crate::store::memory::{vector_bytes, vector_from_bytes};
use crate::store::postgres::migrations;
use crate::store::{PostgresStore, StoreFailure};
use futures::{StreamExt, pin_mut};
use tokio::sync::mpsc;
use tokio_postgres::GenericClient;
use tokio_postgres::binary_copy::BinaryCopyInWriter;
use tokio_postgres::types::{ToSql, Type};

fn failure(store: &PostgresStore, source: tokio_postgres::Error) -> HecateError {
    StoreFailure::Postgres {
        location: store.location().to_string(),
        source,
    }
    .into()
}

/// The database's schema version, without migrating it.
async fn version(store: &PostgresStore) -> Result<i64> {
    Ok(store
        .applied_migrations()
        .await?
        .last()
        .map_or(0, |a| a.version))
}

/// Connects to the source, refusing a schema other than the one this build knows.
pub async fn open_source(url: &str) -> Result<PostgresStore> {
    let store = PostgresStore::connect_unmigrated(url).await?;
    let location = store.location().to_string();
    checks::source_version(
        &location,
        version(&store).await?,
        migrations::latest_version(),
        &location,
    )?;
    Ok(store)
}

/// Reads every table in one snapshot, sending its rows to `to`; answers each
/// table's sum of what was sent.
pub async fn read_all(store: &PostgresStore, to: &mpsc::Sender<ToTarget>) -> Result<Vec<TableSum>> {
    let mut c = store.client().await?;
    let tx = c
        .build_transaction()
        .isolation_level(tokio_postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()
        .await
        .map_err(|e| failure(store, e))?;
    let mut sums = Vec::with_capacity(TABLES.len());
    for (index, table) in TABLES.iter().enumerate() {
        let mut batch = Vec::with_capacity(BATCH_ROWS);
        let mut sum = Checksum::default();
        let rows = stream(store, &*tx, table).await?;
        pin_mut!(rows);
        while let Some(row) = rows.next().await {
            let row = row?;
            sum.add(&row);
            batch.push(row);
            if batch.len() == BATCH_ROWS {
                let full = std::mem::replace(&mut batch, Vec::with_capacity(BATCH_ROWS));
                to.send(ToTarget::Rows(index, full))
                    .await
                    .map_err(|_| checks::target_stopped())?;
            }
        }
        if !batch.is_empty() {
            to.send(ToTarget::Rows(index, batch))
                .await
                .map_err(|_| checks::target_stopped())?;
        }
        sums.push(sum.finish());
    }
    Ok(sums)
}

/// The rows of `table` in its order, converted to backend-neutral values.
async fn stream<'a, C: GenericClient>(
    store: &'a PostgresStore,
    c: &C,
    table: &'static Table,
) -> Result<impl futures::Stream<Item = Result<Row>> + 'a> {
    let sql = format!(
        "SELECT {} FROM {} ORDER BY {}",
        table.column_list(),
        table.name,
        table.postgres_order()
    );
    let rows = c
        .query_raw(&sql, std::iter::empty::<&(dyn ToSql + Sync)>())
        .await
        .map_err(|e| failure(store, e))?;
    Ok(rows.map(move |r| {
        let r = r.map_err(|e| failure(store, e))?;
        table
            .columns
            .iter()
            .enumerate()
            .map(|(i, column)| {
                let v = match column.kind {
                    Kind::Text => r
                        .try_get::<_, Option<String>>(i)
                        .map(|v| v.map(Value::Text)),
                    Kind::Int => r.try_get::<_, Option<i64>>(i).map(|v| v.map(Value::Int)),
                    Kind::Int4 => r
                        .try_get::<_, Option<i32>>(i)
                        .map(|v| v.map(|n| Value::Int(n.into()))),
                    Kind::Bool => r
                        .try_get::<_, Option<bool>>(i)
                        .map(|v| v.map(|b| Value::Int(b.into()))),
                    Kind::Vector => r
                        .try_get::<_, Option<Vec<f32>>>(i)
                        .map(|v| v.map(|v| Value::Bytes(vector_bytes(&v)))),
                };
                v.map(|v| v.unwrap_or(Value::Null))
                    .map_err(|e| failure(store, e))
            })
            .collect()
    }))
}

/// Checksums every table as `c` sees it.
async fn sum_all<C: GenericClient>(store: &PostgresStore, c: &C) -> Result<Vec<TableSum>> {
    let mut sums = Vec::with_capacity(TABLES.len());
    for table in TABLES {
        let mut sum = Checksum::default();
        let rows = stream(store, c, table).await?;
        pin_mut!(rows);
        while let Some(row) = rows.next().await {
            sum.add(&row?);
        }
        sums.push(sum.finish());
    }
    Ok(sums)
}

/// The catalog tables that exist and hold rows.
async fn nonempty_tables<C: GenericClient>(
    store: &PostgresStore,
    c: &C,
) -> Result<Vec<&'static str>> {
    let mut found = Vec::new();
    for table in TABLES {
        let exists: bool = c
            .query_one("SELECT to_regclass($1) IS NOT NULL", &[&table.name])
            .await
            .map_err(|e| failure(store, e))?
            .get(0);
        if !exists {
            continue;
        }
        let any: bool = c
            .query_one(
                &format!("SELECT EXISTS (SELECT 1 FROM {})", table.name),
                &[],
            )
            .await
            .map_err(|e| failure(store, e))?
            .get(0);
        if any {
            found.push(table.name);
        }
    }
    Ok(found)
}

/// Connects to the target, checks that it is empty and not newer than this
/// build, then migrates it.
pub async fn prepare_target(url: &str) -> Result<PostgresStore> {
    let store = PostgresStore::connect_unmigrated(url).await?;
    let location = store.location().to_string();
    checks::target_version(
        &location,
        version(&store).await?,
        migrations::latest_version(),
    )?;
    {
        let c = store.client().await?;
        checks::empty(&location, &nonempty_tables(&store, &**c).await?)?;
    }
    store.migrate().await?;
    Ok(store)
}

/// Writes what arrives on `from` into the target in one transaction; commits on
/// `Commit`, rolls back when the channel closes first.
pub async fn write_all(store: &PostgresStore, mut from: mpsc::Receiver<ToTarget>) -> Result<()> {
    let mut c = store.client().await?;
    let tx = c.transaction().await.map_err(|e| failure(store, e))?;
    checks::empty(store.location(), &nonempty_tables(store, &*tx).await?)?;
    while let Some(message) = from.recv().await {
        match message {
            ToTarget::Rows(index, rows) => copy_in(store, &tx, &TABLES[index], rows).await?,
            ToTarget::Finish(reply) => {
                let sums = async {
                    advance_serials(store, &*tx).await?;
                    sum_all(store, &*tx).await
                }
                .await;
                let _ = reply.send(sums);
            }
            ToTarget::Commit(reply) => {
                let _ = reply.send(tx.commit().await.map_err(|e| failure(store, e)));
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Sends rows into `table` with one binary `COPY`; the `seq` columns left out
/// number them in arrival order.
async fn copy_in(
    store: &PostgresStore,
    tx: &tokio_postgres::Transaction<'_>,
    table: &Table,
    rows: Vec<Row>,
) -> Result<()> {
    let sql = format!(
        "COPY {} ({}) FROM STDIN (FORMAT binary)",
        table.name,
        table.column_list()
    );
    let sink = tx.copy_in(&sql).await.map_err(|e| failure(store, e))?;
    let types: Vec<Type> = table
        .columns
        .iter()
        .map(|c| match c.kind {
            Kind::Text => Type::TEXT,
            Kind::Int => Type::INT8,
            Kind::Int4 => Type::INT4,
            Kind::Bool => Type::BOOL,
            Kind::Vector => Type::FLOAT4_ARRAY,
        })
        .collect();
    let writer = BinaryCopyInWriter::new(sink, &types);
    pin_mut!(writer);
    for row in rows {
        let values = table
            .columns
            .iter()
            .zip(row)
            .map(|(column, v)| to_sql(table, column.name, column.kind, v))
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&(dyn ToSql + Sync)> =
            values.iter().map(|v| &**v as &(dyn ToSql + Sync)).collect();
        writer
            .as_mut()
            .write(&refs)
            .await
            .map_err(|e| failure(store, e))?;
    }
    writer.finish().await.map_err(|e| failure(store, e))?;
    Ok(())
}

/// One value as the column's PostgreSQL type.
fn to_sql(
    table: &Table,
    column: &str,
    kind: Kind,
    v: Value,
) -> Result<Box<dyn ToSql + Sync + Send>> {
    let wrong = |v: &Value| {
        HecateError::store(format!(
            "{}.{column}: the value {v:?} does not fit PostgreSQL's {kind:?} column",
            table.name
        ))
    };
    Ok(match (kind, v) {
        (Kind::Text, Value::Null) => Box::new(None::<String>),
        (Kind::Text, Value::Text(s)) => Box::new(Some(s)),
        (Kind::Int, Value::Null) => Box::new(None::<i64>),
        (Kind::Int, Value::Int(n)) => Box::new(Some(n)),
        (Kind::Int4, Value::Null) => Box::new(None::<i32>),
        (Kind::Int4, Value::Int(n)) => {
            Box::new(Some(i32::try_from(n).map_err(|_| wrong(&Value::Int(n)))?))
        }
        (Kind::Bool, Value::Null) => Box::new(None::<bool>),
        (Kind::Bool, Value::Int(n @ (0 | 1))) => Box::new(Some(n == 1)),
        (Kind::Vector, Value::Null) => Box::new(None::<Vec<f32>>),
        (Kind::Vector, Value::Bytes(b)) => Box::new(Some(
            vector_from_bytes(&b).ok_or_else(|| wrong(&Value::Bytes(b.clone())))?,
        )),
        (_, v) => return Err(wrong(&v)),
    })
}

/// Moves the sequence behind each serial column past the highest copied value,
/// so the next row the store inserts gets a fresh number.
async fn advance_serials<C: GenericClient>(store: &PostgresStore, c: &C) -> Result<()> {
    for table in TABLES {
        let Some(column) = table.serial else { continue };
        let sql = format!(
            "SELECT setval(pg_get_serial_sequence('{0}', '{column}'), MAX({column})) \
             FROM {0} HAVING MAX({column}) IS NOT NULL",
            table.name
        );
        c.query(&sql, &[]).await.map_err(|e| failure(store, e))?;
    }
    Ok(())
}
