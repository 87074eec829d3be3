//! The file tools: reading and listing through the workspace confinement,
//! writing and editing through the sandbox's file operations, so every change
//! comes back as a before/after patch.

use super::{Patch, ToolEnv, ToolError, ToolOutcome};
use crate::adapters::sandbox::paths::confine_roots;
use crate::adapters::sandbox::{
    SandboxFileChange, apply_file_operation_in, git_data_refused, is_git_data,
};
use crate::domain::task::FileOperation;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Arguments of `read_file`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ReadArgs {
    path: String,
}

/// Arguments of `list_dir`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ListArgs {
    #[serde(default)]
    path: Option<String>,
}

/// Arguments of `file_write`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct WriteArgs {
    pub(super) path: String,
    content: String,
}

/// Arguments of `file_edit`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct EditArgs {
    pub(super) path: String,
    old_string: String,
    new_string: String,
    #[serde(default)]
    propose: bool,
}

/// The real path of `requested`, refused when it leaves the workspace (and
/// every additional directory) or the allowed root; also answers the path
/// relative to the workspace (absolute in an additional directory).
fn resolve(env: &ToolEnv, requested: &str) -> Result<(PathBuf, String), ToolError> {
    let target = confine_roots(&env.workspace, &env.additional, Path::new(requested))
        .map_err(|r| ToolError::Refused(format!("path {}: {}", r.path, r.reason)))?;
    if target.relative.is_relative() && !target.real.starts_with(&env.allowed_root) {
        return Err(ToolError::Refused(format!(
            "path {requested} is outside the allowed root {}",
            env.allowed_root.display()
        )));
    }
    Ok((target.real, target.relative.display().to_string()))
}

fn read_text(real: &Path, requested: &str) -> Result<String, ToolError> {
    let bytes = std::fs::read(real).map_err(|e| ToolError::Refused(format!("{requested}: {e}")))?;
    String::from_utf8(bytes)
        .map_err(|_| ToolError::Refused(format!("{requested} is not a UTF-8 text file")))
}

/// Refuses a write to git's data (`.git` at any depth) unless the task allows
/// it: hooks and configuration there run code on the next git command.
pub(super) fn refuse_git_data(env: &ToolEnv, requested: &str) -> Result<(), ToolError> {
    let (_, relative) = resolve(env, requested)?;
    if !env.confinement.git_writable && is_git_data(Path::new(&relative)) {
        return Err(ToolError::Sandbox(git_data_refused(requested)));
    }
    Ok(())
}

pub(super) fn read_file(env: &ToolEnv, a: ReadArgs) -> Result<ToolOutcome, ToolError> {
    let (real, _) = resolve(env, &a.path)?;
    if real.is_dir() {
        return Err(ToolError::Refused(format!(
            "{} is a directory; use list_dir",
            a.path
        )));
    }
    Ok(ToolOutcome::text(read_text(&real, &a.path)?))
}

pub(super) fn list_dir(env: &ToolEnv, a: ListArgs) -> Result<ToolOutcome, ToolError> {
    let requested = a
        .path
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| ".".into());
    let real = if requested == "." {
        env.workspace.clone()
    } else {
        resolve(env, &requested)?.0
    };
    let entries =
        std::fs::read_dir(&real).map_err(|e| ToolError::Refused(format!("{requested}: {e}")))?;
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                format!("{name}/")
            } else {
                name
            }
        })
        .collect();
    names.sort();
    Ok(ToolOutcome::text(names.join("\n")))
}

fn changed(change: SandboxFileChange, proposed: bool) -> ToolOutcome {
    let verb = match (&change.before, proposed) {
        (_, true) => "proposed a change to",
        (None, false) => "created",
        (Some(_), false) => "updated",
    };
    ToolOutcome {
        patch: Some(Patch {
            change: change.clone(),
            proposed,
        }),
        ..ToolOutcome::text(format!("{verb} {}", change.path))
    }
}

pub(super) fn file_write(env: &ToolEnv, a: WriteArgs) -> Result<ToolOutcome, ToolError> {
    resolve(env, &a.path)?;
    let change = apply_file_operation_in(
        (&env.workspace, &env.additional),
        &env.allowed_root,
        &a.path,
        FileOperation::Write,
        &a.content,
        env.confinement.git_writable,
    )?;
    Ok(changed(change, false))
}

