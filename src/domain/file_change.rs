//! How a turn changed a file of its workspace, as its diff reports it.

use serde::{Deserialize, Serialize};

/// How a file changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnFileChange {
    /// Path relative to the repository root (new path for renames).
    pub path: String,
    /// Old path, for renames.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    /// `modified`, `added`, `deleted`, `renamed` or `binary`.
    pub status: String,
    /// Added lines (0 for binary).
    pub additions: u64,
    /// Deleted lines (0 for binary).
    pub deletions: u64,
}
