//! The run tools of the durable task runtime: read a run's state and events,
//! follow it, retry or resume it as a new run, resolve its approval gate,
//! cancel it. Waiting calls follow the run as `start_task` does
//! (`task_follow.rs`). Failures are tool results with `isError: true`.

use super::args::*;
use super::follow::Follow;
use crate::bridges::mcp::errors::fail;
use crate::bridges::mcp::server::HecateMcp;
use crate::bridges::resources::agent::DecisionName;
use crate::bridges::resources::tasks::{TaskApprovalDto, TaskEventDto};
use crate::domain::ids::{TaskApprovalId, TaskId, TaskRunId};
use crate::domain::task::TaskEventFilter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{Json, RoleServer, tool, tool_router};

/// Default page of `list_task_events`.
const EVENTS_PAGE: u32 = 500;

/// Largest page of `list_task_events`.
const EVENTS_MAX: u32 = 5_000;

#[tool_router(router = task_run_tools, vis = "pub(crate)")]
impl HecateMcp {
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
        description = "Wait for a run to end, as start_task with `wait` does: with a progressToken its events are progress notifications (from the first), a pending approval gate is put to you by elicitation when your client supports it, and the call returns the run when it has ended or waits for an approval nobody answered (with pending_approval_ids). Cancelling the request stops following; the run goes on.",
        annotations(
            read_only_hint = false,
            destructive_hint = false,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn follow_task_run(
        &self,
        Parameters(a): Parameters<TaskRunArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<RunStateOut>, CallToolResult> {
        let id = TaskId::from(a.task_id.as_str());
        let run = TaskRunId::from(a.run_id.as_str());
        self.engine
            .tasks()
            .get_run(self.ns(), &id, &run)
            .await
            .map_err(fail)?;
        let how = Follow {
            wait: true,
            cancel_with_request: false,
        };
        self.follow_run(&id, &run, how, &ctx).await.map_err(fail)?;
        self.run_state(&id, &run).await.map(Json).map_err(fail)
    }

    #[tool(
        description = "Retry a failed or cancelled run: a new run of the task in a fresh workspace, with an optional `reason`. `wait` as in start_task.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn retry_task_run(
        &self,
        Parameters(a): Parameters<RunAgainArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<RunStateOut>, CallToolResult> {
        self.run_again(a, false, &ctx).await
    }

    #[tool(
        description = "Resume a completed, failed or cancelled run: a new run of the task in the same workspace, carrying its cost, with an optional `reason`. `wait` as in start_task.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = true
        )
    )]
    async fn resume_task_run(
        &self,
        Parameters(a): Parameters<RunAgainArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<Json<RunStateOut>, CallToolResult> {
        self.run_again(a, true, &ctx).await
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
        let approve = matches!(a.decision, DecisionName::Approve);
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
        let how = Follow::started(Some(approve && a.wait.unwrap_or(false)));
        self.follow_run(&id, &approval.run_id, how, &ctx)
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

impl HecateMcp {
    /// Retries (`resume` false) or resumes a run, follows the new one as `wait`
    /// asks, and answers its state.
    async fn run_again(
        &self,
        a: RunAgainArgs,
        resume: bool,
        ctx: &RequestContext<RoleServer>,
    ) -> Result<Json<RunStateOut>, CallToolResult> {
        let id = TaskId::from(a.task_id.as_str());
        let source = TaskRunId::from(a.run_id.as_str());
        let tasks = self.engine.tasks();
        let run = if resume {
            tasks.resume(self.ns(), &id, &source, a.reason).await
        } else {
            tasks.retry(self.ns(), &id, &source, a.reason).await
        }
        .map_err(fail)?;
        self.follow_run(&id, &run.id, Follow::started(a.wait), ctx)
            .await
            .map_err(fail)?;
        self.run_state(&id, &run.id).await.map(Json).map_err(fail)
    }
}
