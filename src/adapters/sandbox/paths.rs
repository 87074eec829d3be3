//! Confinement of agent-supplied paths to the session workspace: relative paths
//! join the workspace, `..` may not climb out, and symlinks are resolved so a link
//! inside the workspace pointing outside is refused.

use std::path::{Component, Path, PathBuf};

/// Why a path was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRejection {
    /// The path as the agent sent it.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// A path resolved inside the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confined {
    /// The real path to use for I/O (symlinks resolved).
    pub real: PathBuf,
    /// The path relative to the workspace root (its absolute path when it lies
    /// in an additional directory: see [`confine_roots`]).
    pub relative: PathBuf,
}

fn reject(path: &Path, reason: impl Into<String>) -> PathRejection {
    PathRejection {
        path: path.display().to_string(),
        reason: reason.into(),
    }
}

/// Resolves `requested` against the canonical `workspace`. The longest existing
/// ancestor is canonicalized (following symlinks) and the rest appended, and the
/// result must still be inside the workspace.
pub fn confine(workspace: &Path, requested: &Path) -> Result<Confined, PathRejection> {
    if requested.as_os_str().is_empty() {
        return Err(reject(requested, "empty path"));
    }
    let joined = if requested.is_absolute() {
        requested.to_path_buf()
    } else {
        workspace.join(requested)
    };
    let mut normal = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::Prefix(_) | Component::RootDir => normal.push(c.as_os_str()),
            Component::CurDir => {}
            Component::ParentDir => {
                if !normal.pop() {
                    return Err(reject(requested, "`..` climbs above the root"));
                }
            }
            Component::Normal(n) => normal.push(n),
        }
    }
    if !normal.starts_with(workspace) {
        return Err(reject(requested, "outside the session workspace"));
    }
    // Find the longest prefix that exists (as a file, dir or link itself).
    let mut existing = normal.clone();
    let mut rest: Vec<std::ffi::OsString> = Vec::new();
    while std::fs::symlink_metadata(&existing).is_err() {
        match (
            existing.file_name().map(|n| n.to_os_string()),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return Err(reject(requested, "no existing ancestor")),
        }
    }
    let mut real = std::fs::canonicalize(&existing).map_err(|e| {
        reject(
            requested,
            format!("cannot resolve {}: {e}", existing.display()),
        )
    })?;
    for name in rest.iter().rev() {
        real.push(name);
    }
    if !real.starts_with(workspace) {
        return Err(reject(
            requested,
            format!(
                "resolves to {} outside the session workspace",
                real.display()
            ),
        ));
    }
    let relative = real
        .strip_prefix(workspace)
        .map(Path::to_path_buf)
        .unwrap_or_default();
    Ok(Confined { real, relative })
}

/// [`confine`] to the workspace or, for an absolute path outside it, to one of
/// the session's additional directories (canonical, as the editor granted them).
/// A path in an additional directory answers its absolute path as `relative`,
/// so joining it to the workspace still names the file.
pub fn confine_roots(
    workspace: &Path,
    additional: &[PathBuf],
    requested: &Path,
) -> Result<Confined, PathRejection> {
    let inside = confine(workspace, requested);
    if inside.is_ok() || !requested.is_absolute() {
        return inside;
    }
    for root in additional {
        if let Ok(mut c) = confine(root, requested) {
            c.relative = c.real.clone();
            return Ok(c);
        }
    }
    match inside {
        Err(r) if !additional.is_empty() => Err(reject(
            requested,
            format!("{} and its additional directories", r.reason),
        )),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let canon = std::fs::canonicalize(dir.path()).expect("canon");
        (dir, canon)
    }

    #[test]
    fn relative_and_absolute_inside_are_accepted() {
        let (_d, w) = ws();
        std::fs::create_dir(w.join("src")).expect("mkdir");
        let c = confine(&w, Path::new("src/main.rs")).expect("ok");
        assert_eq!(c.relative, PathBuf::from("src/main.rs"));
        assert_eq!(c.real, w.join("src/main.rs"));
        let c = confine(&w, &w.join("./src/../new/deep.txt")).expect("ok");
        assert_eq!(c.relative, PathBuf::from("new/deep.txt"));
    }

    #[test]
    fn escapes_are_rejected() {
        let (_d, w) = ws();
        assert!(confine(&w, Path::new("../x")).is_err());
        assert!(confine(&w, Path::new("/etc/passwd")).is_err());
        assert!(confine(&w, Path::new("a/../../x")).is_err());
        assert!(confine(&w, Path::new("")).is_err());
    }

    #[test]
    fn symlinks_pointing_outside_are_rejected() {
        let (_d, w) = ws();
        let (_o, outside) = ws();
        std::fs::write(outside.join("secret"), "s").expect("write");
        std::os::unix::fs::symlink(outside.join("secret"), w.join("link")).expect("link");
        std::os::unix::fs::symlink(&outside, w.join("dirlink")).expect("link");
        std::os::unix::fs::symlink(outside.join("missing"), w.join("dangling")).expect("link");
        assert!(confine(&w, Path::new("link")).is_err());
        assert!(confine(&w, Path::new("dirlink/new.txt")).is_err());
        assert!(confine(&w, Path::new("dangling")).is_err());
        std::fs::write(w.join("real"), "r").expect("write");
        std::os::unix::fs::symlink(w.join("real"), w.join("inner")).expect("link");
        let c = confine(&w, Path::new("inner")).expect("inside link ok");
        assert_eq!(c.relative, PathBuf::from("real"));
    }

    #[test]
    fn additional_directories_take_absolute_paths_and_keep_their_own_escapes_out() {
        let (_d, w) = ws();
        let (_e, extra) = ws();
        let (_o, outside) = ws();
        std::fs::write(outside.join("secret"), "s").expect("write");
        std::os::unix::fs::symlink(outside.join("secret"), extra.join("link")).expect("link");
        let roots = vec![extra.clone()];
        let c = confine_roots(&w, &roots, &extra.join("notes/a.md")).expect("inside the extra");
        assert_eq!(c.real, extra.join("notes/a.md"));
        assert_eq!(c.relative, extra.join("notes/a.md"));
        assert_eq!(w.join(&c.relative), c.real, "joining still names the file");
        let c = confine_roots(&w, &roots, Path::new("src/x.rs")).expect("the workspace");
        assert_eq!(c.relative, PathBuf::from("src/x.rs"));
        // Relative paths never reach an additional directory.
        let rel = extra.strip_prefix("/").expect("absolute");
        assert!(confine_roots(&w, &roots, &Path::new("../../..").join(rel)).is_err());
        // Escapes from the additional directory are refused like the workspace's.
        assert!(confine_roots(&w, &roots, &extra.join("link")).is_err());
        assert!(confine_roots(&w, &roots, &extra.join("../x")).is_err());
        let e = confine_roots(&w, &roots, &outside.join("secret")).expect_err("outside both");
        assert!(e.reason.contains("additional directories"), "{}", e.reason);
        assert!(
            confine_roots(&w, &[], &extra.join("a")).is_err(),
            "none granted"
        );
    }
}
