//! The task runtime's tables: every change and its events in one `BEGIN
//! IMMEDIATE` transaction on the writer; the queue claim is a lease that expires.
//! `rows` maps rows, `statements` holds the single statements, `transitions` the
//! read-then-write transactions; this file is the `TaskStore` face.

mod statements;
mod transitions;

use super::SqliteStore;
use super::reads::{all, one};
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
use rusqlite::{OptionalExtension, TransactionBehavior, params};
use statements::*;
use transitions::*;

#[async_trait]
impl TaskStore for SqliteStore {
    async fn create_task(&self, task: &Task) -> Result<()> {
        let task = task.clone();
        self.write(move |c| {
            c.execute(
                "INSERT INTO tasks (id, namespace, spec_json, latest_run_id, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    task.id.as_str(),
                    task.namespace,
                    serde_json::to_string(&task.spec)?,
                    task.latest_run_id.as_ref().map(|r| r.as_str()),
                    task.created_at,
                    task.updated_at
                ],
            )?;
            Ok(())
        })
        .await
    }

    async fn get_task(&self, namespace: &str, id: &TaskId) -> Result<Task> {
        let (ns, id) = (namespace.to_string(), id.clone());
        self.read(move |c| select_task(c, Some(&ns), &id)).await
    }

    async fn list_tasks(&self, f: TaskListFilter) -> Result<Vec<Task>> {
        self.read(move |c| {
            all(
                c,
                &format!(
                    "SELECT {TASK_COLUMNS} FROM tasks WHERE namespace = ?1 \
                     AND (?2 IS NULL OR latest_run_status = ?2) \
                     AND (?3 IS NULL OR json_extract(spec_json, '$.execution_kind') = ?3) \
                     AND (?4 IS NULL OR json_extract(spec_json, '$.working_directory') = ?4) \
                     AND (?5 IS NULL OR (created_at, id) < \
                          (SELECT created_at, id FROM tasks WHERE id = ?5)) \
                     ORDER BY created_at DESC, id DESC LIMIT ?6"
                ),
                params![
                    f.namespace,
                    f.status.map(|s| s.as_str()),
                    f.execution_kind.map(|k| k.as_str()),
                    f.working_directory,
                    f.before.as_ref().map(|t| t.as_str()),
                    f.limit.min(i64::MAX as usize) as i64
                ],
                |r| decode::task(r),
            )
        })
        .await
    }

    async fn delete_task(&self, namespace: &str, id: &TaskId) -> Result<()> {
        let (ns, id) = (namespace.to_string(), id.clone());
        self.write(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            select_task(&tx, Some(&ns), &id)?;
            let active: i64 = tx.query_row(
                "SELECT COUNT(*) FROM task_runs WHERE task_id = ?1 \
                 AND status IN ('queued', 'running', 'awaiting_approval')",
                params![id.as_str()],
                |r| r.get(0),
            )?;
            if active > 0 {
                return Err(
                    conflict(format!("task {id} has an active run; cancel it first")).into(),
                );
            }
            for table in TASK_CHILD_TABLES {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE task_id = ?1"),
                    params![id.as_str()],
                )?;
            }
            tx.execute("DELETE FROM tasks WHERE id = ?1", params![id.as_str()])?;
            tx.commit()?;
            Ok(())
        })
        .await
    }

    async fn create_task_run(&self, new: NewTaskRun) -> Result<(TaskRun, Vec<TaskEvent>)> {
        self.write(move |c| {
            let mut run = new.run;
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            select_task(&tx, None, &run.task_id)?;
            let active: i64 = tx.query_row(
                "SELECT COUNT(*) FROM task_runs WHERE task_id = ?1 \
                 AND status IN ('queued', 'running', 'awaiting_approval')",
                params![run.task_id.as_str()],
                |r| r.get(0),
            )?;
            if active > 0 {
                return Err(
                    conflict(format!("task {} already has an active run", run.task_id)).into(),
                );
            }
            run.number = tx.query_row(
                "SELECT COALESCE(MAX(number), 0) + 1 FROM task_runs WHERE task_id = ?1",
                params![run.task_id.as_str()],
                |r| r.get(0),
            )?;
            tx.execute(
                &format!(
                    "INSERT INTO task_runs ({RUN_COLUMNS}) \
                     VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16)"
                ),
                params![
                    run.id.as_str(),
                    run.task_id.as_str(),
                    run.number,
                    run.status.as_str(),
                    run.error_type,
                    run.error_message,
                    run.resumed_from_run_id.as_ref().map(|r| r.as_str()),
                    run.workspace,
                    run.total_cost_micros_usd,
                    run.prior_cost_micros_usd,
                    run.model,
                    run.provider,
                    run.cancel_requested as i64,
                    run.created_at,
                    run.started_at,
                    run.finished_at
                ],
            )?;
            tx.execute(
                "UPDATE tasks SET latest_run_id = ?2, updated_at = ?3 WHERE id = ?1",
                params![run.task_id.as_str(), run.id.as_str(), now_rfc3339()],
            )?;
            if run.status == TaskRunStatus::Queued {
                enqueue(&tx, &run, new.priority)?;
            }
            if let Some(a) = &new.approval {
                insert_approval(&tx, a)?;
            }
            let events = append_events(&tx, &run.task_id, &run.id, new.events)?;
            tx.commit()?;
            Ok((run, events))
        })
        .await
    }

    async fn get_task_run(&self, task_id: &TaskId, run_id: &TaskRunId) -> Result<TaskRun> {
        let (task_id, run_id) = (task_id.clone(), run_id.clone());
        self.read(move |c| select_run(c, &task_id, &run_id)).await
    }

    async fn list_task_runs(&self, task_id: &TaskId) -> Result<Vec<TaskRun>> {
        let task_id = task_id.clone();
        self.read(move |c| {
            all(
                c,
                &format!("SELECT {RUN_COLUMNS} FROM task_runs WHERE task_id = ?1 ORDER BY number"),
                params![task_id.as_str()],
                |r| decode::run(r),
            )
        })
        .await
    }

    async fn claim_task_run(&self, owner: &str, lease_ms: i64) -> Result<Option<ClaimedRun>> {
        let owner = owner.to_string();
        self.write(move |c| claim(c, &owner, lease_ms)).await
    }

    async fn task_queue_depth(&self) -> Result<QueueDepth> {
        self.read(move |c| {
            let (waiting, leased): (i64, i64) = c.query_row(
                "SELECT \
                   COUNT(*) FILTER (WHERE lease_owner IS NULL OR lease_expires_ms < ?1), \
                   COUNT(*) FILTER (WHERE lease_owner IS NOT NULL AND lease_expires_ms >= ?1) \
                 FROM task_queue",
                params![now_millis()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            Ok(QueueDepth {
                waiting: waiting.max(0) as u64,
                leased: leased.max(0) as u64,
            })
        })
        .await
    }

    async fn renew_task_lease(
        &self,
        run_id: &TaskRunId,
        owner: &str,
        lease_ms: i64,
    ) -> Result<bool> {
        let (run_id, owner) = (run_id.clone(), owner.to_string());
        self.write(move |c| {
            let n = c.execute(
                "UPDATE task_queue SET lease_expires_ms = ?3 WHERE run_id = ?1 AND lease_owner = ?2",
                params![run_id.as_str(), owner, now_millis() + lease_ms],
            )?;
            if n == 0 {
                return Err(conflict(format!("the lease on run {run_id} is no longer held")).into());
            }
            let cancel: i64 = c.query_row(
                "SELECT cancel_requested FROM task_runs WHERE id = ?1",
                params![run_id.as_str()],
                |r| r.get(0),
            )?;
            Ok(cancel != 0)
        })
        .await
    }

    async fn set_task_run_workspace(&self, run_id: &TaskRunId, workspace: &str) -> Result<()> {
        let (run_id, workspace) = (run_id.clone(), workspace.to_string());
        self.write(move |c| {
            c.execute(
                "UPDATE task_runs SET workspace = ?2 WHERE id = ?1",
                params![run_id.as_str(), workspace],
            )?;
            Ok(())
        })
        .await
    }

    async fn start_task_step(
        &self,
        step: &TaskStep,
        events: Vec<NewTaskEvent>,
    ) -> Result<Vec<TaskEvent>> {
        let step = step.clone();
        self.write(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            insert_step(&tx, &step)?;
            let events = append_events(&tx, &step.task_id, &step.run_id, events)?;
            tx.commit()?;
            Ok(events)
        })
        .await
    }

    async fn finish_task_step(&self, end: FinishedStep) -> Result<Vec<TaskEvent>> {
        self.write(move |c| {
            let FinishedStep {
                step,
                artifacts,
                events,
            } = end;
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            update_step_end(&tx, &step)?;
            for a in &artifacts {
                insert_artifact(&tx, a)?;
            }
            let events = append_events(&tx, &step.task_id, &step.run_id, events)?;
            tx.commit()?;
            Ok(events)
        })
        .await
    }

    async fn checkpoint_task_run(&self, checkpoint: RunCheckpoint) -> Result<Vec<TaskEvent>> {
        self.write(move |c| transitions::checkpoint(c, checkpoint))
            .await
    }

    async fn await_task_approval(&self, park: TaskRunPark) -> Result<Vec<TaskEvent>> {
        self.write(move |c| transitions::park(c, park)).await
    }

    async fn finish_task_run(&self, end: TaskRunEnd) -> Result<Vec<TaskEvent>> {
        self.write(move |c| {
            let run_id = &end.run_id;
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let n = tx.execute(
                "DELETE FROM task_queue WHERE run_id = ?1 AND lease_owner = ?2",
                params![run_id.as_str(), end.owner],
            )?;
            if n == 0 {
                return Err(
                    conflict(format!("the lease on run {run_id} is no longer held")).into(),
                );
            }
            let run = select_run_by_id(&tx, run_id)?;
            set_run_status(
                &tx,
                run_id,
                RunStatusChange::new(end.status, end.error.as_ref()),
            )?;
            let events = append_events(&tx, &run.task_id, run_id, end.events)?;
            tx.commit()?;
            Ok(events)
        })
        .await
    }

    async fn cancel_task_run(
        &self,
        task_id: &TaskId,
        run_id: &TaskRunId,
    ) -> Result<(TaskRun, Vec<TaskEvent>)> {
        let (task_id, run_id) = (task_id.clone(), run_id.clone());
        self.write(move |c| cancel(c, &task_id, &run_id)).await
    }

    async fn list_task_steps(&self, run_id: &TaskRunId) -> Result<Vec<TaskStep>> {
        let run_id = run_id.clone();
        self.read(move |c| {
            all(
                c,
                &format!("SELECT {STEP_COLUMNS} FROM task_steps WHERE run_id = ?1 ORDER BY idx"),
                params![run_id.as_str()],
                |r| decode::step(r),
            )
        })
        .await
    }

    async fn get_task_step(&self, run_id: &TaskRunId, step_id: &TaskStepId) -> Result<TaskStep> {
        let (run_id, step_id) = (run_id.clone(), step_id.clone());
        self.read(move |c| {
            one(
                c,
                &format!("SELECT {STEP_COLUMNS} FROM task_steps WHERE id = ?1 AND run_id = ?2"),
                params![step_id.as_str(), run_id.as_str()],
                |r| decode::step(r),
                "step",
                step_id.as_str(),
            )
        })
        .await
    }

    async fn list_task_artifacts(
        &self,
        task_id: &TaskId,
        run_id: Option<&TaskRunId>,
    ) -> Result<Vec<TaskArtifact>> {
        let (task_id, run_id) = (task_id.clone(), run_id.cloned());
        self.read(move |c| {
            all(
                c,
                &format!(
                    "SELECT {ARTIFACT_COLUMNS} FROM task_artifacts WHERE task_id = ?1 \
                     AND (?2 IS NULL OR run_id = ?2) ORDER BY created_at, id"
                ),
                params![task_id.as_str(), run_id.as_ref().map(|r| r.as_str())],
                |r| decode::artifact(r),
            )
        })
        .await
    }

    async fn get_task_artifact(
        &self,
        task_id: &TaskId,
        id: &TaskArtifactId,
    ) -> Result<TaskArtifact> {
        let (task_id, id) = (task_id.clone(), id.clone());
        self.read(move |c| {
            one(
                c,
                &format!(
                    "SELECT {ARTIFACT_COLUMNS} FROM task_artifacts WHERE id = ?1 AND task_id = ?2"
                ),
                params![id.as_str(), task_id.as_str()],
                |r| decode::artifact(r),
                "artifact",
                id.as_str(),
            )
        })
        .await
    }

    async fn set_task_patch_status(
        &self,
        change: PatchMove,
    ) -> Result<(TaskArtifact, Vec<TaskEvent>)> {
        self.write(move |c| {
            let PatchMove {
                task_id,
                id,
                from,
                to,
                events,
            } = change;
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let select = format!(
                "SELECT {ARTIFACT_COLUMNS} FROM task_artifacts WHERE id = ?1 AND task_id = ?2 \
                 AND kind = 'patch'"
            );
            let patch = tx
                .query_row(&select, params![id.as_str(), task_id.as_str()], |r| {
                    decode::artifact(r)
                })
                .optional()?
                .ok_or_else(|| HecateError::not_found("patch", id.as_str()))?;
            if patch.status.as_deref() != Some(from.as_str()) {
                return Err(conflict(format!(
                    "patch {id} is {}, not {from}",
                    patch.status.as_deref().unwrap_or("unknown")
                ))
                .into());
            }
            tx.execute(
                "UPDATE task_artifacts SET status = ?2 WHERE id = ?1",
                params![id.as_str(), to],
            )?;
            let events = append_events(&tx, &task_id, &patch.run_id, events)?;
            let patch = tx.query_row(&select, params![id.as_str(), task_id.as_str()], |r| {
                decode::artifact(r)
            })?;
            tx.commit()?;
            Ok((patch, events))
        })
        .await
    }

    async fn list_task_approvals(&self, task_id: &TaskId) -> Result<Vec<TaskApproval>> {
        let task_id = task_id.clone();
        self.read(move |c| {
            all(
                c,
                &format!(
                    "SELECT {APPROVAL_COLUMNS} FROM task_approvals WHERE task_id = ?1 \
                     ORDER BY created_at, id"
                ),
                params![task_id.as_str()],
                |r| decode::approval(r),
            )
        })
        .await
    }

    async fn list_namespace_task_approvals(
        &self,
        namespace: &str,
        pending_only: bool,
    ) -> Result<Vec<TaskApproval>> {
        let namespace = namespace.to_string();
        self.read(move |c| {
            all(
                c,
                "SELECT a.id, a.task_id, a.run_id, a.kind, a.status, a.reason, a.note, \
                 a.created_at, a.resolved_at FROM task_approvals a \
                 JOIN tasks t ON t.id = a.task_id WHERE t.namespace = ?1 \
                 AND (?2 = 0 OR a.status = 'pending') ORDER BY a.created_at, a.id",
                params![namespace, pending_only as i64],
                |r| decode::approval(r),
            )
        })
        .await
    }

    async fn get_task_approval(
        &self,
        task_id: &TaskId,
        id: &TaskApprovalId,
    ) -> Result<TaskApproval> {
        let (task_id, id) = (task_id.clone(), id.clone());
        self.read(move |c| {
            one(
                c,
                &format!(
                    "SELECT {APPROVAL_COLUMNS} FROM task_approvals WHERE id = ?1 AND task_id = ?2"
                ),
                params![id.as_str(), task_id.as_str()],
                |r| decode::approval(r),
                "approval",
                id.as_str(),
            )
        })
        .await
    }

    async fn resolve_task_approval(
        &self,
        decision: TaskApprovalDecision,
    ) -> Result<(TaskApproval, Vec<TaskEvent>)> {
        self.write(move |c| resolve(c, decision)).await
    }

    async fn append_task_events(
        &self,
        task_id: &TaskId,
        run_id: &TaskRunId,
        events: Vec<NewTaskEvent>,
    ) -> Result<Vec<TaskEvent>> {
        let (task_id, run_id) = (task_id.clone(), run_id.clone());
        self.write(move |c| {
            let tx = c.transaction_with_behavior(TransactionBehavior::Immediate)?;
            select_run(&tx, &task_id, &run_id)?;
            let events = append_events(&tx, &task_id, &run_id, events)?;
            tx.commit()?;
            Ok(events)
        })
        .await
    }

    async fn list_task_events(&self, filter: TaskEventFilter) -> Result<Vec<TaskEvent>> {
        self.read(move |c| {
            let types = serde_json::to_string(&filter.event_types)?;
            let order = if filter.newest_first { "DESC" } else { "" };
            all(
                c,
                &format!(
                    "SELECT e.sequence, e.task_id, e.run_id, e.type, e.data_json, e.occurred_at \
                     FROM task_events e JOIN tasks t ON t.id = e.task_id \
                     WHERE t.namespace = ?1 AND e.sequence > ?2 \
                     AND (?3 IS NULL OR e.task_id = ?3) AND (?4 IS NULL OR e.run_id = ?4) \
                     AND (?5 = '[]' OR e.type IN (SELECT value FROM json_each(?5))) \
                     ORDER BY e.sequence {order} LIMIT ?6"
                ),
                params![
                    filter.namespace,
                    filter.after_sequence,
                    filter.task_id.as_ref().map(|t| t.as_str()),
                    filter.run_id.as_ref().map(|r| r.as_str()),
                    types,
                    filter.limit.min(i64::MAX as usize) as i64
                ],
                |r| decode::event(r),
            )
        })
        .await
    }
}
