//! How to launch an agent: its direct command on PATH, else its managed npm package
//! installed in Hecate's cache (the cached equivalent of `npx -y`; see `install`),
//! else not installed. Also version detection against the manifest's tested range.

use crate::adapters::acp::agent::catalog::AgentManifest;
use crate::adapters::process::{self, Spec};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long `--version` may take.
pub const VERSION_TIMEOUT: Duration = Duration::from_secs(5);

/// Where a launch spec came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LaunchSource {
    /// The manifest's command, found on PATH or as a path.
    Direct,
    /// The managed package's bin in Hecate's cache.
    Managed,
}

/// A resolved way to start an agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchSpec {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments (the manifest's ACP-mode args).
    pub args: Vec<String>,
    /// Where it came from.
    pub source: LaunchSource,
}

/// Where to look for agents.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LauncherOptions {
    /// Cache root; `dirs::cache_dir()/hecate` when unset.
    pub cache_dir: Option<PathBuf>,
    /// The PATH to search; Hecate's own PATH when unset.
    pub path: Option<OsString>,
}

impl LauncherOptions {
    /// The cache root: `cache_dir`, else `<user cache dir>/hecate`.
    pub fn cache_root(&self) -> Option<PathBuf> {
        self.cache_dir
            .clone()
            .or_else(|| dirs::cache_dir().map(|d| d.join("hecate")))
    }

    /// The PATH searched for commands: `path`, else Hecate's own.
    pub fn search_path(&self) -> Option<OsString> {
        self.path.clone().or_else(|| std::env::var_os("PATH"))
    }
}

/// Whether an agent can run, from where, and at which version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Availability {
    /// An executable was found.
    pub available: bool,
    /// The executable.
    pub path: Option<PathBuf>,
    /// The version it reports, when it reports one.
    pub version: Option<String>,
    /// The version is known and outside the manifest's tested range.
    pub version_outside_range: bool,
    /// Direct or managed.
    pub source: Option<LaunchSource>,
}

/// `<cache>/adapters/<id>`, the npm prefix of a managed agent.
pub fn managed_dir(manifest: &AgentManifest, opts: &LauncherOptions) -> Option<PathBuf> {
    opts.cache_root()
        .map(|c| c.join("adapters").join(&manifest.id))
}

/// The bin of `manifest`'s package inside the npm prefix `prefix`.
pub fn bin_in(prefix: &Path, manifest: &AgentManifest) -> PathBuf {
    prefix
        .join("node_modules")
        .join(".bin")
        .join(manifest.bin_name())
}

fn managed_bin(manifest: &AgentManifest, opts: &LauncherOptions) -> Option<PathBuf> {
    manifest.package.as_ref()?;
    managed_dir(manifest, opts).map(|d| bin_in(&d, manifest))
}

/// Whether `path` is a file with an execute bit.
pub fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Finds `command` like a shell would: a path when it contains `/`, else the
/// first executable match on `path`.
pub fn find_executable(command: &str, path: Option<&OsString>) -> Option<PathBuf> {
    if command.contains('/') {
        let p = PathBuf::from(command);
        return is_executable(&p).then_some(p);
    }
    std::env::split_paths(path?)
        .map(|dir| dir.join(command))
        .find(|candidate| is_executable(candidate))
}

/// Resolves the launch spec: the direct command first, else the managed bin;
/// `None` when neither exists.
pub fn resolve(manifest: &AgentManifest, opts: &LauncherOptions) -> Option<LaunchSpec> {
    let path = opts.search_path();
    if let Some(program) = find_executable(&manifest.command, path.as_ref()) {
        return Some(LaunchSpec {
            program,
            args: manifest.args.clone(),
            source: LaunchSource::Direct,
        });
    }
    let bin = managed_bin(manifest, opts)?;
    is_executable(&bin).then(|| LaunchSpec {
        program: bin,
        args: manifest.args.clone(),
        source: LaunchSource::Managed,
    })
}

