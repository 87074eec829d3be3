//! What callers ask of the task runtime: tasks (create, read, delete), runs
//! (start, cancel, retry, resume), approvals (resolve) and the reads that follow
//! them. Every answer comes from the store, so any process on the store answers
//! the same.

use super::TaskRuntime;
use crate::adapters::sandbox::{Confinement, bwrap_path};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::{TaskApprovalId, TaskArtifactId, TaskId, TaskRunId, TaskStepId};
use crate::domain::task::{
    ExecutionKind, Task, TaskApproval, TaskApprovalStatus, TaskArtifact, TaskEvent, TaskRun,
    TaskRunStatus, TaskSpec, TaskStep,
};
use crate::domain::task::{TaskEventFilter, TaskListFilter};
use crate::domain::time::now_rfc3339;
use crate::store::tasks::{NewTaskEvent, NewTaskRun, TaskApprovalDecision};
use serde_json::json;

/// How a new run relates to an earlier one.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// The run it retries or resumes.
    pub from: Option<TaskRunId>,
    /// Reuse the source run's workspace and carry its cost (resume).
    pub resume: bool,
    /// Why (recorded on the event).
    pub reason: Option<String>,
    /// A follow-up prompt appended to the source's conversation (continue).
    pub prompt: Option<String>,
    /// The source's model turn the new run takes again (retry-from-turn).
    pub from_turn: Option<u32>,
    /// Who started it (`admin`, `key:NAME`, `cli`), recorded on `run.created`.
    pub started_by: Option<String>,
}

impl StartOptions {
    /// How the new run relates to its source, as `run.resumed_from_event`
    /// names it: `retry`, `resume`, `continue` or `retry_from_turn`.
    pub fn mode(&self) -> &'static str {
        match (self.from_turn, &self.prompt, self.resume) {
            (Some(_), _, _) => "retry_from_turn",
            (None, Some(_), _) => "continue",
            (None, None, true) => "resume",
            (None, None, false) => "retry",
        }
    }
}

fn canonical_dir(path: &str, field: &str) -> Result<std::path::PathBuf> {
    // A relative directory would be this process's own working directory: an
    // agent editing wherever `hecate serve` happened to start. Faces that have a
    // directory of their own (the CLI) make their paths absolute first.
    if !std::path::Path::new(path).is_absolute() {
        return Err(HecateError::invalid(format!(
            "{field} must be an absolute path, got {path:?}"
        ))
        .with_detail("field", field));
    }
    std::fs::canonicalize(path)
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| {
            HecateError::invalid(format!("{field} {path} is not an existing directory"))
                .with_detail("field", field)
        })
}

/// The confinement a task's commands run under: workspace-write unless the
/// task loosens it.
pub(in crate::engine) fn confinement_of(spec: &TaskSpec) -> Confinement {
    Confinement {
        no_network: !spec.sandbox_network,
        read_only: !spec.sandbox_root_writable,
        git_writable: spec.sandbox_git_writable,
    }
}

/// What an approval of a task's gate allows, in words: the command or change,
/// and for commands the confinement it runs under.
fn approval_text(kind: &str, spec: &TaskSpec) -> String {
    let confined = |what: String| {
        let loosened = spec.loosened();
        let how = confinement_of(spec).describe();
        if loosened.is_empty() {
            format!("{what} (confined: {how})")
        } else {
            format!("{what} (LOOSENED: {how})")
        }
    };
    match kind {
        "shell_command" => confined(format!("run `{}`", spec.shell_command)),
        "git_exec" => confined(format!("run `git {}`", spec.git_command)),
        "file_write" => {
            let what = format!("{:?} {}", spec.file_operation, spec.file_path).to_lowercase();
            if spec.sandbox_git_writable {
                format!("{what} (.git writable)")
            } else {
                what
            }
        }
        _ => confined("use the network".to_string()),
    }
}

