//! The built-in tools an `agent_loop` run offers the model: their names,
//! descriptions and argument schemas, and which of them a run's tool access
//! (`all`, `read_only`, `none`) offers.

use crate::adapters::providers::ToolDefinition;
use crate::domain::task::ToolAccess;
use serde_json::json;

/// A built-in tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BuiltIn {
    /// Reads a text file of the workspace.
    ReadFile,
    /// Lists a directory of the workspace.
    ListDir,
    /// Creates or replaces a file.
    FileWrite,
    /// Replaces one exact, unique string in a file (or proposes it).
    FileEdit,
    /// Runs a shell command in the workspace.
    ShellExec,
    /// Runs git in the workspace.
    GitExec,
    /// Sends one HTTP request to a URL the egress policy allows.
    HttpRequest,
    /// Shares the agent's plan (replacing the previous one).
    UpdatePlan,
}

/// Every built-in tool, in catalog order.
pub const ALL: [BuiltIn; 8] = [
    BuiltIn::ReadFile,
    BuiltIn::ListDir,
    BuiltIn::FileWrite,
    BuiltIn::FileEdit,
    BuiltIn::ShellExec,
    BuiltIn::GitExec,
    BuiltIn::HttpRequest,
    BuiltIn::UpdatePlan,
];

impl BuiltIn {
    /// The name the model calls it by.
    pub fn name(self) -> &'static str {
        match self {
            Self::ReadFile => "read_file",
            Self::ListDir => "list_dir",
            Self::FileWrite => "file_write",
            Self::FileEdit => "file_edit",
            Self::ShellExec => "shell_exec",
            Self::GitExec => "git_exec",
            Self::HttpRequest => "http_request",
            Self::UpdatePlan => "update_plan",
        }
    }

    /// The tool called `name`, if it is a built-in.
    pub fn parse(name: &str) -> Option<Self> {
        ALL.into_iter().find(|t| t.name() == name)
    }

    /// Whether it only reads the workspace or shares the plan (no command, no
    /// write, no request leaving the machine).
    pub fn reads_only(self) -> bool {
        matches!(self, Self::ReadFile | Self::ListDir | Self::UpdatePlan)
    }

    /// Whether a run with `access` offers it.
    pub fn offered(self, access: ToolAccess) -> bool {
        match access {
            ToolAccess::All => true,
            ToolAccess::ReadOnly => self.reads_only(),
            ToolAccess::None => false,
        }
    }

    /// Its definition for the model.
    pub fn definition(self) -> ToolDefinition {
        let path = json!({"type": "string", "description": "Path relative to the workspace root."});
        let (description, parameters) = match self {
            Self::ReadFile => (
                "Read a UTF-8 text file of the workspace.",
                json!({"type": "object", "properties": {"path": path}, "required": ["path"]}),
            ),
            Self::ListDir => (
                "List a directory of the workspace (directories end with /).",
                json!({"type": "object", "properties": {"path": path}}),
            ),
            Self::FileWrite => (
                "Create or replace a file of the workspace with the given content.",
                json!({"type": "object", "properties": {"path": path,
                       "content": {"type": "string"}}, "required": ["path", "content"]}),
            ),
            Self::FileEdit => (
                "Replace one exact occurrence of old_string with new_string in a file; old_string must occur exactly once. With propose=true the change is proposed for review instead of written.",
                json!({"type": "object", "properties": {"path": path,
                       "old_string": {"type": "string"}, "new_string": {"type": "string"},
                       "propose": {"type": "boolean"}},
                       "required": ["path", "old_string", "new_string"]}),
            ),
            Self::ShellExec => (
                "Run a shell command (/bin/sh -c) in the workspace; answers the exit code, stdout and stderr.",
                json!({"type": "object", "properties": {"command": {"type": "string"}},
                       "required": ["command"]}),
            ),
            Self::GitExec => (
                "Run git in the workspace with the given arguments (one shell-quoted string, without the leading `git`).",
                json!({"type": "object", "properties": {"args": {"type": "string"}},
                       "required": ["args"]}),
            ),
            Self::HttpRequest => (
                "Send one HTTP request (no redirects followed) to a URL the operator allows; answers the status, headers and body (cut at a cap the result states).",
                json!({"type": "object", "properties": {
                       "method": {"type": "string", "description": "GET (default), POST, PUT, PATCH, DELETE, HEAD, ..."},
                       "url": {"type": "string"},
                       "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                       "body": {"type": "string"}},
                       "required": ["url"]}),
            ),
            Self::UpdatePlan => (
                "Share your plan for the task: the whole list of entries, replacing the plan you shared before. Call it when you have a plan and again whenever an entry's status changes.",
                json!({"type": "object", "properties": {"entries": {"type": "array",
                       "items": {"type": "object", "properties": {
                           "content": {"type": "string", "description": "What the entry is about, in a line."},
                           "priority": {"type": "string", "enum": ["high", "medium", "low"]},
                           "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}},
                           "required": ["content", "priority", "status"]}}},
                       "required": ["entries"]}),
            ),
        };
        ToolDefinition {
            name: self.name().to_string(),
            description: description.to_string(),
            parameters,
        }
    }
}

/// The definitions of every built-in tool.
pub fn definitions() -> Vec<ToolDefinition> {
    definitions_for(ToolAccess::All)
}

/// The definitions of the built-in tools a run with `access` offers.
pub fn definitions_for(access: ToolAccess) -> Vec<ToolDefinition> {
    ALL.into_iter()
        .filter(|t| t.offered(access))
        .map(BuiltIn::definition)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(access: ToolAccess) -> Vec<String> {
        definitions_for(access)
            .into_iter()
            .map(|d| d.name)
            .collect()
    }

    #[test]
    fn the_access_chooses_the_built_ins_offered() {
        assert_eq!(names(ToolAccess::All).len(), definitions().len());
        assert_eq!(definitions().len(), ALL.len());
        assert_eq!(
            names(ToolAccess::ReadOnly),
            ["read_file", "list_dir", "update_plan"]
        );
        assert!(names(ToolAccess::None).is_empty());
        assert!(!BuiltIn::ShellExec.offered(ToolAccess::ReadOnly));
        assert!(BuiltIn::ShellExec.offered(ToolAccess::All));
    }
}
