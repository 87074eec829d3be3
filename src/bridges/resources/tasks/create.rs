//! The body of `POST /hecate/v1/tasks` with its execution profiles, and the task
//! spec it asks for (a 400 naming the field when it asks for something wrong).

use crate::domain::HecateError;
use crate::domain::task::{ExecutionKind, FileOperation, TaskSpec, WorkspaceMode, profile_prompt};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

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
    /// Per-task system prompt (`agent_loop`): added after the operator's global
    /// layer and the profile's, never replacing them.
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
                spec.timeout_ms = 120_000;
                if p == "coding_agent" {
                    spec.timeout_ms = 300_000;
                }
                spec.profile_prompt = profile_prompt(p).unwrap_or_default().into();
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