pub(super) fn file_edit(env: &ToolEnv, a: EditArgs) -> Result<ToolOutcome, ToolError> {
    refuse_git_data(env, &a.path)?;
    let (real, relative) = resolve(env, &a.path)?;
    let before = read_text(&real, &a.path)?;
    if a.old_string.is_empty() {
        return Err(ToolError::Refused("old_string must not be empty".into()));
    }
    let count = before.matches(a.old_string.as_str()).count();
    if count != 1 {
        return Err(ToolError::Refused(format!(
            "old_string occurs {count} times in {}; it must occur exactly once",
            a.path
        )));
    }
    let after = before.replacen(a.old_string.as_str(), &a.new_string, 1);
    if a.propose {
        let change = SandboxFileChange {
            path: relative,
            before: Some(before),
            after: Some(after),
        };
        return Ok(changed(change, true));
    }
    let change = apply_file_operation_in(
        (&env.workspace, &env.additional),
        &env.allowed_root,
        &a.path,
        FileOperation::Write,
        &after,
        env.confinement.git_writable,
    )?;
    Ok(changed(change, false))
}

#[cfg(test)]
mod tests {
    use super::super::{ToolEnv, run};
    use crate::adapters::sandbox::Confinement;
    use crate::domain::message::ToolCall;
    use serde_json::json;
    use std::time::Duration;
    use tokio_util::sync::CancellationToken;

    fn env(ws: &std::path::Path) -> ToolEnv {
        ToolEnv {
            workspace: ws.to_path_buf(),
            allowed_root: ws.to_path_buf(),
            additional: Vec::new(),
            confinement: Confinement::none(),
            env: Vec::new(),
            timeout: Duration::from_secs(10),
            http: Default::default(),
            access: Default::default(),
        }
    }

