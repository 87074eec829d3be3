//! The task tools: create, list, read and delete tasks, and start a run (and
//! follow it with progress, approvals put to the caller by elicitation). The
//! run tools are in `task_runs.rs`, the patch tools in `task_patches.rs`. Each
//! calls the engine's task runtime; the create fields and their checks are the
//! HTTP API's (`CreateTaskRequest::into_spec`). Failures are tool results with
//! `isError: true`.

mod args;
mod elicit;
mod follow;
mod patches;
mod runs;

use super::errors::fail;
use super::server::HecateMcp;
use crate::bridges::resources::tasks::{CreateTaskRequest, TaskDeletedDto, TaskDto, TaskRunDto};
use crate::domain::ids::TaskId;
use crate::domain::task::TaskListFilter;
use crate::engine::tasks::StartOptions;
use args::*;
use follow::Follow;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{Json, RoleServer, tool, tool_router};

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
            .list_tasks(TaskListFilter {
                namespace: self.ns().to_string(),
                limit,
                ..TaskListFilter::default()
            })
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
        description = "Delete a task without an active run, with its runs, events and the workspaces Hecate made for it (never the user's working_directory).",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn delete_task(
        &self,
        Parameters(a): Parameters<TaskArgs>,
    ) -> Result<Json<TaskDeletedDto>, CallToolResult> {
        let id = TaskId::from(a.task_id.as_str());
        self.engine
            .tasks()
            .delete_task(self.ns(), &id)
            .await
            .map_err(fail)?;
        Ok(Json(TaskDeletedDto {
            id: id.to_string(),
            deleted: true,
        }))
    }

    #[tool(
        description = "Start a new run of a task. Without `wait` it returns at once (queued, or awaiting_approval when an approval gate applies); a worker of `hecate serve` on the same store runs it. With `wait: true` it returns when the run has ended, running it in this process when no worker runs here; an approval gate is put to you by elicitation when your client supports it, otherwise the run is returned awaiting_approval with its pending_approval_ids for resolve_task_approval. With a progressToken, the run's events are progress notifications while it is followed; cancelling the request cancels the run.",
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
        self.follow_run(&id, &run.id, Follow::started(a.wait), &ctx)
            .await
            .map_err(fail)?;
        self.run_state(&id, &run.id).await.map(Json).map_err(fail)
    }
}
