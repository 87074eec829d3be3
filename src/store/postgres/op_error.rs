//! The error type inside one PostgreSQL store operation, before it is classified
//! into the store's failure (PostgreSQL, stored JSON, or a domain error).

use crate::domain::error::HecateError;

/// An error inside a store operation: PostgreSQL, stored JSON, or an already
/// classified domain error (not found, conflict).
#[derive(Debug)]
pub(crate) enum OpError {
    Pg(tokio_postgres::Error),
    Json(serde_json::Error),
    Domain(HecateError),
}

impl From<tokio_postgres::Error> for OpError {
    fn from(e: tokio_postgres::Error) -> Self {
        Self::Pg(e)
    }
}

impl From<serde_json::Error> for OpError {
    fn from(e: serde_json::Error) -> Self {
        Self::Json(e)
    }
}

impl From<HecateError> for OpError {
    fn from(e: HecateError) -> Self {
        Self::Domain(e)
    }
}

/// Result type inside store operations.
pub(crate) type OpResult<T> = std::result::Result<T, OpError>;
