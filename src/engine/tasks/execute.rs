//! Executing one claimed run: its workspace, its one step (a command or a file
//! operation) with captured output and patches, and its end, while the lease is
//! renewed and a cancel (asked here or in another process) stops it.

use super::TaskRuntime;
use super::control::confinement_of;
use crate::adapters::process::env::{current_env, sanitized_env};
use crate::adapters::sandbox::{
    self, CommandOutcome, CommandRun, OUTPUT_CAP_BYTES, SandboxError, SandboxFileChange,
    WorkspaceRequest,
};
use crate::domain::ids::{TaskArtifactId, TaskStepId};
use crate::domain::task::{
    ExecutionKind, Task, TaskArtifact, TaskRun, TaskRunStatus, TaskStep, TaskStepStatus,
};
use crate::domain::time::now_rfc3339;
use crate::store::tasks::{ClaimedRun, FinishedStep, NewTaskEvent, TaskRunEnd};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How a step (or an agent loop) ended, before it is stored.
pub(in crate::engine) struct StepEnd {
    pub(in crate::engine) status: TaskStepStatus,
    pub(in crate::engine) exit_code: Option<i32>,
    pub(in crate::engine) error: Option<(String, String)>,
    pub(in crate::engine) artifacts: Vec<TaskArtifact>,
    pub(in crate::engine) events: Vec<NewTaskEvent>,
}

/// How executing a run ended: to be finished, or parked waiting for an approval
/// (already stored).
pub(in crate::engine) enum RunEnd {
    /// The run ends as this says.
    Finish(StepEnd),
    /// The run waits in `awaiting_approval`.
    Parked,
}

impl StepEnd {
    /// A failure with a stable type.
    pub(in crate::engine) fn failed(error_type: &str, message: String) -> Self {
        Self {
            status: TaskStepStatus::Failed,
            exit_code: None,
            error: Some((error_type.to_string(), message)),
            artifacts: Vec::new(),
            events: Vec::new(),
        }
    }
}

/// An empty artifact of `kind` named `name`, of a step of the run.
pub(in crate::engine) fn artifact(
    task: &Task,
    run: &TaskRun,
    step: &TaskStepId,
    kind: &str,
    name: &str,
) -> TaskArtifact {
    TaskArtifact {
        id: TaskArtifactId::generate(),
        task_id: task.id.clone(),
        run_id: run.id.clone(),
        step_id: Some(step.clone()),
        kind: kind.to_string(),
        name: name.to_string(),
        content: String::new(),
        size_bytes: 0,
        truncated: false,
        status: None,
        created_at: now_rfc3339(),
    }
}

/// The stdout and stderr artifacts of a command (the non-empty ones).
pub(in crate::engine) fn output_artifacts(
    task: &Task,
    run: &TaskRun,
    step: &TaskStepId,
    out: &CommandOutcome,
) -> Vec<TaskArtifact> {
    [
        ("stdout", &out.stdout, out.stdout_bytes),
        ("stderr", &out.stderr, out.stderr_bytes),
    ]
    .into_iter()
    .filter(|(_, _, total)| *total > 0)
    .map(|(name, bytes, total)| TaskArtifact {
        content: String::from_utf8_lossy(bytes).into_owned(),
        size_bytes: total as i64,
        truncated: total as usize > OUTPUT_CAP_BYTES,
        ..artifact(task, run, step, name, name)
    })
    .collect()
}

