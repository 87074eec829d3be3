//! Which tools an `agent_loop` run offers its model: every tool (the default),
//! only the built-ins that read the workspace, or none at all. A tool the run
//! does not offer is refused when the model calls it anyway.

use serde::{Deserialize, Serialize};

/// The tools an `agent_loop` run offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolAccess {
    /// Every built-in tool and the run's MCP tools.
    #[default]
    All,
    /// The built-ins that only read the workspace or share the plan
    /// (`read_file`, `list_dir`, `update_plan`); no command, no write, no
    /// HTTP, no MCP tool.
    ReadOnly,
    /// No tool: the model answers from the conversation alone.
    None,
}

/// Every access, in the order editors are offered them.
pub const TOOL_ACCESSES: [ToolAccess; 3] =
    [ToolAccess::All, ToolAccess::ReadOnly, ToolAccess::None];

impl ToolAccess {
    /// The stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::ReadOnly => "read_only",
            Self::None => "none",
        }
    }

    /// The access named `s`, if it is one.
    pub fn parse(s: &str) -> Option<Self> {
        TOOL_ACCESSES.into_iter().find(|a| a.as_str() == s)
    }

    /// Whether it is the default (every tool).
    pub fn is_all(&self) -> bool {
        *self == Self::All
    }

    /// Whether the run's MCP tools are offered.
    pub fn takes_mcp(self) -> bool {
        self == Self::All
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_only_all_takes_mcp_tools() {
        for a in TOOL_ACCESSES {
            assert_eq!(ToolAccess::parse(a.as_str()), Some(a));
            assert_eq!(
                serde_json::to_value(a).expect("json"),
                serde_json::json!(a.as_str())
            );
        }
        assert_eq!(ToolAccess::parse("some"), None);
        assert!(ToolAccess::All.takes_mcp());
        assert!(!ToolAccess::ReadOnly.takes_mcp() && !ToolAccess::None.takes_mcp());
        assert!(ToolAccess::default().is_all());
    }
}