impl TaskRuntime {
    /// Checks and stores a new task.
    pub async fn create_task(&self, namespace: &str, mut spec: TaskSpec) -> Result<Task> {
        let kind = spec.validate()?;
        let cap = self.inner.config.max_mcp_servers_per_task;
        if cap > 0 && spec.mcp_servers.len() > cap {
            return Err(HecateError::invalid(format!(
                "mcp_servers has {} entries; a task may name at most {cap}",
                spec.mcp_servers.len()
            ))
            .with_detail("field", "mcp_servers")
            .with_operator_action(
                "Name fewer MCP servers, or raise [tasks] max_mcp_servers_per_task (HECATE_TASK_MAX_MCP_SERVERS_PER_TASK).",
            ));
        }
        crate::engine::mcp::entry::parse_all(&spec.mcp_servers)?;
        if !spec.working_directory.is_empty() {
            let dir = canonical_dir(&spec.working_directory, "working_directory")?;
            spec.working_directory = dir.display().to_string();
        }
        if !spec.sandbox_allowed_root.is_empty() {
            let root = canonical_dir(&spec.sandbox_allowed_root, "sandbox_allowed_root")?;
            if !spec.working_directory.is_empty()
                && !std::path::Path::new(&spec.working_directory).starts_with(&root)
            {
                return Err(HecateError::invalid(format!(
                    "working_directory {} is outside sandbox_allowed_root {}",
                    spec.working_directory,
                    root.display()
                ))
                .with_detail("field", "working_directory"));
            }
            spec.sandbox_allowed_root = root.display().to_string();
        }
        let runs_commands = matches!(kind, ExecutionKind::Shell | ExecutionKind::Git);
        if runs_commands && confinement_of(&spec).is_needed() && bwrap_path().is_none() {
            return Err(HecateError::invalid(
                "this task's commands run confined (the workspace and a private /tmp writable, .git read-only, no network) but bubblewrap is not installed here; never running them unconfined",
            )
            .with_detail("field", "sandbox_read_only")
            .with_operator_action(
                "Install bubblewrap (apt-get install bubblewrap), or loosen the task explicitly with sandbox_read_only=false, sandbox_git_writable=true and sandbox_network=true.",
            ));
        }
        let now = now_rfc3339();
        let task = Task {
            id: TaskId::generate(),
            namespace: namespace.to_string(),
            spec,
            latest_run_id: None,
            latest_run_status: None,
            created_at: now.clone(),
            updated_at: now,
        };
        self.store().create_task(&task).await?;
        Ok(task)
    }

    /// One task of the namespace.
    pub async fn get_task(&self, namespace: &str, id: &TaskId) -> Result<Task> {
        self.store().get_task(namespace, id).await
    }

    /// The tasks `filter` selects in its namespace, newest first; a cursor
    /// (`before`) that names no task of the namespace is `not_found`.
    pub async fn list_tasks(&self, filter: TaskListFilter) -> Result<Vec<Task>> {
        if let Some(before) = &filter.before {
            self.store()
                .get_task(&filter.namespace, before)
                .await
                .map_err(|e| e.with_detail("field", "before"))?;
        }
        self.store().list_tasks(filter).await
    }

    /// Deletes a task without an active run, and the workspaces Hecate made for
    /// it (ephemeral and per-task directories under the data directory; a
    /// `working_directory` of the user's is never touched).
    pub async fn delete_task(&self, namespace: &str, id: &TaskId) -> Result<()> {
        let task = self.store().get_task(namespace, id).await?;
        let runs = self.store().list_task_runs(id).await?;
        self.store().delete_task(namespace, id).await?;
        let own = std::fs::canonicalize(&self.inner.config.data_dir)
            .unwrap_or_else(|_| self.inner.config.data_dir.clone());
        let roots = [own.join("runs"), own.join("tasks")];
        let users = std::path::Path::new(&task.spec.working_directory);
        let made: Vec<_> = runs
            .iter()
            .filter_map(|r| r.workspace.as_deref())
            .map(std::path::PathBuf::from)
            .chain([own.join("tasks").join(id.as_str())])
            .filter(|w| roots.iter().any(|r| w.starts_with(r) && w != r))
            .filter(|w| task.spec.working_directory.is_empty() || !users.starts_with(w))
            .collect();
        for dir in made {
            if let Err(e) = std::fs::remove_dir_all(&dir)
                && e.kind() != std::io::ErrorKind::NotFound
            {
                tracing::warn!(dir = %dir.display(), error = %e, "could not remove a task workspace");
            }
        }
        Ok(())
    }

