//! The task runtime's tables: every change and its events in one transaction;
//! the queue claim is a lease that expires. `rows` maps rows, `statements`
//! holds the single statements, `transitions` the read-then-write
//! transactions; this file is the `TaskStore` face.

mod statements;
mod transitions;

use super::{OpResult, PostgresStore, conflict, limit};
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::{TaskApprovalId, TaskArtifactId, TaskId, TaskRunId, TaskStepId};
use crate::domain::task::{
    Task, TaskApproval, TaskArtifact, TaskEvent, TaskEventFilter, TaskListFilter, TaskRun,
    TaskRunStatus, TaskStep,
};
use crate::domain::time::{now_millis, now_rfc3339};
use crate::store::rows::tasks::{
    self as decode, APPROVAL_COLUMNS, ARTIFACT_COLUMNS, RUN_COLUMNS, RunStatusChange, STEP_COLUMNS,
    TASK_CHILD_TABLES, TASK_COLUMNS,
};
use crate::store::tasks::{
    ClaimedRun, FinishedStep, NewTaskEvent, NewTaskRun, PatchMove, QueueDepth, RunCheckpoint,
    TaskApprovalDecision, TaskRunEnd, TaskRunPark, TaskStore,
};
use async_trait::async_trait;
use deadpool_postgres::GenericClient;
use statements::*;

/// Fails with `conflict` when the task has a queued, running or waiting run.
async fn refuse_active<C: GenericClient>(c: &C, task_id: &TaskId, message: String) -> OpResult<()> {
    let active: i64 = c
        .query_one(
            "SELECT COUNT(*) FROM task_runs WHERE task_id = $1 \
             AND status IN ('queued', 'running', 'awaiting_approval')",
            &[&task_id.as_str()],
        )
        .await?
        .try_get(0)?;
    if active > 0 {
        return Err(conflict(message).into());
    }
    Ok(())
}

async fn insert_run<C: GenericClient>(tx: &C, run: &TaskRun) -> OpResult<()> {
    let sql = format!(
        "INSERT INTO task_runs ({RUN_COLUMNS}) \
         VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)"
    );
    tx.execute(
        sql.as_str(),
        &[
            &run.id.as_str(),
            &run.task_id.as_str(),
            &run.number,
            &run.status.as_str(),
            &run.error_type,
            &run.error_message,
            &run.resumed_from_run_id.as_ref().map(|r| r.as_str()),
            &run.workspace,
            &run.total_cost_micros_usd,
            &run.prior_cost_micros_usd,
            &run.model,
            &run.provider,
            &run.cancel_requested,
            &run.created_at,
            &run.started_at,
            &run.finished_at,
        ],
    )
    .await?;
    Ok(())
}

async fn query_all<C: GenericClient, T>(
    c: &C,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    map: fn(&tokio_postgres::Row) -> OpResult<T>,
) -> OpResult<Vec<T>> {
    let rows = c.query(sql, params).await?;
    rows.iter().map(map).collect()
}

async fn query_one_or<C: GenericClient, T>(
    c: &C,
    sql: &str,
    params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    map: fn(&tokio_postgres::Row) -> OpResult<T>,
    missing: HecateError,
) -> OpResult<T> {
    match c.query_opt(sql, params).await? {
        Some(row) => map(&row),
        None => Err(missing.into()),
    }
}

