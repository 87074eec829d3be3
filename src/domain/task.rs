//! The durable task runtime's vocabulary: tasks and what they ask for, runs
//! (attempts) and their states, steps, artifacts (captured output, patches),
//! approval gates and the run events every surface replays.

use crate::domain::error::HecateError;
use crate::domain::ids::{TaskApprovalId, TaskArtifactId, TaskId, TaskRunId, TaskStepId};
use serde::{Deserialize, Serialize};
use serde_json::Value;

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
    /// Per-task system prompt (`agent_loop`).
    pub system_prompt: String,
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
    /// Created (RFC 3339).
    pub created_at: String,
    /// Last changed (RFC 3339).
    pub updated_at: String,
}

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

/// One run (attempt) of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskRun {
    /// Id.
    pub id: TaskRunId,
    /// Its task.
    pub task_id: TaskId,
    /// 1 for the first run of the task, then 2, 3, ...
    pub number: i64,
    /// Where it stands.
    pub status: TaskRunStatus,
    /// Stable error type when it failed.
    pub error_type: Option<String>,
    /// What went wrong.
    pub error_message: Option<String>,
    /// The run this one retries or resumes.
    pub resumed_from_run_id: Option<TaskRunId>,
    /// The directory it works in, once known.
    pub workspace: Option<String>,
    /// This run's model spend.
    pub total_cost_micros_usd: i64,
    /// The spend of every earlier run of its resume chain.
    pub prior_cost_micros_usd: i64,
    /// Model actually used.
    pub model: Option<String>,
    /// Provider actually used.
    pub provider: Option<String>,
    /// A cancel was asked for while it ran (the worker stops it).
    pub cancel_requested: bool,
    /// Created (RFC 3339).
    pub created_at: String,
    /// First started by a worker.
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

/// One step of a run (the deterministic kinds have one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskStep {
    /// Id.
    pub id: TaskStepId,
    /// Its run.
    pub run_id: TaskRunId,
    /// Its task.
    pub task_id: TaskId,
    /// 1-based position in the run.
    pub index: i64,
    /// What it does (`shell`, `git`, `file`).
    pub kind: String,
    /// Where it stands.
    pub status: TaskStepStatus,
    /// What it was given (command, path, checkpoint of a resume).
    pub input: Value,
    /// Exit code of a process step.
    pub exit_code: Option<i32>,
    /// Stable error type when it failed.
    pub error_type: Option<String>,
    /// What went wrong.
    pub error_message: Option<String>,
    /// Started (RFC 3339).
    pub started_at: String,
    /// Finished.
    pub finished_at: Option<String>,
}

/// An artifact of a run: captured output or a patch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskArtifact {
    /// Id.
    pub id: TaskArtifactId,
    /// Its task.
    pub task_id: TaskId,
    /// Its run.
    pub run_id: TaskRunId,
    /// The step that produced it.
    pub step_id: Option<TaskStepId>,
    /// `stdout`, `stderr` or `patch`.
    pub kind: String,
    /// A name (the stream, or the patched path).
    pub name: String,
    /// The content (text; for a patch, JSON with before and after).
    pub content: String,
    /// Bytes the source produced (more than `content` holds when truncated).
    pub size_bytes: i64,
    /// Whether `content` was cut at the capture cap.
    pub truncated: bool,
    /// For patches: `applied`, `proposed` or `reverted`.
    pub status: Option<String>,
    /// Created (RFC 3339).
    pub created_at: String,
}

/// What a run's approval gate is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskApprovalKind {
    /// Before a shell task runs.
    ShellCommand,
    /// Before a git task runs.
    GitExec,
    /// Before a file task writes.
    FileWrite,
    /// Before a task with network access runs.
    NetworkEgress,
    /// Before an `agent_loop` run dispatches a gated tool call.
    AgentLoopToolCall,
}

impl TaskApprovalKind {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ShellCommand => "shell_command",
            Self::GitExec => "git_exec",
            Self::FileWrite => "file_write",
            Self::NetworkEgress => "network_egress",
            Self::AgentLoopToolCall => "agent_loop_tool_call",
        }
    }

    /// Parses a stable name.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::ShellCommand,
            Self::GitExec,
            Self::FileWrite,
            Self::NetworkEgress,
            Self::AgentLoopToolCall,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }

    /// The approval-policy name that turns this gate on.
    pub fn policy_name(self) -> &'static str {
        match self {
            Self::ShellCommand => "shell_exec",
            Self::GitExec => "git_exec",
            Self::FileWrite => "file_write",
            Self::NetworkEgress => "network_egress",
            Self::AgentLoopToolCall => "all_tools",
        }
    }
}

/// Where an approval stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskApprovalStatus {
    /// Waiting for a decision.
    Pending,
    /// Approved: the run was queued again.
    Approved,
    /// Rejected: the run failed.
    Rejected,
    /// The run was cancelled first.
    Cancelled,
}

impl TaskApprovalStatus {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Cancelled => "cancelled",
        }
    }

    /// Parses a stable name.
    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Pending,
            Self::Approved,
            Self::Rejected,
            Self::Cancelled,
        ]
        .into_iter()
        .find(|k| k.as_str() == s)
    }
}

