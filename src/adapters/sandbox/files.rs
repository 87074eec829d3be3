//! File operations of a task run: the path is confined to the allowed root
//! (`..` and symlinks that leave it are refused), and each change comes back with
//! the content before and after, so it can be shown, reverted or applied again.

use super::error::SandboxError;
use super::paths::confine_roots;
use crate::domain::task::FileOperation;
use std::path::{Path, PathBuf};

/// One file change: the path relative to the workspace and its text before and
/// after (`None` for a file that did not or no longer exists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxFileChange {
    /// The path relative to the workspace.
    pub path: String,
    /// The content before (`None`: the file did not exist).
    pub before: Option<String>,
    /// The content after (`None`: the file was removed).
    pub after: Option<String>,
}

fn io(path: &Path, e: std::io::Error) -> SandboxError {
    SandboxError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The text of `path`, `None` when it does not exist; binary files are refused.
fn read_text(path: &Path) -> Result<Option<String>, SandboxError> {
    match std::fs::read(path) {
        Ok(bytes) => String::from_utf8(bytes).map(Some).map_err(|_| {
            SandboxError::Invalid(format!("{} is not a UTF-8 text file", path.display()))
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(io(path, e)),
    }
}

/// Whether `relative` (a path inside the workspace) lies in git's data: a
/// `.git` entry at any depth, compared without case.
pub fn is_git_data(relative: &Path) -> bool {
    relative
        .components()
        .any(|c| c.as_os_str().to_string_lossy().eq_ignore_ascii_case(".git"))
}

/// The refusal of a change to git's data when the task does not allow it.
pub fn git_data_refused(requested: &str) -> SandboxError {
    SandboxError::Invalid(format!(
        "refused: {requested} is inside .git, which is read-only: hooks and configuration there run code on the next git command (a task may allow it with sandbox_git_writable)"
    ))
}

/// Applies `op` to `requested` (relative to `workspace`, which must lie inside
/// `allowed_root`) and answers the change; `.git` is refused unless
/// `git_writable`.
pub fn apply_file_operation(
    workspace: &Path,
    allowed_root: &Path,
    requested: &str,
    op: FileOperation,
    content: &str,
    git_writable: bool,
) -> Result<SandboxFileChange, SandboxError> {
    apply_file_operation_in(
        (workspace, &[]),
        allowed_root,
        requested,
        op,
        content,
        git_writable,
    )
}

/// [`apply_file_operation`] for a session granted additional directories
/// (canonical) beside its workspace: an absolute `requested` may also lie in
/// one of them ([`confine_roots`]), where `allowed_root` does not apply, and
/// the change's path is then absolute.
pub fn apply_file_operation_in(
    (workspace, additional): (&Path, &[PathBuf]),
    allowed_root: &Path,
    requested: &str,
    op: FileOperation,
    content: &str,
    git_writable: bool,
) -> Result<SandboxFileChange, SandboxError> {
    let target = confine_roots(workspace, additional, Path::new(requested))
        .map_err(|r| SandboxError::Invalid(format!("file_path {}: {}", r.path, r.reason)))?;
    if target.relative.is_relative() && !target.real.starts_with(allowed_root) {
        return Err(SandboxError::Invalid(format!(
            "file_path {requested} is outside the allowed root {}",
            allowed_root.display()
        )));
    }
    if !git_writable && is_git_data(&target.relative) {
        return Err(git_data_refused(requested));
    }
    if target.real.is_dir() {
        return Err(SandboxError::Invalid(format!(
            "file_path {requested} is a directory"
        )));
    }
    let before = read_text(&target.real)?;
    let after = match op {
        FileOperation::Write => Some(content.to_string()),
        FileOperation::Append => Some(format!("{}{content}", before.as_deref().unwrap_or(""))),
        FileOperation::Delete => {
            if before.is_none() {
                return Err(SandboxError::Invalid(format!(
                    "file_path {requested} does not exist"
                )));
            }
            None
        }
    };
    write_back(&target.real, after.as_deref())?;
    Ok(SandboxFileChange {
        path: target.relative.display().to_string(),
        before,
        after,
    })
}

/// Puts `content` at `path` (creating parent directories), or removes the file
/// when `content` is `None`.
pub fn write_back(path: &Path, content: Option<&str>) -> Result<(), SandboxError> {
    match content {
        Some(text) => {
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            std::fs::write(path, text).map_err(|e| io(path, e))
        }
        None => match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io(path, e)),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_carry_before_and_after_and_escapes_are_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let ws = dir.path().canonicalize().expect("canon");
        let c = apply_file_operation(&ws, &ws, "a/b.txt", FileOperation::Write, "one\n", false)
            .expect("writes");
        assert_eq!((c.before, c.after.as_deref()), (None, Some("one\n")));
        let c = apply_file_operation(&ws, &ws, "a/b.txt", FileOperation::Append, "two\n", false)
            .expect("appends");
        assert_eq!(c.after.as_deref(), Some("one\ntwo\n"));
        let c = apply_file_operation(&ws, &ws, "a/b.txt", FileOperation::Delete, "", false)
            .expect("deletes");
        assert_eq!((c.before.as_deref(), c.after), (Some("one\ntwo\n"), None));
        assert!(!ws.join("a/b.txt").exists());
        let e = apply_file_operation(&ws, &ws, "../x.txt", FileOperation::Write, "x", false)
            .expect_err("climbs out");
        assert!(matches!(e, SandboxError::Invalid(_)), "{e:?}");
        let outside = tempfile::tempdir().expect("outside");
        std::os::unix::fs::symlink(outside.path(), ws.join("link")).expect("link");
        apply_file_operation(&ws, &ws, "link/x.txt", FileOperation::Write, "x", false)
            .expect_err("symlink escape");
        assert!(!outside.path().join("x.txt").exists());
    }

    #[test]
    fn git_data_is_refused_unless_allowed() {
        let dir = tempfile::tempdir().expect("dir");
        let ws = dir.path().canonicalize().expect("canon");
        std::fs::create_dir_all(ws.join(".git/hooks")).expect("git");
        std::os::unix::fs::symlink(ws.join(".git"), ws.join("g")).expect("link");
        for path in [
            ".git/hooks/post-commit",
            ".git/config",
            "./.git/config",
            "g/hooks/x",
            "sub/.git/config",
            "sub/.GIT/config",
        ] {
            let e = apply_file_operation(&ws, &ws, path, FileOperation::Write, "x", false)
                .expect_err(path);
            assert!(e.to_string().contains(".git"), "{path}: {e}");
        }
        assert!(!ws.join(".git/hooks/post-commit").exists());
        apply_file_operation(&ws, &ws, ".gitignore", FileOperation::Write, "x", false)
            .expect("not git data");
        apply_file_operation(&ws, &ws, ".git/info", FileOperation::Write, "x", true)
            .expect("allowed");
    }
}
