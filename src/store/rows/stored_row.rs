//! The one interface a decoder reads a row through.

use crate::domain::error::HecateError;
use crate::domain::provider_call::Usage;

/// A Rust type both backends read from a column (text, integers, booleans, and
/// their `Option`s).
pub(crate) trait Column:
    rusqlite::types::FromSql + for<'a> tokio_postgres::types::FromSql<'a>
{
}

impl<T> Column for T where T: rusqlite::types::FromSql + for<'a> tokio_postgres::types::FromSql<'a> {}

/// Why a column's value does not decode into the domain.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Corrupt {
    /// A JSON column did not parse.
    #[error("corrupt stored JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The domain refused the value (an unknown runtime kind).
    #[error("{0}")]
    Refused(#[from] HecateError),
    /// A value the domain has no name for.
    #[error("corrupt stored {what} {value:?}")]
    Unknown {
        /// What the column holds ("step status").
        what: &'static str,
        /// The value found.
        value: String,
    },
}

/// One row of a query, read by column index, whichever backend answered it.
pub(crate) trait StoredRow {
    /// The backend's error for a missing, mistyped or corrupt column.
    type Error;

    /// The value of column `i`.
    fn col<T: Column>(&self, i: usize) -> Result<T, Self::Error>;

    /// The error for column `i`, whose value does not decode.
    fn corrupt(&self, i: usize, why: Corrupt) -> Self::Error;

    /// Column `i` parsed as JSON.
    fn json<T: serde::de::DeserializeOwned>(&self, i: usize) -> Result<T, Self::Error> {
        let text: String = self.col(i)?;
        serde_json::from_str(&text).map_err(|e| self.corrupt(i, e.into()))
    }

    /// Column `i` parsed as JSON, `None` when it is NULL.
    fn opt_json<T: serde::de::DeserializeOwned>(&self, i: usize) -> Result<Option<T>, Self::Error> {
        match self.col::<Option<String>>(i)? {
            None => Ok(None),
            Some(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|e| self.corrupt(i, e.into())),
        }
    }

    /// The token counts kept in three columns from `first` on (prompt, completion,
    /// total; a negative count reads as 0).
    fn usage(&self, first: usize) -> Result<Usage, Self::Error> {
        let count = |i: usize| self.col::<i64>(i).map(|n| n.max(0) as u64);
        Ok(Usage {
            prompt_tokens: count(first)?,
            completion_tokens: count(first + 1)?,
            total_tokens: count(first + 2)?,
        })
    }

    /// Column `i` through `parse`, which knows the names the domain gives it.
    fn named<T>(
        &self,
        i: usize,
        what: &'static str,
        parse: impl FnOnce(&str) -> Option<T>,
    ) -> Result<T, Self::Error> {
        let value: String = self.col(i)?;
        match parse(&value) {
            Some(v) => Ok(v),
            None => Err(self.corrupt(i, Corrupt::Unknown { what, value })),
        }
    }
}
