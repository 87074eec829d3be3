//! The durable task runtime's vocabulary: tasks and what they ask for, runs
//! (attempts) and their states, steps, artifacts (captured output, patches),
//! approval gates and the run events every surface replays.

use crate::domain::error::HecateError;
use crate::domain::ids::{TaskId, TaskRunId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

mod activity;
mod approval;
mod run;
mod system_layers;
mod tool_access;
mod tool_title;

pub use activity::{TaskActivityItem, project_activity};
pub use approval::{
    APPROVAL_POLICY_NAMES, ApprovalPolicy, TaskApproval, TaskApprovalKind, TaskApprovalStatus,
};
pub use run::{
    TaskArtifact, TaskEvent, TaskEventFilter, TaskRun, TaskRunStatus, TaskStep, TaskStepStatus,
};
pub use system_layers::{
    CODING_AGENT_PROMPT, DEFAULT_GLOBAL_PROMPT, SystemLayers, additional_directories_note,
    profile_prompt,
};
pub use tool_access::{TOOL_ACCESSES, ToolAccess};
pub use tool_title::tool_title;

/// The largest `file_content` a file task may carry, in bytes.
pub const MAX_FILE_CONTENT_BYTES: usize = 4 * 1024 * 1024;

/// LLM turns an `agent_loop` run may take when the task does not say.
pub const DEFAULT_MAX_TURNS: u32 = 20;
/// The most LLM turns a task may ask for.
pub const MAX_MAX_TURNS: u32 = 1000;

/// Default and largest step time limit, in milliseconds.
pub const DEFAULT_TIMEOUT_MS: u64 = 120_000;
/// The largest `timeout_ms` a task may ask for (one day).
pub const MAX_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;

/// How a task's work is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecutionKind {
    /// `shell_command` under `/bin/sh -c`.
    Shell,
    /// `git` with the arguments of `git_command`.
    Git,
    /// A file operation on `file_path`.
    File,
    /// Hecate's own LLM tool loop.
    AgentLoop,
}

impl ExecutionKind {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Shell => "shell",
            Self::Git => "git",
            Self::File => "file",
            Self::AgentLoop => "agent_loop",
        }
    }

    /// Parses a stable name.
    pub fn parse(s: &str) -> Option<Self> {
        [Self::Shell, Self::Git, Self::File, Self::AgentLoop]
            .into_iter()
            .find(|k| k.as_str() == s)
    }
}

/// Where a run works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum WorkspaceMode {
    /// A fresh directory per run (a clone of `repo` when one is named).
    #[default]
    Ephemeral,
    /// One directory per task, kept across its runs.
    Persistent,
    /// Directly in `working_directory`.
    InPlace,
}

impl WorkspaceMode {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ephemeral => "ephemeral",
            Self::Persistent => "persistent",
            Self::InPlace => "in_place",
        }
    }
}

/// What a file task does to `file_path`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FileOperation {
    /// Create or replace the file with `file_content`.
    #[default]
    Write,
    /// Append `file_content` (creating the file when missing).
    Append,
    /// Remove the file.
    Delete,
}

