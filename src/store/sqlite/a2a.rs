//! The A2A server's conversations, tasks and push notification configs in
//! SQLite (`a2a_contexts`, `a2a_tasks`, `a2a_push_configs`), every key led by
//! the namespace.

use super::reads::all;
use super::{OpResult, SqliteStore};
use crate::domain::a2a_task::{
    A2aContext, A2aPushConfigRow, A2aTaskPage, A2aTaskQuery, A2aTaskRow,
};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::SessionId;
use crate::store::a2a::A2aStore;
use crate::store::rows::a2a::{self as decode, PUSH_CONFIG_COLUMNS, TASK_COLUMNS};
use async_trait::async_trait;
use rusqlite::{Connection, OptionalExtension, params};

fn session_of(
    c: &Connection,
    namespace: &str,
    agent: &str,
    context: &str,
) -> OpResult<Option<String>> {
    Ok(c.prepare_cached(
        "SELECT session_id FROM a2a_contexts \
         WHERE namespace = ?1 AND agent = ?2 AND context_id = ?3",
    )?
    .query_row(params![namespace, agent, context], |r| r.get(0))
    .optional()?)
}

fn task_exists(c: &Connection, namespace: &str, id: &str) -> OpResult<bool> {
    Ok(
        c.prepare_cached("SELECT 1 FROM a2a_tasks WHERE namespace = ?1 AND id = ?2")?
            .query_row(params![namespace, id], |_| Ok(()))
            .optional()?
            .is_some(),
    )
}

#[async_trait]
impl A2aStore for SqliteStore {
    async fn get_a2a_context(
        &self,
        namespace: &str,
        agent: &str,
        context_id: &str,
    ) -> Result<Option<SessionId>> {
        let (ns, agent, ctx) = (
            namespace.to_owned(),
            agent.to_owned(),
            context_id.to_owned(),
        );
        self.read(move |c| Ok(session_of(c, &ns, &agent, &ctx)?.map(SessionId::from)))
            .await
    }

    async fn bind_a2a_context(&self, context: &A2aContext) -> Result<SessionId> {
        let x = context.clone();
        self.write(move |c| {
            c.prepare_cached(
                "INSERT INTO a2a_contexts (namespace, agent, context_id, session_id, created_at) \
                 SELECT ?1, ?2, ?3, ?4, ?5 FROM sessions WHERE id = ?4 AND namespace = ?1 \
                 ON CONFLICT (namespace, agent, context_id) DO NOTHING",
            )?
            .execute(params![
                x.namespace,
                x.agent,
                x.context_id,
                x.session_id.as_str(),
                x.created_at
            ])?;
            match session_of(c, &x.namespace, &x.agent, &x.context_id)? {
                Some(s) => Ok(SessionId::from(s)),
                None => Err(HecateError::not_found("session", x.session_id.as_str()).into()),
            }
        })
        .await
    }

    async fn put_a2a_task(&self, task: &A2aTaskRow) -> Result<()> {
        let t = task.clone();
        let record = serde_json::to_string(&t.record)
            .map_err(|e| HecateError::store(format!("an A2A task's record as JSON: {e}")))?;
        self.write(move |c| {
            let n = c
                .prepare_cached(
                    "INSERT INTO a2a_tasks (namespace, id, agent, context_id, session_id, state, \
                     terminal, record_json, version, created_at, updated_at) \
                     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11 \
                     FROM sessions WHERE id = ?5 AND namespace = ?1 \
                     ON CONFLICT (namespace, id) DO UPDATE SET state = excluded.state, \
                     terminal = excluded.terminal, record_json = excluded.record_json, \
                     version = excluded.version, updated_at = excluded.updated_at \
                     WHERE a2a_tasks.version < excluded.version \
                       AND (a2a_tasks.terminal = 0 OR excluded.terminal = 1)",
                )?
                .execute(params![
                    t.namespace,
                    t.id,
                    t.agent,
                    t.context_id,
                    t.session_id.as_str(),
                    t.state,
                    t.terminal,
                    record,
                    t.version,
                    t.created_at,
                    t.updated_at
                ])?;
            if n == 0 && !task_exists(c, &t.namespace, &t.id)? {
                return Err(HecateError::not_found("session", t.session_id.as_str()).into());
            }
            Ok(())
        })
        .await
    }

