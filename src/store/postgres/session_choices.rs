//! Stored choices of sessions' options in PostgreSQL (`session_choices`),
//! shared by every replica: a choice one takes is what another applies next.

use super::{OpResult, PostgresStore};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::SessionId;
use crate::store::session_choices::{ChoiceKind, SessionChoice, SessionChoiceStore};
use async_trait::async_trait;
use tokio_postgres::Row;

fn decode(r: &Row) -> OpResult<SessionChoice> {
    let kind: String = r.try_get(2)?;
    let kind = ChoiceKind::parse(&kind).ok_or_else(|| {
        HecateError::store(format!("session_choices holds an unknown kind {kind:?}"))
    })?;
    let value: String = r.try_get(4)?;
    Ok(SessionChoice {
        session_id: SessionId::from(r.try_get::<_, String>(0)?),
        scope: r.try_get(1)?,
        kind,
        name: r.try_get(3)?,
        value: serde_json::from_str(&value)?,
        chosen_at: r.try_get(5)?,
    })
}

#[async_trait]
impl SessionChoiceStore for PostgresStore {
    async fn list_session_choices(
        &self,
        session_id: &SessionId,
        scope: &str,
    ) -> Result<Vec<SessionChoice>> {
        let c = self.client().await?;
        let r = async {
            let rows = c
                .query(
                    "SELECT session_id, scope, kind, name, value_json, chosen_at \
                     FROM session_choices WHERE session_id = $1 AND scope = $2 \
                     ORDER BY position, kind, name",
                    &[&session_id.as_str(), &scope],
                )
                .await?;
            rows.iter().map(decode).collect()
        }
        .await;
        self.done(r)
    }

    async fn put_session_choice(&self, choice: &SessionChoice) -> Result<()> {
        let value = serde_json::to_string(&choice.value)
            .map_err(|e| HecateError::store(format!("a choice's value as JSON: {e}")))?;
        let c = self.client().await?;
        let r: OpResult<()> = async {
            let n = c
                .execute(
                    "INSERT INTO session_choices \
                     (session_id, scope, kind, name, value_json, position, chosen_at) \
                     SELECT $1, $2, $3, $4, $5, \
                       COALESCE((SELECT MAX(position) FROM session_choices \
                                 WHERE session_id = $1 AND scope = $2), 0) + 1, $6 \
                     FROM sessions WHERE id = $1 \
                     ON CONFLICT (session_id, scope, kind, name) DO UPDATE SET \
                     value_json = EXCLUDED.value_json, position = EXCLUDED.position, \
                     chosen_at = EXCLUDED.chosen_at",
                    &[
                        &choice.session_id.as_str(),
                        &choice.scope,
                        &choice.kind.as_str(),
                        &choice.name,
                        &value,
                        &choice.chosen_at,
                    ],
                )
                .await?;
            if n == 0 {
                return Err(HecateError::not_found("session", choice.session_id.as_str()).into());
            }
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn delete_session_choice(
        &self,
        session_id: &SessionId,
        scope: &str,
        kind: ChoiceKind,
        name: &str,
    ) -> Result<bool> {
        let c = self.client().await?;
        let r: OpResult<bool> = async {
            let n = c
                .execute(
                    "DELETE FROM session_choices \
                     WHERE session_id = $1 AND scope = $2 AND kind = $3 AND name = $4",
                    &[&session_id.as_str(), &scope, &kind.as_str(), &name],
                )
                .await?;
            Ok(n > 0)
        }
        .await;
        self.done(r)
    }
}
