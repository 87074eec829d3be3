//! A session's additional directories (ACP `additionalDirectories`): the
//! workspace rule they must pass, and handing them to the session's external
//! agent.

use super::Agents;
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::SessionId;
use std::path::{Path, PathBuf};

/// Most additional directories one session may have.
pub const MAX_ADDITIONAL_DIRECTORIES: usize = 32;

/// Pseudo filesystems and boot files no session may take as a directory.
const OFF_LIMITS: [&str; 4] = ["/proc", "/sys", "/dev", "/boot"];

/// An `invalid_request` about additional directory `path` with the stable `reason`.
fn refused(reason: &str, path: &Path, why: &str) -> HecateError {
    HecateError::invalid(format!(
        "additional directory {:?} {why}",
        path.display().to_string()
    ))
    .with_detail("reason", reason)
    .with_detail("path", path.display().to_string())
    .with_operator_action(
        "Pass absolute paths of existing directories (not `/`, /proc, /sys, /dev or /boot).",
    )
}

/// Checks and canonicalizes a session's additional directories: each must be
/// absolute (`additional_directory_relative`), an existing directory
/// (`additional_directory_missing`) and not the filesystem root or a pseudo
/// filesystem (`additional_directory_not_allowed`); at most
/// [`MAX_ADDITIONAL_DIRECTORIES`] (`additional_directories_too_many`).
/// Duplicates and the workspace itself are dropped.
pub fn check_additional_directories(workspace: &Path, dirs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    if dirs.len() > MAX_ADDITIONAL_DIRECTORIES {
        return Err(HecateError::invalid(format!(
            "{} additional directories; at most {MAX_ADDITIONAL_DIRECTORIES} are taken",
            dirs.len()
        ))
        .with_detail("reason", "additional_directories_too_many")
        .with_detail("limit", MAX_ADDITIONAL_DIRECTORIES));
    }
    let workspace = workspace
        .canonicalize()
        .unwrap_or_else(|_| workspace.to_path_buf());
    let mut out: Vec<PathBuf> = Vec::new();
    for dir in dirs {
        if !dir.is_absolute() {
            return Err(refused(
                "additional_directory_relative",
                dir,
                "is relative; it must be absolute",
            ));
        }
        let canon = match dir.canonicalize() {
            Ok(c) if c.is_dir() => c,
            _ => {
                return Err(refused(
                    "additional_directory_missing",
                    dir,
                    "is not an existing directory",
                ));
            }
        };
        if canon.parent().is_none() || OFF_LIMITS.iter().any(|o| canon.starts_with(o)) {
            return Err(refused(
                "additional_directory_not_allowed",
                dir,
                "is outside what a session may use",
            ));
        }
        if canon != workspace && !out.contains(&canon) {
            out.push(canon);
        }
    }
    Ok(out)
}

impl Agents<'_> {
    /// Gives `session_id`'s external agent these (checked) additional
    /// directories from its next native session on; a running agent given
    /// other directories is let go, so the next attach passes the new ones.
    pub async fn set_additional_directories(self, session_id: &SessionId, dirs: Vec<PathBuf>) {
        if let Some(rt) = &self.engine.inner.external
            && rt.set_additional_directories(session_id, dirs)
        {
            rt.close(session_id).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(e: &HecateError) -> String {
        e.details["reason"].as_str().unwrap_or_default().to_string()
    }

    #[test]
    fn directories_are_absolute_existing_and_allowed() {
        let ws = tempfile::tempdir().expect("workspace");
        let extra = tempfile::tempdir().expect("extra");
        let file = extra.path().join("f.txt");
        std::fs::write(&file, "x").expect("file");
        let canon = extra.path().canonicalize().expect("canonical");
        let got = check_additional_directories(
            ws.path(),
            &[
                extra.path().to_path_buf(),
                extra.path().join("."),
                ws.path().to_path_buf(),
            ],
        )
        .expect("accepted");
        assert_eq!(got, vec![canon], "duplicates and the workspace dropped");

        let cases: [(PathBuf, &str); 6] = [
            ("relative/dir".into(), "additional_directory_relative"),
            (
                "/definitely/not/here".into(),
                "additional_directory_missing",
            ),
            (file, "additional_directory_missing"),
            ("/".into(), "additional_directory_not_allowed"),
            ("/proc".into(), "additional_directory_not_allowed"),
            ("/sys/kernel".into(), "additional_directory_not_allowed"),
        ];
        for (dir, want) in cases {
            let e = check_additional_directories(ws.path(), std::slice::from_ref(&dir))
                .expect_err("refused");
            assert_eq!(reason(&e), want, "{dir:?}: {e:?}");
            assert_eq!(e.details["path"], dir.display().to_string());
        }
        let many = vec![extra.path().to_path_buf(); MAX_ADDITIONAL_DIRECTORIES + 1];
        let e = check_additional_directories(ws.path(), &many).expect_err("too many");
        assert_eq!(reason(&e), "additional_directories_too_many");
    }
}
