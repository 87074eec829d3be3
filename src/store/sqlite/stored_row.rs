//! SQLite's row behind the backends' one decoding interface.

use crate::store::rows::{Column, Corrupt, StoredRow};
use rusqlite::types::Type;

impl StoredRow for rusqlite::Row<'_> {
    type Error = rusqlite::Error;

    fn col<T: Column>(&self, i: usize) -> rusqlite::Result<T> {
        self.get(i)
    }

    fn corrupt(&self, i: usize, why: Corrupt) -> rusqlite::Error {
        match why {
            Corrupt::Unknown { what, value } => {
                rusqlite::Error::InvalidColumnType(i, format!("{what} {value:?}"), Type::Text)
            }
            other => rusqlite::Error::FromSqlConversionFailure(i, Type::Text, Box::new(other)),
        }
    }
}