    async fn get_a2a_task(&self, namespace: &str, id: &str) -> Result<Option<A2aTaskRow>> {
        let (ns, id) = (namespace.to_owned(), id.to_owned());
        self.read(move |c| {
            Ok(c.prepare_cached(&format!(
                "SELECT {TASK_COLUMNS} FROM a2a_tasks WHERE namespace = ?1 AND id = ?2"
            ))?
            .query_row(params![ns, id], |r| decode::task(r))
            .optional()?)
        })
        .await
    }

    async fn list_a2a_tasks(&self, query: &A2aTaskQuery) -> Result<A2aTaskPage> {
        let q = query.clone();
        self.read(move |c| {
            let filter = "WHERE namespace = ?1 AND agent = ?2 \
                 AND (?3 IS NULL OR context_id = ?3) AND (?4 IS NULL OR state = ?4)";
            let total: i64 = c
                .prepare_cached(&format!("SELECT COUNT(*) FROM a2a_tasks {filter}"))?
                .query_row(params![q.namespace, q.agent, q.context_id, q.state], |r| {
                    r.get(0)
                })?;
            let tasks = all(
                c,
                &format!(
                    "SELECT {TASK_COLUMNS} FROM a2a_tasks {filter} \
                     ORDER BY created_at DESC, id DESC LIMIT ?5 OFFSET ?6"
                ),
                params![
                    q.namespace,
                    q.agent,
                    q.context_id,
                    q.state,
                    i64::try_from(q.limit).unwrap_or(i64::MAX),
                    i64::try_from(q.offset).unwrap_or(i64::MAX)
                ],
                |r| decode::task(r),
            )?;
            Ok(A2aTaskPage {
                tasks,
                total: u64::try_from(total).unwrap_or(0),
            })
        })
        .await
    }

    async fn put_a2a_push_config(&self, config: &A2aPushConfigRow) -> Result<()> {
        let x = config.clone();
        let json = serde_json::to_string(&x.config)
            .map_err(|e| HecateError::store(format!("a push notification config as JSON: {e}")))?;
        self.write(move |c| {
            let n = c
                .prepare_cached(
                    "INSERT INTO a2a_push_configs \
                     (namespace, task_id, config_id, config_json, position, created_at) \
                     SELECT ?1, ?2, ?3, ?4, \
                       COALESCE((SELECT MAX(position) FROM a2a_push_configs \
                                 WHERE namespace = ?1 AND task_id = ?2), 0) + 1, ?5 \
                     FROM a2a_tasks WHERE namespace = ?1 AND id = ?2 \
                     ON CONFLICT (namespace, task_id, config_id) DO UPDATE SET \
                     config_json = excluded.config_json",
                )?
                .execute(params![
                    x.namespace,
                    x.task_id,
                    x.config_id,
                    json,
                    x.created_at
                ])?;
            if n == 0 {
                return Err(HecateError::not_found("task", &x.task_id).into());
            }
            Ok(())
        })
        .await
    }

    async fn list_a2a_push_configs(
        &self,
        namespace: &str,
        task_id: &str,
    ) -> Result<Vec<A2aPushConfigRow>> {
        let (ns, task_id) = (namespace.to_owned(), task_id.to_owned());
        self.read(move |c| {
            all(
                c,
                &format!(
                    "SELECT {PUSH_CONFIG_COLUMNS} FROM a2a_push_configs \
                     WHERE namespace = ?1 AND task_id = ?2 ORDER BY position, config_id"
                ),
                params![ns, task_id],
                |r| decode::push_config(r),
            )
        })
        .await
    }

    async fn delete_a2a_push_config(
        &self,
        namespace: &str,
        task_id: &str,
        config_id: &str,
    ) -> Result<bool> {
        let (ns, task_id, id) = (
            namespace.to_owned(),
            task_id.to_owned(),
            config_id.to_owned(),
        );
        self.write(move |c| {
            let n = c
                .prepare_cached(
                    "DELETE FROM a2a_push_configs \
                     WHERE namespace = ?1 AND task_id = ?2 AND config_id = ?3",
                )?
                .execute(params![ns, task_id, id])?;
            Ok(n > 0)
        })
        .await
    }
}
