//! Session rows.

use super::cached::CachedStatements;
use super::{OpResult, PostgresStore, big, limit};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::SessionId;
use crate::domain::session::{Session, SessionSummary};
use crate::store::SessionStore;
use crate::store::rows::sessions::{self as decode, SESSION_COLUMNS};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;

/// Writes session `s` with `sql`, whose parameters are its key, header fields
/// and update time (`$1`..`$18`), then `more`.
async fn put_session<C: GenericClient>(
    c: &C,
    sql: &str,
    s: &Session,
    more: &[&(dyn ToSql + Sync)],
) -> OpResult<u64> {
    let (id, kind, status) = (s.id.as_str(), s.runtime_kind.as_str(), s.status.as_str());
    let max_turns = s.guardrails.max_turns.map(i64::from);
    let max_duration_ms = s.guardrails.max_duration_ms.map(big);
    let idle_timeout_ms = s.guardrails.idle_timeout_ms.map(big);
    let turns_used = i64::from(s.turns_used);
    let mut values: Vec<&(dyn ToSql + Sync)> = vec![
        &s.namespace,
        &id,
        &s.title,
        &kind,
        &s.provider,
        &s.model,
        &s.adapter_id,
        &s.workspace,
        &s.system_prompt,
        &status,
        &s.native_session_id,
        &max_turns,
        &max_duration_ms,
        &idle_timeout_ms,
        &turns_used,
        &s.session_started_at,
        &s.last_activity_at,
        &s.updated_at,
    ];
    values.extend_from_slice(more);
    Ok(c.execute_cached(sql, &values).await?)
}

/// Overwrites a session's mutable header fields.
pub(super) const WRITE_HEADER: &str = "UPDATE sessions SET title=$3, runtime_kind=$4, \
     provider=$5, model=$6, adapter_id=$7, workspace=$8, system_prompt=$9, status=$10, \
     native_session_id=$11, max_turns=$12, max_duration_ms=$13, idle_timeout_ms=$14, \
     turns_used=$15, session_started_at=$16, last_activity_at=$17, updated_at=$18 \
     WHERE namespace=$1 AND id=$2";

/// Moves a session's `updated_at` to `$2`.
pub(super) const TOUCH: &str = "UPDATE sessions SET updated_at = $2 WHERE id = $1";

/// Moves session `id`'s `updated_at` to `now` (its rows changed).
pub(super) async fn touch<C: GenericClient>(c: &C, id: &SessionId, now: &str) -> OpResult<()> {
    c.execute_cached(TOUCH, &[&id.as_str(), &now]).await?;
    Ok(())
}

/// Overwrites the mutable header fields of a session, or `not_found`.
pub(super) async fn write_header<C: GenericClient>(c: &C, s: &Session) -> OpResult<()> {
    let n = put_session(c, WRITE_HEADER, s, &[]).await?;
    not_found_if_zero(n, s.id.as_str())
}

#[async_trait]
impl SessionStore for PostgresStore {
    async fn create_session(&self, s: &Session) -> Result<()> {
        let c = self.client().await?;
        let r = async {
            let (history, memory) = decode::json_columns(s)?;
            put_session(
                &c,
                &format!(
                    "INSERT INTO sessions ({SESSION_COLUMNS}) VALUES \
                     ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16,$17,$19,$18,$20,$21)"
                ),
                s,
                &[&s.created_at, &history, &memory],
            )
            .await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn get_session(&self, namespace: &str, id: &SessionId) -> Result<Session> {
        let c = self.client().await?;
        let r = async {
            let row = c
                .query_opt_cached(
                    &format!(
                        "SELECT {SESSION_COLUMNS} FROM sessions WHERE namespace = $1 AND id = $2"
                    ),
                    &[&namespace, &id.as_str()],
                )
                .await?;
            match row {
                Some(row) => decode::session(&row),
                None => Err(HecateError::not_found("session", id.as_str()).into()),
            }
        }
        .await;
        self.done(r)
    }

    async fn list_sessions(&self, namespace: &str, n: usize) -> Result<Vec<SessionSummary>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    &format!(
                        "SELECT {SESSION_COLUMNS}, \
                         (SELECT COUNT(*) FROM messages m WHERE m.session_id = sessions.id), \
                         (SELECT COUNT(*) FROM provider_calls p WHERE p.session_id = sessions.id), \
                         (SELECT SUM(cost_micros_usd)::BIGINT FROM provider_calls p \
                          WHERE p.session_id = sessions.id) \
                         FROM sessions WHERE namespace = $1 \
                         ORDER BY updated_at DESC, id DESC LIMIT $2"
                    ),
                    &[&namespace, &limit(n)],
                )
                .await?;
            rows.iter()
                .map(decode::summary)
                .collect::<OpResult<Vec<_>>>()
        }
        .await;
        self.done(r)
    }

    async fn update_session(&self, s: &Session) -> Result<()> {
        let c = self.client().await?;
        let r = write_header(&c, s).await;
        self.done(r)
    }

    async fn delete_session(&self, namespace: &str, id: &SessionId) -> Result<()> {
        let c = self.client().await?;
        let r = async {
            let n = c
                .execute(
                    "DELETE FROM sessions WHERE namespace = $1 AND id = $2",
                    &[&namespace, &id.as_str()],
                )
                .await?;
            not_found_if_zero(n, id.as_str())
        }
        .await;
        self.done(r)
    }
}

fn not_found_if_zero(n: u64, id: &str) -> OpResult<()> {
    if n == 0 {
        Err(HecateError::not_found("session", id).into())
    } else {
        Ok(())
    }
}
