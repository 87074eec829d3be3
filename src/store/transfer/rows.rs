//! Rows in transit between the backends, the checksum both sides compute over
//! them, and the messages the reading side sends the writing side.

use crate::domain::error::Result;
use serde::Serialize;
use sha2::{Digest, Sha256};
use tokio::sync::oneshot;

/// Rows sent to the target in one message.
pub const BATCH_ROWS: usize = 500;

/// One value in its backend-neutral form: PostgreSQL's booleans travel as the
/// 0 or 1 SQLite stores.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// SQL NULL.
    Null,
    /// Any integer or flag.
    Int(i64),
    /// Text.
    Text(String),
    /// A vector as little-endian `f32` bytes (SQLite's BLOB, PostgreSQL's `REAL[]`).
    Bytes(Vec<u8>),
}

/// One row, its values in the catalog's column order.
pub type Row = Vec<Value>;

/// A table's row count and the SHA-256 of its rows in read order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TableSum {
    /// Rows.
    pub rows: u64,
    /// Lowercase hex SHA-256 over the canonical serialization of the rows.
    pub sha256: String,
}

/// Builds a [`TableSum`] row by row. Each value is serialized as one tag byte
/// (0 null, 1 integer, 2 text, 3 bytes) followed, for an integer, by its 8 bytes
/// big endian and, for text and bytes, by the length (8 bytes big endian) and
/// the UTF-8 or raw bytes.
#[derive(Default)]
pub struct Checksum {
    rows: u64,
    sha: Sha256,
}

impl Checksum {
    /// Adds one row.
    pub fn add(&mut self, row: &[Value]) {
        self.rows += 1;
        for v in row {
            match v {
                Value::Null => self.sha.update([0u8]),
                Value::Int(n) => {
                    self.sha.update([1u8]);
                    self.sha.update(n.to_be_bytes());
                }
                Value::Text(s) => {
                    self.sha.update([2u8]);
                    self.sha.update((s.len() as u64).to_be_bytes());
                    self.sha.update(s.as_bytes());
                }
                Value::Bytes(b) => {
                    self.sha.update([3u8]);
                    self.sha.update((b.len() as u64).to_be_bytes());
                    self.sha.update(b);
                }
            }
        }
    }

    /// The count and digest of the rows added.
    pub fn finish(self) -> TableSum {
        TableSum {
            rows: self.rows,
            sha256: hex::encode(self.sha.finalize()),
        }
    }
}

/// What the reading side tells the writing side. When the channel closes
/// before `Commit`, the target rolls back.
pub enum ToTarget {
    /// Rows of the catalog table at this index, in read order.
    Rows(usize, Vec<Row>),
    /// Every row was sent: fix the sequences, checksum every table inside the
    /// still open transaction and answer the sums.
    Finish(oneshot::Sender<Result<Vec<TableSum>>>),
    /// The sums matched: commit, and answer when committed.
    Commit(oneshot::Sender<Result<()>>),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(rows: &[Row]) -> TableSum {
        let mut c = Checksum::default();
        for r in rows {
            c.add(r);
        }
        c.finish()
    }

    #[test]
    fn the_checksum_tells_apart_what_a_lossy_copy_would_confuse() {
        let base = sum(&[vec![Value::Text("ab".into()), Value::Null]]);
        assert_eq!(base.rows, 1);
        assert_eq!(base.sha256.len(), 64);
        for other in [
            vec![vec![Value::Text("a".into()), Value::Text("b".into())]],
            vec![vec![Value::Text("ab".into()), Value::Text(String::new())]],
            vec![vec![Value::Text("ab".into()), Value::Int(0)]],
            vec![vec![Value::Text("ab".into())], vec![Value::Null]],
        ] {
            assert_ne!(sum(&other), base, "{other:?}");
        }
        assert_eq!(sum(&[vec![Value::Text("ab".into()), Value::Null]]), base);
        let ordered = sum(&[vec![Value::Int(1)], vec![Value::Int(2)]]);
        let swapped = sum(&[vec![Value::Int(2)], vec![Value::Int(1)]]);
        assert_ne!(ordered.sha256, swapped.sha256, "order counts");
    }
}
