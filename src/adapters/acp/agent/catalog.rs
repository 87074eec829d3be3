//! The external-agent catalog: one TOML manifest per agent (how to launch it, its
//! managed package, tested versions, auth hints, the env it may receive). Built-ins
//! are embedded from the repository's `adapters/`; user manifests in the config dir
//! add agents or override built-ins by id.

use crate::adapters::process::env::pattern_is_valid;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// The built-in manifests, as `(file name, TOML text)`.
pub const BUILTIN_MANIFESTS: &[(&str, &str)] = &[
    (
        "claude_code.toml",
        include_str!("../../../../adapters/claude_code.toml"),
    ),
    (
        "codex.toml",
        include_str!("../../../../adapters/codex.toml"),
    ),
    (
        "cursor_agent.toml",
        include_str!("../../../../adapters/cursor_agent.toml"),
    ),
    (
        "gemini.toml",
        include_str!("../../../../adapters/gemini.toml"),
    ),
    (
        "opencode.toml",
        include_str!("../../../../adapters/opencode.toml"),
    ),
];

/// How an agent signs in, for hints and readiness checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AuthHints {
    /// Env vars that carry credentials for this agent.
    #[serde(default)]
    pub env: Vec<String>,
    /// Login files, relative to HOME.
    #[serde(default)]
    pub files: Vec<String>,
    /// What to tell the operator.
    #[serde(default)]
    pub hint: Option<String>,
    /// Login-file contents that mean the account cannot be billed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub billing: Vec<BillingMarker>,
}

/// A login file whose text containing `contains` means a billing problem (the
/// agent wrote its last account error there).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BillingMarker {
    /// The file, relative to HOME.
    pub file: String,
    /// The text that marks the problem.
    pub contains: String,
}

/// Small per-agent behaviour flags.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quirks {
    /// A mode to set right after `session/new` (claude-agent-acp 0.101's default
    /// mode `auto` never asks the client for permission).
    #[serde(default)]
    pub initial_mode: Option<String>,
    /// The agent advertises `session/load` but it does not work; start fresh instead.
    #[serde(default)]
    pub broken_load_session: bool,
    /// Modes besides `initial_mode` in which the agent still asks the client
    /// (or does not act), so an editor may choose them while Hecate pins the mode.
    #[serde(default)]
    pub asking_modes: Vec<String>,
}

fn default_version_args() -> Vec<String> {
    vec!["--version".to_string()]
}

fn default_cost_mode() -> String {
    "external".to_string()
}

/// One external agent as the catalog describes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentManifest {
    /// Stable id (`codex`, `claude_code`, ...).
    pub id: String,
    /// Display name.
    pub name: String,
    /// The direct command: a binary name looked up on PATH, or a path.
    pub command: String,
    /// Arguments that put the agent in ACP mode.
    #[serde(default)]
    pub args: Vec<String>,
    /// The npm package Hecate can install and run when the command is missing.
    #[serde(default)]
    pub package: Option<String>,
    /// Pinned package version, when set.
    #[serde(default)]
    pub package_version: Option<String>,
    /// The package's bin name (defaults to the command's file name).
    #[serde(default)]
    pub bin: Option<String>,
    /// Arguments that print the version.
    #[serde(default = "default_version_args")]
    pub version_args: Vec<String>,
    /// The semver range Hecate was tested with, e.g. `>=0.16.0, <3`.
    #[serde(default)]
    pub tested_range: Option<String>,
    /// The Node.js versions the managed package needs (its `engines.node`), e.g.
    /// `>=22`; `hecate doctor` checks the `node` on PATH against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Sign-in hints.
    #[serde(default)]
    pub auth: AuthHints,
    /// Env var patterns the agent may receive (`*` only as a suffix).
    #[serde(default)]
    pub env_allow: Vec<String>,
    /// How costs are accounted (`external`: the agent bills on its own).
    #[serde(default = "default_cost_mode")]
    pub cost_mode: String,
    /// Behaviour flags.
    #[serde(default)]
    pub quirks: Quirks,
    /// Whether and how the agent can use Hecate's `/v1` as its model endpoint.
    #[serde(default)]
    pub gateway: GatewayHints,
}

