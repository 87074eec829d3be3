//! Wire types of the task API (`/hecate/v1/tasks`): the create body with its
//! execution profiles, the task, run, step, artifact, approval and event
//! resources, and their `{"object", "data"}` responses. The create body and the
//! resources also derive JSON Schemas, so the MCP task tools take and answer the
//! same shapes.

use crate::domain::task::{
    Task, TaskActivityItem, TaskApproval, TaskArtifact, TaskEvent, TaskRun, TaskStep,
};
use crate::engine::tasks::RunView;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

mod create;
mod requests;

pub use create::CreateTaskRequest;
pub use requests::{
    AppendTaskEventsRequest, ClientEventRequest, ContinueRunRequest, ResolveTaskApprovalRequest,
    RetryFromTurnRequest, RunActionRequest, TaskEventsQuery, TaskListQuery,
};

/// The schema version of task event envelopes.
pub const EVENT_SCHEMA_VERSION: &str = "v1";

/// A task.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct TaskDto {
    /// Id (`task_…`).
    pub id: String,
    /// `shell`, `git`, `file` or `agent_loop`.
    pub execution_kind: String,
    /// What the task is for.
    pub prompt: String,
    /// Per-task system prompt: the last of the three layers.
    pub system_prompt: String,
    /// The execution profile's layer of the system prompt (empty: none).
    pub profile_prompt: String,
    /// Command of a `shell` task.
    pub shell_command: String,
    /// Arguments of a `git` task.
    pub git_command: String,
    /// File of a `file` task.
    pub file_path: String,
    /// Bytes of `file_content` (the content itself is not echoed).
    pub file_content_bytes: usize,
    /// `write`, `append` or `delete`.
    pub file_operation: String,
    /// Canonical working directory.
    pub working_directory: String,
    /// `ephemeral`, `persistent` or `in_place`.
    pub workspace_mode: String,
    /// Repository cloned into the workspace.
    pub repo: String,
    /// Branch cloned.
    pub base_branch: String,
    /// Directory every path stays under.
    pub sandbox_allowed_root: String,
    /// Everything outside the workspace read-only, with a private `/tmp`.
    pub sandbox_read_only: bool,
    /// The workspace's `.git` writable and git hooks on.
    pub sandbox_git_writable: bool,
    /// Network allowed.
    pub sandbox_network: bool,
    /// Pinned provider.
    pub requested_provider: String,
    /// Pinned model.
    pub requested_model: String,
    /// Cost ceiling in micro-USD.
    pub budget_micros_usd: i64,
    /// Most model turns of an `agent_loop` run.
    pub max_turns: u32,
    /// MCP servers for `agent_loop` runs.
    #[schema(value_type = Vec<Object>)]
    pub mcp_servers: Vec<Value>,
    /// Priority.
    pub priority: i64,
    /// Step time limit in milliseconds (the default when 0 was asked).
    pub timeout_ms: u64,
    /// Earlier chat messages an `agent_loop` conversation starts with, before
    /// the prompt (what a chat session's memory strategy loaded).
    pub context_messages: usize,
    /// For a task behind a Hecate Agent chat session: the session message
    /// sequence its conversation starts at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_sequence: Option<i64>,
    /// For a task behind a Hecate Agent chat session: that session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The newest run.
    pub latest_run_id: Option<String>,
    /// The newest run's status.
    pub latest_run_status: Option<String>,
    /// Created (RFC 3339).
    pub created_at: String,
    /// Last changed (RFC 3339).
    pub updated_at: String,
}

impl From<&Task> for TaskDto {
    fn from(t: &Task) -> Self {
        let s = &t.spec;
        Self {
            id: t.id.to_string(),
            execution_kind: s
                .execution_kind
                .map(|k| k.as_str().to_string())
                .unwrap_or_default(),
            prompt: s.prompt.clone(),
            system_prompt: s.system_prompt.clone(),
            profile_prompt: s.profile_prompt.clone(),
            shell_command: s.shell_command.clone(),
            git_command: s.git_command.clone(),
            file_path: s.file_path.clone(),
            file_content_bytes: s.file_content.len(),
            file_operation: format!("{:?}", s.file_operation).to_lowercase(),
            working_directory: s.working_directory.clone(),
            workspace_mode: s.workspace_mode.as_str().to_string(),
            repo: s.repo.clone(),
            base_branch: s.base_branch.clone(),
            sandbox_allowed_root: s.sandbox_allowed_root.clone(),
            sandbox_read_only: !s.sandbox_root_writable,
            sandbox_git_writable: s.sandbox_git_writable,
            sandbox_network: s.sandbox_network,
            requested_provider: s.requested_provider.clone(),
            requested_model: s.requested_model.clone(),
            budget_micros_usd: s.budget_micros_usd,
            max_turns: s.effective_max_turns(),
            mcp_servers: s.mcp_servers.clone(),
            priority: s.priority,
            timeout_ms: s.effective_timeout_ms(),
            context_messages: s.context.len(),
            session_sequence: s.session_sequence,
            session_id: s.session_id.clone(),
            latest_run_id: t.latest_run_id.as_ref().map(|r| r.to_string()),
            latest_run_status: t.latest_run_status.map(|s| s.as_str().to_string()),
            created_at: t.created_at.clone(),
            updated_at: t.updated_at.clone(),
        }
    }
}

