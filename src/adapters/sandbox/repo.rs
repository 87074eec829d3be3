//! Where a workspace keeps its git data: the `.git` entry at its top (a
//! directory, or a file naming a worktree's or submodule's git directory) and
//! the git directories such a file leads to, so a sandbox can keep them
//! read-only for commands and writable for git itself.

use std::path::{Path, PathBuf};

/// A workspace's git data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoDirs {
    /// `<workspace>/.git`, whether or not it exists.
    pub entry: PathBuf,
    /// Whether the entry exists (as a directory or a file).
    pub exists: bool,
    /// For a `.git` file: the git directory it names and that directory's
    /// common directory (the main repository's `.git` for a worktree), each
    /// only when it is a real git directory (it has a `HEAD`).
    pub linked: Vec<PathBuf>,
}

/// Reads the git directory a `.git` file names (`gitdir: PATH`, relative to
/// the file's directory).
fn linked_git_dir(file: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    let base = file.parent()?;
    std::fs::canonicalize(base.join(target)).ok()
}

fn is_git_dir(dir: &Path) -> bool {
    dir.join("HEAD").is_file()
}

/// The git data of `workspace` (a canonical directory).
pub fn repo_dirs(workspace: &Path) -> RepoDirs {
    let entry = workspace.join(".git");
    let meta = std::fs::symlink_metadata(&entry).ok();
    let mut linked = Vec::new();
    if meta.as_ref().is_some_and(|m| m.is_file())
        && let Some(dir) = linked_git_dir(&entry).filter(|d| is_git_dir(d))
    {
        let common = std::fs::read_to_string(dir.join("commondir"))
            .ok()
            .and_then(|c| std::fs::canonicalize(dir.join(c.trim())).ok())
            .filter(|c| is_git_dir(c) && *c != dir);
        linked.push(dir);
        linked.extend(common);
    }
    RepoDirs {
        entry,
        exists: meta.is_some(),
        linked,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_file_leads_to_its_git_dir_and_the_common_one() {
        let dir = tempfile::tempdir().expect("dir");
        let root = dir.path().canonicalize().expect("canon");
        let main = root.join("main/.git");
        let wt = main.join("worktrees/feature");
        std::fs::create_dir_all(&wt).expect("mkdir");
        std::fs::write(main.join("HEAD"), "ref: refs/heads/main\n").expect("head");
        std::fs::write(wt.join("HEAD"), "ref: refs/heads/feature\n").expect("head");
        std::fs::write(wt.join("commondir"), "../..\n").expect("commondir");
        let ws = root.join("feature");
        std::fs::create_dir_all(&ws).expect("ws");
        std::fs::write(ws.join(".git"), format!("gitdir: {}\n", wt.display())).expect("file");
        let found = repo_dirs(&ws);
        assert!(found.exists);
        assert_eq!(found.linked, [wt, main]);
        let plain = root.join("plain");
        std::fs::create_dir_all(plain.join(".git")).expect("repo");
        let found = repo_dirs(&plain);
        assert!(found.exists && found.linked.is_empty());
        assert!(!repo_dirs(&root).exists);
    }

    #[test]
    fn a_git_file_naming_something_that_is_no_git_dir_leads_nowhere() {
        let dir = tempfile::tempdir().expect("dir");
        let ws = dir.path().canonicalize().expect("canon");
        std::fs::write(ws.join(".git"), "gitdir: /etc\n").expect("file");
        assert!(repo_dirs(&ws).linked.is_empty());
    }
}
