//! The tools on this machine that Hecate relies on without owning them: Node.js and
//! npm (npm-packaged adapters run on Node, managed installs use npm) and bubblewrap
//! (Codex confines its shell tools with it). Each is looked up on PATH and run with a
//! timeout; bubblewrap is asked to build a real sandbox, not just its version.

use super::check::Check;
use crate::adapters::acp::catalog::Catalog;
use crate::adapters::acp::launcher::{extract_semver, find_executable};
use std::ffi::OsString;
use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

/// How long `node --version`, `npm --version` and the bubblewrap trial may take.
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(10);

/// The Node.js range assumed for an npm-packaged adapter whose manifest names none.
pub const DEFAULT_NODE_RANGE: &str = ">=18";

/// Runs `program args` with stdin closed and a deadline; the error says what failed.
async fn run(program: &Path, args: &[&str], timeout: Duration) -> Result<Output, String> {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    match tokio::time::timeout(timeout, cmd.output()).await {
        Err(_) => Err(format!("did not finish within {} s", timeout.as_secs())),
        Ok(Err(e)) => Err(format!("cannot run it: {e}")),
        Ok(Ok(out)) => Ok(out),
    }
}

/// The first non-empty line of a process's stderr (else stdout), capped.
fn first_line(out: &Output) -> String {
    let pick = |b: &[u8]| {
        String::from_utf8_lossy(b)
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.chars().take(300).collect::<String>())
    };
    pick(&out.stderr)
        .or_else(|| pick(&out.stdout))
        .unwrap_or_else(|| format!("exited with {}", out.status))
}

/// Node.js against the ranges the catalog's npm-packaged adapters need.
pub async fn node(catalog: &Catalog, path: Option<&OsString>) -> Check {
    let needs: Vec<(String, String)> = catalog
        .entries()
        .map(|e| &e.manifest)
        .filter(|m| m.package.is_some())
        .map(|m| {
            (
                m.id.clone(),
                m.node
                    .clone()
                    .unwrap_or_else(|| DEFAULT_NODE_RANGE.to_string()),
            )
        })
        .collect();
    let strictest = needs
        .iter()
        .filter_map(|(_, r)| semver::VersionReq::parse(r).ok())
        .filter_map(|r| r.comparators.first().map(|c| c.major))
        .max()
        .unwrap_or(18);
    let install = format!(
        "Install Node.js {strictest} or later (https://nodejs.org) and put `node` on PATH."
    );
    let Some(program) = find_executable("node", path) else {
        return Check::warn(
            "node",
            "Node.js was not found on PATH; npm-packaged adapters cannot run.",
            install,
        );
    };
    let version = match run(&program, &["--version"], TOOL_TIMEOUT).await {
        Ok(out) if out.status.success() => extract_semver(&String::from_utf8_lossy(&out.stdout)),
        Ok(out) => {
            return Check::warn(
                "node",
                format!(
                    "{} --version failed: {}",
                    program.display(),
                    first_line(&out)
                ),
                install,
            );
        }
        Err(e) => {
            return Check::warn(
                "node",
                format!("{} --version {e}", program.display()),
                install,
            );
        }
    };
    let Some(version) = version else {
        return Check::warn(
            "node",
            format!("{} --version printed no version", program.display()),
            install,
        );
    };
    let release = semver::Version::new(version.major, version.minor, version.patch);
    let unmet: Vec<String> = needs
        .iter()
        .filter(|(_, r)| semver::VersionReq::parse(r).is_ok_and(|req| !req.matches(&release)))
        .map(|(id, r)| format!("{id} needs {r}"))
        .collect();
    if unmet.is_empty() {
        Check::ok(
            "node",
            format!("Node.js {version} at {}", program.display()),
        )
    } else {
        Check::warn(
            "node",
            format!(
                "Node.js {version} at {} is too old: {}",
                program.display(),
                unmet.join(", ")
            ),
            install,
        )
    }
}

/// npm, which managed adapter installs use.
pub async fn npm(path: Option<&OsString>) -> Check {
    let fix = "Install npm (it ships with Node.js) and put it on PATH.";
    let Some(program) = find_executable("npm", path) else {
        return Check::warn(
            "npm",
            "npm was not found on PATH; adapter packages cannot be installed.",
            fix,
        );
    };
    match run(&program, &["--version"], TOOL_TIMEOUT).await {
        Ok(out) if out.status.success() => {
            match extract_semver(&String::from_utf8_lossy(&out.stdout)) {
                Some(v) => Check::ok("npm", format!("npm {v} at {}", program.display())),
                None => Check::warn(
                    "npm",
                    format!("{} --version printed no version", program.display()),
                    fix,
                ),
            }
        }
        Ok(out) => Check::warn(
            "npm",
            format!(
                "{} --version failed: {}",
                program.display(),
                first_line(&out)
            ),
            fix,
        ),
        Err(e) => Check::warn("npm", format!("{} --version {e}", program.display()), fix),
    }
}

/// bubblewrap: present, and able to build a sandbox (`bwrap --ro-bind / / true`).
pub async fn bubblewrap(path: Option<&OsString>) -> Check {
    let Some(program) = find_executable("bwrap", path) else {
        return Check::warn(
            "bubblewrap",
            "bwrap was not found on PATH; Codex cannot confine its shell tools.",
            "Install bubblewrap (`apt install bubblewrap`, `dnf install bubblewrap`).",
        );
    };
    let fix = "bwrap cannot create a sandbox here: allow unprivileged user namespaces \
               (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04+ \
               kernel.apparmor_restrict_unprivileged_userns=0), or give the container \
               user namespaces.";
    match run(&program, &["--ro-bind", "/", "/", "true"], TOOL_TIMEOUT).await {
        Ok(out) if out.status.success() => Check::ok(
            "bubblewrap",
            format!("{} can create a sandbox", program.display()),
        ),
        Ok(out) => Check::warn(
            "bubblewrap",
            format!(
                "{} --ro-bind / / true failed: {}",
                program.display(),
                first_line(&out)
            ),
            fix,
        ),
        Err(e) => Check::warn(
            "bubblewrap",
            format!("{} --ro-bind / / true {e}", program.display()),
            fix,
        ),
    }
}