/// An approval gate of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskApproval {
    /// Id.
    pub id: TaskApprovalId,
    /// Its task.
    pub task_id: TaskId,
    /// Its run.
    pub run_id: TaskRunId,
    /// What it gates.
    pub kind: TaskApprovalKind,
    /// Where it stands.
    pub status: TaskApprovalStatus,
    /// What the run wants to do.
    pub reason: String,
    /// The resolver's note.
    pub note: Option<String>,
    /// Created (RFC 3339).
    pub created_at: String,
    /// Resolved (RFC 3339).
    pub resolved_at: Option<String>,
}

/// The approval-policy names the config accepts (plus `all_tools`).
pub const APPROVAL_POLICY_NAMES: [&str; 6] = [
    "shell_exec",
    "git_exec",
    "file_write",
    "network_egress",
    "read_file",
    "all_tools",
];

/// Which approval gates are on; parsed from a comma-separated list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApprovalPolicy {
    names: Vec<String>,
}

impl Default for ApprovalPolicy {
    fn default() -> Self {
        Self {
            names: vec!["shell_exec".into(), "git_exec".into(), "file_write".into()],
        }
    }
}

impl ApprovalPolicy {
    /// Parses `shell_exec,git_exec,...`; an empty list turns every gate off and an
    /// unknown name is an error naming it.
    pub fn parse(list: &str) -> Result<Self, HecateError> {
        let mut names = Vec::new();
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if !APPROVAL_POLICY_NAMES.contains(&name) {
                return Err(HecateError::invalid(format!(
                    "unknown approval policy {name:?}; known: {}",
                    APPROVAL_POLICY_NAMES.join(", ")
                )));
            }
            names.push(name.to_string());
        }
        Ok(Self { names })
    }

    /// Whether an `agent_loop` call of the built-in tool `tool` waits for an
    /// approval: `shell_exec`, `git_exec` and `read_file` by their own names,
    /// `file_write` and `file_edit` by `file_write`, `http_request` by
    /// `network_egress`, everything by `all_tools`.
    pub fn gates_tool(&self, tool: &str) -> bool {
        let on = |n: &str| self.names.iter().any(|x| x == n || x == "all_tools");
        match tool {
            "shell_exec" | "git_exec" | "read_file" => on(tool),
            "file_write" | "file_edit" => on("file_write"),
            "http_request" => on("network_egress"),
            _ => on("all_tools"),
        }
    }

    /// The gate a task of this spec must pass before it runs, if any.
    pub fn gate_for(&self, kind: ExecutionKind, spec: &TaskSpec) -> Option<TaskApprovalKind> {
        let on = |n: &str| self.names.iter().any(|x| x == n || x == "all_tools");
        if spec.sandbox_network && on("network_egress") {
            return Some(TaskApprovalKind::NetworkEgress);
        }
        let gate = match kind {
            ExecutionKind::Shell => TaskApprovalKind::ShellCommand,
            ExecutionKind::Git => TaskApprovalKind::GitExec,
            ExecutionKind::File => TaskApprovalKind::FileWrite,
            ExecutionKind::AgentLoop => return None,
        };
        on(gate.policy_name()).then_some(gate)
    }
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(cmd: &str) -> TaskSpec {
        TaskSpec {
            execution_kind: Some(ExecutionKind::Shell),
            shell_command: cmd.into(),
            ..Default::default()
        }
    }

    #[test]
    fn validation_names_the_field() {
        let e = TaskSpec::default().validate().expect_err("no kind");
        assert_eq!(e.details["field"], "execution_kind");
        let e = shell(" ").validate().expect_err("no command");
        assert_eq!(e.details["field"], "shell_command");
        let mut s = shell("true");
        s.workspace_mode = WorkspaceMode::InPlace;
        assert_eq!(
            s.validate().expect_err("no dir").details["field"],
            "working_directory"
        );
        s.working_directory = "relative".into();
        assert_eq!(
            s.validate().expect_err("relative").details["field"],
            "working_directory"
        );
        let git = TaskSpec {
            execution_kind: Some(ExecutionKind::Git),
            git_command: "log 'unclosed".into(),
            ..Default::default()
        };
        assert_eq!(
            git.validate().expect_err("quote").details["field"],
            "git_command"
        );
        assert_eq!(
            shell("true").validate().expect("valid"),
            ExecutionKind::Shell
        );
    }

    #[test]
    fn policies_gate_by_kind_and_refuse_unknown_names() {
        let p = ApprovalPolicy::default();
        assert_eq!(
            p.gate_for(ExecutionKind::Shell, &shell("x")),
            Some(TaskApprovalKind::ShellCommand)
        );
        let none = ApprovalPolicy::parse("").expect("empty");
        assert_eq!(none.gate_for(ExecutionKind::Shell, &shell("x")), None);
        let all = ApprovalPolicy::parse("all_tools").expect("all");
        let mut net = shell("x");
        net.sandbox_network = true;
        assert_eq!(
            all.gate_for(ExecutionKind::Shell, &net),
            Some(TaskApprovalKind::NetworkEgress)
        );
        assert!(p.gates_tool("shell_exec") && p.gates_tool("file_edit"));
        assert!(!p.gates_tool("read_file") && !p.gates_tool("list_dir"));
        let reads = ApprovalPolicy::parse("read_file").expect("reads");
        assert!(reads.gates_tool("read_file") && !reads.gates_tool("shell_exec"));
        assert!(all.gates_tool("list_dir") && !none.gates_tool("shell_exec"));
        let e = ApprovalPolicy::parse("shell_exec,bogus").expect_err("unknown");
        assert!(e.message.contains("bogus"), "{}", e.message);
    }
}