fn command_end(
    task: &Task,
    run: &TaskRun,
    step: &TaskStepId,
    timeout: Duration,
    ran: Result<CommandOutcome, SandboxError>,
) -> StepEnd {
    let out = match ran {
        Ok(out) => out,
        Err(e) => return StepEnd::failed("sandbox_error", e.to_string()),
    };
    let artifacts = output_artifacts(task, run, step, &out);
    let exit_code = out.exit.and_then(|e| e.code);
    let (status, error) = if out.cancelled {
        (TaskStepStatus::Cancelled, None)
    } else if out.timed_out {
        (
            TaskStepStatus::Failed,
            Some((
                "step_timeout".to_string(),
                format!(
                    "the step ran longer than {} ms and was killed with its process group",
                    timeout.as_millis()
                ),
            )),
        )
    } else if out.exit.is_some_and(|e| e.success()) {
        (TaskStepStatus::Completed, None)
    } else {
        let how = out
            .exit
            .map(|e| e.to_string())
            .unwrap_or_else(|| "an unknown exit".into());
        (
            TaskStepStatus::Failed,
            Some((
                "step_failed".to_string(),
                format!("the command ended with {how}"),
            )),
        )
    };
    StepEnd {
        status,
        exit_code,
        error,
        artifacts,
        events: Vec::new(),
    }
}

/// The patch artifact of a file change (`applied`, or `proposed` when it was
/// not written) and the event that tells it.
pub(in crate::engine) fn patch_artifact(
    task: &Task,
    run: &TaskRun,
    step: &TaskStepId,
    change: &SandboxFileChange,
    proposed: bool,
) -> (TaskArtifact, NewTaskEvent) {
    let content = json!({"path": change.path, "before": change.before, "after": change.after});
    let mut patch = artifact(task, run, step, "patch", &change.path);
    patch.content = content.to_string();
    patch.size_bytes = patch.content.len() as i64;
    patch.status = Some(if proposed { "proposed" } else { "applied" }.into());
    let event = NewTaskEvent::new(
        if proposed {
            "tool.file.proposed"
        } else {
            "tool.file.applied"
        },
        json!({"artifact_id": patch.id, "path": change.path,
               "created": change.before.is_none(), "deleted": change.after.is_none()}),
    );
    (patch, event)
}

fn patch_end(task: &Task, run: &TaskRun, step: &TaskStepId, change: SandboxFileChange) -> StepEnd {
    let (patch, event) = patch_artifact(task, run, step, &change, false);
    StepEnd {
        status: TaskStepStatus::Completed,
        exit_code: None,
        error: None,
        artifacts: vec![patch],
        events: vec![event],
    }
}