/// A run (attempt) of a task: the domain run is the wire shape.
pub type TaskRunDto = TaskRun;

/// A step of a run: the domain step is the wire shape.
pub type TaskStepDto = TaskStep;

/// An artifact of a run: the domain artifact is the wire shape.
pub type TaskArtifactDto = TaskArtifact;

impl From<&TaskRun> for TaskRunDto {
    /// The wire form of a borrowed run: a copy of it.
    fn from(r: &TaskRun) -> Self {
        r.clone()
    }
}

impl From<&TaskStep> for TaskStepDto {
    /// The wire form of a borrowed step: a copy of it.
    fn from(s: &TaskStep) -> Self {
        s.clone()
    }
}

impl From<&TaskArtifact> for TaskArtifactDto {
    /// The wire form of a borrowed artifact: a copy of it.
    fn from(a: &TaskArtifact) -> Self {
        a.clone()
    }
}

/// An approval gate of a run.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct TaskApprovalDto {
    /// Id (`tappr_…`).
    pub id: String,
    /// Its task.
    pub task_id: String,
    /// Its run.
    pub run_id: String,
    /// `shell_command`, `git_exec`, `file_write` or `network_egress`.
    pub kind: String,
    /// `pending`, `approved`, `rejected` or `cancelled`.
    pub status: String,
    /// What the run wants to do.
    pub reason: String,
    /// The resolver's note.
    pub note: Option<String>,
    /// Created.
    pub created_at: String,
    /// Resolved.
    pub resolved_at: Option<String>,
}

impl From<&TaskApproval> for TaskApprovalDto {
    fn from(a: &TaskApproval) -> Self {
        Self {
            id: a.id.to_string(),
            task_id: a.task_id.to_string(),
            run_id: a.run_id.to_string(),
            kind: a.kind.as_str().to_string(),
            status: a.status.as_str().to_string(),
            reason: a.reason.clone(),
            note: a.note.clone(),
            created_at: a.created_at.clone(),
            resolved_at: a.resolved_at.clone(),
        }
    }
}

/// A run event in the v1 envelope (lists, SSE frames, the process-wide feed).
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct TaskEventDto {
    /// Always `v1`.
    pub schema_version: String,
    /// Stable id (`tevt_<sequence>`).
    pub event_id: String,
    /// Its task.
    pub task_id: String,
    /// Its run.
    pub run_id: String,
    /// Position in the process-wide feed; the `after_sequence` and
    /// `Last-Event-ID` cursor.
    pub sequence: i64,
    /// When it happened.
    pub occurred_at: String,
    /// `run.created`, `run.queued`, `run.started`, `step.started`, …
    #[serde(rename = "type")]
    pub event_type: String,
    /// Event data.
    #[schema(value_type = Object)]
    pub data: Value,
}

impl From<&TaskEvent> for TaskEventDto {
    fn from(e: &TaskEvent) -> Self {
        Self {
            schema_version: EVENT_SCHEMA_VERSION.to_string(),
            event_id: format!("tevt_{}", e.sequence),
            task_id: e.task_id.to_string(),
            run_id: e.run_id.to_string(),
            sequence: e.sequence,
            occurred_at: e.occurred_at.clone(),
            event_type: e.event_type.clone(),
            data: e.data.clone(),
        }
    }
}

/// What a run is now, as every frame of its stream carries it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaskRunStateDto {
    /// The run.
    pub run: TaskRunDto,
    /// Its steps, in order.
    pub steps: Vec<TaskStepDto>,
    /// Its artifacts; a text over 4 KiB is cut to a preview (the end of captured
    /// output, the start of anything else) and marked `truncated`: GET the
    /// artifact for all of it.
    pub artifacts: Vec<TaskArtifactDto>,
    /// The compact timeline (`thinking`, `tool_call`, `patch`, `approval`,
    /// `changed_files`, `final_answer`, `run_result`).
    pub activity: Vec<TaskActivityItem>,
    /// The approvals asked in this run; `pending` ones wait for a person.
    pub approvals: Vec<TaskApprovalDto>,
}

impl From<&RunView> for TaskRunStateDto {
    fn from(v: &RunView) -> Self {
        Self {
            run: v.run.clone(),
            steps: v.steps.clone(),
            artifacts: v.artifacts.clone(),
            activity: v.activity.clone(),
            approvals: v.approvals.iter().map(TaskApprovalDto::from).collect(),
        }
    }
}

