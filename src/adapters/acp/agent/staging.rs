//! The folders a managed install works in beside `<cache>/adapters/<id>`: the
//! staging folder npm installs into and the previous install moved aside while the
//! new one takes its place. Both are hidden siblings named after the process that
//! made them (`.<id>.staging-<pid>-<random>`, `.<id>.old-<pid>-<random>`), so the
//! next install removes the ones a killed process left behind, and a cancelled
//! install removes its own.

use crate::adapters::acp::agent::install_error::InstallError;
use crate::adapters::process::pid_is_running;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// What a staging folder's name holds after `.<id>.`.
const STAGING: &str = "staging";
/// What a moved-aside install's name holds after `.<id>.`.
const OLD: &str = "old";

/// A sibling of `dir` named `.<name>.<tag>-<pid>-<random>`, on the same file system.
fn sibling(dir: &Path, tag: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.with_file_name(format!(
        ".{name}.{tag}-{}-{}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ))
}

/// A staging folder for a new install of `dir`, removed when dropped unless it
/// was put in place.
#[derive(Debug)]
pub struct Staging {
    path: PathBuf,
    placed: bool,
}

impl Staging {
    /// Creates an empty staging folder beside `dir`.
    pub fn create(dir: &Path) -> Result<Self, InstallError> {
        let path = sibling(dir, STAGING);
        std::fs::create_dir(&path).map_err(|e| InstallError::io("create", &path, e))?;
        Ok(Self {
            path,
            placed: false,
        })
    }

    /// The staging folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Puts the staging folder at `dir`, moving an existing install aside first
    /// and removing it afterwards; puts the old one back if the second rename fails.
    pub fn put_in_place(mut self, dir: &Path) -> Result<(), InstallError> {
        let old = dir.exists().then(|| sibling(dir, OLD));
        if let Some(old) = &old {
            std::fs::rename(dir, old).map_err(|e| InstallError::io("move aside", dir, e))?;
        }
        if let Err(e) = std::fs::rename(&self.path, dir) {
            if let Some(old) = &old {
                let _ = std::fs::rename(old, dir);
            }
            return Err(InstallError::io("move into place", dir, e));
        }
        self.placed = true;
        if let Some(old) = old {
            let _ = std::fs::remove_dir_all(old);
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.placed {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// A hidden work folder of an install found in the adapters folder.
#[derive(Debug, PartialEq, Eq)]
struct WorkFolder {
    /// The adapter id it belongs to.
    id: String,
    /// `staging` or `old`.
    tag: &'static str,
    /// The process that made it; `None` for names without one (older builds).
    pid: Option<u32>,
}

/// Reads `.<id>.<tag>-<pid>-<random>` (or the older `.<id>.<tag>-<random>`).
fn parse_work_folder(name: &str) -> Option<WorkFolder> {
    let rest = name.strip_prefix('.')?;
    for tag in [STAGING, OLD] {
        let Some((id, suffix)) = rest.rsplit_once(&format!(".{tag}-")) else {
            continue;
        };
        if id.is_empty() {
            return None;
        }
        let pid = suffix
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<u32>().ok());
        return Some(WorkFolder {
            id: id.to_string(),
            tag,
            pid,
        });
    }
    None
}

/// Whether the process that made `folder` can no longer be working in it: it is
/// gone, or (for a name without a process) `modified` is older than `max_age`.
fn abandoned(folder: &WorkFolder, modified: Option<SystemTime>, max_age: Duration) -> bool {
    match folder.pid {
        Some(pid) => pid != std::process::id() && !pid_is_running(pid),
        None => modified
            .and_then(|m| m.elapsed().ok())
            .is_some_and(|age| age > max_age),
    }
}

/// Cleans the work folders in `adapters` (the folder of every managed install)
/// that a killed install left behind: a staging folder is removed; a moved-aside
/// install goes back in place when nothing took its place, else it is removed.
/// Folders of installs still running (here or in another live process) are kept.
/// Answers the names it cleaned.
pub fn clean_abandoned(adapters: &Path, max_age: Duration) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(adapters) else {
        return Vec::new();
    };
    let mut cleaned = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(folder) = parse_work_folder(&name) else {
            continue;
        };
        let modified = entry.metadata().and_then(|m| m.modified()).ok();
        if !abandoned(&folder, modified, max_age) {
            continue;
        }
        let path = entry.path();
        let home = adapters.join(&folder.id);
        let restored = folder.tag == OLD && !home.exists() && std::fs::rename(&path, &home).is_ok();
        if restored || std::fs::remove_dir_all(&path).is_ok() {
            cleaned.push(name);
        }
    }
    cleaned.sort();
    cleaned
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .expect("read")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    /// The pid of a process that has exited and been reaped.
    fn dead_pid() -> u32 {
        let mut child = std::process::Command::new("true").spawn().expect("true");
        let pid = child.id();
        child.wait().expect("wait");
        pid
    }

    #[test]
    fn work_folder_names_are_read_back() {
        assert_eq!(
            parse_work_folder(".codex.staging-123-abcdef"),
            Some(WorkFolder {
                id: "codex".into(),
                tag: "staging",
                pid: Some(123)
            })
        );
        assert_eq!(
            parse_work_folder(".claude_code.old-9-ff"),
            Some(WorkFolder {
                id: "claude_code".into(),
                tag: "old",
                pid: Some(9)
            })
        );
        assert_eq!(
            parse_work_folder(".codex.staging-0123456789abcdef"),
            Some(WorkFolder {
                id: "codex".into(),
                tag: "staging",
                pid: None
            })
        );
        assert_eq!(parse_work_folder("codex"), None);
        assert_eq!(parse_work_folder(".codex"), None);
        assert_eq!(parse_work_folder("..staging-1-a"), None);
    }

    #[test]
    fn a_staging_folder_goes_in_place_or_away_when_dropped() {
        let root = tempfile::tempdir().expect("tmp");
        let dir = root.path().join("t");
        std::fs::create_dir(&dir).expect("dir");
        std::fs::write(dir.join("old"), "1").expect("old");
        let stage = Staging::create(&dir).expect("stage");
        std::fs::write(stage.path().join("new"), "2").expect("new");
        stage.put_in_place(&dir).expect("swap");
        assert!(dir.join("new").exists() && !dir.join("old").exists());
        assert_eq!(names(root.path()), ["t"]);

        let stage = Staging::create(&dir).expect("stage");
        std::fs::write(stage.path().join("half"), "3").expect("half");
        drop(stage);
        assert_eq!(
            names(root.path()),
            ["t"],
            "a cancelled install leaves nothing"
        );
    }

    #[test]
    fn only_folders_of_gone_processes_are_cleaned_and_an_orphaned_install_comes_back() {
        let root = tempfile::tempdir().expect("tmp");
        let adapters = root.path();
        let dead = dead_pid();
        let mine = std::process::id();
        for name in [
            format!(".codex.staging-{dead}-aa"),
            format!(".codex.staging-{mine}-bb"),
            format!(".codex.old-{dead}-cc"),
            format!(".gemini.old-{dead}-dd"),
            ".opencode.staging-0123456789abcdef".to_string(),
            ".claude_code.staging-fedcba9876543210".to_string(),
            "codex".to_string(),
        ] {
            std::fs::create_dir(adapters.join(&name)).expect("mkdir");
        }
        std::fs::write(adapters.join(format!(".gemini.old-{dead}-dd/bin")), "x").expect("bin");
        // A name without a process is only cleaned once it is older than the limit.
        let two_hours_ago = SystemTime::now() - Duration::from_secs(7200);
        std::fs::File::open(adapters.join(".opencode.staging-0123456789abcdef"))
            .and_then(|f| f.set_modified(two_hours_ago))
            .expect("backdate");

        let cleaned = clean_abandoned(adapters, Duration::from_secs(3600));
        assert_eq!(
            cleaned,
            [
                format!(".codex.old-{dead}-cc"),
                format!(".codex.staging-{dead}-aa"),
                format!(".gemini.old-{dead}-dd"),
                ".opencode.staging-0123456789abcdef".to_string(),
            ]
        );
        assert_eq!(
            names(adapters),
            [
                ".claude_code.staging-fedcba9876543210".to_string(),
                format!(".codex.staging-{mine}-bb"),
                "codex".to_string(),
                "gemini".to_string(),
            ]
        );
        assert!(adapters.join("gemini/bin").exists(), "moved back in place");
    }
}