/// Whether and how an agent can be pointed at a model endpoint (Hecate's
/// `/v1`), so its model calls are recorded and costed in its session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GatewayHints {
    /// Environment that points the agent at the gateway, each value a template:
    /// `{base_url}` (`http://HOST:PORT`, no path), `{session_id}` (the Hecate
    /// session, for the `X-Hecate-Agent-Session` header) and `{api_key}` (the
    /// HTTP token, or `hecate` without one). Empty: Hecate cannot do it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// How it works for this agent, or why it cannot.
    #[serde(default)]
    pub note: Option<String>,
}

impl GatewayHints {
    /// The environment for session `session_id` on a gateway at `base_url`.
    pub fn render(&self, base_url: &str, session_id: &str, api_key: &str) -> Vec<(String, String)> {
        self.env
            .iter()
            .map(|(k, v)| {
                let value = v
                    .replace("{base_url}", base_url.trim_end_matches('/'))
                    .replace("{session_id}", session_id)
                    .replace("{api_key}", api_key);
                (k.clone(), value)
            })
            .collect()
    }
}

impl AgentManifest {
    /// The managed package's bin name: `bin`, else the command's file name.
    pub fn bin_name(&self) -> String {
        self.bin.clone().unwrap_or_else(|| {
            Path::new(&self.command)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| self.command.clone())
        })
    }

    /// The parsed Node.js range, when one is set and valid.
    pub fn node_req(&self) -> Option<semver::VersionReq> {
        self.node
            .as_deref()
            .and_then(|r| semver::VersionReq::parse(r).ok())
    }

    /// The parsed tested range, when one is set and valid.
    pub fn tested_req(&self) -> Option<semver::VersionReq> {
        self.tested_range
            .as_deref()
            .and_then(|r| semver::VersionReq::parse(r).ok())
    }
}

/// A manifest that could not be used, with where it went wrong.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub struct ManifestError {
    /// The manifest file (a path for user manifests, a file name for built-ins).
    pub file: String,
    /// 1-based line of the problem, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ManifestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{}: {}", self.file, line, self.message),
            None => write!(f, "{}: {}", self.file, self.message),
        }
    }
}

/// Where a catalog entry came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ManifestOrigin {
    /// Embedded in the binary.
    Builtin,
    /// A user manifest file.
    User {
        /// Its path.
        path: PathBuf,
    },
}

/// A manifest and its origin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogEntry {
    /// The manifest.
    pub manifest: AgentManifest,
    /// Where it came from.
    pub origin: ManifestOrigin,
}

/// All known external agents, by id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Catalog {
    entries: BTreeMap<String, CatalogEntry>,
}

impl Catalog {
    /// Loads `builtin` manifests, then every `*.toml` in `user_dir` (sorted by
    /// name), a user manifest replacing a built-in with the same id. Bad manifests
    /// are skipped and reported, never fatal.
    pub fn load(
        builtin: &[(&str, &str)],
        user_dir: Option<&Path>,
    ) -> (Catalog, Vec<ManifestError>) {
        let mut catalog = Catalog::default();
        let mut errors = Vec::new();
        for (file, src) in builtin {
            match parse_manifest(file, src) {
                Ok(m) => catalog.insert(m, ManifestOrigin::Builtin),
                Err(e) => errors.push(e),
            }
        }
        if let Some(dir) = user_dir {
            load_user_dir(dir, &mut catalog, &mut errors);
        }
        (catalog, errors)
    }

    /// Loads the built-ins and the default user directory.
    pub fn load_default() -> (Catalog, Vec<ManifestError>) {
        let dir = default_user_dir();
        Self::load(BUILTIN_MANIFESTS, dir.as_deref())
    }

    fn insert(&mut self, manifest: AgentManifest, origin: ManifestOrigin) {
        self.entries
            .insert(manifest.id.clone(), CatalogEntry { manifest, origin });
    }

