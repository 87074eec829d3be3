//! Message vectors for long-term recall. Vectors are kept as `REAL[]`, which
//! needs no extension, so indexing works on any PostgreSQL; searching casts them
//! to pgvector's `vector` and orders by its cosine distance (`<=>`). On a server
//! without pgvector the search answers `Unavailable` with the fix, and recall
//! reports itself degraded while chat goes on.

use super::{OpError, OpResult, PostgresStore, limit};
use crate::domain::error::Result;
use crate::domain::ids::{MessageId, SessionId};
use crate::domain::message::Role;
use crate::domain::recall::{MemoryEntry, MemoryVector, RecallHit, RecallQuery};
use crate::store::{MemoryStore, VectorSearch};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tokio_postgres::error::SqlState;

const SEARCH: &str = "SELECT namespace, user_id, session_id, message_id, sequence, role, text, \
     created_at, (embedding::vector <=> $4::REAL[]::vector)::FLOAT8 AS distance \
     FROM memory_vectors \
     WHERE namespace = $1 AND user_id = $2 AND model = $3 AND dims = $5 \
     AND ($6::TEXT IS NULL OR session_id = $6) AND ($7::TEXT IS NULL OR session_id <> $7) \
     ORDER BY distance, created_at, message_id LIMIT $8";

#[async_trait]
impl MemoryStore for PostgresStore {
    async fn put_memory_vectors(&self, vectors: &[MemoryVector]) -> Result<usize> {
        let mut c = self.client().await?;
        let r: OpResult<usize> = async {
            let tx = c.transaction().await?;
            let stmt = tx
                .prepare_cached(
                    "INSERT INTO memory_vectors (namespace, message_id, user_id, session_id, \
                     sequence, role, text, model, dims, embedding, created_at) \
                     SELECT $1::TEXT, $2::TEXT, $3::TEXT, $4::TEXT, $5::BIGINT, $6::TEXT, \
                     $7::TEXT, $8::TEXT, $9::BIGINT, $10::REAL[], $11::TEXT \
                     WHERE EXISTS (SELECT 1 FROM sessions WHERE id = $4 AND namespace = $1) \
                     ON CONFLICT (namespace, message_id) DO UPDATE SET \
                     user_id = excluded.user_id, text = excluded.text, model = excluded.model, \
                     dims = excluded.dims, embedding = excluded.embedding",
                )
                .await?;
            let mut stored = 0;
            for v in vectors {
                let e = &v.entry;
                stored += tx
                    .execute(
                        &stmt,
                        &[
                            &e.namespace,
                            &e.message_id.as_str(),
                            &e.user,
                            &e.session_id.as_str(),
                            &e.sequence,
                            &e.role.as_str(),
                            &e.text,
                            &v.model,
                            &(v.embedding.len() as i64),
                            &v.embedding,
                            &e.created_at,
                        ],
                    )
                    .await? as usize;
            }
            tx.commit().await?;
            Ok(stored)
        }
        .await;
        self.done(r)
    }

    async fn search_memory(&self, q: &RecallQuery) -> Result<VectorSearch> {
        let c = self.client().await?;
        let first = search(&c, q).await;
        let r = match first {
            Err(OpError::Pg(e)) if e.code() == Some(&SqlState::UNDEFINED_OBJECT) => {
                // No `vector` type here: enable pgvector if it is installed and
                // the store's user may, then search again.
                match c
                    .batch_execute("CREATE EXTENSION IF NOT EXISTS vector")
                    .await
                {
                    Ok(()) => search(&c, q).await,
                    Err(e) => Ok(VectorSearch::Unavailable(self.no_pgvector(&e))),
                }
            }
            other => other,
        };
        self.done(r)
    }

    async fn count_memory_vectors(&self, namespace: &str) -> Result<u64> {
        let c = self.client().await?;
        let r: OpResult<u64> = async {
            let n: i64 = c
                .query_one(
                    "SELECT COUNT(*) FROM memory_vectors WHERE namespace = $1",
                    &[&namespace],
                )
                .await?
                .try_get(0)?;
            Ok(n.max(0) as u64)
        }
        .await;
        self.done(r)
    }
}

impl PostgresStore {
    /// Why pgvector cannot be enabled, and the fix.
    fn no_pgvector(&self, e: &tokio_postgres::Error) -> String {
        let why = e
            .as_db_error()
            .map_or_else(|| e.to_string(), |d| d.message().to_string());
        if e.code() == Some(&SqlState::INSUFFICIENT_PRIVILEGE) {
            format!(
                "{}: pgvector is installed but not enabled in this database, and the store's \
                 user may not enable it ({why}): run CREATE EXTENSION vector as a superuser",
                self.location
            )
        } else {
            format!(
                "{}: the PostgreSQL server has no pgvector ({why}): install the pgvector \
                 package for this PostgreSQL version (Debian: postgresql-NN-pgvector) and run \
                 CREATE EXTENSION vector in the database",
                self.location
            )
        }
    }
}

/// One search statement on `c`.
async fn search<C: GenericClient>(c: &C, q: &RecallQuery) -> OpResult<VectorSearch> {
    let session = q.session.as_ref().map(|s| s.as_str().to_string());
    let exclude = q.exclude_session.as_ref().map(|s| s.as_str().to_string());
    let rows = c
        .query(
            SEARCH,
            &[
                &q.namespace,
                &q.user,
                &q.model,
                &q.embedding,
                &(q.embedding.len() as i64),
                &session,
                &exclude,
                &limit(q.k),
            ],
        )
        .await?;
    let hits = rows
        .iter()
        .map(|r| {
            let role: String = r.try_get(5)?;
            let distance: f64 = r.try_get(8)?;
            Ok(RecallHit {
                entry: MemoryEntry {
                    namespace: r.try_get(0)?,
                    user: r.try_get(1)?,
                    session_id: SessionId(r.try_get(2)?),
                    message_id: MessageId(r.try_get(3)?),
                    sequence: r.try_get(4)?,
                    role: Role::parse(&role).unwrap_or(Role::User),
                    text: r.try_get(6)?,
                    created_at: r.try_get(7)?,
                },
                score: (1.0 - distance) as f32,
            })
        })
        .collect::<OpResult<Vec<_>>>()?;
    Ok(VectorSearch::Hits(hits))
}
