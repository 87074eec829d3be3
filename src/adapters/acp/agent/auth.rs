//! Whether an agent looks signed in, derived without starting it: from the auth
//! env vars and login files its manifest lists (`[auth]`), checked against the env
//! the agent would receive and the user's home directory.

use crate::adapters::acp::agent::catalog::AgentManifest;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The sign-in state of an agent, as far as files and env vars tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AuthStatus {
    /// A credential env var is set or a login file exists.
    Ok,
    /// None of the declared credentials is present.
    Unauthenticated,
    /// A login file carries one of the manifest's billing-problem markers.
    Billing,
    /// The manifest declares nothing to look for, or HOME is unknown.
    Unknown,
}

/// The derived status with its reasons.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthCheck {
    /// The status.
    pub status: AuthStatus,
    /// A short human reason when the status is not `ok`.
    pub error: Option<String>,
    /// What was found (`ANTHROPIC_API_KEY is set`, `~/.codex/auth.json exists`)
    /// when the status is `ok` or `billing`.
    pub found: Option<String>,
}

impl AuthCheck {
    fn new(status: AuthStatus, error: Option<String>, found: Option<String>) -> Self {
        Self {
            status,
            error,
            found,
        }
    }
}

/// Derives `manifest`'s auth status from `env` (the env the agent would receive)
/// and the login files under `home`. An env var wins over files; a login file
/// containing a `[[auth.billing]]` marker makes the status `billing`.
pub fn check(manifest: &AgentManifest, env: &[(String, String)], home: Option<&Path>) -> AuthCheck {
    let auth = &manifest.auth;
    if auth.env.is_empty() && auth.files.is_empty() {
        return AuthCheck::new(
            AuthStatus::Unknown,
            Some(format!(
                "{} declares no credential env vars or login files",
                manifest.name
            )),
            None,
        );
    }
    if let Some((k, _)) = env
        .iter()
        .find(|(k, v)| !v.is_empty() && auth.env.contains(k))
    {
        return AuthCheck::new(AuthStatus::Ok, None, Some(format!("{k} is set")));
    }
    let Some(home) = home.filter(|_| !auth.files.is_empty()) else {
        let why = if auth.files.is_empty() {
            format!("{} is not set", auth.env.join(" or "))
        } else {
            "HOME is unknown, so login files cannot be checked".into()
        };
        let status = if auth.files.is_empty() {
            AuthStatus::Unauthenticated
        } else {
            AuthStatus::Unknown
        };
        return AuthCheck::new(status, Some(why), None);
    };
    let Some(file) = auth.files.iter().find(|f| home.join(f).exists()) else {
        return AuthCheck::new(
            AuthStatus::Unauthenticated,
            Some(format!(
                "no credentials found (looked for {})",
                wanted(manifest)
            )),
            None,
        );
    };
    let found = Some(format!("~/{file} exists"));
    let billing = auth.billing.iter().find(|b| {
        std::fs::read_to_string(home.join(&b.file)).is_ok_and(|text| text.contains(&b.contains))
    });
    match billing {
        Some(b) => AuthCheck::new(
            AuthStatus::Billing,
            Some(format!("~/{} reports a billing problem", b.file)),
            found,
        ),
        None => AuthCheck::new(AuthStatus::Ok, None, found),
    }
}

/// `ENV, ~/FILE, ...`: every credential the manifest declares.
fn wanted(m: &AgentManifest) -> String {
    let names: Vec<String> = m
        .auth
        .env
        .iter()
        .cloned()
        .chain(m.auth.files.iter().map(|f| format!("~/{f}")))
        .collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::adapters::acp::agent::catalog::{BUILTIN_MANIFESTS, Catalog, parse_manifest};

    fn builtin(id: &str) -> AgentManifest {
        let (catalog, _) = Catalog::load(BUILTIN_MANIFESTS, None);
        catalog.get(id).expect("builtin").clone()
    }

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn env_vars_and_login_files_of_the_builtins() {
        let home = tempfile::tempdir().expect("home");
        let h = Some(home.path());
        let claude = builtin("claude_code");
        let none = check(&claude, &env(&[]), h);
        assert_eq!(none.status, AuthStatus::Unauthenticated);
        assert!(
            none.error
                .as_deref()
                .is_some_and(|e| e.contains("ANTHROPIC_API_KEY") && e.contains("~/.claude")),
            "{none:?}"
        );
        let by_env = check(&claude, &env(&[("ANTHROPIC_API_KEY", "sk-x")]), h);
        assert_eq!(
            (by_env.status, by_env.found.as_deref()),
            (AuthStatus::Ok, Some("ANTHROPIC_API_KEY is set"))
        );
        assert_eq!(
            check(&claude, &env(&[("ANTHROPIC_API_KEY", "")]), h).status,
            AuthStatus::Unauthenticated,
            "an empty key is no key"
        );
        let codex = builtin("codex");
        assert_eq!(
            check(&codex, &env(&[("OPENAI_API_KEY", "k")]), h).status,
            AuthStatus::Ok
        );
        std::fs::create_dir_all(home.path().join(".codex")).expect("dir");
        std::fs::write(home.path().join(".codex/auth.json"), "{}").expect("auth");
        let by_file = check(&codex, &env(&[]), h);
        assert_eq!(
            (by_file.status, by_file.error, by_file.found.as_deref()),
            (AuthStatus::Ok, None, Some("~/.codex/auth.json exists"))
        );
        let gemini = builtin("gemini");
        assert_eq!(
            check(&gemini, &env(&[("GOOGLE_API_KEY", "k")]), h).status,
            AuthStatus::Ok
        );
        assert_eq!(
            check(&gemini, &env(&[]), h).status,
            AuthStatus::Unauthenticated
        );
        assert_eq!(check(&gemini, &env(&[]), None).status, AuthStatus::Unknown);
    }

    #[test]
    fn billing_markers_and_undeclared_auth() {
        let home = tempfile::tempdir().expect("home");
        let m = parse_manifest(
            "b.toml",
            "id = \"b\"\nname = \"B\"\ncommand = \"b\"\n[auth]\nfiles = [\"b.json\"]\n[[auth.billing]]\nfile = \"b.json\"\ncontains = \"credit_balance_too_low\"\n",
        )
        .expect("manifest");
        std::fs::write(home.path().join("b.json"), "{\"ok\":true}").expect("file");
        assert_eq!(check(&m, &[], Some(home.path())).status, AuthStatus::Ok);
        std::fs::write(
            home.path().join("b.json"),
            "{\"error\":\"credit_balance_too_low\"}",
        )
        .expect("file");
        let billing = check(&m, &[], Some(home.path()));
        assert_eq!(billing.status, AuthStatus::Billing);
        assert!(billing.error.is_some_and(|e| e.contains("billing")));
        let bare =
            parse_manifest("n.toml", "id = \"n\"\nname = \"N\"\ncommand = \"n\"\n").expect("m");
        let unknown = check(&bare, &[], Some(home.path()));
        assert_eq!(unknown.status, AuthStatus::Unknown);
        assert!(unknown.error.is_some());
    }
}
