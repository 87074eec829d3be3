//! The patch tools of the durable task runtime: a task's file changes with
//! their before and after content, and applying or reverting one. A patch is
//! written only while the file still holds what the patch expects; otherwise
//! the tool error is `conflict` and the file is left alone. The shapes are the
//! HTTP API's patch objects.

use super::args::*;
use crate::bridges::mcp::errors::fail;
use crate::bridges::mcp::server::HecateMcp;
use crate::bridges::resources::tasks::TaskPatchDto;
use crate::domain::error::Result;
use crate::domain::ids::{TaskArtifactId, TaskId, TaskRunId};
use crate::domain::task::TaskArtifact;
use crate::engine::tasks::{PatchRef, patch_content};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{Json, tool, tool_router};

/// The patch view of a patch artifact.
fn dto(a: &TaskArtifact) -> Result<TaskPatchDto> {
    Ok(TaskPatchDto::new(a, patch_content(a)?))
}

/// The ids a patch tool names.
fn ids(a: TaskPatchArgs) -> (TaskId, TaskRunId, TaskArtifactId) {
    (
        TaskId::from(a.task_id.as_str()),
        TaskRunId::from(a.run_id.as_str()),
        TaskArtifactId::from(a.patch_id.as_str()),
    )
}

/// Applies (`apply`) or reverts the patch `a` names and answers it as it then is.
async fn move_patch(
    mcp: &HecateMcp,
    a: TaskPatchArgs,
    apply: bool,
) -> Result<Json<TaskPatchOut>, CallToolResult> {
    let (id, run, patch) = ids(a);
    let at = PatchRef {
        namespace: mcp.ns(),
        task_id: &id,
        run_id: &run,
        patch_id: &patch,
    };
    let tasks = mcp.engine.tasks();
    let moved = if apply {
        tasks.apply_patch(at).await
    } else {
        tasks.revert_patch(at).await
    };
    let patch = dto(&moved.map_err(fail)?).map_err(fail)?;
    Ok(Json(TaskPatchOut { patch }))
}

#[tool_router(router = task_patch_tools, vis = "pub(crate)")]
impl HecateMcp {
    #[tool(
        description = "List a task's patches (the files its runs wrote), of one run or of all, each with its path, status (applied, proposed, reverted) and before/after content (null: the file did not exist, or was removed).",
        annotations(read_only_hint = true, idempotent_hint = true, open_world_hint = false)
    )]
    async fn list_task_patches(
        &self,
        Parameters(a): Parameters<ListTaskPatchesArgs>,
    ) -> Result<Json<TaskPatchesOut>, CallToolResult> {
        let id = TaskId::from(a.task_id.as_str());
        let run = a.run_id.as_deref().map(TaskRunId::from);
        let list = self
            .engine
            .tasks()
            .list_patches(self.ns(), &id, run.as_ref())
            .await
            .map_err(fail)?;
        let patches = list.iter().map(dto).collect::<Result<_>>().map_err(fail)?;
        Ok(Json(TaskPatchesOut { patches }))
    }

    #[tool(
        description = "Apply a proposed or reverted patch again: writes its after-content when the file still holds its before-content, otherwise a `conflict` tool error and the file is left alone.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn apply_task_patch(
        &self,
        Parameters(a): Parameters<TaskPatchArgs>,
    ) -> Result<Json<TaskPatchOut>, CallToolResult> {
        move_patch(self, a, true).await
    }

    #[tool(
        description = "Revert an applied patch: restores its before-content (removing a file the patch created) when the file still holds its after-content, otherwise a `conflict` tool error and the file is left alone.",
        annotations(
            read_only_hint = false,
            destructive_hint = true,
            idempotent_hint = false,
            open_world_hint = false
        )
    )]
    async fn revert_task_patch(
        &self,
        Parameters(a): Parameters<TaskPatchArgs>,
    ) -> Result<Json<TaskPatchOut>, CallToolResult> {
        move_patch(self, a, false).await
    }
}
