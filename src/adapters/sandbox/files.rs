//! File operations of a task run: the path is confined to the allowed root
//! (`..` and symlinks that leave it are refused), and each change comes back with
//! the content before and after, so it can be shown, reverted or applied again.

use super::SandboxError;
use super::paths::confine;
use crate::domain::task::FileOperation;
use std::path::Path;

/// One file change: the path relative to the workspace and its text before and
/// after (`None` for a file that did not or no longer exists).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
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

/// Applies `op` to `requested` (relative to `workspace`, which must lie inside
/// `allowed_root`) and answers the change.
pub fn apply_file_operation(
    workspace: &Path,
    allowed_root: &Path,
    requested: &str,
    op: FileOperation,
    content: &str,
) -> Result<FileChange, SandboxError> {
    let target = confine(workspace, Path::new(requested))
        .map_err(|r| SandboxError::Invalid(format!("file_path {}: {}", r.path, r.reason)))?;
    if !target.real.starts_with(allowed_root) {
        return Err(SandboxError::Invalid(format!(
            "file_path {requested} is outside the allowed root {}",
            allowed_root.display()
        )));
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
    Ok(FileChange {
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
        let c = apply_file_operation(&ws, &ws, "a/b.txt", FileOperation::Write, "one\n")
            .expect("writes");
        assert_eq!((c.before, c.after.as_deref()), (None, Some("one\n")));
        let c = apply_file_operation(&ws, &ws, "a/b.txt", FileOperation::Append, "two\n")
            .expect("appends");
        assert_eq!(c.after.as_deref(), Some("one\ntwo\n"));
        let c =
            apply_file_operation(&ws, &ws, "a/b.txt", FileOperation::Delete, "").expect("deletes");
        assert_eq!((c.before.as_deref(), c.after), (Some("one\ntwo\n"), None));
        assert!(!ws.join("a/b.txt").exists());
        let e = apply_file_operation(&ws, &ws, "../x.txt", FileOperation::Write, "x")
            .expect_err("climbs out");
        assert!(matches!(e, SandboxError::Invalid(_)), "{e:?}");
        let outside = tempfile::tempdir().expect("outside");
        std::os::unix::fs::symlink(outside.path(), ws.join("link")).expect("link");
        apply_file_operation(&ws, &ws, "link/x.txt", FileOperation::Write, "x")
            .expect_err("symlink escape");
        assert!(!outside.path().join("x.txt").exists());
    }
}
