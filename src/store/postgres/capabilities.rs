//! Model capability records in PostgreSQL (`model_capabilities`): what a
//! source declares is kept as JSON, keyed by provider, model and source.

use super::cached::CachedStatements;
use super::{OpResult, PostgresStore};
use crate::domain::capability::{CapabilityRecord, CapabilitySource};
use crate::domain::error::Result;
use crate::store::capabilities::{CapabilityKey, CapabilityStore};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;

/// The rows of `model_capabilities`, by provider, model and source.
async fn select<C: GenericClient>(c: &C) -> OpResult<Vec<CapabilityRecord>> {
    let rows = c
        .query_cached(
            "SELECT provider, model, source, declared_json, note, updated_at \
             FROM model_capabilities ORDER BY provider, model, source",
            &[],
        )
        .await?;
    let mut out = Vec::new();
    for r in rows {
        // A source this build does not know is someone else's record: skipped.
        let Some(source) = CapabilitySource::parse(r.try_get::<_, &str>(2)?) else {
            continue;
        };
        out.push(CapabilityRecord {
            provider: r.try_get(0)?,
            model: r.try_get(1)?,
            source,
            declared: serde_json::from_str(r.try_get::<_, &str>(3)?)?,
            note: r.try_get(4)?,
            updated_at: r.try_get(5)?,
        });
    }
    Ok(out)
}

#[async_trait]
impl CapabilityStore for PostgresStore {
    async fn put_capability(&self, record: &CapabilityRecord) -> Result<()> {
        let c = self.client().await?;
        let r = async {
            let declared = serde_json::to_string(&record.declared)?;
            c.execute(
                "INSERT INTO model_capabilities \
                 (provider, model, source, declared_json, note, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6) \
                 ON CONFLICT (provider, model, source) DO UPDATE SET \
                 declared_json = EXCLUDED.declared_json, note = EXCLUDED.note, \
                 updated_at = EXCLUDED.updated_at",
                &[
                    &record.provider,
                    &record.model,
                    &record.source.as_str(),
                    &declared,
                    &record.note,
                    &record.updated_at,
                ],
            )
            .await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn delete_capability(&self, key: CapabilityKey<'_>) -> Result<bool> {
        let c = self.client().await?;
        let r = c
            .execute(
                "DELETE FROM model_capabilities \
                 WHERE provider = $1 AND model = $2 AND source = $3",
                &[&key.provider, &key.model, &key.source.as_str()],
            )
            .await
            .map(|n| n > 0)
            .map_err(Into::into);
        self.done(r)
    }

    async fn list_capabilities(&self) -> Result<Vec<CapabilityRecord>> {
        let c = self.client().await?;
        let r = select(&c).await;
        self.done(r)
    }
}
