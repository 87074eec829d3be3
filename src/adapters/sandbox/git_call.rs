//! A git command line made safe to run in a workspace: checked against the git
//! forms that run other programs (`domain::git_command`), its `-C` directories
//! kept inside the workspace and off nested repositories, and run with hooks
//! and fsmonitor off, the `ext::` transport and bare-repository discovery
//! refused, no system configuration, and no editor, pager or password prompt.

use super::error::SandboxError;
use super::paths::confine;
use crate::domain::git_command::{self, GitCall};
use std::path::{Path, PathBuf};

/// Configuration every git run gets ahead of its own arguments (the command
/// line wins over every configuration file).
const FORCED_CONFIG: [&str; 3] = [
    "core.fsmonitor=false",
    "protocol.ext.allow=never",
    "safe.bareRepository=explicit",
];

/// Where git looks for hooks when they are off: no hook is ever found there.
const NO_HOOKS: &str = "core.hooksPath=/dev/null";

/// A git run ready for the confined runner.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitRun {
    /// The arguments after `git`, the forced configuration first.
    pub args: Vec<String>,
    /// The environment, git's own variables replaced by the safe ones.
    pub env: Vec<(String, String)>,
}

/// Where git starts: the workspace, moved by each `-C`, which must stay inside
/// it (symlinks resolved) and name a directory.
fn start_dir(workspace: &Path, call: &GitCall) -> Result<PathBuf, SandboxError> {
    let mut here = workspace.to_path_buf();
    for dir in &call.start_dirs {
        let next = confine(workspace, &here.join(dir))
            .map_err(|r| SandboxError::Invalid(format!("git -C {dir}: {}", r.reason)))?;
        if !next.real.is_dir() {
            return Err(SandboxError::Invalid(format!(
                "git -C {dir}: not a directory in the workspace"
            )));
        }
        here = next.real;
    }
    Ok(here)
}

/// Refuses a start directory below which, up to the workspace, lies another
/// repository's `.git`: its configuration was not the user's.
fn refuse_nested(workspace: &Path, start: &Path) -> Result<(), SandboxError> {
    let mut dir = start;
    while dir != workspace && dir.starts_with(workspace) {
        if std::fs::symlink_metadata(dir.join(".git")).is_ok() {
            let rel = dir.strip_prefix(workspace).unwrap_or(dir);
            return Err(SandboxError::Invalid(format!(
                "git refused: {}/.git is a nested repository; Hecate runs git on the workspace's own repository only",
                rel.display()
            )));
        }
        match dir.parent() {
            Some(parent) => dir = parent,
            None => break,
        }
    }
    Ok(())
}

/// Checks `args` (after `git`) for a run in `workspace` (canonical) and answers
/// the arguments and environment to run it with; `hooks` leaves the
/// repository's hooks on (a task that allows it).
pub fn prepare_git(
    workspace: &Path,
    args: &[String],
    env: &[(String, String)],
    hooks: bool,
) -> Result<GitRun, SandboxError> {
    let call = git_command::check(args).map_err(|e| SandboxError::Invalid(e.to_string()))?;
    let start = start_dir(workspace, &call)?;
    refuse_nested(workspace, &start)?;
    let mut forced: Vec<&str> = FORCED_CONFIG.to_vec();
    if !hooks {
        forced.push(NO_HOOKS);
    }
    let mut full = Vec::with_capacity(forced.len() * 2 + args.len());
    for pair in forced {
        full.push("-c".to_string());
        full.push(pair.to_string());
    }
    full.extend(args.iter().cloned());
    let mut env: Vec<(String, String)> = env
        .iter()
        .filter(|(k, _)| !k.starts_with("GIT_") && k != "PAGER" && k != "EDITOR" && k != "VISUAL")
        .cloned()
        .collect();
    for (k, v) in [
        ("GIT_CONFIG_NOSYSTEM", "1"),
        ("GIT_EDITOR", ":"),
        ("GIT_SEQUENCE_EDITOR", ":"),
        ("GIT_PAGER", "cat"),
        ("GIT_TERMINAL_PROMPT", "0"),
    ] {
        env.push((k.to_string(), v.to_string()));
    }
    Ok(GitRun { args: full, env })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<String> {
        line.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn a_safe_call_gets_hooks_off_and_a_clean_environment() {
        let dir = tempfile::tempdir().expect("dir");
        let ws = dir.path().canonicalize().expect("canon");
        let env = vec![
            ("PATH".to_string(), "/usr/bin".to_string()),
            ("GIT_DIR".to_string(), "/elsewhere".to_string()),
            ("EDITOR".to_string(), "vim".to_string()),
        ];
        let run = prepare_git(&ws, &words("status -s"), &env, false).expect("safe");
        assert_eq!(run.args[run.args.len() - 2..], ["status", "-s"]);
        assert!(run.args.contains(&"core.hooksPath=/dev/null".to_string()));
        assert!(run.env.iter().all(|(k, _)| k != "GIT_DIR" && k != "EDITOR"));
        assert!(
            run.env
                .contains(&("GIT_CONFIG_NOSYSTEM".into(), "1".into()))
        );
        let run = prepare_git(&ws, &words("status"), &env, true).expect("safe");
        assert!(!run.args.contains(&"core.hooksPath=/dev/null".to_string()));
    }

    #[test]
    fn start_directories_stay_in_the_workspace_and_off_nested_repositories() {
        let dir = tempfile::tempdir().expect("dir");
        let ws = dir.path().canonicalize().expect("canon");
        std::fs::create_dir_all(ws.join("src/deep")).expect("src");
        std::fs::create_dir_all(ws.join("vendor/lib/.git")).expect("nested");
        std::fs::create_dir_all(ws.join("vendor/lib/inner")).expect("inner");
        prepare_git(&ws, &words("-C src -C deep status"), &[], false).expect("inside");
        for line in [
            "-C .. status",
            "-C /etc status",
            "-C missing status",
            "-C vendor/lib status",
            "-C vendor/lib/inner status",
            "-c alias.x=!sh x",
        ] {
            let e = prepare_git(&ws, &words(line), &[], false).expect_err(line);
            assert!(matches!(e, SandboxError::Invalid(_)), "{line}: {e:?}");
        }
    }
}
