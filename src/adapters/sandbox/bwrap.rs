//! The bubblewrap command line every confined child starts with: which binary,
//! what of the filesystem the child sees (all of it writable, all of it
//! read-only, or only the system directories programs need), the one directory it
//! may write, a private `/tmp`, an empty home, whether it keeps the network; and a
//! trial sandbox that tells whether bubblewrap works on this machine at all.

use crate::adapters::process::{self, Spec};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where bubblewrap is looked for when no path is configured.
pub const BWRAP_LOCATIONS: [&str; 3] = ["/usr/bin/bwrap", "/usr/local/bin/bwrap", "/bin/bwrap"];

/// The directories a [`View::SystemOnly`] sandbox shows, read-only, when they
/// exist: what programs, their libraries, their configuration and name
/// resolution need.
pub const SYSTEM_DIRS: [&str; 10] = [
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/run/systemd/resolve",
];

/// How long the trial sandbox may take.
const TRIAL_TIMEOUT: Duration = Duration::from_secs(10);

/// Why bubblewrap cannot confine a command here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BwrapError {
    /// No bubblewrap binary where it was looked for.
    #[error("bubblewrap was not found at {looked}")]
    NotFound {
        /// The paths looked at.
        looked: String,
    },
    /// bubblewrap is there but could not build a sandbox.
    #[error("{program} cannot build a sandbox here: {message}")]
    Unusable {
        /// The binary that was tried.
        program: String,
        /// What it said (or why it could not run).
        message: String,
    },
}

/// The bubblewrap binary, when installed at one of [`BWRAP_LOCATIONS`].
pub fn bwrap_path() -> Option<PathBuf> {
    BWRAP_LOCATIONS
        .into_iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
}

/// The bubblewrap binary to use: `configured` when given (it must exist), else
/// the first of [`BWRAP_LOCATIONS`].
pub fn find_bwrap(configured: Option<&Path>) -> Result<PathBuf, BwrapError> {
    match configured {
        Some(path) if path.is_file() => Ok(path.to_path_buf()),
        Some(path) => Err(BwrapError::NotFound {
            looked: path.display().to_string(),
        }),
        None => bwrap_path().ok_or_else(|| BwrapError::NotFound {
            looked: BWRAP_LOCATIONS.join(", "),
        }),
    }
}

/// Builds a throwaway sandbox with `program` (the whole filesystem read-only, new
/// `/dev`, `/proc` and PID namespace, and a new network namespace when
/// `cut_network`) that runs `true`; an error says what bubblewrap answered.
pub async fn try_sandbox(program: &Path, cut_network: bool) -> Result<(), BwrapError> {
    let unusable = |message: String| BwrapError::Unusable {
        program: program.display().to_string(),
        message,
    };
    let mut args = Jail::new(View::ReadOnly).network(!cut_network).args();
    args.push("true".into());
    let out = process::run(Spec::new(program).args(args), TRIAL_TIMEOUT)
        .await
        .map_err(|e| unusable(e.message))?;
    match out.exit {
        Some(exit) if exit.success() => Ok(()),
        Some(exit) => {
            let said = String::from_utf8_lossy(&out.stderr);
            let said = said.lines().map(str::trim).find(|l| !l.is_empty());
            Err(unusable(match said {
                Some(line) => line.chars().take(300).collect(),
                None => exit.to_string(),
            }))
        }
        None => Err(unusable(format!(
            "the trial sandbox did not finish within {} s",
            TRIAL_TIMEOUT.as_secs()
        ))),
    }
}

/// What of the machine's filesystem a confined command sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Everything, writable as usual (only the network may be cut).
    Writable,
    /// Everything, read-only.
    ReadOnly,
    /// Only [`SYSTEM_DIRS`], read-only; the rest of the machine (the user's home,
    /// other projects, `/root`, `/srv`, `/var`) is not there at all.
    SystemOnly,
}

