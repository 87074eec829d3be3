//! Installs or refreshes an agent's managed launcher: its npm package in Hecate's
//! cache (`<cache>/adapters/<id>`). npm installs into a staging directory next to
//! it, which is renamed into place only when the package's bin is there, so a
//! failed install leaves the previous one (or nothing) for the launcher to find.

use crate::adapters::acp::agent::catalog::AgentManifest;
use crate::adapters::acp::agent::install_error::{InstallError, classify_failure};
use crate::adapters::acp::agent::launcher::{
    LaunchSource, LaunchSpec, LauncherOptions, bin_in, find_executable, is_executable, managed_dir,
};
use crate::adapters::process::env::{current_env, sanitized_env};
use crate::adapters::process::{self, Spec};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long a managed install may take.
pub const INSTALL_TIMEOUT: Duration = Duration::from_secs(600);

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

/// A sibling of `dir` named `.<name>.<tag>-<random>`, on the same file system.
fn sibling(dir: &Path, tag: &str) -> PathBuf {
    let name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    dir.with_file_name(format!(".{name}.{tag}-{}", uuid::Uuid::new_v4().simple()))
}

fn io(what: &str, path: &Path, e: std::io::Error) -> InstallError {
    InstallError::Io(format!("cannot {what} {}: {e}", path.display()))
}

/// Runs `npm install --prefix <stage> <spec>` and checks the bin is there.
async fn npm_install(
    npm: &Path,
    stage: &Path,
    spec: &str,
    manifest: &AgentManifest,
    opts: &LauncherOptions,
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
    if !is_executable(&bin_in(stage, manifest)) {
        return Err(InstallError::NoBin {
            spec: spec.to_string(),
            bin: manifest.bin_name(),
        });
    }
    Ok(())
}

/// Puts `stage` at `dir`, moving an existing install aside first and removing it
/// afterwards; puts the old one back if the second rename fails.
fn swap_into_place(stage: &Path, dir: &Path) -> Result<(), InstallError> {
    let old = dir.exists().then(|| sibling(dir, "old"));
    if let Some(old) = &old {
        std::fs::rename(dir, old).map_err(|e| io("move aside", dir, e))?;
    }
    if let Err(e) = std::fs::rename(stage, dir) {
        if let Some(old) = &old {
            let _ = std::fs::rename(old, dir);
        }
        return Err(io("move into place", dir, e));
    }
    if let Some(old) = old {
        let _ = std::fs::remove_dir_all(old);
    }
    Ok(())
}

/// Installs (or refreshes) the managed package with `npm install --prefix` into a
/// staging directory, then renames it to `<cache>/adapters/<id>`; on any failure
/// the staging directory is removed and the previous install stays as it was.
pub async fn install_managed(
    manifest: &AgentManifest,
    opts: &LauncherOptions,
) -> Result<LaunchSpec, InstallError> {
    let spec = package_spec(manifest)?;
    let dir = managed_dir(manifest, opts).ok_or(InstallError::NoCacheDir)?;
    let npm =
        find_executable("npm", opts.search_path().as_ref()).ok_or(InstallError::NpmMissing)?;
    let parent = dir.parent().unwrap_or(&dir);
    std::fs::create_dir_all(parent).map_err(|e| io("create", parent, e))?;
    let stage = sibling(&dir, "staging");
    std::fs::create_dir(&stage).map_err(|e| io("create", &stage, e))?;
    let installed = match npm_install(&npm, &stage, &spec, manifest, opts).await {
        Ok(()) => swap_into_place(&stage, &dir),
        Err(e) => Err(e),
    };
    if let Err(e) = installed {
        let _ = std::fs::remove_dir_all(&stage);
        return Err(e);
    }
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

    #[test]
    fn swap_replaces_an_existing_install() {
        let root = tempfile::tempdir().expect("tmp");
        let dir = root.path().join("t");
        std::fs::create_dir(&dir).expect("dir");
        std::fs::write(dir.join("old"), "1").expect("old");
        let stage = sibling(&dir, "staging");
        std::fs::create_dir(&stage).expect("stage");
        std::fs::write(stage.join("new"), "2").expect("new");
        swap_into_place(&stage, &dir).expect("swap");
        assert!(dir.join("new").exists() && !dir.join("old").exists());
        let left: Vec<_> = std::fs::read_dir(root.path())
            .expect("read")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left, vec![std::ffi::OsString::from("t")]);
    }
}