/// Finds the first semantic version (`1.2.3`, optionally `-pre`) in `text`.
pub fn extract_semver(text: &str) -> Option<semver::Version> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_token = i == 0 || {
            let prev = bytes[i - 1];
            let v_prefix =
                matches!(prev, b'v' | b'V') && (i < 2 || !bytes[i - 2].is_ascii_alphanumeric());
            v_prefix || !(prev.is_ascii_alphanumeric() || prev == b'.')
        };
        if bytes[i].is_ascii_digit() && starts_token {
            let end = bytes[i..]
                .iter()
                .position(|b| !(b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-')))
                .map_or(bytes.len(), |n| i + n);
            let candidate = text[i..end].trim_end_matches(['.', '-']);
            if let Ok(v) = semver::Version::parse(candidate) {
                return Some(v);
            }
            // Accept `1.2.3` followed by junk such as `1.2.3.4`.
            let core: String = candidate.split('.').take(3).collect::<Vec<_>>().join(".");
            if let Ok(v) = semver::Version::parse(&core) {
                return Some(v);
            }
            i = end;
        } else {
            i += 1;
        }
    }
    None
}

/// Runs the agent with `version_args` (5 s limit, exactly `env`, its own process
/// group, killed as a group when it ends or times out, so a background child
/// cannot outlive the check) and returns the first semver it prints on stdout or
/// stderr; `None` when it prints none or does not finish in time.
pub async fn detect_version(
    spec: &LaunchSpec,
    version_args: &[String],
    env: &[(String, String)],
) -> Option<semver::Version> {
    let cmd = Spec::new(&spec.program).args(version_args).env(env);
    let out = process::run(cmd, VERSION_TIMEOUT).await.ok()?;
    out.exit?;
    extract_semver(&String::from_utf8_lossy(&out.stdout))
        .or_else(|| extract_semver(&String::from_utf8_lossy(&out.stderr)))
}

/// Whether `version` is outside the manifest's tested range (pre-release tags are
/// ignored for the comparison).
pub fn outside_range(manifest: &AgentManifest, version: &semver::Version) -> bool {
    let Some(req) = manifest.tested_req() else {
        return false;
    };
    let release = semver::Version::new(version.major, version.minor, version.patch);
    !req.matches(&release)
}

/// Resolves the agent and asks its version.
pub async fn availability(
    manifest: &AgentManifest,
    opts: &LauncherOptions,
    env: &[(String, String)],
) -> Availability {
    let Some(spec) = resolve(manifest, opts) else {
        return Availability {
            available: false,
            path: None,
            version: None,
            version_outside_range: false,
            source: None,
        };
    };
    let version = detect_version(&spec, &manifest.version_args, env).await;
    Availability {
        available: true,
        version_outside_range: version.as_ref().is_some_and(|v| outside_range(manifest, v)),
        version: version.map(|v| v.to_string()),
        path: Some(spec.program),
        source: Some(spec.source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_is_found_in_typical_version_lines() {
        let cases = [
            ("codex-acp 0.16.0", "0.16.0"),
            ("v2.6.0\n", "2.6.0"),
            ("opencode 1.18.33 (linux)", "1.18.33"),
            ("0.61.0-nightly.20251101", "0.61.0-nightly.20251101"),
            ("build 20240101 version 1.2.3.4", "1.2.3"),
        ];
        for (text, want) in cases {
            assert_eq!(
                extract_semver(text).map(|v| v.to_string()).as_deref(),
                Some(want),
                "{text}"
            );
        }
        assert!(extract_semver("no version here 12").is_none());
    }

    #[test]
    fn range_check_ignores_prerelease() {
        let (catalog, _) = crate::adapters::acp::agent::catalog::Catalog::load(
            crate::adapters::acp::agent::catalog::BUILTIN_MANIFESTS,
            None,
        );
        let codex = catalog.get("codex").expect("codex");
        let v = |s: &str| semver::Version::parse(s).expect("v");
        assert!(!outside_range(codex, &v("0.16.0")));
        assert!(!outside_range(codex, &v("2.6.0-beta.1")));
        assert!(outside_range(codex, &v("3.0.0")));
        assert!(outside_range(codex, &v("0.15.9")));
    }

    #[test]
    fn find_executable_respects_path_and_slashes() {
        let path = OsString::from("/nonexistent-dir:/bin:/usr/bin");
        assert!(find_executable("sh", Some(&path)).is_some());
        assert!(find_executable("definitely-not-a-command-xyz", Some(&path)).is_none());
        assert!(find_executable("/bin/sh", None).is_some());
        assert!(find_executable("/nonexistent/sh", None).is_none());
    }
}