    /// Starts a new run of a task: queued, or waiting for its approval gate.
    pub async fn start(&self, namespace: &str, id: &TaskId, opts: StartOptions) -> Result<TaskRun> {
        let task = self.store().get_task(namespace, id).await?;
        let kind = task.spec.validate()?;
        if kind == ExecutionKind::AgentLoop {
            self.agent_models(&task.spec).await?;
        }
        let source = match &opts.from {
            Some(run_id) => Some(self.store().get_task_run(id, run_id).await?),
            None => None,
        };
        let run_id = TaskRunId::generate();
        let gate = self.inner.config.approval_policy.gate_for(kind, &task.spec);
        let status = if gate.is_some() {
            TaskRunStatus::AwaitingApproval
        } else {
            TaskRunStatus::Queued
        };
        let (workspace, prior_cost) = match (&source, opts.resume) {
            (Some(s), true) => (
                s.workspace.clone(),
                s.prior_cost_micros_usd + s.total_cost_micros_usd,
            ),
            _ => (None, 0),
        };
        let run = TaskRun {
            id: run_id.clone(),
            task_id: id.clone(),
            number: 0,
            status,
            error_type: None,
            error_message: None,
            resumed_from_run_id: source.as_ref().map(|s| s.id.clone()),
            workspace,
            total_cost_micros_usd: 0,
            prior_cost_micros_usd: prior_cost,
            model: None,
            provider: None,
            cancel_requested: false,
            created_at: now_rfc3339(),
            started_at: None,
            finished_at: None,
        };
        let mut events = vec![NewTaskEvent::new(
            "run.created",
            json!({"status": status.as_str(), "execution_kind": kind.as_str(),
                   "started_by": opts.started_by}),
        )];
        if let Some(s) = &source {
            let last_event = self
                .store()
                .list_task_events(TaskEventFilter {
                    namespace: namespace.to_string(),
                    run_id: Some(s.id.clone()),
                    limit: usize::MAX,
                    ..Default::default()
                })
                .await?
                .last()
                .map(|e| e.sequence);
            let steps = self.store().list_task_steps(&s.id).await?;
            let last_step = steps
                .iter()
                .rev()
                .find(|st| st.status.as_str() == "completed")
                .map(|st| st.index);
            events.push(NewTaskEvent::new(
                "run.resumed_from_event",
                json!({"source_run_id": s.id, "mode": opts.mode(),
                       "reason": opts.reason, "last_completed_step": last_step,
                       "last_event_sequence": last_event, "prompt": opts.prompt,
                       "turn": opts.from_turn}),
            ));
        }
        let approval = gate.map(|kind| {
            let what = approval_text(kind.as_str(), &task.spec);
            TaskApproval {
                id: TaskApprovalId::generate(),
                task_id: id.clone(),
                run_id: run_id.clone(),
                kind,
                status: TaskApprovalStatus::Pending,
                reason: what,
                note: None,
                created_at: now_rfc3339(),
                resolved_at: None,
            }
        });
        match &approval {
            Some(a) => events.push(NewTaskEvent::new(
                "approval.requested",
                json!({"approval_id": a.id, "kind": a.kind.as_str(), "reason": a.reason}),
            )),
            None => events.push(NewTaskEvent::new("run.queued", json!({"status": "queued"}))),
        }
        let (run, stored) = self
            .store()
            .create_task_run(NewTaskRun {
                run,
                priority: task.spec.priority,
                approval,
                events,
            })
            .await?;
        self.publish(stored);
        self.inner.wake.notify_waiters();
        Ok(run)
    }