impl TaskRuntime {
    /// Runs a claimed run to its end (or until shutdown or a lost lease, when it
    /// is left for another claim).
    pub(in crate::engine) async fn execute(
        &self,
        claimed: ClaimedRun,
        shutdown: &CancellationToken,
    ) {
        let ClaimedRun { task, run, .. } = claimed;
        let cancel = CancellationToken::new();
        self.running().insert(run.id.clone(), cancel.clone());
        let lost = Arc::new(AtomicBool::new(false));
        let renew = self.spawn_renewal(&run, cancel.clone(), lost.clone());
        let stop = cancel.clone();
        let watch_shutdown = {
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                shutdown.cancelled().await;
                stop.cancel();
            })
        };
        let end = match self.prepare_workspace(&task, &run).await {
            Err(end) => RunEnd::Finish(end),
            Ok(ws) if task.spec.execution_kind == Some(ExecutionKind::AgentLoop) => {
                self.run_agent(&task, &run, ws, &cancel).await
            }
            Ok(ws) => RunEnd::Finish(self.run_step(&task, &run, ws, &cancel).await),
        };
        renew.abort();
        let _ = renew.await;
        watch_shutdown.abort();
        self.running().remove(&run.id);
        if shutdown.is_cancelled() || lost.load(Ordering::SeqCst) {
            tracing::info!(run_id = %run.id, "task run left for another worker to claim");
            return;
        }
        let RunEnd::Finish(end) = end else {
            return;
        };
        let (status, error, event_type) = match (end.status, &end.error) {
            (TaskStepStatus::Completed, _) => (TaskRunStatus::Completed, None, "run.finished"),
            (TaskStepStatus::Cancelled, _) => (TaskRunStatus::Cancelled, None, "run.cancelled"),
            (_, e) => (TaskRunStatus::Failed, e.clone(), "run.failed"),
        };
        let mut data = json!({"status": status.as_str()});
        if let Some((t, m)) = &error {
            data["error_type"] = Value::from(t.as_str());
            data["error_message"] = Value::from(m.as_str());
        }
        let mut events = end.events;
        events.push(NewTaskEvent::new(event_type, data));
        match self
            .store()
            .finish_task_run(TaskRunEnd {
                run_id: run.id.clone(),
                owner: self.inner.owner.clone(),
                status,
                error,
                events,
            })
            .await
        {
            Ok(events) => self.publish(events),
            Err(e) => tracing::warn!(run_id = %run.id, error = %e, "could not finish the task run"),
        }
    }

    /// Renews the lease while the run executes; a cancel asked through the
    /// store or a lost lease stops it.
    fn spawn_renewal(
        &self,
        run: &TaskRun,
        cancel: CancellationToken,
        lost: Arc<AtomicBool>,
    ) -> tokio::task::JoinHandle<()> {
        let runtime = self.clone();
        let run_id = run.id.clone();
        let every = self.renew_every();
        let lease_ms = self.inner.config.lease.as_millis() as i64;
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(every).await;
                match runtime
                    .store()
                    .renew_task_lease(&run_id, &runtime.inner.owner, lease_ms)
                    .await
                {
                    Ok(true) => cancel.cancel(),
                    Ok(false) => {}
                    Err(e) if e.error_type == crate::domain::ErrorType::Conflict => {
                        tracing::warn!(run_id = %run_id, "lost the lease on a task run; stopping it");
                        lost.store(true, Ordering::SeqCst);
                        cancel.cancel();
                        return;
                    }
                    Err(e) => tracing::warn!(run_id = %run_id, error = %e, "lease renewal failed"),
                }
            }
        })
    }

    /// Prepares the run's workspace and records it on the run.
    async fn prepare_workspace(&self, task: &Task, run: &TaskRun) -> Result<PathBuf, StepEnd> {
        let env = sanitized_env(&current_env(), &[], &[]);
        let spec = &task.spec;
        let data_dir = self.inner.config.data_dir.clone();
        let workspace = sandbox::prepare(WorkspaceRequest {
            mode: spec.workspace_mode,
            working_directory: &spec.working_directory,
            repo: &spec.repo,
            base_branch: &spec.base_branch,
            data_dir: &data_dir,
            task_id: task.id.as_str(),
            run_id: run.id.as_str(),
            reuse: run.workspace.as_deref(),
            env: &env,
        })
        .await;
        let workspace: PathBuf = match workspace {
            Ok(w) => w,
            Err(e) => return Err(StepEnd::failed("workspace_error", e.to_string())),
        };
        let ws_text = workspace.display().to_string();
        if let Err(e) = self.store().set_task_run_workspace(&run.id, &ws_text).await {
            return Err(StepEnd::failed("store_error", e.to_string()));
        }
        Ok(workspace)
    }

    /// Runs the one step of a deterministic task in `workspace`.
    async fn run_step(
        &self,
        task: &Task,
        run: &TaskRun,
        workspace: PathBuf,
        cancel: &CancellationToken,
    ) -> StepEnd {
        let env = sanitized_env(&current_env(), &[], &[]);
        let spec = &task.spec;
        let ws_text = workspace.display().to_string();
        let kind = spec.execution_kind.unwrap_or(ExecutionKind::Shell);
        let input = match kind {
            ExecutionKind::Shell => json!({"shell_command": spec.shell_command}),
            ExecutionKind::Git => json!({"git_command": spec.git_command}),
            _ => json!({"file_path": spec.file_path, "file_operation": spec.file_operation}),
        };
        // A reclaimed run keeps the steps of its dead worker; this one follows.
        let index = match self.store().list_task_steps(&run.id).await {
            Ok(steps) => steps.len() as i64 + 1,
            Err(e) => return StepEnd::failed("store_error", e.to_string()),
        };
        let step = TaskStep {
            id: TaskStepId::generate(),
            run_id: run.id.clone(),
            task_id: task.id.clone(),
            index,
            kind: kind.as_str().to_string(),
            status: TaskStepStatus::Running,
            input: json!({"workspace": ws_text, "resumed_from_run_id": run.resumed_from_run_id,
                          "request": input}),
            exit_code: None,
            error_type: None,
            error_message: None,
            started_at: now_rfc3339(),
            finished_at: None,
        };
        let started = NewTaskEvent::new(
            "step.started",
            json!({"step_id": step.id, "index": index, "kind": step.kind}),
        );
        match self.store().start_task_step(&step, vec![started]).await {
            Ok(events) => self.publish(events),
            Err(e) => return StepEnd::failed("store_error", e.to_string()),
        }
        let timeout = Duration::from_millis(spec.effective_timeout_ms());
        let mut end = match kind {
            ExecutionKind::Shell | ExecutionKind::Git => {
                let mut confinement = confinement_of(spec);
                let prepared = if kind == ExecutionKind::Shell {
                    Ok((
                        "/bin/sh".to_string(),
                        vec!["-c".to_string(), spec.shell_command.clone()],
                        env,
                    ))
                } else {
                    // Git writes its own data; what would make it run another
                    // program is refused before it starts.
                    confinement.git_writable = true;
                    let args = shell_words::split(&spec.git_command).unwrap_or_default();
                    sandbox::prepare_git(&workspace, &args, &env, spec.sandbox_git_writable)
                        .map(|g| ("git".to_string(), g.args, g.env))
                };
                match prepared {
                    Ok((program, args, env)) => {
                        let cmd = CommandRun {
                            program,
                            args,
                            workspace: workspace.clone(),
                            env,
                            confinement,
                            timeout,
                        };
                        let ran = sandbox::run(&cmd, cancel).await;
                        command_end(task, run, &step.id, timeout, ran)
                    }
                    Err(e) => StepEnd::failed("sandbox_error", e.to_string()),
                }
            }
            _ => {
                let root = if spec.sandbox_allowed_root.is_empty() {
                    workspace.clone()
                } else {
                    PathBuf::from(&spec.sandbox_allowed_root)
                };
                match sandbox::apply_file_operation(
                    &workspace,
                    Path::new(&root),
                    &spec.file_path,
                    spec.file_operation,
                    &spec.file_content,
                    spec.sandbox_git_writable,
                ) {
                    Ok(change) => patch_end(task, run, &step.id, change),
                    Err(e) => StepEnd::failed("sandbox_error", e.to_string()),
                }
            }
        };
        let event_type = match end.status {
            TaskStepStatus::Completed => "step.finished",
            TaskStepStatus::Cancelled => "step.cancelled",
            _ => "step.failed",
        };
        let mut data = json!({"step_id": step.id, "index": index, "status": end.status.as_str(),
                              "exit_code": end.exit_code});
        if let Some((t, m)) = &end.error {
            data["error_type"] = Value::from(t.as_str());
            data["error_message"] = Value::from(m.as_str());
        }
        end.events.push(NewTaskEvent::new(event_type, data));
        let finished = TaskStep {
            status: end.status,
            exit_code: end.exit_code,
            error_type: end.error.as_ref().map(|e| e.0.clone()),
            error_message: end.error.as_ref().map(|e| e.1.clone()),
            finished_at: Some(now_rfc3339()),
            ..step
        };
        match self
            .store()
            .finish_task_step(FinishedStep {
                step: finished,
                artifacts: std::mem::take(&mut end.artifacts),
                events: std::mem::take(&mut end.events),
            })
            .await
        {
            Ok(events) => self.publish(events),
            Err(e) => return StepEnd::failed("store_error", e.to_string()),
        }
        end
    }
}
