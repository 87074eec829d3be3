//! Message vectors for long-term recall, searched with sqlite-vec's
//! `vec_distance_cosine` over the rows of one memory scope. The extension is
//! compiled in (the `sqlite-vec` crate) and registered as an auto extension, so
//! every connection this process opens has it.

use super::SqliteStore;
use crate::domain::error::Result;
use crate::domain::ids::{MessageId, SessionId};
use crate::domain::message::Role;
use crate::domain::recall::{MemoryEntry, MemoryVector, RecallHit, RecallQuery};
use crate::store::memory::vector_bytes;
use crate::store::{MemoryStore, VectorSearch};
use async_trait::async_trait;
use rusqlite::params;

#[async_trait]
impl MemoryStore for SqliteStore {
    async fn put_memory_vectors(&self, vectors: &[MemoryVector]) -> Result<usize> {
        let vectors = vectors.to_vec();
        self.write(move |c| {
            let tx = c.transaction()?;
            let mut stored = 0;
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO memory_vectors (namespace, message_id, user_id, session_id, \
                     sequence, role, text, model, dims, embedding, created_at) \
                     SELECT ?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11 \
                     WHERE EXISTS (SELECT 1 FROM sessions WHERE id = ?4 AND namespace = ?1) \
                     ON CONFLICT (namespace, message_id) DO UPDATE SET user_id = excluded.user_id, \
                     text = excluded.text, model = excluded.model, dims = excluded.dims, \
                     embedding = excluded.embedding",
                )?;
                for v in &vectors {
                    let e = &v.entry;
                    stored += stmt.execute(params![
                        e.namespace,
                        e.message_id.as_str(),
                        e.user,
                        e.session_id.as_str(),
                        e.sequence,
                        e.role.as_str(),
                        e.text,
                        v.model,
                        v.embedding.len() as i64,
                        vector_bytes(&v.embedding),
                        e.created_at,
                    ])?;
                }
            }
            tx.commit()?;
            Ok(stored)
        })
        .await
    }

    async fn search_memory(&self, q: &RecallQuery) -> Result<VectorSearch> {
        let q = q.clone();
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT namespace, user_id, session_id, message_id, sequence, role, text, \
                 created_at, vec_distance_cosine(embedding, ?4) AS distance \
                 FROM memory_vectors \
                 WHERE namespace = ?1 AND user_id = ?2 AND model = ?3 AND dims = ?5 \
                 AND (?6 IS NULL OR session_id = ?6) AND (?7 IS NULL OR session_id <> ?7) \
                 ORDER BY distance, created_at, message_id LIMIT ?8",
            )?;
            let rows = stmt.query_map(
                params![
                    q.namespace,
                    q.user,
                    q.model,
                    vector_bytes(&q.embedding),
                    q.embedding.len() as i64,
                    q.session.as_ref().map(|s| s.as_str().to_string()),
                    q.exclude_session.as_ref().map(|s| s.as_str().to_string()),
                    q.k as i64,
                ],
                |r| {
                    let role: String = r.get(5)?;
                    let distance: f64 = r.get(8)?;
                    Ok(RecallHit {
                        entry: MemoryEntry {
                            namespace: r.get(0)?,
                            user: r.get(1)?,
                            session_id: SessionId(r.get(2)?),
                            message_id: MessageId(r.get(3)?),
                            sequence: r.get(4)?,
                            role: Role::parse(&role).unwrap_or(Role::User),
                            text: r.get(6)?,
                            created_at: r.get(7)?,
                        },
                        score: (1.0 - distance) as f32,
                    })
                },
            )?;
            Ok(VectorSearch::Hits(rows.collect::<rusqlite::Result<_>>()?))
        })
        .await
    }

    async fn count_memory_vectors(&self, namespace: &str) -> Result<u64> {
        let namespace = namespace.to_owned();
        self.read(move |c| {
            let n: i64 = c.query_row(
                "SELECT COUNT(*) FROM memory_vectors WHERE namespace = ?1",
                params![namespace],
                |r| r.get(0),
            )?;
            Ok(n.max(0) as u64)
        })
        .await
    }
}