    /// A new run from a failed or cancelled one, in a fresh workspace.
    pub async fn retry(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
        reason: Option<String>,
    ) -> Result<TaskRun> {
        self.run_again(namespace, id, run_id, reason, false).await
    }

    /// A new run that continues a finished one in its workspace.
    pub async fn resume(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
        reason: Option<String>,
    ) -> Result<TaskRun> {
        self.run_again(namespace, id, run_id, reason, true).await
    }

    /// A new run from `run_id`: a retry in a fresh workspace (the source failed
    /// or was cancelled) or, with `resume`, a continuation in its workspace (the
    /// source ended any way); any other source status is a conflict.
    async fn run_again(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
        reason: Option<String>,
        resume: bool,
    ) -> Result<TaskRun> {
        let source = self.get_run(namespace, id, run_id).await?;
        let (allowed, which, done) = if resume {
            (
                source.status.is_terminal(),
                "a completed, failed or cancelled",
                "resumed",
            )
        } else {
            (
                matches!(
                    source.status,
                    TaskRunStatus::Failed | TaskRunStatus::Cancelled
                ),
                "a failed or cancelled",
                "retried",
            )
        };
        if !allowed {
            return Err(HecateError::new(
                ErrorType::Conflict,
                format!(
                    "only {which} run can be {done}; run {run_id} is {}",
                    source.status.as_str()
                ),
            ));
        }
        let opts = StartOptions {
            from: Some(run_id.clone()),
            resume,
            reason,
            ..StartOptions::default()
        };
        self.start(namespace, id, opts).await
    }

    /// Cancels a run: at once when queued or waiting, through its worker when
    /// running (here or in another process).
    pub async fn cancel(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
    ) -> Result<TaskRun> {
        self.store().get_task(namespace, id).await?;
        let (run, events) = self.store().cancel_task_run(id, run_id).await?;
        if let Some(token) = self.running().get(run_id) {
            token.cancel();
        }
        self.publish(events);
        Ok(run)
    }

    /// One run of a task of the namespace.
    pub async fn get_run(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
    ) -> Result<TaskRun> {
        self.store().get_task(namespace, id).await?;
        self.store().get_task_run(id, run_id).await
    }

    /// The runs of a task, oldest first.
    pub async fn list_runs(&self, namespace: &str, id: &TaskId) -> Result<Vec<TaskRun>> {
        self.store().get_task(namespace, id).await?;
        self.store().list_task_runs(id).await
    }

    /// The steps of a run.
    pub async fn list_steps(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
    ) -> Result<Vec<TaskStep>> {
        self.get_run(namespace, id, run_id).await?;
        self.store().list_task_steps(run_id).await
    }

    /// One step of a run.
    pub async fn get_step(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
        step_id: &TaskStepId,
    ) -> Result<TaskStep> {
        self.get_run(namespace, id, run_id).await?;
        self.store().get_task_step(run_id, step_id).await
    }

    /// Artifacts of a run, or of the whole task.
    pub async fn list_artifacts(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: Option<&TaskRunId>,
    ) -> Result<Vec<TaskArtifact>> {
        match run_id {
            Some(r) => {
                self.get_run(namespace, id, r).await?;
            }
            None => {
                self.store().get_task(namespace, id).await?;
            }
        }
        self.store().list_task_artifacts(id, run_id).await
    }

    /// One artifact, checked to belong to the run when one is named.
    pub async fn get_artifact(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: Option<&TaskRunId>,
        artifact_id: &TaskArtifactId,
    ) -> Result<TaskArtifact> {
        self.store().get_task(namespace, id).await?;
        let a = self.store().get_task_artifact(id, artifact_id).await?;
        if run_id.is_some_and(|r| r != &a.run_id) {
            return Err(HecateError::not_found("artifact", artifact_id.as_str()));
        }
        Ok(a)
    }

