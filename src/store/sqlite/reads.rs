//! The two shapes of a read, written once: the one row a key selects (or
//! `not_found`) and every row a query selects, each through the connection's
//! statement cache.

use super::OpResult;
use crate::domain::error::HecateError;
use rusqlite::{Connection, OptionalExtension, Params, Row};

/// The one row `sql` selects with `params`, as `decode` reads it; `not_found`
/// naming the `what` looked for by `id` when there is none.
pub(super) fn one<T>(
    c: &Connection,
    sql: &str,
    params: impl Params,
    decode: impl FnOnce(&Row<'_>) -> rusqlite::Result<T>,
    what: &str,
    id: &str,
) -> OpResult<T> {
    c.prepare_cached(sql)?
        .query_row(params, decode)
        .optional()?
        .ok_or_else(|| HecateError::not_found(what, id).into())
}

/// Every row `sql` selects with `params`, as `decode` reads it, in the order
/// selected.
pub(super) fn all<T>(
    c: &Connection,
    sql: &str,
    params: impl Params,
    decode: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> OpResult<Vec<T>> {
    let mut stmt = c.prepare_cached(sql)?;
    let rows = stmt.query_map(params, decode)?;
    Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
}
