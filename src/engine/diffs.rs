//! Workspace diffs of turns: captured around external-agent turns in Git
//! workspaces, stored on the assistant message, listed and reverted on request.

use super::Engine;
use crate::adapters::git::{self, FileChange, GitError, TreeDiff};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::{MessageId, SessionId};
use serde::Serialize;
use std::path::Path;

/// The artifact kind a turn's diff is stored under.
pub const TURN_DIFF_ARTIFACT: &str = "turn_diff";

/// What a revert did.
#[derive(Debug, Clone, Serialize)]
pub struct RevertResult {
    /// Whether anything was restored.
    pub reverted: bool,
    /// The paths restored.
    pub paths: Vec<String>,
    /// What still differs from the turn's baseline among the captured paths.
    pub diff_stat: String,
    /// Remaining changes among the captured paths.
    pub files: Vec<FileChange>,
}

/// Takes a baseline snapshot of `workspace`, or `None` when it is not a Git work tree.
pub(crate) async fn baseline(workspace: &str) -> Option<String> {
    match git::snapshot(Path::new(workspace)).await {
        Ok(tree) => Some(tree),
        Err(GitError::NotARepository(_)) => None,
        Err(e) => {
            tracing::warn!(error = %e, "could not snapshot the workspace before the turn");
            None
        }
    }
}

/// The diff between `base` and the workspace now, when anything changed.
pub(crate) async fn capture(workspace: &str, base: &str) -> Option<TreeDiff> {
    let ws = Path::new(workspace);
    let after = match git::snapshot(ws).await {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(error = %e, "could not snapshot the workspace after the turn");
            return None;
        }
    };
    match git::diff(ws, base, &after).await {
        Ok(d) => Some(d),
        Err(e) => {
            tracing::warn!(error = %e, "could not diff the turn");
            None
        }
    }
}

impl Engine {
    async fn stored_diff(
        &self,
        namespace: &str,
        session_id: &SessionId,
        message_id: &MessageId,
    ) -> Result<(String, Option<TreeDiff>)> {
        let session = self.get_session(namespace, session_id).await?;
        let store = self.store();
        let msgs = store.list_messages(session_id, None, usize::MAX).await?;
        if !msgs.iter().any(|m| &m.id == message_id) {
            return Err(HecateError::not_found("message", message_id.as_str()));
        }
        let artifacts = store.list_artifacts(message_id).await?;
        let diff = artifacts
            .into_iter()
            .find(|(kind, _, _)| kind == TURN_DIFF_ARTIFACT)
            .and_then(|(_, _, data)| serde_json::from_str::<TreeDiff>(&data).ok());
        Ok((session.workspace.unwrap_or_default(), diff))
    }

    /// The files a message's turn changed (empty when it captured no diff).
    pub async fn message_files(
        &self,
        namespace: &str,
        session_id: &SessionId,
        message_id: &MessageId,
    ) -> Result<Vec<FileChange>> {
        let (_, diff) = self.stored_diff(namespace, session_id, message_id).await?;
        Ok(diff.map(|d| d.files).unwrap_or_default())
    }

    /// One file's change and unified diff from a message's turn.
    pub async fn message_file_diff(
        &self,
        namespace: &str,
        session_id: &SessionId,
        message_id: &MessageId,
        path: &str,
    ) -> Result<(FileChange, String)> {
        let (_, diff) = self.stored_diff(namespace, session_id, message_id).await?;
        let diff = diff.ok_or_else(|| HecateError::not_found("file", path))?;
        diff.files
            .iter()
            .position(|f| f.path == path)
            .map(|i| {
                (
                    diff.files[i].clone(),
                    diff.diffs.get(i).cloned().unwrap_or_default(),
                )
            })
            .ok_or_else(|| HecateError::not_found("file", path))
    }

    /// Restores the files a message's turn changed (all of them, or only `paths`,
    /// which must be among the captured ones) to their state before the turn.
    pub async fn revert_message(
        &self,
        namespace: &str,
        session_id: &SessionId,
        message_id: &MessageId,
        paths: &[String],
    ) -> Result<RevertResult> {
        let (workspace, diff) = self.stored_diff(namespace, session_id, message_id).await?;
        if workspace.is_empty() {
            return Err(HecateError::invalid(
                "this session has no workspace to revert",
            ));
        }
        let diff = diff.ok_or_else(|| {
            HecateError::invalid(
                "this message captured no Git diff (the workspace is not a Git repository, or nothing changed)",
            )
        })?;
        for p in paths {
            if !diff
                .files
                .iter()
                .any(|f| &f.path == p || f.old_path.as_ref() == Some(p))
            {
                return Err(HecateError::new(
                    ErrorType::InvalidRequest,
                    format!(
                        "{p} was not changed by this turn; only captured paths can be reverted"
                    ),
                )
                .with_detail("path", p.clone()));
            }
        }
        let chosen: Vec<FileChange> = diff
            .files
            .iter()
            .filter(|f| {
                paths.is_empty()
                    || paths
                        .iter()
                        .any(|p| &f.path == p || f.old_path.as_ref() == Some(p))
            })
            .cloned()
            .collect();
        let ws = Path::new(&workspace);
        git::restore(ws, &diff.base_tree, &chosen)
            .await
            .map_err(|e| HecateError::gateway(format!("revert failed: {e}")))?;
        let remaining = match git::snapshot(ws).await {
            Ok(now) => git::diff(ws, &diff.base_tree, &now)
                .await
                .map(|d| {
                    let files: Vec<FileChange> = d
                        .files
                        .into_iter()
                        .filter(|f| diff.files.iter().any(|c| c.path == f.path))
                        .collect();
                    (d.stat, files)
                })
                .unwrap_or_default(),
            Err(_) => Default::default(),
        };
        Ok(RevertResult {
            reverted: !chosen.is_empty(),
            paths: chosen.iter().map(|f| f.path.clone()).collect(),
            diff_stat: remaining.0,
            files: remaining.1,
        })
    }
}
