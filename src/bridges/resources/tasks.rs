//! Wire types of the task API (`/hecate/v1/tasks`): the create body with its
//! execution profiles, the task, run, step, artifact, approval and event
//! resources, and their `{"object", "data"}` responses. The create body and the
//! resources also derive JSON Schemas, so the MCP task tools take and answer the
//! same shapes.

use crate::domain::HecateError;
use crate::domain::task::{
    ExecutionKind, FileOperation, Task, TaskApproval, TaskArtifact, TaskEvent, TaskRun, TaskSpec,
    TaskStep, WorkspaceMode,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::{IntoParams, ToSchema};

/// The schema version of task event envelopes.
pub const EVENT_SCHEMA_VERSION: &str = "v1";

/// System prompt the `coding_agent` profile sets.
const CODING_AGENT_PROMPT: &str = "You are a careful coding agent. Read files before you edit them, make targeted edits, and run the project's checks before you finish.";

/// Body of `POST /hecate/v1/tasks`; unknown fields are refused.
#[derive(Debug, Clone, Default, Deserialize, ToSchema, JsonSchema)]
#[schema(example = json!({"execution_kind": "shell", "shell_command": "make test", "workspace_mode": "in_place", "working_directory": "/home/me/project"}))]
#[serde(deny_unknown_fields)]
pub struct CreateTaskRequest {
    /// `shell`, `git`, `file` or `agent_loop`.
    pub execution_kind: Option<String>,
    /// `repo_local` or `coding_agent`: defaults applied before the other fields.
    pub execution_profile: Option<String>,
    /// What the task is for.
    pub prompt: Option<String>,
    /// Per-task system prompt (`agent_loop`).
    pub system_prompt: Option<String>,
    /// Command of a `shell` task.
    pub shell_command: Option<String>,
    /// Arguments of a `git` task.
    pub git_command: Option<String>,
    /// File of a `file` task, relative to the workspace.
    pub file_path: Option<String>,
    /// Content a `file` task writes or appends.
    pub file_content: Option<String>,
    /// `write` (default), `append` or `delete`.
    pub file_operation: Option<String>,
    /// Absolute directory; required for `in_place`.
    pub working_directory: Option<String>,
    /// `ephemeral` (default, also ``), `persistent` or `in_place`.
    pub workspace_mode: Option<String>,
    /// Repository cloned into the workspace.
    pub repo: Option<String>,
    /// Branch to clone.
    pub base_branch: Option<String>,
    /// Directory every path must stay under.
    pub sandbox_allowed_root: Option<String>,
    /// Everything outside the workspace read-only, with a private `/tmp`
    /// (default `true`); `false` loosens it to the whole filesystem writable.
    pub sandbox_read_only: Option<bool>,
    /// The workspace's `.git` writable to file operations and commands, and
    /// git hooks on (default `false`).
    pub sandbox_git_writable: Option<bool>,
    /// Allow network access; without it commands run without network (bubblewrap).
    pub sandbox_network: Option<bool>,
    /// Provider to pin (`agent_loop`).
    pub requested_provider: Option<String>,
    /// Model to pin (`agent_loop`).
    pub requested_model: Option<String>,
    /// Cost ceiling in micro-USD; 0 disables.
    pub budget_micros_usd: Option<i64>,
    /// Most model turns of an `agent_loop` run (default 20).
    pub max_turns: Option<u32>,
    /// MCP servers for `agent_loop` runs.
    #[schema(value_type = Option<Vec<Object>>)]
    pub mcp_servers: Option<Vec<Value>>,
    /// Higher runs first.
    pub priority: Option<i64>,
    /// Step time limit in milliseconds.
    pub timeout_ms: Option<u64>,
}

fn bad(field: &str, message: String) -> HecateError {
    HecateError::invalid(message).with_detail("field", field)
}

impl CreateTaskRequest {
    /// The task spec this body asks for (profile defaults first), or a 400 naming
    /// the field.
    pub fn into_spec(self) -> Result<TaskSpec, HecateError> {
        let mut spec = TaskSpec::default();
        match self.execution_profile.as_deref() {
            None | Some("") => {}
            Some(p @ ("repo_local" | "coding_agent")) => {
                spec.execution_kind = Some(ExecutionKind::AgentLoop);
                spec.workspace_mode = WorkspaceMode::Persistent;
                spec.working_directory = ".".into();
                spec.timeout_ms = 120_000;
                if p == "coding_agent" {
                    spec.timeout_ms = 300_000;
                    spec.system_prompt = CODING_AGENT_PROMPT.into();
                }
            }
            Some(p) => {
                return Err(bad(
                    "execution_profile",
                    format!("execution_profile must be repo_local or coding_agent, got {p:?}"),
                ));
            }
        }
        if let Some(k) = self.execution_kind.as_deref().filter(|k| !k.is_empty()) {
            spec.execution_kind = Some(ExecutionKind::parse(k).ok_or_else(|| {
                bad(
                    "execution_kind",
                    format!("execution_kind must be shell, git, file or agent_loop, got {k:?}"),
                )
            })?);
        }
        if let Some(m) = self.workspace_mode.as_deref() {
            spec.workspace_mode = match m {
                "" | "ephemeral" => WorkspaceMode::Ephemeral,
                "persistent" => WorkspaceMode::Persistent,
                "in_place" => WorkspaceMode::InPlace,
                other => {
                    return Err(bad(
                        "workspace_mode",
                        format!(
                            "workspace_mode must be ephemeral, persistent or in_place, got {other:?}"
                        ),
                    ));
                }
            };
        }
        if let Some(op) = self.file_operation.as_deref() {
            spec.file_operation = match op {
                "" | "write" => FileOperation::Write,
                "append" => FileOperation::Append,
                "delete" => FileOperation::Delete,
                other => {
                    return Err(bad(
                        "file_operation",
                        format!("file_operation must be write, append or delete, got {other:?}"),
                    ));
                }
            };
        }
        let set = |target: &mut String, v: Option<String>| {
            if let Some(v) = v {
                *target = v;
            }
        };
        set(&mut spec.prompt, self.prompt);
        set(&mut spec.system_prompt, self.system_prompt);
        set(&mut spec.shell_command, self.shell_command);
        set(&mut spec.git_command, self.git_command);
        set(&mut spec.file_path, self.file_path);
        set(&mut spec.file_content, self.file_content);
        set(&mut spec.working_directory, self.working_directory);
        set(&mut spec.repo, self.repo);
        set(&mut spec.base_branch, self.base_branch);
        set(&mut spec.sandbox_allowed_root, self.sandbox_allowed_root);
        set(&mut spec.requested_provider, self.requested_provider);
        set(&mut spec.requested_model, self.requested_model);
        if spec.working_directory == "." {
            spec.working_directory = std::env::current_dir()
                .map(|d| d.display().to_string())
                .unwrap_or_default();
        }
        spec.sandbox_root_writable = self.sandbox_read_only == Some(false);
        spec.sandbox_git_writable = self.sandbox_git_writable.unwrap_or(false);
        spec.sandbox_network = self.sandbox_network.unwrap_or(false);
        spec.budget_micros_usd = self.budget_micros_usd.unwrap_or(0);
        spec.max_turns = self.max_turns.unwrap_or(0);
        spec.mcp_servers = self.mcp_servers.unwrap_or_default();
        spec.priority = self.priority.unwrap_or(0);
        if let Some(t) = self.timeout_ms {
            spec.timeout_ms = t;
        }
        Ok(spec)
    }
}

/// A task.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct TaskDto {
    /// Id (`task_…`).
    pub id: String,
    /// `shell`, `git`, `file` or `agent_loop`.
    pub execution_kind: String,
    /// What the task is for.
    pub prompt: String,
    /// Per-task system prompt.
    pub system_prompt: String,
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
    /// The newest run.
    pub latest_run_id: Option<String>,
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
            latest_run_id: t.latest_run_id.as_ref().map(|r| r.to_string()),
            created_at: t.created_at.clone(),
            updated_at: t.updated_at.clone(),
        }
    }
}

