//! The sandbox agent terminals run in, as configured (`[terminals]`): off (the
//! command sees and may change whatever the user can), `read_only` (the whole
//! filesystem read-only except the workspace and a private `/tmp`) or
//! `workspace_only` (only the system directories, read-only, the workspace, a
//! private `/tmp` and an empty home), with or without the network. Whether
//! bubblewrap can honour it here, and the bubblewrap arguments of one terminal.

use crate::adapters::sandbox::{BwrapError, Jail, View, find_bwrap, repo_dirs, try_sandbox};
use std::path::{Path, PathBuf};

/// What of the filesystem a terminal command sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SandboxMode {
    /// No filesystem confinement (the default): the command starts in the
    /// workspace and may read and write whatever the user can.
    #[default]
    Off,
    /// Everything read-only except the workspace and a private `/tmp`.
    ReadOnly,
    /// Only the system directories (read-only), the workspace, a private `/tmp`
    /// and an empty home; the rest of the machine is not there.
    WorkspaceOnly,
}

impl SandboxMode {
    /// The setting's spelling: `off`, `read_only` or `workspace_only`.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxMode::Off => "off",
            SandboxMode::ReadOnly => "read_only",
            SandboxMode::WorkspaceOnly => "workspace_only",
        }
    }

    /// Parses the setting's spelling.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "off" => Some(SandboxMode::Off),
            "read_only" => Some(SandboxMode::ReadOnly),
            "workspace_only" => Some(SandboxMode::WorkspaceOnly),
            _ => None,
        }
    }
}

/// How agent terminals are confined: the filesystem view, the network, and which
/// bubblewrap binary builds the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalSandbox {
    /// What of the filesystem the command sees.
    pub mode: SandboxMode,
    /// Whether the command keeps the network (`false` leaves it a loopback of
    /// its own).
    pub network: bool,
    /// The bubblewrap binary; `None` looks in the usual places.
    pub bwrap: Option<PathBuf>,
}

impl Default for TerminalSandbox {
    fn default() -> Self {
        Self {
            mode: SandboxMode::Off,
            network: true,
            bwrap: None,
        }
    }
}

/// The sandbox was asked for and cannot be built; terminals are refused rather
/// than run unconfined.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "agent terminals are configured to run in a bubblewrap sandbox ({setting}) but {cause}; {}",
    fix(cause)
)]
pub struct SandboxUnavailable {
    /// The setting, as [`TerminalSandbox::describe`] tells it.
    pub setting: String,
    /// Why bubblewrap cannot build it.
    pub cause: BwrapError,
}

impl SandboxUnavailable {
    /// What to do about it.
    pub fn fix(&self) -> &'static str {
        fix(&self.cause)
    }
}

fn fix(cause: &BwrapError) -> &'static str {
    match cause {
        BwrapError::NotFound { .. } => {
            "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap) or point \
             [terminals] bwrap at it, or turn the sandbox off ([terminals] sandbox = \"off\" \
             and network = true, or HECATE_TERMINAL_SANDBOX=off HECATE_TERMINAL_NETWORK=true) \
             to run terminals unconfined"
        }
        BwrapError::Unusable { .. } => {
            "let bubblewrap create namespaces here (allow unprivileged user namespaces: \
             sysctl kernel.unprivileged_userns_clone=1, on Ubuntu 24.04+ \
             kernel.apparmor_restrict_unprivileged_userns=0, or give the container user \
             namespaces), or turn the sandbox off ([terminals] sandbox = \"off\" and network = \
             true, or HECATE_TERMINAL_SANDBOX=off HECATE_TERMINAL_NETWORK=true) to run \
             terminals unconfined"
        }
    }
}

impl TerminalSandbox {
    /// Whether terminals run under bubblewrap at all (a filesystem view, or no
    /// network).
    pub fn is_on(&self) -> bool {
        self.mode != SandboxMode::Off || !self.network
    }

    /// The setting in words, e.g. `sandbox = "workspace_only", network = false`.
    pub fn describe(&self) -> String {
        format!(
            "sandbox = \"{}\", network = {}",
            self.mode.as_str(),
            self.network
        )
    }

    /// Finds bubblewrap and builds a trial sandbox with it; answers the binary
    /// to use, or why the setting cannot be honoured.
    pub async fn check(&self) -> Result<PathBuf, SandboxUnavailable> {
        let unavailable = |cause| SandboxUnavailable {
            setting: self.describe(),
            cause,
        };
        let bwrap = find_bwrap(self.bwrap.as_deref()).map_err(unavailable)?;
        try_sandbox(&bwrap, !self.network)
            .await
            .map_err(unavailable)?;
        Ok(bwrap)
    }

    /// The bubblewrap arguments of one terminal: its command starts in `cwd`,
    /// may write `workspace` and the `additional` directories but not their
    /// `.git`, and (in `workspace_only`) finds `home` empty. The
    /// command keeps Hecate's PTY as its controlling terminal.
    pub fn jail(
        &self,
        workspace: &Path,
        additional: &[PathBuf],
        cwd: &Path,
        home: Option<&Path>,
    ) -> Jail {
        let view = match self.mode {
            SandboxMode::Off => View::Writable,
            SandboxMode::ReadOnly => View::ReadOnly,
            SandboxMode::WorkspaceOnly => View::SystemOnly,
        };
        let mut jail = Jail::new(view).network(self.network).keep_session();
        if self.mode != SandboxMode::Off {
            jail = jail.private_tmp();
        }
        if let (SandboxMode::WorkspaceOnly, Some(home)) = (self.mode, home) {
            jail = jail.empty_home(home);
        }
        // The additional directories the editor granted are writable like the
        // workspace (mounted after it).
        for dir in additional {
            jail = jail.also_writable(dir);
        }
        if self.mode != SandboxMode::Off {
            // Hooks and configuration there would run code on the next git
            // command, outside any terminal the operator sees.
            for root in std::iter::once(workspace).chain(additional.iter().map(PathBuf::as_path)) {
                let repo = repo_dirs(root);
                if repo.exists {
                    jail = jail.read_only(&repo.entry);
                }
                for dir in &repo.linked {
                    jail = jail.read_only(dir);
                }
            }
        }
        jail.writable(workspace).chdir(cwd)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_is_off_and_cutting_the_network_alone_turns_the_sandbox_on() {
        let off = TerminalSandbox::default();
        assert!(!off.is_on());
        let no_net = TerminalSandbox {
            network: false,
            ..TerminalSandbox::default()
        };
        assert!(no_net.is_on());
        for mode in [
            SandboxMode::Off,
            SandboxMode::ReadOnly,
            SandboxMode::WorkspaceOnly,
        ] {
            assert_eq!(SandboxMode::parse(mode.as_str()), Some(mode));
        }
        assert_eq!(SandboxMode::parse("readonly"), None);
    }

    #[tokio::test]
    async fn a_missing_bwrap_is_refused_with_the_fix() {
        let sandbox = TerminalSandbox {
            mode: SandboxMode::WorkspaceOnly,
            network: true,
            bwrap: Some("/nonexistent/bwrap".into()),
        };
        let e = sandbox.check().await.expect_err("no bwrap there");
        let text = e.to_string();
        assert!(
            text.contains("/nonexistent/bwrap")
                && text.contains("install bubblewrap")
                && text.contains("sandbox = \"off\""),
            "{text}"
        );
    }
}
