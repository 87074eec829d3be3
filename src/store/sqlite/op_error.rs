//! The error type of the code inside one store operation.

use crate::domain::error::HecateError;
use crate::store::rows::Corrupt;

/// An error inside a store operation: SQLite, stored JSON, or an already classified
/// domain error (not found, conflict).
#[derive(Debug)]
pub(crate) enum StoreOpError {
    Sqlite(rusqlite::Error),
    Json(serde_json::Error),
    Domain(HecateError),
}

impl From<rusqlite::Error> for StoreOpError {
    /// A column whose stored JSON did not parse (a decoder's `Corrupt::Json`)
    /// is the store's JSON failure, as on PostgreSQL; every other error is SQLite's.
    fn from(e: rusqlite::Error) -> Self {
        match e {
            rusqlite::Error::FromSqlConversionFailure(i, ty, cause) => {
                match cause.downcast::<Corrupt>() {
                    Ok(corrupt) => match *corrupt {
                        Corrupt::Json(source) => Self::Json(source),
                        other => Self::Sqlite(rusqlite::Error::FromSqlConversionFailure(
                            i,
                            ty,
                            Box::new(other),
                        )),
                    },
                    Err(cause) => {
                        Self::Sqlite(rusqlite::Error::FromSqlConversionFailure(i, ty, cause))
                    }
                }
            }
            other => Self::Sqlite(other),
        }
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
