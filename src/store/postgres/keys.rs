//! Named API keys in PostgreSQL (`api_keys`), seen by every replica.

use super::{OpResult, PostgresStore, conflict, is_unique_violation};
use crate::domain::api_key::ApiKey;
use crate::domain::error::Result;
use crate::domain::ids::ApiKeyId;
use crate::store::keys::{KeyStore, StoredKey};
use async_trait::async_trait;
use tokio_postgres::Row;

const COLUMNS: &str =
    "id, name, scope, created_by, created_at, expires_at, revoked_at, last_used_at, token_hash";

fn decode(r: &Row) -> OpResult<StoredKey> {
    let scope: String = r.try_get(2)?;
    Ok(StoredKey {
        key: ApiKey {
            id: ApiKeyId::from(r.try_get::<_, String>(0)?),
            name: r.try_get(1)?,
            scope: serde_json::from_str(&scope)?,
            created_by: r.try_get(3)?,
            created_at: r.try_get(4)?,
            expires_at: r.try_get(5)?,
            revoked_at: r.try_get(6)?,
            last_used_at: r.try_get(7)?,
        },
        token_hash: r.try_get(8)?,
    })
}

#[async_trait]
impl KeyStore for PostgresStore {
    async fn insert_key(&self, key: &StoredKey) -> Result<()> {
        let c = self.client().await?;
        let r: OpResult<()> = async {
            let scope = serde_json::to_string(&key.key.scope)?;
            let k = &key.key;
            match c
                .execute(
                    &format!(
                        "INSERT INTO api_keys ({COLUMNS}) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9)"
                    ),
                    &[
                        &k.id.as_str(),
                        &k.name,
                        &scope,
                        &k.created_by,
                        &k.created_at,
                        &k.expires_at,
                        &k.revoked_at,
                        &k.last_used_at,
                        &key.token_hash,
                    ],
                )
                .await
            {
                Ok(_) => Ok(()),
                Err(e) if is_unique_violation(&e) => Err(conflict(format!(
                    "a key named {:?} already exists; revoke it first or pick another name",
                    k.name
                ))
                .into()),
                Err(e) => Err(e.into()),
            }
        }
        .await;
        self.done(r)
    }

    async fn get_key(&self, id: &ApiKeyId) -> Result<Option<StoredKey>> {
        let c = self.client().await?;
        let r = async {
            let row = c
                .query_opt(
                    &format!("SELECT {COLUMNS} FROM api_keys WHERE id = $1"),
                    &[&id.as_str()],
                )
                .await?;
            row.as_ref().map(decode).transpose()
        }
        .await;
        self.done(r)
    }

    async fn list_keys(&self) -> Result<Vec<ApiKey>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    &format!("SELECT {COLUMNS} FROM api_keys ORDER BY created_at DESC, id DESC"),
                    &[],
                )
                .await?;
            rows.iter()
                .map(|r| decode(r).map(|s| s.key))
                .collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }

    async fn revoke_key(&self, id: &ApiKeyId, at: &str) -> Result<Option<ApiKey>> {
        let c = self.client().await?;
        let r = async {
            c.execute(
                "UPDATE api_keys SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
                &[&id.as_str(), &at],
            )
            .await?;
            let row = c
                .query_opt(
                    &format!("SELECT {COLUMNS} FROM api_keys WHERE id = $1"),
                    &[&id.as_str()],
                )
                .await?;
            row.as_ref().map(|r| decode(r).map(|s| s.key)).transpose()
        }
        .await;
        self.done(r)
    }

    async fn touch_key(&self, id: &ApiKeyId, at: &str) -> Result<()> {
        let c = self.client().await?;
        let r = c
            .execute(
                "UPDATE api_keys SET last_used_at = $2 WHERE id = $1",
                &[&id.as_str(), &at],
            )
            .await
            .map(|_| ())
            .map_err(Into::into);
        self.done(r)
    }
}