/// One confined command's bubblewrap arguments, built up from a [`View`]; they
/// end with `--`, so the command and its arguments follow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Jail {
    view: View,
    writable: Option<PathBuf>,
    also_writable: Vec<PathBuf>,
    read_only: Vec<PathBuf>,
    sealed: Vec<PathBuf>,
    chdir: Option<PathBuf>,
    network: bool,
    private_tmp: bool,
    empty_home: Option<PathBuf>,
    new_session: bool,
}

impl Jail {
    /// A sandbox with this view, the network kept, its own `/dev`, `/proc` and
    /// PID namespace, and its own session (detached from any terminal).
    pub fn new(view: View) -> Self {
        Self {
            view,
            writable: None,
            also_writable: Vec::new(),
            read_only: Vec::new(),
            sealed: Vec::new(),
            chdir: None,
            network: true,
            private_tmp: false,
            empty_home: None,
            new_session: true,
        }
    }

    /// Makes `dir` visible at its own path and writable (the workspace).
    pub fn writable(mut self, dir: &Path) -> Self {
        self.writable = Some(dir.to_path_buf());
        self
    }

    /// Makes another existing path writable (a worktree's git directory outside
    /// the workspace, for git itself); mounted after the workspace.
    pub fn also_writable(mut self, path: &Path) -> Self {
        self.also_writable.push(path.to_path_buf());
        self
    }

    /// Makes an existing path read-only even inside the writable workspace
    /// (`.git`); mounted after every writable one.
    pub fn read_only(mut self, path: &Path) -> Self {
        self.read_only.push(path.to_path_buf());
        self
    }

    /// Puts an empty, read-only directory at a path that does not exist yet, so
    /// the command cannot create it (a `.git` the workspace does not have).
    /// bubblewrap leaves an empty directory there as its mount point.
    pub fn sealed(mut self, path: &Path) -> Self {
        self.sealed.push(path.to_path_buf());
        self
    }

    /// Starts the command in `dir`.
    pub fn chdir(mut self, dir: &Path) -> Self {
        self.chdir = Some(dir.to_path_buf());
        self
    }

    /// Keeps the network (`true`) or cuts it to a loopback of its own (`false`).
    pub fn network(mut self, keep: bool) -> Self {
        self.network = keep;
        self
    }

    /// Gives the command an empty, writable `/tmp` of its own.
    pub fn private_tmp(mut self) -> Self {
        self.private_tmp = true;
        self
    }

    /// Puts an empty, writable directory over `home` (ignored unless absolute and
    /// not `/`); what the command writes there is gone when it ends.
    pub fn empty_home(mut self, home: &Path) -> Self {
        if home.is_absolute() && home.parent().is_some() {
            self.empty_home = Some(home.to_path_buf());
        }
        self
    }

    /// Keeps the caller's session and controlling terminal (a PTY Hecate owns),
    /// so the command and its process group stay where the caller can signal them.
    pub fn keep_session(mut self) -> Self {
        self.new_session = false;
        self
    }