/// Everything a task asks for; the fields of `POST /hecate/v1/tasks`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct TaskSpec {
    /// How the work is done.
    pub execution_kind: Option<ExecutionKind>,
    /// What the task is for (required for `agent_loop`).
    pub prompt: String,
    /// Per-task system prompt (`agent_loop`): the last of the three layers.
    pub system_prompt: String,
    /// The execution profile's layer of the system prompt (`coding_agent`'s),
    /// fixed when the task was created.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub profile_prompt: String,
    /// The command of a `shell` task.
    pub shell_command: String,
    /// The arguments of a `git` task, as one shell-quoted string.
    pub git_command: String,
    /// The file of a `file` task, relative to the workspace.
    pub file_path: String,
    /// What a `file` task writes or appends.
    pub file_content: String,
    /// What a `file` task does.
    pub file_operation: FileOperation,
    /// Absolute directory; required for `in_place`.
    pub working_directory: String,
    /// Where runs work.
    pub workspace_mode: WorkspaceMode,
    /// A repository to clone into the workspace.
    pub repo: String,
    /// The branch to clone.
    pub base_branch: String,
    /// Directory the run's paths must stay under (defaults to the workspace).
    pub sandbox_allowed_root: String,
    /// Absolute directories an `agent_loop` run may use beside its workspace
    /// (a chat session's additional directories): its file tools take absolute
    /// paths in them and its confined commands may write them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub additional_directories: Vec<String>,
    /// Loosens the default confinement: the whole filesystem writable to the
    /// run's commands (the API's `sandbox_read_only: false`). Off by default:
    /// only the workspace and a private `/tmp` are writable.
    #[serde(default)]
    pub sandbox_root_writable: bool,
    /// Loosens the default confinement: the workspace's `.git` writable to file
    /// operations and commands, and git runs the repository's hooks. Off by
    /// default.
    #[serde(default)]
    pub sandbox_git_writable: bool,
    /// Allow network access (otherwise commands run without network).
    pub sandbox_network: bool,
    /// Provider to pin (`agent_loop`).
    pub requested_provider: String,
    /// Model to pin (`agent_loop`).
    pub requested_model: String,
    /// Cost ceiling in micro-USD; 0 disables.
    pub budget_micros_usd: i64,
    /// Most LLM turns an `agent_loop` run takes (0: the default).
    #[serde(default)]
    pub max_turns: u32,
    /// MCP servers whose tools an `agent_loop` run may use.
    pub mcp_servers: Vec<Value>,
    /// Higher runs first.
    pub priority: i64,
    /// Step time limit in milliseconds (0: the default).
    pub timeout_ms: u64,
    /// Messages an `agent_loop` conversation starts with, before `prompt`: what
    /// the memory strategy of the chat session that created the task loaded.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub context: Vec<ContextMessage>,
    /// For a task behind a Hecate Agent chat session: the sequence of the
    /// session message its conversation starts at (its context's first message,
    /// else its prompt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_sequence: Option<i64>,
    /// For a task behind a Hecate Agent chat session: that session.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// The reasoning effort every model turn of an `agent_loop` run asks for
    /// (`low`, `medium`, `high`); the model's own default when unset.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
    /// Which tools an `agent_loop` run offers its model (every tool by default).
    #[serde(default, skip_serializing_if = "ToolAccess::is_all")]
    pub tool_access: ToolAccess,
}

/// One message of an `agent_loop` task's starting context.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContextMessage {
    /// `user`, `assistant`, or `system` for a summary.
    pub role: crate::domain::message::Role,
    /// The message's text.
    pub content: String,
    /// Whether the message is a summary checkpoint standing in for older ones.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_summary: bool,
}

impl TaskSpec {
    /// The step time limit this task runs with.
    pub fn effective_timeout_ms(&self) -> u64 {
        if self.timeout_ms == 0 {
            DEFAULT_TIMEOUT_MS
        } else {
            self.timeout_ms
        }
    }

    /// The LLM turn limit an `agent_loop` run works under.
    pub fn effective_max_turns(&self) -> u32 {
        if self.max_turns == 0 {
            DEFAULT_MAX_TURNS
        } else {
            self.max_turns
        }
    }

    /// Which of the default confinement's limits this task loosens, in words
    /// (empty when it keeps them all), for approval prompts.
    pub fn loosened(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        if self.sandbox_root_writable {
            out.push("the whole filesystem writable");
        }
        if self.sandbox_git_writable {
            out.push(".git writable and git hooks on");
        }
        if self.sandbox_network {
            out.push("network on");
        }
        out
    }