#[async_trait]
impl TaskStore for PostgresStore {
    async fn create_task(&self, task: &Task) -> Result<()> {
        let c = self.client().await?;
        let r: OpResult<()> = async {
            c.execute(
                "INSERT INTO tasks (id, namespace, spec_json, latest_run_id, created_at, \
                 updated_at) VALUES ($1, $2, $3, $4, $5, $6)",
                &[
                    &task.id.as_str(),
                    &task.namespace,
                    &serde_json::to_string(&task.spec)?,
                    &task.latest_run_id.as_ref().map(|r| r.as_str()),
                    &task.created_at,
                    &task.updated_at,
                ],
            )
            .await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn get_task(&self, namespace: &str, id: &TaskId) -> Result<Task> {
        let c = self.client().await?;
        let r = select_task(&c, Some(namespace), id, false).await;
        self.done(r)
    }

    async fn list_tasks(&self, f: TaskListFilter) -> Result<Vec<Task>> {
        let c = self.client().await?;
        let sql = format!(
            "SELECT * FROM (SELECT {TASK_COLUMNS} FROM tasks WHERE namespace = $1) t \
             WHERE ($2::text IS NULL OR latest_run_status = $2) \
             AND ($3::text IS NULL OR spec_json::jsonb ->> 'execution_kind' = $3) \
             AND ($4::text IS NULL OR spec_json::jsonb ->> 'working_directory' = $4) \
             AND ($5::text IS NULL OR (created_at, id) < \
                  (SELECT created_at, id FROM tasks WHERE id = $5)) \
             ORDER BY created_at DESC, id DESC LIMIT $6"
        );
        let status = f.status.map(|s| s.as_str());
        let kind = f.execution_kind.map(|k| k.as_str());
        let before = f.before.as_ref().map(|t| t.as_str());
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 6] = [
            &f.namespace,
            &status,
            &kind,
            &f.working_directory,
            &before,
            &limit(f.limit),
        ];
        let r = query_all(&c, &sql, &params, decode::task).await;
        self.done(r)
    }

    async fn delete_task(&self, namespace: &str, id: &TaskId) -> Result<()> {
        in_transaction!(self, tx => {
            select_task(&tx, Some(namespace), id, true).await?;
            refuse_active(&tx, id, format!("task {id} has an active run; cancel it first"))
                .await?;
            for table in TASK_CHILD_TABLES {
                tx.execute(
                    format!("DELETE FROM {table} WHERE task_id = $1").as_str(),
                    &[&id.as_str()],
                )
                .await?;
            }
            tx.execute("DELETE FROM tasks WHERE id = $1", &[&id.as_str()])
                .await?;
        })
    }

    async fn create_task_run(&self, new: NewTaskRun) -> Result<(TaskRun, Vec<TaskEvent>)> {
        let mut run = new.run;
        in_transaction!(self, tx => {
            select_task(&tx, None, &run.task_id, true).await?;
            refuse_active(
                &tx,
                &run.task_id,
                format!("task {} already has an active run", run.task_id),
            )
            .await?;
            run.number = tx
                .query_one(
                    "SELECT COALESCE(MAX(number), 0) + 1 FROM task_runs WHERE task_id = $1",
                    &[&run.task_id.as_str()],
                )
                .await?
                .try_get(0)?;
            insert_run(&tx, &run).await?;
            tx.execute(
                "UPDATE tasks SET latest_run_id = $2, updated_at = $3 WHERE id = $1",
                &[&run.task_id.as_str(), &run.id.as_str(), &now_rfc3339()],
            )
            .await?;
            if run.status == TaskRunStatus::Queued {
                enqueue(&tx, &run, new.priority).await?;
            }
            if let Some(a) = &new.approval {
                insert_approval(&tx, a).await?;
            }
            let events = append_events(&tx, &run.task_id, &run.id, new.events).await?;
            (run.clone(), events)
        })
    }

    async fn get_task_run(&self, task_id: &TaskId, run_id: &TaskRunId) -> Result<TaskRun> {
        let c = self.client().await?;
        let r = select_run(&c, task_id, run_id).await;
        self.done(r)
    }

    async fn list_task_runs(&self, task_id: &TaskId) -> Result<Vec<TaskRun>> {
        let c = self.client().await?;
        let sql = format!("SELECT {RUN_COLUMNS} FROM task_runs WHERE task_id = $1 ORDER BY number");
        let r = query_all(&c, &sql, &[&task_id.as_str()], decode::run).await;
        self.done(r)
    }

    async fn claim_task_run(&self, owner: &str, lease_ms: i64) -> Result<Option<ClaimedRun>> {
        in_transaction!(self, tx => transitions::claim(&tx, owner, lease_ms).await?)
    }

    async fn task_queue_depth(&self) -> Result<QueueDepth> {
        let c = self.client().await?;
        let r = async {
            let row = c
                .query_one(
                    "SELECT \
                       COUNT(*) FILTER (WHERE lease_owner IS NULL OR lease_expires_ms < $1), \
                       COUNT(*) FILTER (WHERE lease_owner IS NOT NULL AND lease_expires_ms >= $1) \
                     FROM task_queue",
                    &[&now_millis()],
                )
                .await?;
            let (waiting, leased): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
            Ok(QueueDepth {
                waiting: waiting.max(0) as u64,
                leased: leased.max(0) as u64,
            })
        }
        .await;
        self.done(r)
    }

    async fn renew_task_lease(
        &self,
        run_id: &TaskRunId,
        owner: &str,
        lease_ms: i64,
    ) -> Result<bool> {
        let c = self.client().await?;
        let r = async {
            let n = c
                .execute(
                    "UPDATE task_queue SET lease_expires_ms = $3 \
                     WHERE run_id = $1 AND lease_owner = $2",
                    &[&run_id.as_str(), &owner, &(now_millis() + lease_ms)],
                )
                .await?;
            if n == 0 {
                return Err(
                    conflict(format!("the lease on run {run_id} is no longer held")).into(),
                );
            }
            let cancel: bool = c
                .query_one(
                    "SELECT cancel_requested FROM task_runs WHERE id = $1",
                    &[&run_id.as_str()],
                )
                .await?
                .try_get(0)?;
            Ok(cancel)
        }
        .await;
        self.done(r)
    }

    async fn set_task_run_workspace(&self, run_id: &TaskRunId, workspace: &str) -> Result<()> {
        let c = self.client().await?;
        let r: OpResult<()> = async {
            c.execute(
                "UPDATE task_runs SET workspace = $2 WHERE id = $1",
                &[&run_id.as_str(), &workspace],
            )
            .await?;
            Ok(())
        }
        .await;
        self.done(r)
    }

    async fn start_task_step(
        &self,
        step: &TaskStep,
        events: Vec<NewTaskEvent>,
    ) -> Result<Vec<TaskEvent>> {
        in_transaction!(self, tx => {
            insert_step(&tx, step).await?;
            append_events(&tx, &step.task_id, &step.run_id, events).await?
        })
    }

    async fn finish_task_step(&self, end: FinishedStep) -> Result<Vec<TaskEvent>> {
        let FinishedStep {
            step,
            artifacts,
            events,
        } = end;
        in_transaction!(self, tx => {
            update_step_end(&tx, &step).await?;
            for a in &artifacts {
                insert_artifact(&tx, a).await?;
            }
            append_events(&tx, &step.task_id, &step.run_id, events).await?
        })
    }

    async fn checkpoint_task_run(&self, checkpoint: RunCheckpoint) -> Result<Vec<TaskEvent>> {
        in_transaction!(self, tx => transitions::checkpoint(&tx, checkpoint).await?)
    }

    async fn await_task_approval(&self, park: TaskRunPark) -> Result<Vec<TaskEvent>> {
        in_transaction!(self, tx => transitions::park(&tx, park).await?)
    }

    async fn finish_task_run(&self, end: TaskRunEnd) -> Result<Vec<TaskEvent>> {
        let run_id = &end.run_id;
        in_transaction!(self, tx => {
            let n = tx
                .execute(
                    "DELETE FROM task_queue WHERE run_id = $1 AND lease_owner = $2",
                    &[&run_id.as_str(), &end.owner],
                )
                .await?;
            if n == 0 {
                return Err(conflict(format!("the lease on run {run_id} is no longer held")).into());
            }
            let run = select_run_by_id(&tx, run_id).await?;
            let change = RunStatusChange::new(end.status, end.error.as_ref());
            set_run_status(&tx, run_id, change).await?;
            append_events(&tx, &run.task_id, run_id, end.events).await?
        })
    }

    async fn cancel_task_run(
        &self,
        task_id: &TaskId,
        run_id: &TaskRunId,
    ) -> Result<(TaskRun, Vec<TaskEvent>)> {
        in_transaction!(self, tx => transitions::cancel(&tx, task_id, run_id).await?)
    }

    async fn list_task_steps(&self, run_id: &TaskRunId) -> Result<Vec<TaskStep>> {
        let c = self.client().await?;
        let sql = format!("SELECT {STEP_COLUMNS} FROM task_steps WHERE run_id = $1 ORDER BY idx");
        let r = query_all(&c, &sql, &[&run_id.as_str()], decode::step).await;
        self.done(r)
    }

    async fn get_task_step(&self, run_id: &TaskRunId, step_id: &TaskStepId) -> Result<TaskStep> {
        let c = self.client().await?;
        let sql = format!("SELECT {STEP_COLUMNS} FROM task_steps WHERE id = $1 AND run_id = $2");
        let r = query_one_or(
            &c,
            &sql,
            &[&step_id.as_str(), &run_id.as_str()],
            decode::step,
            HecateError::not_found("step", step_id.as_str()),
        )
        .await;
        self.done(r)
    }

    async fn list_task_artifacts(
        &self,
        task_id: &TaskId,
        run_id: Option<&TaskRunId>,
    ) -> Result<Vec<TaskArtifact>> {
        let c = self.client().await?;
        let sql = format!(
            "SELECT {ARTIFACT_COLUMNS} FROM task_artifacts WHERE task_id = $1 \
             AND ($2::TEXT IS NULL OR run_id = $2) ORDER BY created_at, id"
        );
        let r = query_all(
            &c,
            &sql,
            &[&task_id.as_str(), &run_id.map(|r| r.as_str())],
            decode::artifact,
        )
        .await;
        self.done(r)
    }

    async fn get_task_artifact(
        &self,
        task_id: &TaskId,
        id: &TaskArtifactId,
    ) -> Result<TaskArtifact> {
        let c = self.client().await?;
        let sql =
            format!("SELECT {ARTIFACT_COLUMNS} FROM task_artifacts WHERE id = $1 AND task_id = $2");
        let r = query_one_or(
            &c,
            &sql,
            &[&id.as_str(), &task_id.as_str()],
            decode::artifact,
            HecateError::not_found("artifact", id.as_str()),
        )
        .await;
        self.done(r)
    }

    async fn set_task_patch_status(
        &self,
        change: PatchMove,
    ) -> Result<(TaskArtifact, Vec<TaskEvent>)> {
        let (task_id, id, from) = (&change.task_id, &change.id, change.from.as_str());
        let select = format!(
            "SELECT {ARTIFACT_COLUMNS} FROM task_artifacts WHERE id = $1 AND task_id = $2 \
             AND kind = 'patch' FOR UPDATE"
        );
        in_transaction!(self, tx => {
            let patch = query_one_or(
                &tx,
                &select,
                &[&id.as_str(), &task_id.as_str()],
                decode::artifact,
                HecateError::not_found("patch", id.as_str()),
            )
            .await?;
            if patch.status.as_deref() != Some(from) {
                return Err(conflict(format!(
                    "patch {id} is {}, not {from}",
                    patch.status.as_deref().unwrap_or("unknown")
                ))
                .into());
            }
            tx.execute(
                "UPDATE task_artifacts SET status = $2 WHERE id = $1",
                &[&id.as_str(), &change.to],
            )
            .await?;
            let events = append_events(&tx, task_id, &patch.run_id, change.events).await?;
            let row = tx
                .query_one(select.as_str(), &[&id.as_str(), &task_id.as_str()])
                .await?;
            (decode::artifact(&row)?, events)
        })
    }

    async fn list_task_approvals(&self, task_id: &TaskId) -> Result<Vec<TaskApproval>> {
        let c = self.client().await?;
        let sql = format!(
            "SELECT {APPROVAL_COLUMNS} FROM task_approvals WHERE task_id = $1 \
             ORDER BY created_at, id"
        );
        let r = query_all(&c, &sql, &[&task_id.as_str()], decode::approval).await;
        self.done(r)
    }

    async fn list_namespace_task_approvals(
        &self,
        namespace: &str,
        pending_only: bool,
    ) -> Result<Vec<TaskApproval>> {
        let c = self.client().await?;
        let r = query_all(
            &c,
            "SELECT a.id, a.task_id, a.run_id, a.kind, a.status, a.reason, a.note, \
             a.created_at, a.resolved_at FROM task_approvals a \
             JOIN tasks t ON t.id = a.task_id WHERE t.namespace = $1 \
             AND (NOT $2::BOOLEAN OR a.status = 'pending') ORDER BY a.created_at, a.id",
            &[&namespace, &pending_only],
            decode::approval,
        )
        .await;
        self.done(r)
    }

    async fn get_task_approval(
        &self,
        task_id: &TaskId,
        id: &TaskApprovalId,
    ) -> Result<TaskApproval> {
        let c = self.client().await?;
        let sql =
            format!("SELECT {APPROVAL_COLUMNS} FROM task_approvals WHERE id = $1 AND task_id = $2");
        let r = query_one_or(
            &c,
            &sql,
            &[&id.as_str(), &task_id.as_str()],
            decode::approval,
            HecateError::not_found("approval", id.as_str()),
        )
        .await;
        self.done(r)
    }

    async fn resolve_task_approval(
        &self,
        decision: TaskApprovalDecision,
    ) -> Result<(TaskApproval, Vec<TaskEvent>)> {
        in_transaction!(self, tx => transitions::resolve(&tx, decision).await?)
    }

    async fn append_task_events(
        &self,
        task_id: &TaskId,
        run_id: &TaskRunId,
        events: Vec<NewTaskEvent>,
    ) -> Result<Vec<TaskEvent>> {
        in_transaction!(self, tx => {
            select_run(&tx, task_id, run_id).await?;
            append_events(&tx, task_id, run_id, events).await?
        })
    }

    async fn list_task_events(&self, filter: TaskEventFilter) -> Result<Vec<TaskEvent>> {
        let c = self.client().await?;
        let order = if filter.newest_first { "DESC" } else { "" };
        let sql = format!(
            "SELECT e.sequence, e.task_id, e.run_id, e.type, e.data_json, e.occurred_at \
             FROM task_events e JOIN tasks t ON t.id = e.task_id \
             WHERE t.namespace = $1 AND e.sequence > $2 \
             AND ($3::TEXT IS NULL OR e.task_id = $3) AND ($4::TEXT IS NULL OR e.run_id = $4) \
             AND (cardinality($5::TEXT[]) = 0 OR e.type = ANY($5)) \
             ORDER BY e.sequence {order} LIMIT $6"
        );
        let r = query_all(
            &c,
            &sql,
            &[
                &filter.namespace,
                &filter.after_sequence,
                &filter.task_id.as_ref().map(|t| t.as_str()),
                &filter.run_id.as_ref().map(|r| r.as_str()),
                &filter.event_types,
                &limit(filter.limit),
            ],
            decode::event,
        )
        .await;
        self.done(r)
    }
}
