//! A run's approval gates: what they are about, where they stand, and which
//! gates a task's approval policy turns on.

use super::{ExecutionKind, TaskSpec};
use crate::domain::error::HecateError;
use crate::domain::ids::{TaskApprovalId, TaskId, TaskRunId};
use serde::{Deserialize, Serialize};

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
