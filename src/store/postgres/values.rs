//! Small conversions between Rust values and what PostgreSQL stores, and the
//! errors it reports.

use crate::domain::error::{ErrorType, HecateError};

/// Whether `e` is a unique-key violation.
pub(crate) fn is_unique_violation(e: &tokio_postgres::Error) -> bool {
    e.code() == Some(&tokio_postgres::error::SqlState::UNIQUE_VIOLATION)
}

/// A `conflict` error with `message`.
pub(crate) fn conflict(message: String) -> HecateError {
    HecateError::new(ErrorType::Conflict, message)
}

/// A count or size as the `BIGINT` PostgreSQL stores.
pub(crate) fn big(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// A row limit as the `BIGINT` a `LIMIT` takes.
pub(crate) fn limit(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}