    /// Checks the fields against the kind; the error names the offending field.
    pub fn validate(&self) -> Result<ExecutionKind, HecateError> {
        let field = |name: &str, msg: String| HecateError::invalid(msg).with_detail("field", name);
        let kind = self.execution_kind.ok_or_else(|| {
            field(
                "execution_kind",
                "execution_kind is required (shell, git, file or agent_loop)".into(),
            )
        })?;
        match kind {
            ExecutionKind::Shell if self.shell_command.trim().is_empty() => {
                return Err(field(
                    "shell_command",
                    "a shell task needs shell_command".into(),
                ));
            }
            ExecutionKind::Git => {
                let args = shell_words::split(&self.git_command).map_err(|e| {
                    field("git_command", format!("git_command cannot be split: {e}"))
                })?;
                if args.is_empty() {
                    return Err(field("git_command", "a git task needs git_command".into()));
                }
                crate::domain::git_command::check(&args)
                    .map_err(|e| field("git_command", e.to_string()))?;
            }
            ExecutionKind::File => {
                if self.file_path.trim().is_empty() {
                    return Err(field("file_path", "a file task needs file_path".into()));
                }
                if self.file_content.len() > MAX_FILE_CONTENT_BYTES {
                    return Err(field(
                        "file_content",
                        format!("file_content is over {MAX_FILE_CONTENT_BYTES} bytes"),
                    ));
                }
            }
            ExecutionKind::AgentLoop if self.prompt.trim().is_empty() => {
                return Err(field("prompt", "an agent_loop task needs prompt".into()));
            }
            _ => {}
        }
        if self.workspace_mode == WorkspaceMode::InPlace && self.working_directory.is_empty() {
            return Err(field(
                "working_directory",
                "workspace_mode in_place needs working_directory".into(),
            ));
        }
        if !self.working_directory.is_empty() && !self.working_directory.starts_with('/') {
            return Err(field(
                "working_directory",
                "working_directory must be an absolute path".into(),
            ));
        }
        if !self.sandbox_allowed_root.is_empty() && !self.sandbox_allowed_root.starts_with('/') {
            return Err(field(
                "sandbox_allowed_root",
                "sandbox_allowed_root must be an absolute path".into(),
            ));
        }
        if let Some(dir) = self
            .additional_directories
            .iter()
            .find(|d| !d.starts_with('/'))
        {
            return Err(field(
                "additional_directories",
                format!("additional directory {dir:?} must be an absolute path"),
            ));
        }
        if self.timeout_ms > MAX_TIMEOUT_MS {
            return Err(field(
                "timeout_ms",
                format!("timeout_ms may be at most {MAX_TIMEOUT_MS}"),
            ));
        }
        if self.max_turns > MAX_MAX_TURNS {
            return Err(field(
                "max_turns",
                format!("max_turns may be at most {MAX_MAX_TURNS}"),
            ));
        }
        if self.budget_micros_usd < 0 {
            return Err(field(
                "budget_micros_usd",
                "budget_micros_usd cannot be negative".into(),
            ));
        }
        Ok(kind)
    }
}

/// A stored task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Id.
    pub id: TaskId,
    /// Namespace (the server's) it lives in.
    pub namespace: String,
    /// What it asks for.
    pub spec: TaskSpec,
    /// The newest run, when it ever ran.
    pub latest_run_id: Option<TaskRunId>,
    /// The newest run's status, as read with the task (not stored with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latest_run_status: Option<TaskRunStatus>,
    /// Created (RFC 3339).
    pub created_at: String,
    /// Last changed (RFC 3339).
    pub updated_at: String,
}

/// Which tasks a list selects, newest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TaskListFilter {
    /// The namespace (always applied).
    pub namespace: String,
    /// Only tasks whose newest run has this status.
    pub status: Option<TaskRunStatus>,
    /// Only tasks of this kind.
    pub execution_kind: Option<ExecutionKind>,
    /// Only tasks working in this directory.
    pub working_directory: Option<String>,
    /// Only tasks older than this one (the previous page's last): the cursor.
    pub before: Option<TaskId>,
    /// Page size.
    pub limit: usize,
}

#[cfg(test)]
mod tests;
