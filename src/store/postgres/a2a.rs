//! The A2A server's conversations, tasks and push notification configs in
//! PostgreSQL (`a2a_contexts`, `a2a_tasks`, `a2a_push_configs`), shared by
//! every replica: a conversation bound by one is continued by another, and a
//! task one ran is read by all.

use super::{OpResult, PostgresStore, limit};
use crate::domain::a2a_task::{
    A2aContext, A2aPushConfigRow, A2aTaskPage, A2aTaskQuery, A2aTaskRow,
};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::SessionId;
use crate::store::a2a::A2aStore;
use crate::store::rows::a2a::{self as decode, PUSH_CONFIG_COLUMNS, TASK_COLUMNS};
use async_trait::async_trait;

const SESSION_OF: &str = "SELECT session_id FROM a2a_contexts \
     WHERE namespace = $1 AND agent = $2 AND context_id = $3";

#[async_trait]
impl A2aStore for PostgresStore {
    async fn get_a2a_context(
        &self,
        namespace: &str,
        agent: &str,
        context_id: &str,
    ) -> Result<Option<SessionId>> {
        let c = self.client().await?;
        let r: OpResult<Option<SessionId>> = async {
            let row = c
                .query_opt(SESSION_OF, &[&namespace, &agent, &context_id])
                .await?;
            Ok(row
                .map(|r| r.try_get::<_, String>(0))
                .transpose()?
                .map(SessionId::from))
        }
        .await;
        self.done(r)
    }

    async fn bind_a2a_context(&self, context: &A2aContext) -> Result<SessionId> {
        let x = context;
        let c = self.client().await?;
        let r: OpResult<SessionId> = async {
            c.execute(
                "INSERT INTO a2a_contexts (namespace, agent, context_id, session_id, created_at) \
                 SELECT $1, $2, $3, $4, $5 FROM sessions WHERE id = $4 AND namespace = $1 \
                 ON CONFLICT (namespace, agent, context_id) DO NOTHING",
                &[
                    &x.namespace,
                    &x.agent,
                    &x.context_id,
                    &x.session_id.as_str(),
                    &x.created_at,
                ],
            )
            .await?;
            let row = c
                .query_opt(SESSION_OF, &[&x.namespace, &x.agent, &x.context_id])
                .await?;
            match row {
                Some(r) => Ok(SessionId::from(r.try_get::<_, String>(0)?)),
                None => Err(HecateError::not_found("session", x.session_id.as_str()).into()),
            }
        }
        .await;
        self.done(r)
    }