/// A run (attempt) of a task.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct TaskRunDto {
    /// Id (`trun_…`).
    pub id: String,
    /// Its task.
    pub task_id: String,
    /// 1, 2, 3, … within the task.
    pub number: i64,
    /// `queued`, `running`, `awaiting_approval`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// Stable error type when it failed.
    pub error_type: Option<String>,
    /// What went wrong.
    pub error_message: Option<String>,
    /// The run this one retries or resumes.
    pub resumed_from_run_id: Option<String>,
    /// The directory it works in.
    pub workspace: Option<String>,
    /// This run's model spend in micro-USD.
    pub total_cost_micros_usd: i64,
    /// Spend of the earlier runs of its resume chain.
    pub prior_cost_micros_usd: i64,
    /// Model used.
    pub model: Option<String>,
    /// Provider used.
    pub provider: Option<String>,
    /// A cancel was asked for while it ran.
    pub cancel_requested: bool,
    /// Created.
    pub created_at: String,
    /// Started by a worker.
    pub started_at: Option<String>,
    /// Reached a terminal state.
    pub finished_at: Option<String>,
}

impl From<&TaskRun> for TaskRunDto {
    fn from(r: &TaskRun) -> Self {
        Self {
            id: r.id.to_string(),
            task_id: r.task_id.to_string(),
            number: r.number,
            status: r.status.as_str().to_string(),
            error_type: r.error_type.clone(),
            error_message: r.error_message.clone(),
            resumed_from_run_id: r.resumed_from_run_id.as_ref().map(|x| x.to_string()),
            workspace: r.workspace.clone(),
            total_cost_micros_usd: r.total_cost_micros_usd,
            prior_cost_micros_usd: r.prior_cost_micros_usd,
            model: r.model.clone(),
            provider: r.provider.clone(),
            cancel_requested: r.cancel_requested,
            created_at: r.created_at.clone(),
            started_at: r.started_at.clone(),
            finished_at: r.finished_at.clone(),
        }
    }
}

