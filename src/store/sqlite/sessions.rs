//! Session rows.

use super::reads::one;
use super::{OpResult, SqliteStore};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::SessionId;
use crate::domain::session::{Session, SessionSummary};
use crate::store::SessionStore;
use crate::store::rows::sessions::{self as decode, SESSION_COLUMNS};
use async_trait::async_trait;
use rusqlite::types::ToSql;
use rusqlite::{Connection, params, params_from_iter};

/// Writes session `s` with `sql`, whose parameters are its key, header fields
/// and update time (`?1`..`?18`), then `more`.
fn put_session(c: &Connection, sql: &str, s: &Session, more: &[&dyn ToSql]) -> OpResult<usize> {
    let header = params![
        s.namespace,
        s.id.as_str(),
        s.title,
        s.runtime_kind.as_str(),
        s.provider,
        s.model,
        s.adapter_id,
        s.workspace,
        s.system_prompt,
        s.status.as_str(),
        s.native_session_id,
        s.guardrails.max_turns.map(i64::from),
        s.guardrails.max_duration_ms.map(|v| v as i64),
        s.guardrails.idle_timeout_ms.map(|v| v as i64),
        s.turns_used as i64,
        s.session_started_at,
        s.last_activity_at,
        s.updated_at,
    ];
    let values = header.iter().chain(more).copied();
    Ok(c.prepare_cached(sql)?.execute(params_from_iter(values))?)
}

/// Overwrites the mutable header fields of a session, or `not_found`.
pub(super) fn write_header(c: &Connection, s: &Session) -> OpResult<()> {
    let n = put_session(
        c,
        "UPDATE sessions SET title=?3, runtime_kind=?4, provider=?5, model=?6, \
         adapter_id=?7, workspace=?8, system_prompt=?9, status=?10, native_session_id=?11, \
         max_turns=?12, max_duration_ms=?13, idle_timeout_ms=?14, turns_used=?15, \
         session_started_at=?16, last_activity_at=?17, updated_at=?18 \
         WHERE namespace=?1 AND id=?2",
        s,
        &[],
    )?;
    not_found_if_zero(n, s.id.as_str())
}

#[async_trait]
impl SessionStore for SqliteStore {
    async fn create_session(&self, s: &Session) -> Result<()> {
        let s = s.clone();
        self.write(move |c| {
            let (history, memory) = decode::json_columns(&s)?;
            put_session(
                c,
                &format!(
                    "INSERT INTO sessions ({SESSION_COLUMNS}) VALUES \
                     (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?19,?18,?20,?21)"
                ),
                &s,
                &[&s.created_at, &history, &memory],
            )?;
            Ok(())
        })
        .await
    }

    async fn get_session(&self, namespace: &str, id: &SessionId) -> Result<Session> {
        let (namespace, id) = (namespace.to_owned(), id.clone());
        // A key lookup every turn starts with: on the caller's thread.
        self.read_inline(move |c| {
            one(
                c,
                &format!("SELECT {SESSION_COLUMNS} FROM sessions WHERE namespace = ?1 AND id = ?2"),
                params![namespace, id.as_str()],
                |r| decode::session(r),
                "session",
                id.as_str(),
            )
        })
        .await
    }

    async fn list_sessions(&self, namespace: &str, limit: usize) -> Result<Vec<SessionSummary>> {
        let namespace = namespace.to_owned();
        self.read(move |c| {
            let mut stmt = c.prepare(&format!(
                "SELECT {SESSION_COLUMNS}, \
                 (SELECT COUNT(*) FROM messages m WHERE m.session_id = sessions.id), \
                 (SELECT COUNT(*) FROM provider_calls p WHERE p.session_id = sessions.id), \
                 (SELECT SUM(cost_micros_usd) FROM provider_calls p WHERE p.session_id = sessions.id) \
                 FROM sessions WHERE namespace = ?1 ORDER BY updated_at DESC, id DESC LIMIT ?2"
            ))?;
            let rows = stmt.query_map(params![namespace, limit as i64], |r| decode::summary(r))?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await
    }

    async fn update_session(&self, s: &Session) -> Result<()> {
        let s = s.clone();
        self.write(move |c| write_header(c, &s)).await
    }

    async fn delete_session(&self, namespace: &str, id: &SessionId) -> Result<()> {
        let (namespace, id) = (namespace.to_owned(), id.clone());
        self.write(move |c| {
            let n = c
                .prepare_cached("DELETE FROM sessions WHERE namespace = ?1 AND id = ?2")?
                .execute(params![namespace, id.as_str()])?;
            not_found_if_zero(n, id.as_str())
        })
        .await
    }
}

fn not_found_if_zero(n: usize, id: &str) -> OpResult<()> {
    if n == 0 {
        Err(HecateError::not_found("session", id).into())
    } else {
        Ok(())
    }
}
