//! The environment a child receives (agents, MCP servers, terminals, git, npm): an
//! allowlist, never Hecate's whole environment, so provider keys and Hecate's own
//! secrets stay home unless a manifest pattern or an explicit opt-in lets them
//! through.

use std::collections::{BTreeMap, HashMap};

/// Variables every child gets when Hecate has them: locale, terminal, paths and
/// network settings that carry no credentials of Hecate's own.
const BASE_ALLOW: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TERM",
    "COLORTERM",
    "TZ",
    "TMPDIR",
    "TMP",
    "TEMP",
    "NO_COLOR",
    "FORCE_COLOR",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
];

/// Whether `name` matches `pattern`: an exact name, or a prefix ending in `*`.
pub fn pattern_matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => pattern == name,
    }
}

/// Whether a pattern is well formed: a non-empty name, optionally followed by one
/// `*` (a bare `*` would let everything through and is refused).
pub fn pattern_is_valid(pattern: &str) -> bool {
    let body = pattern.strip_suffix('*').unwrap_or(pattern);
    !body.is_empty() && !body.contains('*') && !body.contains('=')
}

/// Builds the child environment from Hecate's own environment `base`: the base
/// allowlist, plus variables matching the manifest's `manifest_allow` patterns,
/// plus the explicit `extra` pairs (which win). Sorted by name.
pub fn sanitized_env(
    base: &HashMap<String, String>,
    manifest_allow: &[String],
    extra: &[(String, String)],
) -> Vec<(String, String)> {
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    for (name, value) in base {
        let allowed = BASE_ALLOW.iter().any(|p| pattern_matches(p, name))
            || manifest_allow.iter().any(|p| pattern_matches(p, name));
        if allowed {
            out.insert(name.clone(), value.clone());
        }
    }
    for (name, value) in extra {
        out.insert(name.clone(), value.clone());
    }
    out.into_iter().collect()
}

/// Hecate's own environment as a map (non-UTF-8 entries are skipped).
pub fn current_env() -> HashMap<String, String> {
    std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> HashMap<String, String> {
        [
            ("PATH", "/usr/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C.UTF-8"),
            ("OPENAI_API_KEY", "sk-openai"),
            ("ANTHROPIC_API_KEY", "sk-ant"),
            ("ANTHROPIC_BASE_URL", "http://x"),
            ("HECATE_TOKEN", "secret"),
            ("HECATE_PROVIDER_KEY", "secret"),
            ("AWS_SECRET_ACCESS_KEY", "aws"),
            ("IS_SANDBOX", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
    }

    fn names(env: &[(String, String)]) -> Vec<&str> {
        env.iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn base_allowlist_only_without_patterns() {
        let env = sanitized_env(&base(), &[], &[]);
        assert_eq!(names(&env), vec!["HOME", "LC_ALL", "PATH"]);
    }

    #[test]
    fn manifest_patterns_let_their_provider_through_and_nothing_else() {
        let allow = vec!["ANTHROPIC_*".to_string(), "IS_SANDBOX".to_string()];
        let env = sanitized_env(&base(), &allow, &[]);
        let n = names(&env);
        assert!(n.contains(&"ANTHROPIC_API_KEY"));
        assert!(n.contains(&"ANTHROPIC_BASE_URL"));
        assert!(n.contains(&"IS_SANDBOX"));
        assert!(!n.contains(&"OPENAI_API_KEY"));
        assert!(!n.iter().any(|k| k.starts_with("HECATE_")));
        assert!(!n.contains(&"AWS_SECRET_ACCESS_KEY"));
    }

    #[test]
    fn extras_are_added_and_override() {
        let extra = vec![
            ("OPENAI_API_KEY".to_string(), "opt-in".to_string()),
            ("PATH".to_string(), "/opt/bin".to_string()),
        ];
        let env = sanitized_env(&base(), &[], &extra);
        let map: HashMap<_, _> = env.into_iter().collect();
        assert_eq!(map["OPENAI_API_KEY"], "opt-in");
        assert_eq!(map["PATH"], "/opt/bin");
    }

    #[test]
    fn patterns_validate_star_only_as_suffix() {
        assert!(pattern_is_valid("OPENAI_*"));
        assert!(pattern_is_valid("IS_SANDBOX"));
        assert!(!pattern_is_valid("*_KEY"));
        assert!(!pattern_is_valid("A*B"));
        assert!(!pattern_is_valid(""));
        assert!(!pattern_is_valid("*"));
        assert!(pattern_matches("LC_*", "LC_CTYPE"));
        assert!(!pattern_matches("LC_*", "LANG"));
    }
}