/// A step of a run.
#[derive(Debug, Clone, Serialize, ToSchema, JsonSchema)]
pub struct TaskStepDto {
    /// Id (`tstep_…`).
    pub id: String,
    /// Its run.
    pub run_id: String,
    /// Its task.
    pub task_id: String,
    /// 1-based position.
    pub index: i64,
    /// `shell`, `git` or `file`.
    pub kind: String,
    /// `running`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// What it was given.
    #[schema(value_type = Object)]
    pub input: Value,
    /// Exit code of a command.
    pub exit_code: Option<i32>,
    /// Stable error type (`step_failed`, `step_timeout`, `sandbox_error`, …).
    pub error_type: Option<String>,
    /// What went wrong.
    pub error_message: Option<String>,
    /// Started.
    pub started_at: String,
    /// Finished.
    pub finished_at: Option<String>,
}

impl From<&TaskStep> for TaskStepDto {
    fn from(s: &TaskStep) -> Self {
        Self {
            id: s.id.to_string(),
            run_id: s.run_id.to_string(),
            task_id: s.task_id.to_string(),
            index: s.index,
            kind: s.kind.clone(),
            status: s.status.as_str().to_string(),
            input: s.input.clone(),
            exit_code: s.exit_code,
            error_type: s.error_type.clone(),
            error_message: s.error_message.clone(),
            started_at: s.started_at.clone(),
            finished_at: s.finished_at.clone(),
        }
    }
}

/// An artifact of a run.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TaskArtifactDto {
    /// Id (`tart_…`).
    pub id: String,
    /// Its task.
    pub task_id: String,
    /// Its run.
    pub run_id: String,
    /// The step that produced it.
    pub step_id: Option<String>,
    /// `stdout`, `stderr` or `patch`.
    pub kind: String,
    /// The stream, or the patched path.
    pub name: String,
    /// Text content; a patch is JSON with `path`, `before` and `after`.
    pub content: String,
    /// Bytes the source produced.
    pub size_bytes: i64,
    /// Whether `content` was cut at the capture cap (1 MiB per stream).
    pub truncated: bool,
    /// For patches: `applied`, `proposed` or `reverted`.
    pub status: Option<String>,
    /// Created.
    pub created_at: String,
}

impl From<&TaskArtifact> for TaskArtifactDto {
    fn from(a: &TaskArtifact) -> Self {
        Self {
            id: a.id.to_string(),
            task_id: a.task_id.to_string(),
            run_id: a.run_id.to_string(),
            step_id: a.step_id.as_ref().map(|s| s.to_string()),
            kind: a.kind.clone(),
            name: a.name.clone(),
            content: a.content.clone(),
            size_bytes: a.size_bytes,
            truncated: a.truncated,
            status: a.status.clone(),
            created_at: a.created_at.clone(),
        }
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

/// Body of the retry, resume and cancel endpoints (all optional).
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunActionRequest {
    /// Why (recorded on the new run's `run.resumed_from_event`).
    pub reason: Option<String>,
}

/// Body of `POST …/runs/{run_id}/continue`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ContinueRunRequest {
    /// The follow-up instruction appended to the run's conversation.
    pub prompt: String,
    /// Why (recorded on the new run's `run.resumed_from_event`).
    pub reason: Option<String>,
}

/// Body of `POST …/runs/{run_id}/retry-from-turn`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RetryFromTurnRequest {
    /// The model turn (1-based) the new run takes again.
    pub turn: u32,
    /// Why (recorded on the new run's `run.resumed_from_event`).
    pub reason: Option<String>,
}

/// Body of `POST …/approvals/{approval_id}/resolve`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveTaskApprovalRequest {
    /// `approve` or `reject`.
    pub decision: String,
    /// A note kept on the approval.
    pub note: Option<String>,
}

/// Query of the event lists.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TaskEventsQuery {
    /// Only events after this sequence.
    pub after_sequence: Option<i64>,
    /// Comma-separated event types (any of them).
    pub event_type: Option<String>,
    /// Only this task (process-wide feed).
    pub task_id: Option<String>,
    /// At most this many (default 500, at most 5,000).
    pub limit: Option<usize>,
}

/// Query of `GET /hecate/v1/tasks`.
#[derive(Debug, Clone, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TaskListQuery {
    /// At most this many (default 100).
    pub limit: Option<usize>,
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
    /// Created.
    pub created_at: String,
}

impl TaskPatchDto {
    /// The patch view of a patch artifact and its parsed content.
    pub fn new(a: &TaskArtifact, c: crate::engine::tasks::PatchContent) -> Self {
        Self {
            id: a.id.to_string(),
            task_id: a.task_id.to_string(),
            run_id: a.run_id.to_string(),
            step_id: a.step_id.as_ref().map(|s| s.to_string()),
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
