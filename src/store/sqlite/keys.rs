//! Named API keys in SQLite (`api_keys`).

use super::SqliteStore;
use super::reads::all;
use crate::domain::api_key::ApiKey;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::ApiKeyId;
use crate::store::keys::{KeyStore, StoredKey};
use async_trait::async_trait;
use rusqlite::{OptionalExtension, params};

const COLUMNS: &str =
    "id, name, scope, created_by, created_at, expires_at, revoked_at, last_used_at, token_hash";

fn decode(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredKey> {
    let scope: String = r.get(2)?;
    let scope = serde_json::from_str(&scope).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, Box::new(e))
    })?;
    Ok(StoredKey {
        key: ApiKey {
            id: ApiKeyId::from(r.get::<_, String>(0)?),
            name: r.get(1)?,
            scope,
            created_by: r.get(3)?,
            created_at: r.get(4)?,
            expires_at: r.get(5)?,
            revoked_at: r.get(6)?,
            last_used_at: r.get(7)?,
        },
        token_hash: r.get(8)?,
    })
}

#[async_trait]
impl KeyStore for SqliteStore {
    async fn insert_key(&self, key: &StoredKey) -> Result<()> {
        let k = key.clone();
        self.write(move |c| {
            let scope = serde_json::to_string(&k.key.scope)?;
            let taken: bool = c
                .prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM api_keys WHERE name = ?1 AND revoked_at IS NULL)",
                )?
                .query_row([&k.key.name], |r| r.get(0))?;
            if taken {
                return Err(HecateError::new(
                    ErrorType::Conflict,
                    format!(
                        "a key named {:?} already exists; revoke it first or pick another name",
                        k.key.name
                    ),
                )
                .into());
            }
            c.prepare_cached(&format!(
                "INSERT INTO api_keys ({COLUMNS}) VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9)"
            ))?
            .execute(params![
                k.key.id.as_str(),
                k.key.name,
                scope,
                k.key.created_by,
                k.key.created_at,
                k.key.expires_at,
                k.key.revoked_at,
                k.key.last_used_at,
                k.token_hash,
            ])?;
            Ok(())
        })
        .await
    }

    async fn get_key(&self, id: &ApiKeyId) -> Result<Option<StoredKey>> {
        let id = id.as_str().to_owned();
        self.read(move |c| {
            Ok(
                c.prepare_cached(&format!("SELECT {COLUMNS} FROM api_keys WHERE id = ?1"))?
                    .query_row([id], decode)
                    .optional()?,
            )
        })
        .await
    }

    async fn list_keys(&self) -> Result<Vec<ApiKey>> {
        self.read(move |c| {
            let rows = all(
                c,
                &format!("SELECT {COLUMNS} FROM api_keys ORDER BY created_at DESC, id DESC"),
                [],
                decode,
            )?;
            Ok(rows.into_iter().map(|s| s.key).collect())
        })
        .await
    }

    async fn revoke_key(&self, id: &ApiKeyId, at: &str) -> Result<Option<ApiKey>> {
        let (id, at) = (id.as_str().to_owned(), at.to_owned());
        self.write(move |c| {
            c.prepare_cached(
                "UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
            )?
            .execute(params![id, at])?;
            Ok(
                c.prepare_cached(&format!("SELECT {COLUMNS} FROM api_keys WHERE id = ?1"))?
                    .query_row([id], decode)
                    .optional()?
                    .map(|s| s.key),
            )
        })
        .await
    }

    async fn touch_key(&self, id: &ApiKeyId, at: &str) -> Result<()> {
        let (id, at) = (id.as_str().to_owned(), at.to_owned());
        self.write(move |c| {
            c.prepare_cached("UPDATE api_keys SET last_used_at = ?2 WHERE id = ?1")?
                .execute(params![id, at])?;
            Ok(())
        })
        .await
    }
}