    /// The manifest for `id`.
    pub fn get(&self, id: &str) -> Option<&AgentManifest> {
        self.entries.get(id).map(|e| &e.manifest)
    }

    /// The entry (manifest and origin) for `id`.
    pub fn entry(&self, id: &str) -> Option<&CatalogEntry> {
        self.entries.get(id)
    }

    /// Every entry, sorted by id.
    pub fn entries(&self) -> impl Iterator<Item = &CatalogEntry> {
        self.entries.values()
    }

    /// The ids, sorted.
    pub fn ids(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }
}

/// `<config dir>/hecate/adapters`, where user manifests live.
pub fn default_user_dir() -> Option<PathBuf> {
    dirs::config_dir().map(|d| d.join("hecate").join("adapters"))
}

fn load_user_dir(dir: &Path, catalog: &mut Catalog, errors: &mut Vec<ManifestError>) {
    let read = match std::fs::read_dir(dir) {
        Ok(r) => r,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
        Err(e) => {
            errors.push(ManifestError {
                file: dir.display().to_string(),
                line: None,
                message: format!("cannot read the directory: {e}"),
            });
            return;
        }
    };
    let mut files: Vec<PathBuf> = read
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    for path in files {
        let file = path.display().to_string();
        match std::fs::read_to_string(&path) {
            Ok(src) => match parse_manifest(&file, &src) {
                Ok(m) => catalog.insert(m, ManifestOrigin::User { path }),
                Err(e) => errors.push(e),
            },
            Err(e) => errors.push(ManifestError {
                file,
                line: None,
                message: format!("cannot read the file: {e}"),
            }),
        }
    }
}

/// Parses and validates one manifest; `file` names it in errors.
pub fn parse_manifest(file: &str, src: &str) -> Result<AgentManifest, ManifestError> {
    let manifest: AgentManifest = toml::from_str(src).map_err(|e| ManifestError {
        file: file.to_string(),
        line: e.span().map(|s| line_of_offset(src, s.start)),
        message: e.message().to_string(),
    })?;
    validate(&manifest).map_err(|(key, message)| ManifestError {
        file: file.to_string(),
        line: line_of_key(src, key),
        message,
    })?;
    Ok(manifest)
}

fn validate(m: &AgentManifest) -> Result<(), (&'static str, String)> {
    let id_ok = !m.id.is_empty()
        && m.id
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-');
    if !id_ok {
        return Err((
            "id",
            format!(
                "id {:?} must be non-empty lowercase letters, digits, `_` or `-`",
                m.id
            ),
        ));
    }
    if m.command.trim().is_empty() {
        return Err(("command", "command must not be empty".into()));
    }
    if let Some(range) = &m.tested_range
        && let Err(e) = semver::VersionReq::parse(range)
    {
        return Err((
            "tested_range",
            format!("tested_range {range:?} is not a semver requirement: {e}"),
        ));
    }
    if let Some(v) = &m.package_version
        && m.package.is_none()
    {
        return Err((
            "package_version",
            format!("package_version {v:?} is set without a package"),
        ));
    }
    if let Some(bad) = m.env_allow.iter().find(|p| !pattern_is_valid(p)) {
        return Err((
            "env_allow",
            format!("env_allow pattern {bad:?} is invalid (`*` is allowed only as a suffix)"),
        ));
    }
    if !matches!(m.cost_mode.as_str(), "external" | "unknown") {
        return Err((
            "cost_mode",
            format!(
                "cost_mode {:?} must be `external` or `unknown`",
                m.cost_mode
            ),
        ));
    }
    Ok(())
}

