//! Workspace change capture with Git: a tree snapshot before a turn, another after,
//! and the difference between them, so a turn's diff excludes what was already dirty.
//! Snapshots use a private index file and never touch the user's index or branches.
//! Git runs as a supervised child: sanitized environment, own process group, a
//! time limit.

use crate::adapters::process::env::{current_env, sanitized_env};
use crate::adapters::process::{self, Spec};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// How long one git command may take (a first `add -A` of a large tree is slow).
const GIT_TIMEOUT: Duration = Duration::from_secs(600);

/// Variables git may see besides the base allowlist: where its configuration
/// lives. `GIT_DIR`, `GIT_INDEX_FILE` and the like are never inherited, since
/// they would redirect the snapshots.
const GIT_ENV_ALLOW: &[&str] = &["XDG_CONFIG_HOME", "GIT_CONFIG_*", "GIT_CEILING_DIRECTORIES"];

/// Git failed or the workspace is not a repository.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GitError {
    /// The workspace is not inside a Git work tree.
    #[error("{0} is not a Git work tree")]
    NotARepository(String),
    /// `git` could not be run.
    #[error("cannot run git: {0}")]
    Spawn(String),
    /// A git command did not finish within its time limit.
    #[error("git {0} timed out")]
    TimedOut(String),
    /// A git command failed.
    #[error("git {command} failed: {stderr}")]
    Failed {
        /// The subcommand.
        command: String,
        /// Its stderr.
        stderr: String,
    },
}

pub use crate::domain::file_change::TurnFileChange;

/// What a turn changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeDiff {
    /// Tree before.
    pub base_tree: String,
    /// Tree after.
    pub after_tree: String,
    /// `git diff --stat` text.
    pub stat: String,
    /// Changed files.
    pub files: Vec<TurnFileChange>,
    /// Per-file unified (binary-safe) diff, in the order of `files`.
    pub diffs: Vec<String>,
}

