//! A task's runs (attempts), their steps and artifacts, and the run events
//! every surface replays. Runs, steps and artifacts are also their own wire
//! form: the API's `TaskRunDto`, `TaskStepDto` and `TaskArtifactDto`.

use crate::domain::ids::{TaskArtifactId, TaskId, TaskRunId, TaskStepId};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

/// Where a run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskRunStatus {
    /// Waiting in the queue for a worker.
    Queued,
    /// A worker holds it.
    Running,
    /// Waiting for an approval to be resolved.
    AwaitingApproval,
    /// Finished successfully.
    Completed,
    /// Finished with an error.
    Failed,
    /// Stopped on request.
    Cancelled,
}

impl TaskRunStatus {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::AwaitingApproval => "awaiting_approval",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a stable name.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Queued,
            Self::Running,
            Self::AwaitingApproval,
            Self::Completed,
            Self::Failed,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// Whether nothing will happen to the run any more.
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// A run (attempt) of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[schema(as = TaskRunDto)]
#[schemars(rename = "TaskRunDto")]
pub struct TaskRun {
    /// Id (`trun_…`).
    #[schema(value_type = String)]
    #[schemars(with = "String")]
    pub id: TaskRunId,
    /// Its task.
    #[schema(value_type = String)]
    #[schemars(with = "String")]
    pub task_id: TaskId,
    /// 1, 2, 3, … within the task.
    pub number: i64,
    /// `queued`, `running`, `awaiting_approval`, `completed`, `failed` or `cancelled`.
    #[schema(value_type = String)]
    #[schemars(with = "String")]
    pub status: TaskRunStatus,
    /// Stable error type when it failed.
    pub error_type: Option<String>,
    /// What went wrong.
    pub error_message: Option<String>,
    /// The run this one retries or resumes.
    #[schema(value_type = Option<String>)]
    #[schemars(with = "Option<String>")]
    pub resumed_from_run_id: Option<TaskRunId>,
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

/// Where a step stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStepStatus {
    /// Executing.
    Running,
    /// Finished successfully.
    Completed,
    /// Finished with an error.
    Failed,
    /// Stopped on request.
    Cancelled,
}

impl TaskStepStatus {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Completed => "completed",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a stable name.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Running,
            Self::Completed,
            Self::Failed,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// A step of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema, JsonSchema)]
#[schema(as = TaskStepDto)]
#[schemars(rename = "TaskStepDto")]
pub struct TaskStep {
    /// Id (`tstep_…`).
    #[schema(value_type = String)]
    #[schemars(with = "String")]
    pub id: TaskStepId,
    /// Its run.
    #[schema(value_type = String)]
    #[schemars(with = "String")]
    pub run_id: TaskRunId,
    /// Its task.
    #[schema(value_type = String)]
    #[schemars(with = "String")]
    pub task_id: TaskId,
    /// 1-based position.
    pub index: i64,
    /// `shell`, `git` or `file`.
    pub kind: String,
    /// `running`, `completed`, `failed` or `cancelled`.
    #[schema(value_type = String)]
    #[schemars(with = "String")]
    pub status: TaskStepStatus,
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

/// An artifact of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[schema(as = TaskArtifactDto)]
pub struct TaskArtifact {
    /// Id (`tart_…`).
    #[schema(value_type = String)]
    pub id: TaskArtifactId,
    /// Its task.
    #[schema(value_type = String)]
    pub task_id: TaskId,
    /// Its run.
    #[schema(value_type = String)]
    pub run_id: TaskRunId,
    /// The step that produced it.
    #[schema(value_type = Option<String>)]
    pub step_id: Option<TaskStepId>,
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

/// One event of a run, as every surface replays it. `sequence` is global and
/// strictly increasing across all runs, so it is also the feed's cursor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskEvent {
    /// Position in the process-wide feed.
    pub sequence: i64,
    /// Its task.
    pub task_id: TaskId,
    /// Its run.
    pub run_id: TaskRunId,
    /// Event type, e.g. `run.started`, `step.finished`, `tool.file.applied`.
    pub event_type: String,
    /// Event data.
    pub data: Value,
    /// When it happened (RFC 3339).
    pub occurred_at: String,
}

/// Filters of the event log; absent fields match everything.
#[derive(Debug, Clone, Default)]
pub struct TaskEventFilter {
    /// Only this namespace's tasks.
    pub namespace: String,
    /// Only this task.
    pub task_id: Option<TaskId>,
    /// Only this run.
    pub run_id: Option<TaskRunId>,
    /// Only these types (any of them).
    pub event_types: Vec<String>,
    /// Only events after this sequence.
    pub after_sequence: i64,
    /// At most this many.
    pub limit: usize,
    /// The newest `limit` events instead of the oldest (answered newest first).
    pub newest_first: bool,
}