fn line_of_offset(src: &str, offset: usize) -> usize {
    let end = offset.min(src.len());
    src.as_bytes()[..end]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

fn line_of_key(src: &str, key: &str) -> Option<usize> {
    src.lines()
        .position(|l| {
            let t = l.trim_start();
            t.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_parse() {
        let (catalog, errors) = Catalog::load(BUILTIN_MANIFESTS, None);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(
            catalog.ids(),
            vec!["claude_code", "codex", "cursor_agent", "gemini", "opencode"]
        );
        let claude = catalog.get("claude_code").expect("claude");
        assert_eq!(claude.quirks.initial_mode.as_deref(), Some("default"));
        assert_eq!(claude.version_args, vec!["--version"]);
        let gemini = catalog.get("gemini").expect("gemini");
        assert_eq!(gemini.args, vec!["--acp"]);
        assert_eq!(gemini.bin_name(), "gemini");
        for e in catalog.entries() {
            assert_eq!(e.manifest.cost_mode, "external");
            if let Some(r) = &e.manifest.tested_range {
                assert!(e.manifest.tested_req().is_some(), "{r}");
            }
        }
    }

    #[test]
    fn every_builtin_says_whether_it_can_use_the_gateway() {
        let (catalog, _) = Catalog::load(BUILTIN_MANIFESTS, None);
        for e in catalog.entries() {
            assert!(e.manifest.gateway.note.is_some(), "{}", e.manifest.id);
        }
        let claude = catalog.get("claude_code").expect("claude");
        let env = claude
            .gateway
            .render("http://127.0.0.1:8765/", "ses_1", "tok");
        assert!(env.contains(&("ANTHROPIC_BASE_URL".into(), "http://127.0.0.1:8765".into())));
        assert!(env.contains(&("ANTHROPIC_API_KEY".into(), "tok".into())));
        assert!(env.contains(&(
            "ANTHROPIC_CUSTOM_HEADERS".into(),
            "X-Hecate-Agent-Session: ses_1".into()
        )));
        let codex = catalog.get("codex").expect("codex");
        let env = codex
            .gateway
            .render("http://127.0.0.1:8765/", "ses_1", "tok");
        assert!(env.contains(&("MODEL_PROVIDER".into(), "hecate".into())));
        assert!(env.contains(&("HECATE_GATEWAY_API_KEY".into(), "tok".into())));
        let config = env
            .iter()
            .find(|(k, _)| k == "CODEX_CONFIG")
            .map(|(_, v)| serde_json::from_str::<serde_json::Value>(v).expect("JSON"))
            .expect("CODEX_CONFIG");
        let provider = &config["model_providers"]["hecate"];
        assert_eq!(provider["base_url"], "http://127.0.0.1:8765/v1");
        assert_eq!(provider["wire_api"], "responses");
        assert_eq!(provider["env_key"], "HECATE_GATEWAY_API_KEY");
        assert_eq!(provider["http_headers"]["X-Hecate-Agent-Session"], "ses_1");
    }

    #[test]
    fn an_unknown_gateway_key_is_an_error() {
        let src = "id = \"x\"\nname = \"X\"\ncommand = \"x\"\n[gateway]\nurl = \"y\"\n";
        let e = parse_manifest("x.toml", src).expect_err("bad");
        assert!(e.message.contains("url"), "{e}");
    }

    #[test]
    fn syntax_error_reports_line() {
        let src = "id = \"x\"\nname = \"X\"\ncommand = [1\n";
        let e = parse_manifest("x.toml", src).expect_err("bad");
        assert_eq!(e.file, "x.toml");
        assert!(e.line.is_some_and(|l| l >= 3), "{e}");
    }

    #[test]
    fn validation_error_reports_key_line() {
        let src = "id = \"x\"\nname = \"X\"\ncommand = \"x\"\nenv_allow = [\"*_KEY\"]\n";
        let e = parse_manifest("x.toml", src).expect_err("bad");
        assert_eq!(e.line, Some(4));
        assert!(e.message.contains("*_KEY"));
    }

    #[test]
    fn unknown_field_is_an_error_with_line() {
        let src = "id = \"x\"\nname = \"X\"\ncommand = \"x\"\ncomand = \"y\"\n";
        let e = parse_manifest("x.toml", src).expect_err("bad");
        assert_eq!(e.line, Some(4), "{e}");
    }
}
