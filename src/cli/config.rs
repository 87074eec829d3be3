//! The configuration file (TOML) and the `PROVIDER_<NAME>_*` environment overrides.

use crate::adapters::providers::pricing::Price;
use crate::adapters::providers::{ProviderConfig, ProviderKind};
use crate::domain::session::Guardrails;
use crate::store::history::HistoryStrategy;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// Errors reading or interpreting configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file exists but could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML for this schema.
    #[error("invalid config file {path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What and where (line and column).
        message: String,
    },
    /// A value is present but unusable.
    #[error("invalid provider {name}: {message}")]
    Provider {
        /// Provider name.
        name: String,
        /// What is wrong.
        message: String,
    },
}

/// The file's shape.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    /// `[server]`.
    #[serde(default)]
    pub server: ServerSection,
    /// `[providers.NAME]`.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderSection>,
    /// `[history]`.
    #[serde(default)]
    pub history: HistorySection,
    /// `[guardrails]`.
    #[serde(default)]
    pub guardrails: GuardrailsSection,
    /// `[pricing."provider/model"]`.
    #[serde(default)]
    pub pricing: BTreeMap<String, PriceSection>,
    /// `[approvals]`.
    #[serde(default)]
    pub approvals: ApprovalsSection,
    /// `[agents]`.
    #[serde(default)]
    pub agents: AgentsSection,
    /// `[acp]`.
    #[serde(default)]
    pub acp: AcpSection,
    /// `[mcp_servers.NAME]`: upstream MCP servers aggregated by `hecate mcp`.
    #[serde(default)]
    pub mcp_servers: BTreeMap<String, McpServerSection>,
    /// `[mcp_pool]`: tunables of the upstream MCP client pool.
    #[serde(default)]
    pub mcp_pool: McpPoolSection,
}

/// `[mcp_pool]`: the shared client pool of upstream MCP servers; every key is
/// optional (defaults: 300 s idle TTL, 256 entries, 60 s pings, 30 s bring-up,
/// 200 ms before the one retry of a failed bring-up).
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpPoolSection {
    /// An upstream connection nobody uses is closed after this many seconds (>= 1).
    pub idle_ttl_secs: Option<u64>,
    /// Soft cap on cached connections; idle ones are closed least recently used
    /// first (>= 1).
    pub max_entries: Option<usize>,
    /// Idle connections are pinged this often, in seconds (0 disables pings).
    pub ping_interval_secs: Option<u64>,
    /// Deadline of starting an upstream and its `initialize`, in seconds (>= 1).
    pub init_timeout_secs: Option<u64>,
    /// Wait before the one retry of a failed bring-up, in milliseconds (0 to 60,000).
    pub retry_delay_ms: Option<u64>,
}

/// `[mcp_servers.NAME]`: one upstream MCP server, over stdio (`command`, `args`,
/// `env`, `cwd`) or Streamable HTTP (`url`, `headers`); values may reference
/// `$VAR` / `${VAR}`, resolved when the server is started.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpServerSection {
    /// Program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment (added to the sanitized base environment).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Working directory.
    pub cwd: Option<PathBuf>,
    /// URL of a Streamable HTTP server.
    pub url: Option<String>,
    /// Headers sent to an HTTP server.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// `auto` (default), `require_approval` or `block`.
    pub policy: Option<String>,
    /// Per-tool policy overrides: `[mcp_servers.NAME.tools] write_file = "require_approval"`.
    #[serde(default)]
    pub tools: BTreeMap<String, String>,
    /// Deadline of one call in milliseconds (default 120000).
    pub timeout_ms: Option<u64>,
}

/// `[acp]`: `hecate acp` defaults.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcpSection {
    /// Target for new editor threads: `model:PROVIDER/MODEL` or `agent:ADAPTER_ID`.
    pub default_target: Option<String>,
}

/// `[approvals]`: how permission requests are answered.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalsSection {
    /// `prompt` (default), `auto` or `deny`.
    pub mode: Option<String>,
    /// How long a prompted request waits, in milliseconds (default 300000).
    pub timeout_ms: Option<u64>,
}

