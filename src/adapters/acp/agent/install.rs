//! Installs or refreshes an agent's managed launcher: its npm package in Hecate's
//! cache (`<cache>/adapters/<id>`). npm installs into a staging directory next to
//! it, which is renamed into place only when the package's bin is there, so a
//! failed install leaves the previous one (or nothing) for the launcher to find;
//! each install first cleans what a killed one left behind.

use crate::adapters::acp::agent::catalog::AgentManifest;
use crate::adapters::acp::agent::install_error::{InstallError, classify_failure};
use crate::adapters::acp::agent::launcher::{
    LaunchSource, LaunchSpec, LauncherOptions, bin_in, find_executable, is_executable, managed_dir,
};
use crate::adapters::acp::agent::staging::{Staging, clean_abandoned};
use crate::adapters::process::env::{current_env, sanitized_env};
use crate::adapters::process::{self, Spec};
use std::path::Path;
use std::time::Duration;

/// How long a managed install may take.
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);

/// The steps of a managed install, in order, as a progress observer sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstallStage {
    /// Checking the package spec, the cache directory and that npm is on PATH.
    Resolving,
    /// Removing what an interrupted install left behind.
    Cleaning,
    /// `npm install` is running in the staging directory.
    Downloading,
    /// npm finished; checking the package's bin is there.
    Verifying,
    /// Renaming the staging directory into place.
    Placing,
    /// The new install is in place.
    Done,
}

impl InstallStage {
    /// The stage's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Resolving => "resolving",
            Self::Cleaning => "cleaning",
            Self::Downloading => "downloading",
            Self::Verifying => "verifying",
            Self::Placing => "placing",
            Self::Done => "done",
        }
    }
}

/// npm's environment: the base allowlist plus npm and Node settings (registry,
/// proxy, CA), never Hecate's provider keys; PATH is the launcher's search path.
fn npm_env(opts: &LauncherOptions) -> Vec<(String, String)> {
    let allow = ["npm_config_*", "NPM_CONFIG_*", "NODE_*"].map(String::from);
    let mut env = sanitized_env(&current_env(), &allow, &[]);
    if let Some(path) = opts.search_path().and_then(|p| p.into_string().ok()) {
        env.retain(|(k, _)| k != "PATH");
        env.push(("PATH".to_string(), path));
    }
    env
}

/// The npm package spec: `package@version` when a version is pinned, else the
/// package as written (a registry name or a tarball path).
pub fn package_spec(manifest: &AgentManifest) -> Result<String, InstallError> {
    let package = manifest
        .package
        .as_ref()
        .ok_or_else(|| InstallError::NoPackage(manifest.id.clone()))?;
    Ok(match &manifest.package_version {
        Some(v) => format!("{package}@{v}"),
        None => package.clone(),
    })
}

/// Runs `npm install --prefix <stage> <spec>` and checks the bin is there.
async fn npm_install(
    npm: &Path,
    stage: &Path,
    spec: &str,
    manifest: &AgentManifest,
    opts: &LauncherOptions,
    progress: &(dyn Fn(InstallStage) + Send + Sync),
) -> Result<(), InstallError> {
    let cmd = Spec::new(npm)
        .args(["install", "--prefix"])
        .args([stage.as_os_str()])
        .args(["--no-fund", "--no-audit", "--loglevel=error", spec])
        .env(&npm_env(opts));
    let out = process::run(cmd, INSTALL_TIMEOUT)
        .await
        .map_err(|e| InstallError::Io(format!("cannot run npm: {e}")))?;
    let exit = out
        .exit
        .ok_or_else(|| InstallError::Timeout(spec.to_string()))?;
    if !exit.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(classify_failure(spec, &exit.to_string(), &stderr));
    }
    progress(InstallStage::Verifying);
    if !is_executable(&bin_in(stage, manifest)) {
        return Err(InstallError::NoBin {
            spec: spec.to_string(),
            bin: manifest.bin_name(),
        });
    }
    Ok(())
}

/// Installs (or refreshes) the managed package with `npm install --prefix` into a
/// staging directory, then renames it to `<cache>/adapters/<id>`; on any failure
/// (or when the install is cancelled) the staging directory is removed and the
/// previous install stays as it was.
pub async fn install_managed(
    manifest: &AgentManifest,
    opts: &LauncherOptions,
) -> Result<LaunchSpec, InstallError> {
    install_managed_with(manifest, opts, &|_| {}).await
}

/// [`install_managed`], telling `progress` each [`InstallStage`] as it starts.
pub async fn install_managed_with(
    manifest: &AgentManifest,
    opts: &LauncherOptions,
    progress: &(dyn Fn(InstallStage) + Send + Sync),
) -> Result<LaunchSpec, InstallError> {
    progress(InstallStage::Resolving);
    let spec = package_spec(manifest)?;
    let dir = managed_dir(manifest, opts).ok_or(InstallError::NoCacheDir)?;
    let npm =
        find_executable("npm", opts.search_path().as_ref()).ok_or(InstallError::NpmMissing)?;
    let parent = dir.parent().unwrap_or(&dir);
    std::fs::create_dir_all(parent).map_err(|e| InstallError::io("create", parent, e))?;
    progress(InstallStage::Cleaning);
    for name in clean_abandoned(parent, INSTALL_TIMEOUT) {
        tracing::info!(folder = %name, "removed what an interrupted install left");
    }
    let stage = Staging::create(&dir)?;
    progress(InstallStage::Downloading);
    npm_install(&npm, stage.path(), &spec, manifest, opts, progress).await?;
    progress(InstallStage::Placing);
    stage.put_in_place(&dir)?;
    progress(InstallStage::Done);
    Ok(LaunchSpec {
        program: bin_in(&dir, manifest),
        args: manifest.args.clone(),
        source: LaunchSource::Managed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::acp::agent::catalog::parse_manifest;

    fn manifest(extra: &str) -> AgentManifest {
        parse_manifest(
            "t.toml",
            &format!("id = \"t\"\nname = \"T\"\ncommand = \"t-acp\"\n{extra}"),
        )
        .expect("manifest")
    }

    #[test]
    fn spec_pins_the_version_and_needs_a_package() {
        let m = manifest("package = \"@x/t\"\npackage_version = \"1.2.3\"\n");
        assert_eq!(package_spec(&m).as_deref(), Ok("@x/t@1.2.3"));
        let m = manifest("package = \"/tmp/t-1.0.0.tgz\"\n");
        assert_eq!(package_spec(&m).as_deref(), Ok("/tmp/t-1.0.0.tgz"));
        assert_eq!(
            package_spec(&manifest("")),
            Err(InstallError::NoPackage("t".into()))
        );
    }
}