/// The data of a frame of a run's stream (the seed's `TaskRunStreamEventData`):
/// the v1 event envelope, `event_type` (the type of the stored event behind the
/// frame), and the run as it was when the frame was sent.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaskRunStreamEventData {
    /// The event.
    #[serde(flatten)]
    pub event: TaskEventDto,
    /// The stored event's type, as `type`.
    pub event_type: String,
    /// The run now.
    #[serde(flatten)]
    pub state: TaskRunStateDto,
}

macro_rules! response {
    ($(#[$doc:meta])* $name:ident, $data:ty) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Serialize, ToSchema)]
        pub struct $name {
            /// The object kind.
            pub object: String,
            /// The payload.
            pub data: $data,
        }
    };
}

response!(
    /// `{"object": "task", "data": …}`.
    TaskResponse,
    TaskDto
);
response!(
    /// `{"object": "tasks", "data": […]}`.
    TaskListResponse,
    Vec<TaskDto>
);
response!(
    /// `{"object": "task_run", "data": …}`.
    TaskRunResponse,
    TaskRunDto
);
response!(
    /// `{"object": "task_runs", "data": […]}`.
    TaskRunListResponse,
    Vec<TaskRunDto>
);
response!(
    /// `{"object": "task_step", "data": …}`.
    TaskStepResponse,
    TaskStepDto
);
response!(
    /// `{"object": "task_steps", "data": […]}`.
    TaskStepListResponse,
    Vec<TaskStepDto>
);
response!(
    /// `{"object": "task_artifact", "data": …}`.
    TaskArtifactResponse,
    TaskArtifactDto
);
response!(
    /// `{"object": "task_artifacts", "data": […]}`.
    TaskArtifactListResponse,
    Vec<TaskArtifactDto>
);
response!(
    /// `{"object": "task_approval", "data": …}`.
    TaskApprovalResponse,
    TaskApprovalDto
);
response!(
    /// `{"object": "task_approvals", "data": […]}`.
    TaskApprovalListResponse,
    Vec<TaskApprovalDto>
);
response!(
    /// `{"object": "task_events", "data": […]}`.
    TaskEventListResponse,
    Vec<TaskEventDto>
);
response!(
    /// `{"object": "task_deleted", "data": {"id": …}}`.
    TaskDeletedResponse,
    TaskDeletedDto
);

/// What a delete answers.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct TaskDeletedDto {
    /// The deleted task.
    pub id: String,
    /// Always true.
    pub deleted: bool,
}

/// A patch: one file change of a run, for review, apply and revert.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct TaskPatchDto {
    /// The patch artifact's id.
    pub id: String,
    /// Its task.
    pub task_id: String,
    /// Its run.
    pub run_id: String,
    /// The step that wrote it.
    pub step_id: Option<String>,
    /// Path relative to the run's workspace.
    pub path: String,
    /// `applied`, `proposed` or `reverted`.
    pub status: String,
    /// Content before (`null`: the file did not exist).
    pub before: Option<String>,
    /// Content after (`null`: the file was removed).
    pub after: Option<String>,
    /// The change as a unified diff (`a/PATH` to `b/PATH`, 3 lines of context).
    pub diff: String,
    /// Created.
    pub created_at: String,
}

/// `before` to `after` of `path` as a unified diff (a missing side is empty).
fn unified_diff(path: &str, before: Option<&str>, after: Option<&str>) -> String {
    similar::TextDiff::from_lines(before.unwrap_or_default(), after.unwrap_or_default())
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .to_string()
}

impl TaskPatchDto {
    /// The patch view of a patch artifact and its parsed content.
    pub fn new(a: &TaskArtifact, c: crate::engine::tasks::PatchContent) -> Self {
        Self {
            id: a.id.to_string(),
            task_id: a.task_id.to_string(),
            run_id: a.run_id.to_string(),
            step_id: a.step_id.as_ref().map(|s| s.to_string()),
            diff: unified_diff(&c.path, c.before.as_deref(), c.after.as_deref()),
            path: c.path,
            status: a.status.clone().unwrap_or_default(),
            before: c.before,
            after: c.after,
            created_at: a.created_at.clone(),
        }
    }
}

response!(
    /// `{"object": "task_patch", "data": …}`.
    TaskPatchResponse,
    TaskPatchDto
);
response!(
    /// `{"object": "task_patches", "data": […]}`.
    TaskPatchListResponse,
    Vec<TaskPatchDto>
);

#[cfg(test)]
mod tests {
    use super::unified_diff;

    #[test]
    fn a_patch_reads_as_a_unified_diff() {
        let d = unified_diff("notes.txt", Some("a\nold\n"), Some("a\nnew\n"));
        assert!(d.starts_with("--- a/notes.txt\n+++ b/notes.txt\n"), "{d}");
        assert!(d.contains("-old\n+new\n"), "{d}");
        let created = unified_diff("n.txt", None, Some("x\n"));
        assert!(created.contains("+x\n"), "{created}");
    }
}
