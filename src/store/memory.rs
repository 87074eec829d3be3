//! The contract for long-term recall: one vector per indexed message, kept under
//! (namespace, message) and searched within one memory scope (namespace and
//! user), never across namespaces.

use crate::domain::error::Result;
use crate::domain::recall::{MemoryVector, RecallHit, RecallQuery};
use async_trait::async_trait;

/// What a vector search answered.
#[derive(Debug, Clone, PartialEq)]
pub enum VectorSearch {
    /// The nearest entries, closest first.
    Hits(Vec<RecallHit>),
    /// The backend cannot search vectors; the sentence names the fix (such as
    /// PostgreSQL without pgvector).
    Unavailable(String),
}

/// Message vectors for long-term recall.
#[async_trait]
pub trait MemoryStore: Send + Sync {
    /// Stores vectors in one transaction, replacing those of the same message.
    /// A vector whose session no longer exists in its namespace is skipped.
    /// Answers how many were stored.
    async fn put_memory_vectors(&self, vectors: &[MemoryVector]) -> Result<usize>;
    /// The `k` entries of the query's scope (and model and length) closest to its
    /// vector by cosine distance, ties broken by age then id.
    async fn search_memory(&self, query: &RecallQuery) -> Result<VectorSearch>;
    /// How many vectors a namespace holds.
    async fn count_memory_vectors(&self, namespace: &str) -> Result<u64>;
}

/// A vector as the little-endian `f32` bytes SQLite keeps (and sqlite-vec reads).
pub fn vector_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The vector of little-endian `f32` bytes; `None` when the length is not a
/// multiple of four.
pub fn vector_from_bytes(b: &[u8]) -> Option<Vec<f32>> {
    if !b.len().is_multiple_of(4) {
        return None;
    }
    Some(
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_round_trip_through_their_bytes() {
        let v = vec![1.0, -0.5, 3.25e-7];
        assert_eq!(vector_from_bytes(&vector_bytes(&v)), Some(v));
        assert_eq!(vector_from_bytes(&[0, 1, 2]), None);
    }
}
