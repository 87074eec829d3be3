//! Model capability records in SQLite (`model_capabilities`): what a source
//! declares is kept as JSON, keyed by provider, model and source.

use super::{OpResult, SqliteStore};
use crate::domain::capability::{CapabilityRecord, CapabilitySource};
use crate::domain::error::Result;
use crate::store::capabilities::{CapabilityKey, CapabilityStore};
use async_trait::async_trait;
use rusqlite::{Connection, params};

/// The rows of `model_capabilities`, by provider, model and source.
fn select(c: &Connection) -> OpResult<Vec<CapabilityRecord>> {
    let mut stmt = c.prepare_cached(
        "SELECT provider, model, source, declared_json, note, updated_at \
         FROM model_capabilities ORDER BY provider, model, source",
    )?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, String>(5)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (provider, model, source, declared, note, updated_at) = row?;
        // A source this build does not know is someone else's record: skipped.
        let Some(source) = CapabilitySource::parse(&source) else {
            continue;
        };
        out.push(CapabilityRecord {
            provider,
            model,
            source,
            declared: serde_json::from_str(&declared)?,
            note,
            updated_at,
        });
    }
    Ok(out)
}

#[async_trait]
impl CapabilityStore for SqliteStore {
    async fn put_capability(&self, record: &CapabilityRecord) -> Result<()> {
        let r = record.clone();
        self.write(move |c| {
            c.prepare_cached(
                "INSERT OR REPLACE INTO model_capabilities \
                 (provider, model, source, declared_json, note, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                r.provider,
                r.model,
                r.source.as_str(),
                serde_json::to_string(&r.declared)?,
                r.note,
                r.updated_at
            ])?;
            Ok(())
        })
        .await
    }

    async fn delete_capability(&self, key: CapabilityKey<'_>) -> Result<bool> {
        let source = key.source;
        let (provider, model) = (key.provider.to_owned(), key.model.to_owned());
        self.write(move |c| {
            let n = c
                .prepare_cached(
                    "DELETE FROM model_capabilities \
                     WHERE provider = ?1 AND model = ?2 AND source = ?3",
                )?
                .execute(params![provider, model, source.as_str()])?;
            Ok(n > 0)
        })
        .await
    }

    async fn list_capabilities(&self) -> Result<Vec<CapabilityRecord>> {
        self.read(|c| select(c)).await
    }
}
