//! One doctor line per catalog adapter: installed (on PATH or managed)? its version
//! against the manifest's tested range, and whether credentials are in sight (an
//! auth env var the agent would receive, or a login file under HOME). The agent is
//! never started beyond its version command, which the launcher runs with a timeout.

use super::check::Check;
use crate::adapters::acp::AgentManifest;
use crate::adapters::acp::catalog::Catalog;
use crate::adapters::process::env::sanitized_env;
use crate::adapters::acp::launcher::{self, LaunchSource, LauncherOptions};
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

/// How to install an adapter that is missing or outside its tested range.
fn install_hint(m: &AgentManifest) -> String {
    match (&m.package, &m.package_version) {
        (Some(p), Some(v)) => format!("npm install -g {p}@{v}"),
        (Some(p), None) => format!("npm install -g {p}"),
        (None, _) => format!("Install {} so that `{}` is on PATH.", m.name, m.command),
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
            install_hint(m),
        );
    }
    match credentials(m, env, home) {
        Some(how) => Check::ok(
            name,
            format!("{found} (tested {range}); credentials: {how}"),
        ),
        None => Check::warn(
            name,
            format!(
                "{found} (tested {range}); no credentials found{}",
                wanted(m)
            ),
            m.auth
                .hint
                .clone()
                .unwrap_or_else(|| format!("Sign in to {} once.", m.name)),
        ),
    }
}

/// Where credentials were found: an auth env var the agent receives, or a login
/// file; `Some("not needed")` when the manifest names neither.
fn credentials(m: &AgentManifest, env: &[(String, String)], home: Option<&Path>) -> Option<String> {
    if m.auth.env.is_empty() && m.auth.files.is_empty() {
        return Some("none declared".into());
    }
    if let Some((k, _)) = env
        .iter()
        .find(|(k, v)| !v.is_empty() && m.auth.env.contains(k))
    {
        return Some(format!("{k} is set"));
    }
    let home = home?;
    m.auth
        .files
        .iter()
        .find(|f| home.join(f).exists())
        .map(|f| format!("~/{f} exists"))
}

/// ` (looked for ENV, ~/FILE)` for the message of a missing credential.
fn wanted(m: &AgentManifest) -> String {
    let names: Vec<String> = m
        .auth
        .env
        .iter()
        .cloned()
        .chain(m.auth.files.iter().map(|f| format!("~/{f}")))
        .collect();
    format!(" (looked for {})", names.join(", "))
}
