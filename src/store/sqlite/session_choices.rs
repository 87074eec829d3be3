//! Stored choices of sessions' options in SQLite (`session_choices`).

use super::{OpResult, SqliteStore};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::SessionId;
use crate::store::session_choices::{ChoiceKind, SessionChoice, SessionChoiceStore};
use async_trait::async_trait;
use rusqlite::params;

/// One row as read: session, scope, kind, name, value JSON, chosen at.
type Raw = (String, String, String, String, String, String);

fn decode(raw: Raw) -> OpResult<SessionChoice> {
    let (session_id, scope, kind, name, value, chosen_at) = raw;
    let kind = ChoiceKind::parse(&kind).ok_or_else(|| {
        HecateError::store(format!("session_choices holds an unknown kind {kind:?}"))
    })?;
    Ok(SessionChoice {
        session_id: SessionId::from(session_id),
        scope,
        kind,
        name,
        value: serde_json::from_str(&value)?,
        chosen_at,
    })
}

#[async_trait]
impl SessionChoiceStore for SqliteStore {
    async fn list_session_choices(
        &self,
        session_id: &SessionId,
        scope: &str,
    ) -> Result<Vec<SessionChoice>> {
        let (session_id, scope) = (session_id.clone(), scope.to_owned());
        self.read(move |c| {
            let rows = c
                .prepare_cached(
                    "SELECT session_id, scope, kind, name, value_json, chosen_at \
                     FROM session_choices WHERE session_id = ?1 AND scope = ?2 \
                     ORDER BY position, kind, name",
                )?
                .query_map(params![session_id.as_str(), scope], |r| {
                    Ok((
                        r.get(0)?,
                        r.get(1)?,
                        r.get(2)?,
                        r.get(3)?,
                        r.get(4)?,
                        r.get(5)?,
                    ))
                })?
                .collect::<rusqlite::Result<Vec<Raw>>>()?;
            rows.into_iter().map(decode).collect()
        })
        .await
    }

    async fn put_session_choice(&self, choice: &SessionChoice) -> Result<()> {
        let c = choice.clone();
        let value = serde_json::to_string(&c.value)
            .map_err(|e| HecateError::store(format!("a choice's value as JSON: {e}")))?;
        self.write(move |conn| {
            let n = conn
                .prepare_cached(
                    "INSERT INTO session_choices \
                     (session_id, scope, kind, name, value_json, position, chosen_at) \
                     SELECT ?1, ?2, ?3, ?4, ?5, \
                       COALESCE((SELECT MAX(position) FROM session_choices \
                                 WHERE session_id = ?1 AND scope = ?2), 0) + 1, ?6 \
                     FROM sessions WHERE id = ?1 \
                     ON CONFLICT (session_id, scope, kind, name) DO UPDATE SET \
                     value_json = excluded.value_json, position = excluded.position, \
                     chosen_at = excluded.chosen_at",
                )?
                .execute(params![
                    c.session_id.as_str(),
                    c.scope,
                    c.kind.as_str(),
                    c.name,
                    value,
                    c.chosen_at
                ])?;
            if n == 0 {
                return Err(HecateError::not_found("session", c.session_id.as_str()).into());
            }
            Ok(())
        })
        .await
    }

    async fn delete_session_choice(
        &self,
        session_id: &SessionId,
        scope: &str,
        kind: ChoiceKind,
        name: &str,
    ) -> Result<bool> {
        let (session_id, scope, name) = (session_id.clone(), scope.to_owned(), name.to_owned());
        self.write(move |c| {
            let n = c
                .prepare_cached(
                    "DELETE FROM session_choices \
                     WHERE session_id = ?1 AND scope = ?2 AND kind = ?3 AND name = ?4",
                )?
                .execute(params![session_id.as_str(), scope, kind.as_str(), name])?;
            Ok(n > 0)
        })
        .await
    }
}
