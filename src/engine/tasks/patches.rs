//! Patches: the review view of a run's file changes, and applying or reverting
//! one. A patch is written back only while the file still holds the content the
//! patch expects (the before-content to apply, the after-content to revert);
//! otherwise the answer is `conflict` and the file is left alone.

use super::TaskRuntime;
use crate::adapters::sandbox::paths::confine_roots;
use crate::adapters::sandbox::write_back;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::{TaskArtifactId, TaskId, TaskRunId};
use crate::domain::task::TaskArtifact;
use crate::store::tasks::{NewTaskEvent, PatchMove};
use serde::Deserialize;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The content of a patch artifact.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct PatchContent {
    /// Path relative to the run's workspace (absolute in one of the task's
    /// additional directories).
    pub path: String,
    /// Content before (`None`: the file did not exist).
    pub before: Option<String>,
    /// Content after (`None`: the file was removed).
    pub after: Option<String>,
}

/// Names one patch of a run, as the task surfaces address it: namespace,
/// task, run and patch artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchRef<'a> {
    /// The namespace the task belongs to.
    pub namespace: &'a str,
    /// The task.
    pub task_id: &'a TaskId,
    /// The run that proposed the patch.
    pub run_id: &'a TaskRunId,
    /// The patch artifact.
    pub patch_id: &'a TaskArtifactId,
}

/// Parses a patch artifact's content.
pub fn patch_content(a: &TaskArtifact) -> Result<PatchContent> {
    serde_json::from_str(&a.content)
        .map_err(|e| HecateError::store(format!("patch {} is not readable: {e}", a.id)))
}

fn current(path: &Path) -> Result<Option<String>> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(String::from_utf8_lossy(&bytes).into_owned())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(HecateError::invalid(format!("{}: {e}", path.display()))),
    }
}

impl TaskRuntime {
    /// The patch artifacts of a run, or of every run of the task.
    pub async fn list_patches(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: Option<&TaskRunId>,
    ) -> Result<Vec<TaskArtifact>> {
        let all = self.list_artifacts(namespace, id, run_id).await?;
        Ok(all.into_iter().filter(|a| a.kind == "patch").collect())
    }

    /// One patch of a run.
    pub async fn get_patch(&self, at: PatchRef<'_>) -> Result<TaskArtifact> {
        let a = self
            .get_artifact(at.namespace, at.task_id, Some(at.run_id), at.patch_id)
            .await?;
        if a.kind != "patch" {
            return Err(HecateError::not_found("patch", at.patch_id.as_str()));
        }
        Ok(a)
    }

    /// Writes a proposed or reverted patch's after-content, when the file still
    /// holds its before-content.
    pub async fn apply_patch(&self, at: PatchRef<'_>) -> Result<TaskArtifact> {
        self.move_patch(at, true).await
    }

    /// Restores an applied patch's before-content (removing a file the patch
    /// created), when the file still holds its after-content.
    pub async fn revert_patch(&self, at: PatchRef<'_>) -> Result<TaskArtifact> {
        self.move_patch(at, false).await
    }

    async fn move_patch(&self, at: PatchRef<'_>, apply: bool) -> Result<TaskArtifact> {
        let (id, run_id, patch_id) = (at.task_id, at.run_id, at.patch_id);
        // One patch write at a time in this process: the file check and the
        // write must not interleave with another's.
        let _one = self.inner.patching.lock().await;
        let patch = self.get_patch(at).await?;
        let run = self.store().get_task_run(id, run_id).await?;
        let content = patch_content(&patch)?;
        let status = patch.status.clone().unwrap_or_default();
        let (from, to, expect, write, event) = if apply {
            let from = if status == "proposed" {
                "proposed"
            } else {
                "reverted"
            };
            (
                from,
                "applied",
                &content.before,
                &content.after,
                "tool.file.applied",
            )
        } else {
            (
                "applied",
                "reverted",
                &content.after,
                &content.before,
                "tool.file.reverted",
            )
        };
        if status != from {
            return Err(HecateError::new(
                ErrorType::Conflict,
                format!(
                    "patch {patch_id} is {status}; only a {} patch can be {}",
                    if apply {
                        "proposed or reverted"
                    } else {
                        "applied"
                    },
                    if apply { "applied" } else { "reverted" }
                ),
            ));
        }
        let workspace = run.workspace.clone().ok_or_else(|| {
            HecateError::new(
                ErrorType::Conflict,
                format!("run {run_id} has no workspace"),
            )
        })?;
        let ws = std::fs::canonicalize(&workspace).map_err(|e| {
            HecateError::new(
                ErrorType::Conflict,
                format!("the run's workspace {workspace} is gone: {e}"),
            )
        })?;
        // A patch in one of the task's additional directories names its file
        // by absolute path.
        let roots: Vec<PathBuf> = self
            .get_task(at.namespace, id)
            .await?
            .spec
            .additional_directories
            .iter()
            .filter_map(|d| std::fs::canonicalize(d).ok())
            .collect();
        let target = confine_roots(&ws, &roots, Path::new(&content.path))
            .map_err(|r| HecateError::invalid(format!("patch path {}: {}", r.path, r.reason)))?;
        let now = current(&target.real)?;
        if &now != expect {
            return Err(HecateError::new(
                ErrorType::Conflict,
                format!(
                    "{} changed since the patch was {}; not touching it",
                    content.path,
                    if apply { "captured" } else { "applied" }
                ),
            )
            .with_detail("path", content.path.clone()));
        }
        write_back(&target.real, write.as_deref())
            .map_err(|e| HecateError::invalid(e.to_string()))?;
        let stored = self
            .store()
            .set_task_patch_status(PatchMove {
                task_id: id.clone(),
                id: patch_id.clone(),
                from: from.to_owned(),
                to: to.to_owned(),
                events: vec![NewTaskEvent::new(
                    event,
                    json!({"artifact_id": patch_id, "path": content.path}),
                )],
            })
            .await;
        match stored {
            Ok((patch, events)) => {
                self.publish(events);
                Ok(patch)
            }
            Err(e) => {
                // Put the file back as it was: the store did not record the move.
                let _ = write_back(&target.real, expect.as_deref());
                Err(e)
            }
        }
    }
}
