//! Arguments and structured outputs of the task tools. Tasks, runs, steps,
//! approvals and events use the task API's wire shapes (the same fields as
//! `/hecate/v1/tasks`); artifacts are summarized with a capped preview.

use crate::bridges::resources::agent::DecisionName;
use crate::bridges::resources::tasks::{
    TaskApprovalDto, TaskDto, TaskEventDto, TaskPatchDto, TaskRunDto, TaskStepDto,
};
use crate::domain::task::TaskArtifact;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Characters of an artifact's content shown in its summary.
pub const PREVIEW_CHARS: usize = 4096;

/// `list_tasks` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTasksArgs {
    /// At most this many tasks, newest first (default 50, at most 500).
    pub limit: Option<u32>,
}

/// Arguments naming one task.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskArgs {
    /// The task id (`task_...`).
    pub task_id: String,
}

/// `start_task` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StartTaskArgs {
    /// The task id (`task_...`).
    pub task_id: String,
    /// Wait for the run to end, running it in this process when no worker runs
    /// here; an approval gate is asked by elicitation when the client supports
    /// it, otherwise the call returns the run awaiting it. Progress is streamed
    /// when the request has a progressToken. Default false.
    pub wait: Option<bool>,
}

/// Arguments naming one run of a task.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskRunArgs {
    /// The task id (`task_...`).
    pub task_id: String,
    /// The run id (`trun_...`).
    pub run_id: String,
}

/// `retry_task_run` and `resume_task_run` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunAgainArgs {
    /// The task id (`task_...`).
    pub task_id: String,
    /// The run to retry or resume (`trun_...`).
    pub run_id: String,
    /// Why (recorded on the new run's `run.resumed_from_event`).
    pub reason: Option<String>,
    /// Wait for the new run as `start_task` with `wait` does. Default false.
    pub wait: Option<bool>,
}

/// `list_task_patches` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTaskPatchesArgs {
    /// The task id (`task_...`).
    pub task_id: String,
    /// Only this run's patches; without it, every run's.
    pub run_id: Option<String>,
}

/// Arguments naming one patch of a run.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TaskPatchArgs {
    /// The task id (`task_...`).
    pub task_id: String,
    /// The run id (`trun_...`).
    pub run_id: String,
    /// The patch artifact's id (`tart_...`).
    pub patch_id: String,
}

/// `list_task_events` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTaskEventsArgs {
    /// The task id (`task_...`).
    pub task_id: String,
    /// Only this run's events.
    pub run_id: Option<String>,
    /// Only events after this sequence (the cursor; pass `next_after_sequence`
    /// of the previous page). Default 0.
    pub after_sequence: Option<i64>,
    /// At most this many events (default 500, at most 5,000).
    pub limit: Option<u32>,
}

/// `resolve_task_approval` arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveTaskApprovalArgs {
    /// The task id (`task_...`).
    pub task_id: String,
    /// The approval id (`tappr_...`).
    pub approval_id: String,
    /// Approve (the run is queued) or reject (the run fails).
    pub decision: DecisionName,
    /// A note kept on the approval.
    pub note: Option<String>,
    /// After approving, wait for the run to end as `start_task` with `wait` does.
    pub wait: Option<bool>,
}

/// One task.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskOut {
    /// The task.
    pub task: TaskDto,
}

/// Tasks, newest first.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TasksOut {
    /// The tasks.
    pub tasks: Vec<TaskDto>,
}

/// An artifact without its full content.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ArtifactSummary {
    /// Id (`tart_...`).
    pub id: String,
    /// The step that produced it.
    pub step_id: Option<String>,
    /// `stdout`, `stderr` or `patch`.
    pub kind: String,
    /// The stream, or the patched path.
    pub name: String,
    /// Bytes the source produced.
    pub size_bytes: i64,
    /// Whether the stored content was cut at the capture cap.
    pub truncated: bool,
    /// For patches: `applied`, `proposed` or `reverted`.
    pub status: Option<String>,
    /// The first 4,096 characters of the content.
    pub preview: String,
    /// Whether `preview` is shorter than the stored content.
    pub preview_truncated: bool,
}

impl From<&TaskArtifact> for ArtifactSummary {
    fn from(a: &TaskArtifact) -> Self {
        let mut chars = a.content.chars();
        let preview: String = chars.by_ref().take(PREVIEW_CHARS).collect();
        Self {
            id: a.id.to_string(),
            step_id: a.step_id.as_ref().map(|s| s.to_string()),
            kind: a.kind.clone(),
            name: a.name.clone(),
            size_bytes: a.size_bytes,
            truncated: a.truncated,
            status: a.status.clone(),
            preview,
            preview_truncated: chars.next().is_some(),
        }
    }
}

/// A run with its steps, artifacts and approvals.
#[derive(Debug, Serialize, JsonSchema)]
pub struct RunStateOut {
    /// The run.
    pub run: TaskRunDto,
    /// Its steps in order.
    pub steps: Vec<TaskStepDto>,
    /// Its artifacts, summarized.
    pub artifacts: Vec<ArtifactSummary>,
    /// Its approval gates (a pending one is what `awaiting_approval` waits for).
    pub approvals: Vec<TaskApprovalDto>,
    /// The ids of its pending approvals.
    pub pending_approval_ids: Vec<String>,
    /// While the run waits for an approval: which one, and that
    /// `resolve_task_approval` resolves it.
    pub hint: Option<String>,
}

/// A task with its runs and the state of its newest run.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskStateOut {
    /// The task.
    pub task: TaskDto,
    /// Its runs, oldest first.
    pub runs: Vec<TaskRunDto>,
    /// The newest run with its steps, artifacts and approvals.
    pub latest_run: Option<RunStateOut>,
}

/// A page of run events.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskEventsOut {
    /// Events in sequence order.
    pub events: Vec<TaskEventDto>,
    /// The cursor for the next page: the last event's sequence (or the given
    /// `after_sequence` when the page is empty).
    pub next_after_sequence: i64,
}

/// A resolved approval and its run.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskApprovalOut {
    /// The approval as resolved.
    pub approval: TaskApprovalDto,
    /// Its run after the decision (after it ended, when waited for).
    pub run: RunStateOut,
}

/// Patches with their before and after content.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskPatchesOut {
    /// The patches, in the order the runs wrote them.
    pub patches: Vec<TaskPatchDto>,
}

/// One patch after it was applied or reverted.
#[derive(Debug, Serialize, JsonSchema)]
pub struct TaskPatchOut {
    /// The patch.
    pub patch: TaskPatchDto,
}
