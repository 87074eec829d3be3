//! The error type of the code inside one store operation.

use crate::domain::error::HecateError;

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