    async fn put_a2a_task(&self, task: &A2aTaskRow) -> Result<()> {
        let t = task;
        let record = serde_json::to_string(&t.record)
            .map_err(|e| HecateError::store(format!("an A2A task's record as JSON: {e}")))?;
        let c = self.client().await?;
        let r: OpResult<()> = async {
            let n = c
                .execute(
                    "INSERT INTO a2a_tasks (namespace, id, agent, context_id, session_id, state, \
                     terminal, record_json, version, created_at, updated_at) \
                     SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 \
                     FROM sessions WHERE id = $5 AND namespace = $1 \
                     ON CONFLICT (namespace, id) DO UPDATE SET state = EXCLUDED.state, \
                     terminal = EXCLUDED.terminal, record_json = EXCLUDED.record_json, \
                     version = EXCLUDED.version, updated_at = EXCLUDED.updated_at \
                     WHERE a2a_tasks.version < EXCLUDED.version \
                       AND (NOT a2a_tasks.terminal OR EXCLUDED.terminal)",
                    &[
                        &t.namespace,
                        &t.id,
                        &t.agent,
                        &t.context_id,
                        &t.session_id.as_str(),
                        &t.state,
                        &t.terminal,
                        &record,
                        &t.version,
                        &t.created_at,
                        &t.updated_at,
                    ],
                )
                .await?;
            if n == 0 {
                let stored = c
                    .query_opt(
                        "SELECT 1 FROM a2a_tasks WHERE namespace = $1 AND id = $2",
                        &[&t.namespace, &t.id],
                    )
                    .await?;
                if stored.is_none() {
                    return Err(HecateError::not_found("session", t.session_id.as_str()).into());
                }
            }
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn get_a2a_task(&self, namespace: &str, id: &str) -> Result<Option<A2aTaskRow>> {
        let c = self.client().await?;
        let r: OpResult<Option<A2aTaskRow>> = async {
            let row = c
                .query_opt(
                    &format!(
                        "SELECT {TASK_COLUMNS} FROM a2a_tasks WHERE namespace = $1 AND id = $2"
                    ),
                    &[&namespace, &id],
                )
                .await?;
            row.as_ref().map(decode::task).transpose()
        }
        .await;
        self.done(r)
    }

    async fn list_a2a_tasks(&self, query: &A2aTaskQuery) -> Result<A2aTaskPage> {
        let q = query;
        let c = self.client().await?;
        let r: OpResult<A2aTaskPage> = async {
            let filter = "WHERE namespace = $1 AND agent = $2 \
                 AND ($3::TEXT IS NULL OR context_id = $3) AND ($4::TEXT IS NULL OR state = $4)";
            let total: i64 = c
                .query_one(
                    &format!("SELECT COUNT(*) FROM a2a_tasks {filter}"),
                    &[&q.namespace, &q.agent, &q.context_id, &q.state],
                )
                .await?
                .try_get(0)?;
            let rows = c
                .query(
                    &format!(
                        "SELECT {TASK_COLUMNS} FROM a2a_tasks {filter} \
                         ORDER BY created_at DESC, id DESC LIMIT $5 OFFSET $6"
                    ),
                    &[
                        &q.namespace,
                        &q.agent,
                        &q.context_id,
                        &q.state,
                        &limit(q.limit),
                        &limit(q.offset),
                    ],
                )
                .await?;
            Ok(A2aTaskPage {
                tasks: rows.iter().map(decode::task).collect::<OpResult<_>>()?,
                total: u64::try_from(total).unwrap_or(0),
            })
        }
        .await;
        self.done(r)
    }

    async fn put_a2a_push_config(&self, config: &A2aPushConfigRow) -> Result<()> {
        let x = config;
        let json = serde_json::to_string(&x.config)
            .map_err(|e| HecateError::store(format!("a push notification config as JSON: {e}")))?;
        let c = self.client().await?;
        let r: OpResult<()> = async {
            let n = c
                .execute(
                    "INSERT INTO a2a_push_configs \
                     (namespace, task_id, config_id, config_json, position, created_at) \
                     SELECT $1, $2, $3, $4, \
                       COALESCE((SELECT MAX(position) FROM a2a_push_configs \
                                 WHERE namespace = $1 AND task_id = $2), 0) + 1, $5 \
                     FROM a2a_tasks WHERE namespace = $1 AND id = $2 \
                     ON CONFLICT (namespace, task_id, config_id) DO UPDATE SET \
                     config_json = EXCLUDED.config_json",
                    &[&x.namespace, &x.task_id, &x.config_id, &json, &x.created_at],
                )
                .await?;
            if n == 0 {
                return Err(HecateError::not_found("task", &x.task_id).into());
            }
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn list_a2a_push_configs(
        &self,
        namespace: &str,
        task_id: &str,
    ) -> Result<Vec<A2aPushConfigRow>> {
        let c = self.client().await?;
        let r: OpResult<Vec<A2aPushConfigRow>> = async {
            let rows = c
                .query(
                    &format!(
                        "SELECT {PUSH_CONFIG_COLUMNS} FROM a2a_push_configs \
                         WHERE namespace = $1 AND task_id = $2 ORDER BY position, config_id"
                    ),
                    &[&namespace, &task_id],
                )
                .await?;
            rows.iter().map(decode::push_config).collect()
        }
        .await;
        self.done(r)
    }

    async fn delete_a2a_push_config(
        &self,
        namespace: &str,
        task_id: &str,
        config_id: &str,
    ) -> Result<bool> {
        let c = self.client().await?;
        let r: OpResult<bool> = async {
            let n = c
                .execute(
                    "DELETE FROM a2a_push_configs \
                     WHERE namespace = $1 AND task_id = $2 AND config_id = $3",
                    &[&namespace, &task_id, &config_id],
                )
                .await?;
            Ok(n > 0)
        }
        .await;
        self.done(r)
    }
}
