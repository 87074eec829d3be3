//! The task tools: create, list and read tasks, start a run (and follow it with
//! progress), read a run's state and events, resolve its approval gate, cancel
//! it. Each calls the engine's task runtime; the create fields and their checks
//! are the HTTP API's (`CreateTaskRequest::into_spec`). Failures are tool
//! results with `isError: true`.

use super::args::DecisionArg;
use super::errors::tool_error;
use super::server::HecateMcp;
use super::task_args::*;
use crate::bridges::http::wire::tasks::{
    CreateTaskRequest, TaskApprovalDto, TaskDto, TaskEventDto, TaskRunDto,
};
use crate::domain::error::HecateError;
use crate::domain::ids::{TaskApprovalId, TaskId, TaskRunId};
use crate::domain::task::TaskEventFilter;
use crate::engine::tasks::StartOptions;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{Json, RoleServer, tool, tool_router};

fn fail(e: HecateError) -> CallToolResult {
    tool_error(&e)
}

/// Default page of `list_task_events`.
const EVENTS_PAGE: u32 = 500;

/// Largest page of `list_task_events`.
const EVENTS_MAX: u32 = 5_000;

#[tool_router(router = task_tools, vis = "pub(crate)")]
impl HecateMcp {
    #[tool(
        description = "Create a durable task (the fields of POST /hecate/v1/tasks): execution_kind `shell` (shell_command), `git` (git_command) or `file` (file_path, file_content, file_operation), with working_directory, workspace_mode (ephemeral, persistent, in_place), sandbox settings, timeout_ms and priority. Start it with start_task.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn create_task(
        &self,
        Parameters(a): Parameters<CreateTaskRequest>,
    ) -> Result<Json<TaskOut>, CallToolResult> {
        let spec = a.into_spec().map_err(fail)?;
        let task = self
            .engine
            .tasks()
            .create_task(self.ns(), spec)
            .await
            .map_err(fail)?;
        Ok(Json(TaskOut {
            task: TaskDto::from(&task),
        }))
    }

    #[tool(
        description = "List durable tasks (shared with the CLI and HTTP API), newest first.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_tasks(
        &self,
        Parameters(a): Parameters<ListTasksArgs>,
    ) -> Result<Json<TasksOut>, CallToolResult> {
        let limit = a.limit.unwrap_or(50).clamp(1, 500) as usize;
        let list = self
            .engine
            .tasks()
            .list_tasks(self.ns(), limit)
            .await
            .map_err(fail)?;
        Ok(Json(TasksOut {
            tasks: list.iter().map(TaskDto::from).collect(),
        }))
    }

    #[tool(
        description = "Read a task with its runs and the state of its newest run (steps, artifact summaries with an output preview, approvals).",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_task(
        &self,
        Parameters(a): Parameters<TaskArgs>,
    ) -> Result<Json<TaskStateOut>, CallToolResult> {
        let id = TaskId::from(a.task_id.as_str());
        let tasks = self.engine.tasks();
        let task = tasks.get_task(self.ns(), &id).await.map_err(fail)?;
        let runs = tasks.list_runs(self.ns(), &id).await.map_err(fail)?;
        let latest_run = match runs.last() {
            Some(r) => Some(self.run_state(&id, &r.id).await.map_err(fail)?),
            None => None,
        };
        Ok(Json(TaskStateOut {
            task: TaskDto::from(&task),
            runs: runs.iter().map(TaskRunDto::from).collect(),
            latest_run,
        }))
    }

    #[tool(
        description = "Start a new run of a task. Without `wait` it returns at once (queued, or awaiting_approval when an approval gate applies); a worker of `hecate serve` on the same store runs it. With `wait: true` it returns when the run has ended (or needs an approval: see resolve_task_approval), running it in this process when no worker runs here. With a progressToken, the run's events are progress notifications while it is followed; cancelling the request cancels the run.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn start_task(
        &self,
        Parameters(a): Parameters<StartTaskArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<RunStateOut>, CallToolResult> {
        let id = TaskId::from(a.task_id.as_str());
        let run = self
            .engine
            .tasks()
            .start(self.ns(), &id, StartOptions::default())
            .await
            .map_err(fail)?;
        self.follow_run(&id, &run.id, a.wait.unwrap_or(false), &ctx)
            .await
            .map_err(fail)?;
        self.run_state(&id, &run.id).await.map(Json).map_err(fail)
    }

    #[tool(
        description = "Read one run of a task: status, error, cost, its steps, artifact summaries (with an output preview) and approvals.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn get_task_run(
        &self,
        Parameters(a): Parameters<TaskRunArgs>,
    ) -> Result<Json<RunStateOut>, CallToolResult> {
        let id = TaskId::from(a.task_id.as_str());
        let run = TaskRunId::from(a.run_id.as_str());
        self.run_state(&id, &run).await.map(Json).map_err(fail)
    }

    #[tool(
        description = "Read a task's run events (run.*, step.*, approval.*, tool.file.*, gap.*) in order, after a sequence cursor; pass `next_after_sequence` back to read on.",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_task_events(
        &self,
        Parameters(a): Parameters<ListTaskEventsArgs>,
    ) -> Result<Json<TaskEventsOut>, CallToolResult> {
        let id = TaskId::from(a.task_id.as_str());
        let tasks = self.engine.tasks();
        let run_id = a.run_id.as_deref().map(TaskRunId::from);
        match &run_id {
            Some(r) => tasks.get_run(self.ns(), &id, r).await.map(|_| ()),
            None => tasks.get_task(self.ns(), &id).await.map(|_| ()),
        }
        .map_err(fail)?;
        let after = a.after_sequence.unwrap_or(0).max(0);
        let events = tasks
            .list_events(TaskEventFilter {
                namespace: self.ns().to_string(),
                task_id: Some(id),
                run_id,
                after_sequence: after,
                limit: a.limit.unwrap_or(EVENTS_PAGE).clamp(1, EVENTS_MAX) as usize,
                ..Default::default()
            })
            .await
            .map_err(fail)?;
        Ok(Json(TaskEventsOut {
            next_after_sequence: events.last().map(|e| e.sequence).unwrap_or(after),
            events: events.iter().map(TaskEventDto::from).collect(),
        }))
    }

    #[tool(
        description = "Approve (the run is queued) or reject (the run fails) a task run's pending approval gate, with an optional note. With `wait: true` after approving, returns when the run has ended, as start_task does.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn resolve_task_approval(
        &self,
        Parameters(a): Parameters<ResolveTaskApprovalArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<TaskApprovalOut>, CallToolResult> {
        let id = TaskId::from(a.task_id.as_str());
        let approve = matches!(a.decision, DecisionArg::Approve);
        let approval = self
            .engine
            .tasks()
            .resolve_approval(
                self.ns(),
                &id,
                &TaskApprovalId::from(a.approval_id.as_str()),
                approve,
                a.note,
            )
            .await
            .map_err(fail)?;
        let wait = approve && a.wait.unwrap_or(false);
        self.follow_run(&id, &approval.run_id, wait, &ctx)
            .await
            .map_err(fail)?;
        let run = self.run_state(&id, &approval.run_id).await.map_err(fail)?;
        Ok(Json(TaskApprovalOut {
            approval: TaskApprovalDto::from(&approval),
            run,
        }))
    }

    #[tool(
        description = "Cancel a task run: at once when queued or awaiting approval, through its worker when running (here or in another process).",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn cancel_task_run(
        &self,
        Parameters(a): Parameters<TaskRunArgs>,
    ) -> Result<Json<RunStateOut>, CallToolResult> {
        let id = TaskId::from(a.task_id.as_str());
        let run = TaskRunId::from(a.run_id.as_str());
        self.engine
            .tasks()
            .cancel(self.ns(), &id, &run)
            .await
            .map_err(fail)?;
        self.run_state(&id, &run).await.map(Json).map_err(fail)
    }
}
