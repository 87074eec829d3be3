//! The directory a task run works in: the task's own directory (`in_place`), one
//! kept per task (`persistent`), or a fresh one per run (`ephemeral`, the
//! default), cloned from `repo` (or from a `working_directory` that is a git
//! repository) when there is one. A resumed run reuses its source run's
//! directory when it still exists.

use super::error::SandboxError;
use crate::adapters::process::{self, Spec};
use crate::domain::task::WorkspaceMode;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a clone may take.
const CLONE_TIMEOUT: Duration = Duration::from_secs(300);

/// What a run's workspace is made from.
#[derive(Debug, Clone)]
pub struct WorkspaceRequest<'a> {
    /// The task's workspace mode.
    pub mode: WorkspaceMode,
    /// The task's `working_directory` (may be empty).
    pub working_directory: &'a str,
    /// A repository to clone (may be empty).
    pub repo: &'a str,
    /// The branch to clone (may be empty).
    pub base_branch: &'a str,
    /// Where Hecate keeps task directories.
    pub data_dir: &'a Path,
    /// The task's id (names its persistent directory).
    pub task_id: &'a str,
    /// The run's id (names its ephemeral directory).
    pub run_id: &'a str,
    /// The directory of the run this one resumes, when any.
    pub reuse: Option<&'a str>,
    /// The environment clones run with.
    pub env: &'a [(String, String)],
}

fn existing_dir(path: &str, what: &str) -> Result<PathBuf, SandboxError> {
    std::fs::canonicalize(path)
        .ok()
        .filter(|p| p.is_dir())
        .ok_or_else(|| SandboxError::Invalid(format!("{what} {path} is not an existing directory")))
}

fn create_dir(path: &Path) -> Result<PathBuf, SandboxError> {
    std::fs::create_dir_all(path).map_err(|e| SandboxError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    existing_dir(&path.display().to_string(), "workspace")
}

async fn clone_into(
    source: &str,
    branch: &str,
    dir: &Path,
    env: &[(String, String)],
) -> Result<(), SandboxError> {
    let mut args = vec!["clone".to_string(), "--quiet".to_string()];
    if !branch.is_empty() {
        args.extend(["--branch".to_string(), branch.to_string()]);
    }
    args.extend([
        "--".to_string(),
        source.to_string(),
        dir.display().to_string(),
    ]);
    let out = process::run(Spec::new("git").args(&args).env(env), CLONE_TIMEOUT)
        .await
        .map_err(|e| SandboxError::Spawn {
            program: "git".into(),
            message: e.message,
        })?;
    if out.success() {
        return Ok(());
    }
    Err(SandboxError::Invalid(format!(
        "git clone of {source} failed: {}",
        String::from_utf8_lossy(&out.stderr).trim()
    )))
}

/// Makes (or finds) the run's workspace and answers its canonical path.
pub async fn prepare(req: WorkspaceRequest<'_>) -> Result<PathBuf, SandboxError> {
    if let Some(dir) = req.reuse.and_then(|d| existing_dir(d, "workspace").ok()) {
        return Ok(dir);
    }
    let source = if !req.repo.is_empty() {
        Some(req.repo.to_string())
    } else if !req.working_directory.is_empty()
        && Path::new(req.working_directory).join(".git").exists()
    {
        Some(req.working_directory.to_string())
    } else {
        None
    };
    match req.mode {
        WorkspaceMode::InPlace => existing_dir(req.working_directory, "working_directory"),
        WorkspaceMode::Persistent if !req.working_directory.is_empty() => {
            existing_dir(req.working_directory, "working_directory")
        }
        WorkspaceMode::Persistent | WorkspaceMode::Ephemeral => {
            if !req.working_directory.is_empty() {
                existing_dir(req.working_directory, "working_directory")?;
            }
            let dir = match req.mode {
                WorkspaceMode::Persistent => req.data_dir.join("tasks").join(req.task_id),
                _ => req.data_dir.join("runs").join(req.run_id),
            };
            let fresh = !dir.exists();
            match (&source, fresh) {
                (Some(src), true) => {
                    if let Some(parent) = dir.parent() {
                        create_dir(parent)?;
                    }
                    clone_into(src, req.base_branch, &dir, req.env).await?;
                    existing_dir(&dir.display().to_string(), "workspace")
                }
                _ => create_dir(&dir),
            }
        }
    }
}