/// `[agents]`: external ACP agents.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentsSection {
    /// Where managed agent packages are installed (default `<cache dir>/hecate`).
    pub cache_dir: Option<PathBuf>,
    /// A turn fails when the agent is silent this long, in milliseconds.
    pub idle_timeout_ms: Option<u64>,
    /// A turn fails when it runs longer than this, in milliseconds.
    pub turn_timeout_ms: Option<u64>,
    /// How long `initialize` / `session/new` may take, in milliseconds.
    pub start_timeout_ms: Option<u64>,
    /// After a cancel, how long to wait for the agent to end the turn, in milliseconds.
    pub cancel_grace_ms: Option<u64>,
    /// Extra environment opted in per adapter: `[agents.env.codex] OPENAI_API_KEY = "$OPENAI_API_KEY"`.
    #[serde(default)]
    pub env: BTreeMap<String, BTreeMap<String, String>>,
}

/// `[server]`: the HTTP listener.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// Listen address, `127.0.0.1:8765` by default.
    pub listen: Option<String>,
    /// Bearer token required on API requests, when set.
    pub token: Option<String>,
}

/// `[providers.NAME]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderSection {
    /// `openai` or `anthropic`.
    pub kind: Option<String>,
    /// Base URL.
    pub base_url: Option<String>,
    /// API key, literal or `$VAR`.
    pub api_key: Option<String>,
    /// Declared models.
    #[serde(default)]
    pub models: Vec<String>,
}

/// `[history]`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HistorySection {
    /// `buffer_window` (default) or `summary_checkpoint`.
    pub strategy: Option<String>,
    /// Window size for `buffer_window`.
    pub window: Option<usize>,
}

/// `[guardrails]`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GuardrailsSection {
    /// Turn limit per session.
    pub max_turns_per_session: Option<u32>,
    /// Wall-clock limit per session in milliseconds.
    pub max_session_duration_ms: Option<u64>,
    /// Idle limit between turns in milliseconds.
    pub idle_timeout_ms: Option<u64>,
}

/// `[pricing.KEY]` in USD per million tokens.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceSection {
    /// Input price.
    pub input_usd_per_mtok: f64,
    /// Output price.
    pub output_usd_per_mtok: f64,
}

/// Configuration after merging the file and the environment.
#[derive(Debug, Clone)]
pub struct Config {
    /// The path the file was (or would be) read from.
    pub path: PathBuf,
    /// Whether that file exists.
    pub file_exists: bool,
    /// The parsed file (defaults when absent).
    pub file: FileConfig,
    /// Providers, file first, then env overrides.
    pub providers: Vec<ProviderConfig>,
    /// Where each provider's definition came from (`file`, `env`, `file+env`).
    pub provider_sources: HashMap<String, String>,
}