    async fn call(env: &ToolEnv, name: &str, args: serde_json::Value) -> super::ToolOutcome {
        let c = ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.to_string(),
        };
        run(env, &c, &CancellationToken::new()).await
    }

    fn read(ws: &std::path::Path, name: &str) -> String {
        std::fs::read_to_string(ws.join(name)).expect("read")
    }

    #[tokio::test]
    async fn file_tools_stay_in_the_workspace_and_edit_unique_strings() {
        let dir = tempfile::tempdir().expect("dir");
        let ws = dir.path().canonicalize().expect("canon");
        let env = env(&ws);
        std::fs::write(ws.join("a.txt"), "one two two\n").expect("seed");
        let r = call(&env, "read_file", json!({"path": "a.txt"})).await;
        assert_eq!((r.content.as_str(), r.is_error), ("one two two\n", false));
        let r = call(&env, "read_file", json!({"path": "../etc/passwd"})).await;
        assert!(r.is_error, "{}", r.content);
        let r = call(&env, "read_file", json!({"file": "a.txt"})).await;
        assert!(
            r.is_error && r.content.contains("malformed arguments"),
            "{}",
            r.content
        );
        let r = call(
            &env,
            "file_edit",
            json!({"path": "a.txt", "old_string": "two", "new_string": "2"}),
        )
        .await;
        assert!(r.is_error && r.content.contains("2 times"), "{}", r.content);
        let r = call(
            &env,
            "file_edit",
            json!({"path": "a.txt", "old_string": "one", "new_string": "1", "propose": true}),
        )
        .await;
        let p = r.patch.expect("proposed");
        assert!(p.proposed);
        assert_eq!(p.change.after.as_deref(), Some("1 two two\n"));
        assert_eq!(read(&ws, "a.txt"), "one two two\n");
        let r = call(
            &env,
            "file_edit",
            json!({"path": "a.txt", "old_string": "one", "new_string": "1"}),
        )
        .await;
        assert!(!r.is_error && !r.patch.expect("patch").proposed);
        assert_eq!(read(&ws, "a.txt"), "1 two two\n");
        let r = call(
            &env,
            "file_write",
            json!({"path": "d/b.txt", "content": "b"}),
        )
        .await;
        assert_eq!(r.patch.expect("patch").change.before, None);
        let r = call(&env, "list_dir", json!({})).await;
        assert_eq!(r.content, "a.txt\nd/");
        let r = call(&env, "no_such_tool", json!({})).await;
        assert!(
            r.is_error && r.content.contains("unknown tool"),
            "{}",
            r.content
        );
    }

    #[tokio::test]
    async fn absolute_paths_reach_the_additional_directories_and_no_others() {
        let (d, e, o) = (
            tempfile::tempdir(),
            tempfile::tempdir(),
            tempfile::tempdir(),
        );
        let canon = |t: &std::io::Result<tempfile::TempDir>| {
            t.as_ref()
                .expect("dir")
                .path()
                .canonicalize()
                .expect("canon")
        };
        let (ws, extra, outside) = (canon(&d), canon(&e), canon(&o));
        let env = ToolEnv {
            additional: vec![extra.clone()],
            ..env(&ws)
        };
        let at = |dir: &std::path::Path, name: &str| dir.join(name).display().to_string();
        std::fs::write(extra.join("in.txt"), "extra\n").expect("seed");
        let r = call(&env, "read_file", json!({"path": at(&extra, "in.txt")})).await;
        assert_eq!((r.content.as_str(), r.is_error), ("extra\n", false));
        let r = call(
            &env,
            "file_write",
            json!({"path": at(&extra, "out/new.txt"), "content": "n"}),
        )
        .await;
        let p = r.patch.expect("patch");
        assert_eq!(p.change.path, at(&extra, "out/new.txt"), "named absolute");
        assert_eq!(read(&extra, "out/new.txt"), "n");
        let r = call(
            &env,
            "file_edit",
            json!({"path": at(&extra, "in.txt"), "old_string": "extra", "new_string": "edited"}),
        )
        .await;
        assert!(!r.is_error, "{}", r.content);
        assert_eq!(read(&extra, "in.txt"), "edited\n");
        let r = call(
            &env,
            "list_dir",
            json!({"path": extra.display().to_string()}),
        )
        .await;
        assert_eq!(r.content, "in.txt\nout/");
        let r = call(
            &env,
            "file_write",
            json!({"path": "rel.txt", "content": "r"}),
        )
        .await;
        assert_eq!(r.patch.expect("patch").change.path, "rel.txt");
        assert!(ws.join("rel.txt").exists() && !extra.join("rel.txt").exists());
        std::os::unix::fs::symlink(&outside, extra.join("link")).expect("link");
        for path in [at(&outside, "no.txt"), at(&extra, "link/no.txt")] {
            let r = call(&env, "file_write", json!({"path": path, "content": "x"})).await;
            assert!(
                r.is_error && r.content.contains("additional directories"),
                "{}",
                r.content
            );
        }
        assert!(!outside.join("no.txt").exists());
    }

    #[tokio::test]
    async fn a_tool_the_access_withholds_is_refused_before_it_runs() {
        let dir = tempfile::tempdir().expect("dir");
        let ws = dir.path().canonicalize().expect("canon");
        let read_only = ToolEnv {
            access: crate::domain::task::ToolAccess::ReadOnly,
            ..env(&ws)
        };
        let write = ToolCall {
            id: "w".into(),
            name: "file_write".into(),
            arguments: json!({"path": "a.txt", "content": "a"}).to_string(),
        };
        let refused = super::super::refusal(&read_only, &write).expect("withheld");
        assert!(refused.to_string().contains("read_only"), "{refused}");
        let r = call(
            &read_only,
            "file_write",
            json!({"path": "a.txt", "content": "a"}),
        )
        .await;
        assert!(
            r.is_error && r.content.contains("not available"),
            "{}",
            r.content
        );
        assert!(!ws.join("a.txt").exists(), "nothing was written");
        let r = call(&read_only, "list_dir", json!({})).await;
        assert!(!r.is_error, "{}", r.content);
        let none = ToolEnv {
            access: crate::domain::task::ToolAccess::None,
            ..env(&ws)
        };
        let r = call(&none, "list_dir", json!({})).await;
        assert!(r.is_error && r.content.contains("none"), "{}", r.content);
    }
}