async fn git(ws: &Path, args: &[&str], index: Option<&Path>) -> Result<String, GitError> {
    let allow: Vec<String> = GIT_ENV_ALLOW.iter().map(|p| p.to_string()).collect();
    let extra: Vec<(String, String)> = index
        .map(|i| ("GIT_INDEX_FILE".to_string(), i.display().to_string()))
        .into_iter()
        .collect();
    let env = sanitized_env(&current_env(), &allow, &extra);
    let cmd = Spec::new("git")
        .args(["-C".as_ref(), ws.as_os_str()])
        .args(args)
        .env(&env);
    let command = args.first().copied().unwrap_or("").to_string();
    let out = process::run(cmd, GIT_TIMEOUT)
        .await
        .map_err(|e| GitError::Spawn(e.to_string()))?;
    if out.exit.is_none() {
        return Err(GitError::TimedOut(command));
    }
    if !out.success() {
        return Err(GitError::Failed {
            command,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// The repository root containing `ws`, or `NotARepository`.
pub async fn repo_root(ws: &Path) -> Result<String, GitError> {
    match git(ws, &["rev-parse", "--show-toplevel"], None).await {
        Ok(s) => Ok(s.trim().to_string()),
        Err(GitError::Failed { .. }) => Err(GitError::NotARepository(ws.display().to_string())),
        Err(e) => Err(e),
    }
}

/// Writes the current work tree (tracked and untracked, not ignored) as a tree object
/// using a private copy of the index; returns the tree id.
pub async fn snapshot(ws: &Path) -> Result<String, GitError> {
    let root = repo_root(ws).await?;
    let root = Path::new(&root);
    let index_path = git(root, &["rev-parse", "--git-path", "index"], None).await?;
    let index_path = root.join(index_path.trim());
    let tmp = std::env::temp_dir().join(format!("hecate-index-{}", uuid::Uuid::new_v4().simple()));
    if index_path.exists() {
        // Starting from the real index keeps git's stat cache: only changed files are hashed.
        tokio::fs::copy(&index_path, &tmp)
            .await
            .map_err(|e| GitError::Spawn(e.to_string()))?;
    }
    let result = async {
        git(root, &["add", "-A", "--", "."], Some(&tmp)).await?;
        git(root, &["write-tree"], Some(&tmp)).await
    }
    .await;
    let _ = tokio::fs::remove_file(&tmp).await;
    Ok(result?.trim().to_string())
}

/// The difference between two snapshots.
pub async fn diff(ws: &Path, base: &str, after: &str) -> Result<TreeDiff, GitError> {
    diff_in(ws, base, after, &[]).await
}

/// [`diff`] limited to `paths` (repository-relative; every path when empty).
pub async fn diff_in(
    ws: &Path,
    base: &str,
    after: &str,
    paths: &[String],
) -> Result<TreeDiff, GitError> {
    let root = repo_root(ws).await?;
    let root = Path::new(&root);
    let limited = |args: &[&'static str]| -> Vec<String> {
        let mut all: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        all.push(base.to_string());
        all.push(after.to_string());
        if !paths.is_empty() {
            all.push("--".into());
            all.extend(paths.iter().cloned());
        }
        all
    };
    let run = |args: Vec<String>| async move {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        git(root, &refs, None).await
    };
    let stat = run(limited(&["diff", "--stat", "-M"])).await?;
    let numstat = run(limited(&["diff", "--numstat", "-z", "-M"])).await?;
    let name_status = run(limited(&["diff", "--name-status", "-z", "-M"])).await?;
    let mut files = parse_name_status(&name_status);
    apply_numstat(&mut files, &numstat);
    let mut diffs = Vec::with_capacity(files.len());
    for f in &files {
        let mut args = vec!["diff", "--binary", "-M", base, after, "--"];
        if let Some(old) = &f.old_path {
            args.push(old);
        }
        args.push(&f.path);
        diffs.push(git(root, &args, None).await?);
    }
    Ok(TreeDiff {
        base_tree: base.to_string(),
        after_tree: after.to_string(),
        stat,
        files,
        diffs,
    })
}

/// Restores `paths` (repository-relative) to their state in `base`: files that did
/// not exist there are removed, renamed files get their old path back.
pub async fn restore(ws: &Path, base: &str, changes: &[TurnFileChange]) -> Result<(), GitError> {
    let root = repo_root(ws).await?;
    let root = Path::new(&root);
    for c in changes {
        match c.status.as_str() {
            "added" => remove(root, &c.path).await?,
            "renamed" => {
                remove(root, &c.path).await?;
                if let Some(old) = &c.old_path {
                    git(
                        root,
                        &["restore", "--source", base, "--worktree", "--", old],
                        None,
                    )
                    .await?;
                }
            }
            _ => {
                git(
                    root,
                    &["restore", "--source", base, "--worktree", "--", &c.path],
                    None,
                )
                .await?;
            }
        }
    }
    Ok(())
}

async fn remove(root: &Path, rel: &str) -> Result<(), GitError> {
    match tokio::fs::remove_file(root.join(rel)).await {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(GitError::Spawn(format!("removing {rel}: {e}"))),
    }
}

fn parse_name_status(z: &str) -> Vec<TurnFileChange> {
    let mut parts = z.split('\0').filter(|s| !s.is_empty());
    let mut out = Vec::new();
    while let Some(code) = parts.next() {
        let kind = code.chars().next().unwrap_or('M');
        let (old_path, path) = if matches!(kind, 'R' | 'C') {
            let old = parts.next().unwrap_or_default().to_string();
            (Some(old), parts.next().unwrap_or_default().to_string())
        } else {
            (None, parts.next().unwrap_or_default().to_string())
        };
        let status = match kind {
            'A' => "added",
            'D' => "deleted",
            'R' => "renamed",
            'C' => "added",
            _ => "modified",
        };
        out.push(TurnFileChange {
            path,
            old_path: if kind == 'R' { old_path } else { None },
            status: status.to_string(),
            additions: 0,
            deletions: 0,
        });
    }
    out
}

fn apply_numstat(files: &mut [TurnFileChange], z: &str) {
    // Records: "ADD\tDEL\tPATH\0" or, for renames, "ADD\tDEL\t\0OLD\0NEW\0".
    let mut parts = z.split('\0');
    while let Some(head) = parts.next() {
        if head.is_empty() {
            continue;
        }
        let mut cols = head.splitn(3, '\t');
        let (add, del, path) = (cols.next(), cols.next(), cols.next().unwrap_or(""));
        let path = if path.is_empty() {
            let _old = parts.next();
            parts.next().unwrap_or_default().to_string()
        } else {
            path.to_string()
        };
        if let Some(f) = files.iter_mut().find(|f| f.path == path) {
            match (add, del) {
                (Some("-"), Some("-")) if f.status == "modified" => {
                    f.status = "binary".into();
                }
                (Some(a), Some(d)) => {
                    f.additions = a.parse().unwrap_or(0);
                    f.deletions = d.parse().unwrap_or(0);
                }
                _ => {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn sh(dir: &Path, script: &str) {
        let st = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .status()
            .await
            .expect("sh");
        assert!(st.success(), "{script}");
    }

    #[tokio::test]
    async fn captures_only_what_changed_between_snapshots_and_restores_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let ws = dir.path();
        sh(ws, "git init -q && git config user.email t@t && git config user.name t && \
                printf 'a\\nb\\n' > keep.txt && printf 'x\\n' > edit.txt && printf 'old\\n' > gone.txt && \
                printf 'move me\\n' > from.txt && git add -A && git commit -qm init && \
                printf 'dirty before\\n' >> keep.txt").await;
        let base = snapshot(ws).await.expect("base");
        sh(
            ws,
            "printf 'x\\ny\\n' > edit.txt && rm gone.txt && printf 'new\\n' > added.txt && \
                git mv -f from.txt to.txt 2>/dev/null || mv from.txt to.txt; \
                printf '\\000\\001' > bin.dat",
        )
        .await;
        let after = snapshot(ws).await.expect("after");
        let d = diff(ws, &base, &after).await.expect("diff");
        let by_path = |p: &str| d.files.iter().find(|f| f.path == p).cloned();
        assert!(
            by_path("keep.txt").is_none(),
            "pre-existing dirt is not the turn's"
        );
        let edit = by_path("edit.txt").expect("edit");
        assert_eq!(
            (edit.status.as_str(), edit.additions, edit.deletions),
            ("modified", 1, 0)
        );
        assert_eq!(by_path("gone.txt").expect("gone").status, "deleted");
        assert_eq!(by_path("added.txt").expect("added").status, "added");
        let moved = by_path("to.txt").expect("renamed");
        assert_eq!(moved.status, "renamed");
        assert_eq!(moved.old_path.as_deref(), Some("from.txt"));
        assert!(by_path("bin.dat").is_some());
        assert!(d.stat.contains("edit.txt"));
        assert_eq!(d.diffs.len(), d.files.len());
        // The user's index is untouched.
        let status = git(ws, &["diff", "--cached", "--name-only"], None)
            .await
            .expect("status");
        assert!(!status.contains("edit.txt"), "{status}");

        restore(ws, &base, &d.files).await.expect("restore");
        assert_eq!(
            std::fs::read_to_string(ws.join("edit.txt")).expect("edit"),
            "x\n"
        );
        assert!(ws.join("gone.txt").exists());
        assert!(!ws.join("added.txt").exists());
        assert!(ws.join("from.txt").exists() && !ws.join("to.txt").exists());
        assert!(
            std::fs::read_to_string(ws.join("keep.txt"))
                .expect("keep")
                .contains("dirty before")
        );
    }

    #[tokio::test]
    async fn a_plain_directory_says_so() {
        let dir = tempfile::tempdir().expect("tempdir");
        assert!(matches!(
            snapshot(dir.path()).await,
            Err(GitError::NotARepository(_))
        ));
    }
}