impl Config {
    /// Loads `path` (a missing file is an empty config) and applies `env`.
    pub fn load(path: &Path, env: &HashMap<String, String>) -> Result<Self, ConfigError> {
        let (file, file_exists) = match std::fs::read_to_string(path) {
            Ok(text) => (
                toml::from_str::<FileConfig>(&text).map_err(|e| ConfigError::Parse {
                    path: path.to_path_buf(),
                    message: describe_toml_error(&text, &e),
                })?,
                true,
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (FileConfig::default(), false),
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                });
            }
        };
        let mut merged: BTreeMap<String, ProviderSection> = file.providers.clone();
        let mut sources: HashMap<String, String> = merged
            .keys()
            .map(|k| (k.clone(), "file".to_string()))
            .collect();
        for (key, value) in env {
            let Some(rest) = key.strip_prefix("PROVIDER_") else {
                continue;
            };
            let Some((name, field)) = ["_BASE_URL", "_API_KEY", "_KIND", "_MODELS"]
                .iter()
                .find_map(|suffix| rest.strip_suffix(suffix).map(|n| (n, *suffix)))
            else {
                continue;
            };
            let name = name.to_ascii_lowercase();
            if name.is_empty() {
                continue;
            }
            let entry = merged.entry(name.clone()).or_default();
            sources
                .entry(name.clone())
                .and_modify(|s| {
                    if s == "file" {
                        *s = "file+env".into()
                    }
                })
                .or_insert_with(|| "env".into());
            match field {
                "_BASE_URL" => entry.base_url = Some(value.clone()),
                "_API_KEY" => entry.api_key = Some(value.clone()),
                "_KIND" => entry.kind = Some(value.clone()),
                _ => {
                    entry.models = value
                        .split(',')
                        .map(|m| m.trim().to_string())
                        .filter(|m| !m.is_empty())
                        .collect()
                }
            }
        }
        let mut providers = Vec::new();
        for (name, p) in merged {
            let kind = match p.kind.as_deref() {
                None => ProviderKind::Openai,
                Some(k) => ProviderKind::parse(k).ok_or_else(|| ConfigError::Provider {
                    name: name.clone(),
                    message: format!("kind {k:?} is not \"openai\" or \"anthropic\""),
                })?,
            };
            let base_url = match p.base_url {
                Some(u) if !u.trim().is_empty() => u,
                _ => default_base_url(&name, kind).ok_or_else(|| ConfigError::Provider {
                    name: name.clone(),
                    message: "base_url is required (or set PROVIDER_<NAME>_BASE_URL)".into(),
                })?,
            };
            let url = reqwest::Url::parse(&base_url).map_err(|e| ConfigError::Provider {
                name: name.clone(),
                message: format!("base_url {base_url:?} is not a URL: {e}"),
            })?;
            if !matches!(url.scheme(), "http" | "https") {
                return Err(ConfigError::Provider {
                    name,
                    message: format!("base_url {base_url:?} must be http or https"),
                });
            }
            providers.push(ProviderConfig {
                api_key: p.api_key.as_deref().and_then(|k| resolve_secret(k, env)),
                name,
                kind,
                base_url,
                models: p.models,
            });
        }
        Ok(Self {
            path: path.to_path_buf(),
            file_exists,
            file,
            providers,
            provider_sources: sources,
        })
    }

    /// The history strategy the config selects.
    pub fn history(&self) -> HistoryStrategy {
        match self.file.history.strategy.as_deref() {
            Some("summary_checkpoint") => HistoryStrategy::SummaryCheckpoint,
            _ => HistoryStrategy::BufferWindow {
                window: self.file.history.window.unwrap_or(100).max(1),
            },
        }
    }

    /// The approval mode for turns that name none.
    pub fn approval_mode(&self) -> Result<crate::domain::approval::ApprovalMode, ConfigError> {
        match self.file.approvals.mode.as_deref() {
            None => Ok(crate::domain::approval::ApprovalMode::Prompt),
            Some(m) => {
                crate::domain::approval::ApprovalMode::parse(m).ok_or_else(|| ConfigError::Parse {
                    path: self.path.clone(),
                    message: format!("[approvals] mode {m:?} is not prompt, auto or deny"),
                })
            }
        }
    }

    /// Per-adapter opted-in environment with `$VAR` references resolved.
    pub fn agent_env(
        &self,
        env: &HashMap<String, String>,
    ) -> HashMap<String, Vec<(String, String)>> {
        self.file
            .agents
            .env
            .iter()
            .map(|(id, vars)| {
                let resolved = vars
                    .iter()
                    .filter_map(|(k, v)| resolve_secret(v, env).map(|v| (k.clone(), v)))
                    .collect();
                (id.clone(), resolved)
            })
            .collect()
    }

    /// The directory user adapter manifests are read from: `adapters/` beside the
    /// config file.
    pub fn adapters_dir(&self) -> PathBuf {
        self.path
            .parent()
            .map(|p| p.join("adapters"))
            .unwrap_or_else(|| PathBuf::from("adapters"))
    }

    /// The upstream MCP servers of `[mcp_servers.NAME]`, validated.
    pub fn mcp_servers(&self) -> Result<Vec<crate::engine::UpstreamServer>, ConfigError> {
        use crate::engine::{ServerSpec, ToolPolicy, UpstreamServer};
        let bad = |name: &str, message: String| ConfigError::Parse {
            path: self.path.clone(),
            message: format!("[mcp_servers.{name}] {message}"),
        };
        let policy = |name: &str, v: &str| {
            ToolPolicy::parse(v).ok_or_else(|| {
                bad(
                    name,
                    format!("policy {v:?} is not auto, require_approval or block"),
                )
            })
        };
        let mut out = Vec::new();
        for (name, s) in &self.file.mcp_servers {
            let valid_name = !name.is_empty()
                && !name.contains("__")
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
            if !valid_name {
                return Err(bad(
                    name,
                    "the name must be letters, digits, '-' or '_' (no \"__\")".into(),
                ));
            }
            let spec = match (&s.command, &s.url) {
                (Some(command), None) => ServerSpec::Stdio {
                    command: command.clone(),
                    args: s.args.clone(),
                    env: s.env.clone(),
                    cwd: s.cwd.clone(),
                },
                (None, Some(url)) => ServerSpec::Http {
                    url: url.clone(),
                    headers: s.headers.clone(),
                },
                _ => return Err(bad(name, "set exactly one of `command` or `url`".into())),
            };
            let tool_policies = s
                .tools
                .iter()
                .map(|(t, p)| Ok((t.clone(), policy(name, p)?)))
                .collect::<Result<_, ConfigError>>()?;
            out.push(UpstreamServer {
                name: name.clone(),
                spec,
                policy: match &s.policy {
                    Some(p) => policy(name, p)?,
                    None => ToolPolicy::Auto,
                },
                tool_policies,
                call_timeout: s.timeout_ms.map(std::time::Duration::from_millis),
            });
        }
        Ok(out)
    }

    /// The MCP client pool's tunables: `[mcp_pool]` over the defaults, validated.
    pub fn mcp_pool(&self) -> Result<crate::adapters::mcp::PoolOptions, ConfigError> {
        /// Longest duration accepted, in seconds (one year).
        const MAX_SECS: u64 = 365 * 24 * 3600;
        let p = self.file.mcp_pool;
        let bad = |key: &str, message: String| ConfigError::Parse {
            path: self.path.clone(),
            message: format!("[mcp_pool] {key} {message}"),
        };
        let secs = |key: &str, v: Option<u64>, min: u64| match v {
            None => Ok(None),
            Some(v) if v < min || v > MAX_SECS => Err(bad(
                key,
                format!("= {v} is out of range ({min} to {MAX_SECS} seconds)"),
            )),
            Some(v) => Ok(Some(std::time::Duration::from_secs(v))),
        };
        let mut opts = crate::adapters::mcp::PoolOptions::default();
        if let Some(v) = secs("idle_ttl_secs", p.idle_ttl_secs, 1)? {
            opts.idle_ttl = v;
        }
        if let Some(v) = secs("ping_interval_secs", p.ping_interval_secs, 0)? {
            opts.ping_interval = v;
        }
        if let Some(v) = secs("init_timeout_secs", p.init_timeout_secs, 1)? {
            opts.init_timeout = v;
        }
        match p.retry_delay_ms {
            Some(v) if v > 60_000 => {
                return Err(bad(
                    "retry_delay_ms",
                    format!("= {v} is out of range (0 to 60000 milliseconds)"),
                ));
            }
            Some(v) => opts.retry_delay = std::time::Duration::from_millis(v),
            None => {}
        }
        match p.max_entries {
            Some(0) => return Err(bad("max_entries", "= 0 must be at least 1".into())),
            Some(n) => opts.max_entries = n,
            None => {}
        }
        Ok(opts)
    }

    /// Default guardrails for new sessions.
    pub fn guardrails(&self) -> Guardrails {
        let g = self.file.guardrails;
        Guardrails {
            max_turns: g.max_turns_per_session,
            max_duration_ms: g.max_session_duration_ms,
            idle_timeout_ms: g.idle_timeout_ms,
        }
    }

    /// Operator price overrides in micro-USD.
    pub fn prices(&self) -> HashMap<String, Price> {
        self.file
            .pricing
            .iter()
            .map(|(k, p)| {
                (
                    k.clone(),
                    Price {
                        input_micros_per_mtok: (p.input_usd_per_mtok * 1e6).round() as i64,
                        output_micros_per_mtok: (p.output_usd_per_mtok * 1e6).round() as i64,
                    },
                )
            })
            .collect()
    }
}