    /// The approvals of a task.
    pub async fn list_approvals(&self, namespace: &str, id: &TaskId) -> Result<Vec<TaskApproval>> {
        self.store().get_task(namespace, id).await?;
        self.store().list_task_approvals(id).await
    }

    /// One approval of a task.
    pub async fn get_approval(
        &self,
        namespace: &str,
        id: &TaskId,
        approval_id: &TaskApprovalId,
    ) -> Result<TaskApproval> {
        self.store().get_task(namespace, id).await?;
        self.store().get_task_approval(id, approval_id).await
    }

    /// Task approvals of the whole namespace (pending only unless `all`), for the
    /// approval surfaces that list every kind of approval.
    pub async fn namespace_approvals(
        &self,
        namespace: &str,
        all: bool,
    ) -> Result<Vec<TaskApproval>> {
        self.store()
            .list_namespace_task_approvals(namespace, !all)
            .await
    }

    /// Resolves a task approval known only by its id (the task is looked up).
    pub async fn resolve_approval_by_id(
        &self,
        namespace: &str,
        approval_id: &TaskApprovalId,
        approve: bool,
        note: Option<String>,
    ) -> Result<TaskApproval> {
        let found = self
            .store()
            .list_namespace_task_approvals(namespace, false)
            .await?
            .into_iter()
            .find(|a| &a.id == approval_id)
            .ok_or_else(|| HecateError::not_found("approval", approval_id.as_str()))?;
        self.resolve_approval(namespace, &found.task_id, approval_id, approve, note)
            .await
    }

    /// Approves (the run is queued) or rejects (the run fails) a pending gate.
    pub async fn resolve_approval(
        &self,
        namespace: &str,
        id: &TaskId,
        approval_id: &TaskApprovalId,
        approve: bool,
        note: Option<String>,
    ) -> Result<TaskApproval> {
        self.resolve_approval_as(namespace, id, approval_id, approve, note, None)
            .await
    }

    /// [`Self::resolve_approval`], recording who decided (`admin`, `key:NAME`,
    /// `cli`) on the `approval.resolved` event.
    pub async fn resolve_approval_as(
        &self,
        namespace: &str,
        id: &TaskId,
        approval_id: &TaskApprovalId,
        approve: bool,
        note: Option<String>,
        by: Option<String>,
    ) -> Result<TaskApproval> {
        self.store().get_task(namespace, id).await?;
        let decision = if approve {
            TaskApprovalStatus::Approved
        } else {
            TaskApprovalStatus::Rejected
        };
        let (a, events) = self
            .store()
            .resolve_task_approval(TaskApprovalDecision {
                task_id: id.clone(),
                id: approval_id.clone(),
                decision,
                note,
                by,
            })
            .await?;
        self.publish(events);
        self.inner.wake.notify_waiters();
        Ok(a)
    }

    /// Answers a gate for someone who asked on its behalf (an editor, an MCP
    /// client): a gate already resolved elsewhere is not an error, the first
    /// answer simply won.
    pub async fn answer_approval(
        &self,
        namespace: &str,
        approval: &TaskApproval,
        approve: bool,
        note: Option<String>,
    ) -> Result<()> {
        match self
            .resolve_approval(namespace, &approval.task_id, &approval.id, approve, note)
            .await
        {
            Ok(_) => Ok(()),
            Err(e) if e.error_type == ErrorType::Conflict => {
                tracing::debug!(error = %e, "the task approval was resolved elsewhere first");
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    /// Events matching `filter` (its namespace is always applied).
    pub async fn list_events(&self, filter: TaskEventFilter) -> Result<Vec<TaskEvent>> {
        self.store().list_task_events(filter).await
    }
}