    /// The arguments for `bwrap`, ending with `--`. Later mounts cover earlier
    /// ones, so the writable directory comes after `/tmp` and the home, and stays
    /// visible when it lies under either.
    pub fn args(&self) -> Vec<OsString> {
        let mut args: Vec<OsString> = Vec::new();
        let mut push = |items: &[&std::ffi::OsStr]| {
            args.extend(items.iter().map(|a| a.to_os_string()));
        };
        match self.view {
            View::Writable => push(&["--bind".as_ref(), "/".as_ref(), "/".as_ref()]),
            View::ReadOnly => push(&["--ro-bind".as_ref(), "/".as_ref(), "/".as_ref()]),
            View::SystemOnly => {
                for dir in SYSTEM_DIRS {
                    let path = Path::new(dir);
                    match std::fs::symlink_metadata(path) {
                        Ok(meta) if meta.file_type().is_symlink() => {
                            if let Ok(target) = std::fs::read_link(path) {
                                push(&["--symlink".as_ref(), target.as_os_str(), dir.as_ref()]);
                            }
                        }
                        Ok(meta) if meta.is_dir() => {
                            push(&["--ro-bind".as_ref(), dir.as_ref(), dir.as_ref()]);
                        }
                        _ => {}
                    }
                }
            }
        }
        push(&[
            "--dev".as_ref(),
            "/dev".as_ref(),
            "--proc".as_ref(),
            "/proc".as_ref(),
        ]);
        if self.private_tmp {
            push(&["--tmpfs".as_ref(), "/tmp".as_ref()]);
        }
        if let Some(home) = &self.empty_home {
            push(&["--tmpfs".as_ref(), home.as_os_str()]);
        }
        if let Some(dir) = &self.writable {
            push(&["--bind".as_ref(), dir.as_os_str(), dir.as_os_str()]);
        }
        for path in &self.also_writable {
            push(&["--bind".as_ref(), path.as_os_str(), path.as_os_str()]);
        }
        for path in &self.read_only {
            push(&["--ro-bind".as_ref(), path.as_os_str(), path.as_os_str()]);
        }
        for path in &self.sealed {
            push(&[
                "--tmpfs".as_ref(),
                path.as_os_str(),
                "--remount-ro".as_ref(),
                path.as_os_str(),
            ]);
        }
        if !self.network {
            push(&["--unshare-net".as_ref()]);
        }
        // A PID namespace: when the sandbox's first process dies (with bubblewrap,
        // which dies with its process group), everything it started dies too.
        push(&["--unshare-pid".as_ref(), "--die-with-parent".as_ref()]);
        if self.new_session {
            push(&["--new-session".as_ref()]);
        }
        if let Some(dir) = &self.chdir {
            push(&["--chdir".as_ref(), dir.as_os_str()]);
        }
        push(&["--".as_ref()]);
        args
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(jail: &Jail) -> Vec<String> {
        jail.args()
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn a_task_sandbox_keeps_the_arguments_tasks_always_had() {
        let ws = Path::new("/work/ws");
        let jail = Jail::new(View::ReadOnly)
            .writable(ws)
            .chdir(ws)
            .network(false);
        assert_eq!(
            strings(&jail),
            [
                "--ro-bind",
                "/",
                "/",
                "--dev",
                "/dev",
                "--proc",
                "/proc",
                "--bind",
                "/work/ws",
                "/work/ws",
                "--unshare-net",
                "--unshare-pid",
                "--die-with-parent",
                "--new-session",
                "--chdir",
                "/work/ws",
                "--"
            ]
        );
    }

    #[test]
    fn the_workspace_is_mounted_after_tmp_and_home_so_it_stays_visible_under_them() {
        let ws = Path::new("/home/me/project");
        let args = strings(
            &Jail::new(View::SystemOnly)
                .private_tmp()
                .empty_home(Path::new("/home/me"))
                .writable(ws)
                .keep_session(),
        );
        let at = |flag: &str, target: &str| {
            args.windows(2)
                .position(|w| w[0] == flag && w[1] == target)
                .unwrap_or_else(|| panic!("{flag} {target} in {args:?}"))
        };
        assert!(at("--tmpfs", "/tmp") < at("--bind", "/home/me/project"));
        assert!(at("--tmpfs", "/home/me") < at("--bind", "/home/me/project"));
        assert!(!args.contains(&"/".to_string()), "the root is not bound");
        assert!(!args.contains(&"--new-session".to_string()));
        assert!(!args.contains(&"--unshare-net".to_string()));
        assert!(args.iter().any(|a| a == "/usr"), "{args:?}");
    }

    #[test]
    fn a_home_that_is_the_root_or_relative_is_not_hidden() {
        for home in ["/", "relative/home", ""] {
            let args = strings(&Jail::new(View::ReadOnly).empty_home(Path::new(home)));
            assert!(!args.contains(&"--tmpfs".to_string()), "{home}: {args:?}");
        }
    }

    #[test]
    fn a_configured_bwrap_must_exist() {
        let e = find_bwrap(Some(Path::new("/nonexistent/bwrap"))).expect_err("missing");
        assert_eq!(
            e,
            BwrapError::NotFound {
                looked: "/nonexistent/bwrap".into()
            }
        );
    }
}