fn default_base_url(name: &str, kind: ProviderKind) -> Option<String> {
    match (name, kind) {
        ("openai", ProviderKind::Openai) => Some("https://api.openai.com/v1".into()),
        ("anthropic", ProviderKind::Anthropic) => Some("https://api.anthropic.com".into()),
        ("ollama", ProviderKind::Openai) => Some("http://127.0.0.1:11434/v1".into()),
        _ => None,
    }
}

/// Resolves `$VAR` / `${VAR}` references against `env`; literals pass through.
pub fn resolve_secret(value: &str, env: &HashMap<String, String>) -> Option<String> {
    let name = value
        .strip_prefix("${")
        .and_then(|v| v.strip_suffix('}'))
        .or_else(|| value.strip_prefix('$'));
    match name {
        Some(var) => env.get(var).cloned().filter(|v| !v.is_empty()),
        None => Some(value.to_string()).filter(|v| !v.is_empty()),
    }
}

fn describe_toml_error(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            format!("line {line}: {}", e.message())
        }
        None => e.message().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn env_alone_defines_a_provider_and_overrides_the_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[providers.local]\nkind = \"anthropic\"\nbase_url = \"http://a\"\napi_key = \"$KEY\"\n",
        )
        .expect("writes");
        let c = Config::load(
            &path,
            &env(&[
                ("KEY", "sekrit"),
                ("PROVIDER_LOCAL_BASE_URL", "http://b"),
                ("PROVIDER_FIX_BASE_URL", "http://127.0.0.1:1/v1"),
                ("PROVIDER_FIX_MODELS", "m1, m2"),
            ]),
        )
        .expect("loads");
        let local = c
            .providers
            .iter()
            .find(|p| p.name == "local")
            .expect("local");
        assert_eq!(local.base_url, "http://b");
        assert_eq!(local.kind, ProviderKind::Anthropic);
        assert_eq!(local.api_key.as_deref(), Some("sekrit"));
        let fix = c.providers.iter().find(|p| p.name == "fix").expect("fix");
        assert_eq!(fix.kind, ProviderKind::Openai);
        assert_eq!(fix.models, ["m1", "m2"]);
        assert_eq!(c.provider_sources["local"], "file+env");
    }

    #[test]
    fn bad_files_name_the_line() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[server]\nlisten = 1\n").expect("writes");
        let e = Config::load(&path, &HashMap::new()).expect_err("rejects");
        assert!(e.to_string().contains("line 2"), "{e}");
        std::fs::write(&path, "\n\n[nope]\n").expect("writes");
        let e = Config::load(&path, &HashMap::new()).expect_err("rejects");
        assert!(
            e.to_string().contains("line 3") && e.to_string().contains("nope"),
            "{e}"
        );
        let missing = Config::load(&dir.path().join("absent.toml"), &HashMap::new()).expect("ok");
        assert!(!missing.file_exists);
    }

    #[test]
    fn mcp_servers_parse_with_policies_and_reject_ambiguity() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"srv\"]\nenv = { TOKEN = \"$T\" }\n\
             policy = \"require_approval\"\n[mcp_servers.fs.tools]\nread = \"auto\"\n\
             [mcp_servers.web]\nurl = \"http://127.0.0.1:1/mcp\"\nheaders = { Authorization = \"Bearer $T\" }\n",
        )
        .expect("writes");
        let c = Config::load(&path, &HashMap::new()).expect("loads");
        let servers = c.mcp_servers().expect("valid");
        assert_eq!(servers.len(), 2);
        let fs = &servers[0];
        assert_eq!(fs.name, "fs");
        assert_eq!(fs.policy_for("read"), crate::engine::ToolPolicy::Auto);
        assert_eq!(
            fs.policy_for("write"),
            crate::engine::ToolPolicy::RequireApproval
        );
        std::fs::write(
            &path,
            "[mcp_servers.x]\ncommand = \"a\"\nurl = \"http://b\"\n",
        )
        .expect("writes");
        let c = Config::load(&path, &HashMap::new()).expect("loads");
        assert!(c.mcp_servers().is_err(), "command and url together");
        std::fs::write(
            &path,
            "[mcp_servers.x]\ncommand = \"a\"\npolicy = \"maybe\"\n",
        )
        .expect("writes");
        let c = Config::load(&path, &HashMap::new()).expect("loads");
        assert!(c.mcp_servers().is_err(), "unknown policy");
    }

    #[test]
    fn mcp_pool_parses_validates_and_names_file_and_key() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        let defaults = Config::load(&path, &HashMap::new())
            .expect("loads")
            .mcp_pool()
            .expect("defaults");
        assert_eq!(
            defaults.idle_ttl,
            crate::adapters::mcp::PoolOptions::default().idle_ttl
        );
        std::fs::write(
            &path,
            "[mcp_pool]\nidle_ttl_secs = 2\nmax_entries = 8\nping_interval_secs = 0\ninit_timeout_secs = 5\nretry_delay_ms = 0\n",
        )
        .expect("writes");
        let opts = Config::load(&path, &HashMap::new())
            .expect("loads")
            .mcp_pool()
            .expect("valid");
        assert_eq!(opts.idle_ttl, std::time::Duration::from_secs(2));
        assert_eq!(opts.max_entries, 8);
        assert!(opts.ping_interval.is_zero(), "0 disables pings");
        assert_eq!(opts.init_timeout, std::time::Duration::from_secs(5));
        assert!(opts.retry_delay.is_zero(), "retry at once");

        std::fs::write(&path, "[mcp_pool]\nidle_ttl = 2\n").expect("writes");
        let e = Config::load(&path, &HashMap::new()).expect_err("unknown key");
        let msg = e.to_string();
        assert!(
            msg.contains("config.toml") && msg.contains("idle_ttl") && msg.contains("line 2"),
            "{msg}"
        );
        std::fs::write(&path, "[mcp_pool]\nmax_entries = \"many\"\n").expect("writes");
        let e = Config::load(&path, &HashMap::new()).expect_err("bad type");
        assert!(e.to_string().contains("line 2"), "{e}");
        for (body, key) in [
            ("idle_ttl_secs = 0", "idle_ttl_secs"),
            ("init_timeout_secs = 0", "init_timeout_secs"),
            ("max_entries = 0", "max_entries"),
            ("ping_interval_secs = 99999999999", "ping_interval_secs"),
            ("retry_delay_ms = 60001", "retry_delay_ms"),
        ] {
            std::fs::write(&path, format!("[mcp_pool]\n{body}\n")).expect("writes");
            let e = Config::load(&path, &HashMap::new())
                .expect("loads")
                .mcp_pool()
                .expect_err(body);
            let msg = e.to_string();
            assert!(
                msg.contains("config.toml") && msg.contains(&format!("[mcp_pool] {key}")),
                "{msg}"
            );
        }
    }

    #[test]
    fn unresolved_secret_is_absent_not_literal() {
        assert_eq!(resolve_secret("$NOPE", &HashMap::new()), None);
        assert_eq!(
            resolve_secret("lit", &HashMap::new()).as_deref(),
            Some("lit")
        );
        assert_eq!(
            resolve_secret("${A}", &env(&[("A", "x")])).as_deref(),
            Some("x")
        );
    }
}
