//! Workspace diffs of turns: captured around external-agent turns in Git
//! workspaces, stored on the assistant message, listed and reverted on request.

use super::Engine;
use crate::adapters::git::{self, GitError, TreeDiff, TurnFileChange};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::event::EngineEvent;
use crate::domain::ids::{MessageId, SessionId};
use crate::domain::time::now_rfc3339;
use crate::store::{NewArtifact, NewRunEvent};
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
    pub files: Vec<TurnFileChange>,
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
        // One keyed read: the message must be this session's.
        store.get_message(session_id, message_id).await?;
        let artifacts = store.list_artifacts(message_id).await?;
        // A revert stores a refreshed diff after the turn's own: the newest wins.
        let diff = artifacts
            .into_iter()
            .rfind(|(kind, _, _)| kind == TURN_DIFF_ARTIFACT)
            .and_then(|(_, _, data)| serde_json::from_str::<TreeDiff>(&data).ok());
        Ok((session.workspace.unwrap_or_default(), diff))
    }

    /// The files a message's turn changed (empty when it captured no diff).
    pub async fn message_files(
        &self,
        namespace: &str,
        session_id: &SessionId,
        message_id: &MessageId,
    ) -> Result<Vec<TurnFileChange>> {
        let (_, diff) = self.stored_diff(namespace, session_id, message_id).await?;
        Ok(diff.map(|d| d.files).unwrap_or_default())
    }

    /// Every file a message's turn changed with its unified diff, in the diff's
    /// order, from one read (empty when the turn captured no diff).
    pub async fn message_changes(
        &self,
        namespace: &str,
        session_id: &SessionId,
        message_id: &MessageId,
    ) -> Result<Vec<(TurnFileChange, String)>> {
        let (_, diff) = self.stored_diff(namespace, session_id, message_id).await?;
        let Some(TreeDiff { files, diffs, .. }) = diff else {
            return Ok(Vec::new());
        };
        let mut diffs = diffs.into_iter();
        Ok(files
            .into_iter()
            .map(|f| (f, diffs.next().unwrap_or_default()))
            .collect())
    }

    /// One file's change and unified diff from a message's turn.
    pub async fn message_file_diff(
        &self,
        namespace: &str,
        session_id: &SessionId,
        message_id: &MessageId,
        path: &str,
    ) -> Result<(TurnFileChange, String)> {
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
        let chosen: Vec<TurnFileChange> = diff
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
        // What still differs from the turn's baseline, among the captured paths.
        let captured: Vec<String> = diff
            .files
            .iter()
            .flat_map(|f| std::iter::once(f.path.clone()).chain(f.old_path.clone()))
            .collect();
        let refreshed = match git::snapshot(ws).await {
            Ok(now) => git::diff_in(ws, &diff.base_tree, &now, &captured)
                .await
                .map_err(|e| HecateError::gateway(format!("re-reading the diff failed: {e}")))?,
            Err(e) => {
                return Err(HecateError::gateway(format!(
                    "re-reading the workspace failed: {e}"
                )));
            }
        };
        let paths: Vec<String> = chosen.iter().map(|f| f.path.clone()).collect();
        self.record_revert(session_id, message_id, &refreshed, &paths)
            .await?;
        Ok(RevertResult {
            reverted: !chosen.is_empty(),
            paths,
            diff_stat: refreshed.stat,
            files: refreshed.files,
        })
    }

    /// Stores the refreshed diff on the message, appends `files_reverted` to its
    /// turn's events and tells the session's watchers.
    async fn record_revert(
        &self,
        session_id: &SessionId,
        message_id: &MessageId,
        refreshed: &TreeDiff,
        paths: &[String],
    ) -> Result<()> {
        let store = self.store();
        let data = serde_json::to_string(refreshed)
            .map_err(|e| HecateError::store(format!("encoding the diff: {e}")))?;
        store
            .add_artifact(
                message_id,
                NewArtifact {
                    kind: TURN_DIFF_ARTIFACT.to_owned(),
                    path: String::new(),
                    data,
                },
            )
            .await?;
        let run_id = store.get_message(session_id, message_id).await?.run_id;
        let Some(run_id) = run_id else {
            return Ok(());
        };
        let event = |sequence: i64| NewRunEvent {
            sequence,
            event_type: "files_reverted".into(),
            data: serde_json::json!({
                "message_id": message_id,
                "paths": paths,
                "diff_stat": refreshed.stat,
            }),
            occurred_at: now_rfc3339(),
        };
        // The next number of the run; a second writer taking it makes us retry once.
        let mut stored = Err(HecateError::store("not tried"));
        for _ in 0..2 {
            let next = store
                .list_run_events(&run_id, None)
                .await?
                .last()
                .map_or(1, |e| e.sequence + 1);
            stored = store.append_run_events(&run_id, &[event(next)]).await;
            if !matches!(&stored, Err(e) if e.error_type == ErrorType::Conflict) {
                break;
            }
        }
        stored?;
        self.emit_detached(EngineEvent::FilesReverted {
            session_id: session_id.clone(),
            run_id,
            message_id: message_id.clone(),
            paths: paths.to_vec(),
        });
        Ok(())
    }
}
