//! One doctor line per catalog adapter: installed (on PATH or managed)? its version
//! against the manifest's tested range, and whether credentials are in sight (an
//! auth env var the agent would receive, or a login file under HOME). The agent is
//! never started beyond its version command, which the launcher runs with a timeout.

use super::check::Check;
use crate::adapters::acp::AgentManifest;
use crate::adapters::acp::agent::auth::{self, AuthStatus};
use crate::adapters::acp::agent::catalog::Catalog;
use crate::adapters::acp::agent::launcher::{self, LaunchSource, LauncherOptions};
use crate::adapters::process::env::sanitized_env;
use std::collections::HashMap;
use std::path::Path;

/// Checks every adapter of `catalog`; `base_env` is Hecate's environment and
/// `extra_env` the per-adapter variables the config opts in.
pub async fn check_all(
    catalog: &Catalog,
    opts: &LauncherOptions,
    base_env: &HashMap<String, String>,
    extra_env: &HashMap<String, Vec<(String, String)>>,
    home: Option<&Path>,
) -> Vec<Check> {
    let checks = catalog.entries().map(|entry| {
        let m = &entry.manifest;
        let extra = extra_env.get(&m.id).cloned().unwrap_or_default();
        let env = sanitized_env(base_env, &m.env_allow, &extra);
        async move { check_one(m, opts, &env, home).await }
    });
    futures::future::join_all(checks).await
}

/// How to install an adapter that is missing.
fn install_hint(m: &AgentManifest) -> String {
    match &m.package {
        Some(_) => format!("hecate adapters install {}", m.id),
        None => format!("Install {} so that `{}` is on PATH.", m.name, m.command),
    }
}

async fn check_one(
    m: &AgentManifest,
    opts: &LauncherOptions,
    env: &[(String, String)],
    home: Option<&Path>,
) -> Check {
    let name = format!("adapter {}", m.id);
    let a = launcher::availability(m, opts, env).await;
    let Some(path) = a.path.filter(|_| a.available) else {
        return Check::warn(
            name,
            format!(
                "{}: not installed (`{}` is not on PATH and there is no managed install)",
                m.name, m.command
            ),
            install_hint(m),
        );
    };
    let from = match a.source {
        Some(LaunchSource::Managed) => " (managed)",
        _ => "",
    };
    let range = m.tested_range.as_deref().unwrap_or("any");
    let Some(version) = a.version else {
        return Check::warn(
            name,
            format!(
                "{} at {}{from}: `{} {}` printed no version within the timeout",
                m.name,
                path.display(),
                m.command,
                m.version_args.join(" ")
            ),
            format!("Check that {} runs; tested range {range}.", path.display()),
        );
    };
    let found = format!("{} {version} at {}{from}", m.name, path.display());
    if a.version_outside_range {
        return Check::warn(
            name,
            format!("{found}: outside the tested range {range}"),
            range_hint(m, a.source),
        );
    }
    let auth = auth::check(m, env, home);
    match (auth.status, auth.found) {
        (AuthStatus::Ok, Some(how)) => Check::ok(
            name,
            format!("{found} (tested {range}); credentials: {how}"),
        ),
        (AuthStatus::Unknown, _) if m.auth.env.is_empty() && m.auth.files.is_empty() => Check::ok(
            name,
            format!("{found} (tested {range}); credentials: none declared"),
        ),
        _ => Check::warn(
            name,
            format!(
                "{found} (tested {range}); {}",
                auth.error.unwrap_or_else(|| "credentials unknown".into())
            ),
            m.auth
                .hint
                .clone()
                .unwrap_or_else(|| format!("Sign in to {} once.", m.name)),
        ),
    }
}

/// How to get a version inside the tested range: a direct command shadows the
/// managed one, so it must be upgraded where it was installed.
fn range_hint(m: &AgentManifest, source: Option<LaunchSource>) -> String {
    match (&m.package, &m.package_version, source) {
        (Some(_), _, Some(LaunchSource::Managed)) => {
            format!("hecate adapters install {}", m.id)
        }
        (Some(p), Some(v), _) => format!(
            "Upgrade `{}` on PATH (npm install -g {p}@{v}), or remove it and run `hecate adapters install {}`.",
            m.command, m.id
        ),
        _ => format!(
            "Install a version of {} in the tested range {}.",
            m.name,
            m.tested_range.as_deref().unwrap_or("any")
        ),
    }
}
