//! Hecate's configuration: the TOML file (its sections in `schema.rs`), merged with
//! the `PROVIDER_<NAME>_*` environment overrides, `$VAR` secrets resolved, and turned
//! into the options the engine and adapters take (`options.rs`). The CLI loads it;
//! nothing here depends on the CLI or a bridge.

mod a2a_agents;
mod error;
mod gateway;
mod idp;
pub mod mcp_oauth;
mod memory;
mod options;
mod retention;
mod schema;
mod store_pool;

pub use error::ConfigError;
pub use memory::MemoryOptions;
pub use options::ServerLimits;
pub use schema::{
    AcpSection, AgentsSection, ApprovalsSection, ChatAppSection, ChatSection, ChatUserSection,
    DEFAULT_LISTEN, FileConfig, GatewaySection, GuardrailsSection, HistorySection, McpPoolSection,
    McpSection, McpServerSection, PriceSection, ProviderSection, ServerSection, TerminalsSection,
};

use crate::adapters::acp::{AcpOptions, TerminalSandbox};
use crate::adapters::mcp::PoolOptions;
use crate::adapters::providers::ProviderConfig;
use crate::adapters::providers::pricing::Price;
use crate::domain::approval::ApprovalMode;
use crate::domain::session::Guardrails;
use crate::engine::flows::{AppCredential, ChatAccess, UserCredential};
use crate::engine::grants::ApprovalRetention;
use crate::engine::{ToolLoading, UpstreamServer};
use crate::store::history::HistoryStrategy;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The text an external agent may stream in one turn unless `[agents]
/// max_output_bytes` says otherwise.
pub const DEFAULT_AGENT_OUTPUT_CAP: usize = 1024 * 1024;

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
    /// Providers turned off (`enabled = false` or `PROVIDER_<NAME>_ENABLED=false`):
    /// listed, never routed to.
    pub disabled_providers: Vec<String>,
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
        let (mut merged, sources) = merge_provider_env(file.providers.clone(), env);
        for section in merged.values_mut() {
            section.api_key = section.api_key.take().and_then(|k| resolve_secret(&k, env));
        }
        let (providers, disabled_providers) = options::providers(merged)?;
        Ok(Self {
            path: path.to_path_buf(),
            file_exists,
            file,
            providers,
            provider_sources: sources,
            disabled_providers,
        })
    }

    /// The gateway's default model: `HECATE_GATEWAY_DEFAULT_MODEL`, else
    /// `[gateway] default_model`; empty values count as unset.
    pub fn gateway_default_model(&self, env: &HashMap<String, String>) -> Option<String> {
        env.get("HECATE_GATEWAY_DEFAULT_MODEL")
            .cloned()
            .or_else(|| self.file.gateway.default_model.clone())
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty())
    }

    /// Requests per minute the gateway admits (0: no limit):
    /// `HECATE_GATEWAY_RATE_LIMIT_RPM`, else `[gateway] rate_limit_rpm`.
    pub fn gateway_rate_limit_rpm(
        &self,
        env: &HashMap<String, String>,
    ) -> Result<u32, ConfigError> {
        match env.get("HECATE_GATEWAY_RATE_LIMIT_RPM").map(|v| v.trim()) {
            Some(v) if !v.is_empty() => v.parse().map_err(|_| {
                ConfigError::Parse {
                    path: self.path.clone(),
                    message: format!(
                        "HECATE_GATEWAY_RATE_LIMIT_RPM={v:?} is not a whole number of requests per minute"
                    ),
                }
            }),
            _ => Ok(self.file.gateway.rate_limit_rpm.unwrap_or(0)),
        }
    }

    /// How long a live session's owner lease lasts without renewal, in
    /// milliseconds: `[store] session_lease_seconds` under
    /// `HECATE_SESSION_LEASE_SECONDS` (30 s by default; at least 1).
    pub fn session_lease_ms(&self, env: &HashMap<String, String>) -> Result<i64, ConfigError> {
        let bad = |message: String| ConfigError::Parse {
            path: self.path.clone(),
            message,
        };
        let seconds = match env.get("HECATE_SESSION_LEASE_SECONDS").map(|v| v.trim()) {
            Some(v) if !v.is_empty() => v.parse::<u64>().map_err(|_| {
                bad(format!(
                    "HECATE_SESSION_LEASE_SECONDS={v:?} is not a whole number of seconds"
                ))
            })?,
            _ => match self.file.store.session_lease_seconds {
                Some(s) => s,
                None => return Ok(crate::engine::LEASE_TTL_MS),
            },
        };
        if seconds == 0 {
            return Err(bad(
                "[store] session_lease_seconds must be at least 1".into()
            ));
        }
        Ok(i64::try_from(seconds.saturating_mul(1000)).unwrap_or(i64::MAX))
    }

    /// The size of a PostgreSQL store's connection pool: `[store] max_conns` and
    /// `max_idle` under `HECATE_STORE_MAX_CONNS` and `HECATE_STORE_MAX_IDLE`.
    pub fn store_pool(
        &self,
        env: &HashMap<String, String>,
    ) -> Result<crate::store::pool_settings::PoolSettings, ConfigError> {
        store_pool::store_pool(&self.path, &self.file.store, env)
    }

    /// The pause of the writer of traces and MCP call records after each batch:
    /// `[store] write_gather_ms` (20 ms by default).
    pub fn store_write_gather(&self) -> std::time::Duration {
        self.file.store.write_gather_ms.map_or(
            crate::engine::deferred::DeferredSettings::default().gather,
            std::time::Duration::from_millis,
        )
    }

    /// How the gateway routes (`[gateway]` deny, daily_budget_usd, cooldown_secs,
    /// circuit_failures) and what each provider's `capabilities` tables declare.
    pub fn gateway_routing(&self) -> Result<crate::engine::gateway::RoutingSettings, ConfigError> {
        let mut routing = gateway::routing(&self.path, &self.file.gateway, &self.file.providers)?;
        routing.disabled_providers = self.disabled_providers.clone();
        Ok(routing)
    }

    /// How long an unused agent process lives: `[agents] process_idle_ms` under
    /// `HECATE_AGENT_PROCESS_IDLE_MS` (30 minutes by default; 0: forever).
    pub fn agent_process_idle(
        &self,
        env: &HashMap<String, String>,
    ) -> Result<Option<std::time::Duration>, ConfigError> {
        let ms = match env.get("HECATE_AGENT_PROCESS_IDLE_MS").map(|v| v.trim()) {
            Some(v) if !v.is_empty() => v.parse().map_err(|_| ConfigError::Parse {
                path: self.path.clone(),
                message: format!(
                    "HECATE_AGENT_PROCESS_IDLE_MS={v:?} is not a whole number of milliseconds"
                ),
            })?,
            _ => self.file.agents.process_idle_ms.unwrap_or(1_800_000),
        };
        Ok((ms > 0).then(|| std::time::Duration::from_millis(ms)))
    }

    /// `[agents] gateway_url`: where agents opted into `[agents.gateway]` reach
    /// `/v1` from a process that does not serve it; an `http(s)://HOST[:PORT]`
    /// base URL without a path, or an error naming the key.
    pub fn agent_gateway_url(&self) -> Result<Option<String>, ConfigError> {
        let Some(raw) = self.file.agents.gateway_url.as_deref() else {
            return Ok(None);
        };
        let usable = reqwest::Url::parse(raw).ok().filter(|u| {
            matches!(u.scheme(), "http" | "https")
                && u.host_str().is_some()
                && matches!(u.path(), "" | "/")
                && u.query().is_none()
        });
        match usable {
            Some(_) => Ok(Some(raw.trim_end_matches('/').to_string())),
            None => Err(ConfigError::Parse {
                path: self.path.clone(),
                message: format!(
                    "[agents] gateway_url = {raw:?} is not a base URL like http://127.0.0.1:8765 \
                     (scheme, host and port only: agents add /v1 themselves)"
                ),
            }),
        }
    }

    /// The history strategy the config selects (sessions that name none use it).
    pub fn history(&self) -> Result<HistoryStrategy, ConfigError> {
        options::history(&self.path, &self.file.history)
    }

    /// The `[memory]` options (long-term recall), checked against the providers.
    pub fn memory(&self) -> Result<MemoryOptions, ConfigError> {
        memory::memory(&self.path, &self.file.memory, &self.providers)
    }

    /// The approval mode for turns that name none.
    pub fn approval_mode(&self) -> Result<ApprovalMode, ConfigError> {
        options::approval_mode(&self.path, &self.file.approvals)
    }

    /// The task runtime's tunables (`[tasks]` and its environment overrides),
    /// with workspaces under `data_dir`; without a task default model, the
    /// gateway's default model serves the agent loop too.
    pub fn tasks(
        &self,
        env: &HashMap<String, String>,
        data_dir: &std::path::Path,
    ) -> Result<crate::engine::tasks::TaskConfig, ConfigError> {
        let mut tasks = options::tasks(&self.path, &self.file.tasks, env, data_dir)?;
        // One default model for the hub: the agent loop falls back to the gateway's.
        if tasks.default_model.is_empty()
            && let Some(m) = self.gateway_default_model(env)
        {
            tasks.default_model = m;
        }
        Ok(tasks)
    }

    /// How long a prompted approval waits before it times out.
    pub fn approval_timeout(&self) -> Duration {
        options::approval_timeout(&self.file.approvals)
    }

    /// Approval retention: `[approvals] retention_days` / `retention_max` under the
    /// environment's `HECATE_APPROVALS_RETENTION_DAYS` / `_MAX`.
    pub fn approval_retention(
        &self,
        env: &HashMap<String, String>,
    ) -> Result<ApprovalRetention, ConfigError> {
        retention::approval_retention(&self.path, &self.file.approvals, env)
    }

    /// How much text an external agent may stream in one turn
    /// (`[agents] max_output_bytes`, 1 MiB by default).
    pub fn agent_output_cap(&self) -> usize {
        self.file
            .agents
            .max_output_bytes
            .map_or(DEFAULT_AGENT_OUTPUT_CAP, |n| {
                usize::try_from(n).unwrap_or(usize::MAX)
            })
    }

    /// The ACP client's timeouts (`[agents]` over the defaults).
    pub fn acp_options(&self) -> AcpOptions {
        options::acp(&self.file.agents)
    }

    /// The sandbox agent terminals run in: `[terminals]` under the environment's
    /// overrides, validated.
    pub fn terminal_sandbox(
        &self,
        env: &HashMap<String, String>,
    ) -> Result<TerminalSandbox, ConfigError> {
        options::terminal_sandbox(&self.path, &self.file.terminals, env)
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
        adapters_dir_beside(&self.path)
    }

    /// The directory agents' flow files are read from: `flows/` beside the
    /// config file.
    pub fn flows_dir(&self) -> PathBuf {
        self.path
            .parent()
            .map(|p| p.join("flows"))
            .unwrap_or_else(|| PathBuf::from("flows"))
    }

    /// The client-hosted chat identities of `[chat]`, secrets resolved; an app
    /// or user whose secret does not resolve is left out.
    pub fn chat_access(&self, env: &HashMap<String, String>) -> ChatAccess {
        ChatAccess {
            apps: self
                .file
                .chat
                .apps
                .iter()
                .filter_map(|(id, a)| {
                    Some(AppCredential {
                        app_id: id.clone(),
                        key: resolve_secret(&a.key, env)?,
                        agents: a.agents.clone(),
                    })
                })
                .collect(),
            users: self
                .file
                .chat
                .users
                .iter()
                .filter_map(|(id, u)| {
                    Some(UserCredential {
                        user_id: id.clone(),
                        token: resolve_secret(&u.token, env)?,
                    })
                })
                .collect(),
        }
    }

    /// The upstream MCP servers of `[mcp_servers.NAME]`, validated.
    pub fn mcp_servers(&self) -> Result<Vec<UpstreamServer>, ConfigError> {
        options::mcp_servers(&self.path, &self.file.mcp_servers)
    }

    /// How Hecate's MCP server lists upstream tools: `HECATE_MCP_TOOL_LOADING`
    /// over `[mcp] tool_loading` (`all` or `search`; default `all`).
    pub fn mcp_tool_loading(
        &self,
        env: &HashMap<String, String>,
    ) -> Result<ToolLoading, ConfigError> {
        let raw = env
            .get("HECATE_MCP_TOOL_LOADING")
            .or(self.file.mcp.tool_loading.as_ref());
        match raw.map(|v| v.trim()) {
            None | Some("") => Ok(ToolLoading::All),
            Some(v) => ToolLoading::parse(v).ok_or_else(|| ConfigError::Parse {
                path: self.path.clone(),
                message: format!("[mcp] tool_loading {v:?} is not all or search"),
            }),
        }
    }

    /// The MCP client pool's tunables: `[mcp_pool]` over the defaults, validated.
    pub fn mcp_pool(&self) -> Result<PoolOptions, ConfigError> {
        options::mcp_pool(&self.path, self.file.mcp_pool)
    }

    /// The HTTP server's connection limits: `[server]` over the defaults, with the
    /// environment's `HECATE_SERVER_<KEY>` overrides, validated.
    pub fn server_limits(
        &self,
        env: &HashMap<String, String>,
    ) -> Result<ServerLimits, ConfigError> {
        options::server_limits(&self.path, &self.file.server, env)
    }

    /// Default guardrails for new sessions.
    pub fn guardrails(&self) -> Guardrails {
        options::guardrails(self.file.guardrails)
    }

    /// Operator price overrides in micro-USD.
    pub fn prices(&self) -> HashMap<String, Price> {
        options::prices(&self.file.pricing)
    }
}

/// The directory user adapter manifests are read from for the config file at `path`
/// (`adapters/` beside it), also when that file does not load.
pub fn adapters_dir_beside(path: &Path) -> PathBuf {
    path.parent()
        .map(|p| p.join("adapters"))
        .unwrap_or_else(|| PathBuf::from("adapters"))
}

/// Applies `PROVIDER_<NAME>_{BASE_URL,API_KEY,KIND,MODELS,ENABLED}` from `env` over the
/// file's providers, and records where each definition came from.
fn merge_provider_env(
    mut merged: BTreeMap<String, ProviderSection>,
    env: &HashMap<String, String>,
) -> (BTreeMap<String, ProviderSection>, HashMap<String, String>) {
    let mut sources: HashMap<String, String> = merged
        .keys()
        .map(|k| (k.clone(), "file".to_string()))
        .collect();
    for (key, value) in env {
        let Some(rest) = key.strip_prefix("PROVIDER_") else {
            continue;
        };
        let Some((name, field)) = ["_BASE_URL", "_API_KEY", "_KIND", "_MODELS", "_ENABLED"]
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
            "_ENABLED" => entry.enabled_env = Some(value.clone()),
            _ => {
                entry.models = value
                    .split(',')
                    .map(|m| m.trim().to_string())
                    .filter(|m| !m.is_empty())
                    .collect()
            }
        }
    }
    (merged, sources)
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
    use crate::adapters::providers::ProviderKind;

    fn env(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_agent_loop_falls_back_to_the_gateways_default_model() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "[gateway]\ndefault_model = \"fix/m\"\n").expect("writes");
        let c = Config::load(&path, &HashMap::new()).expect("loads");
        let t = c.tasks(&HashMap::new(), dir.path()).expect("tasks");
        assert_eq!(t.default_model, "fix/m");
        let own = env(&[("HECATE_TASK_DEFAULT_MODEL", "other/x")]);
        assert_eq!(
            c.tasks(&own, dir.path()).expect("tasks").default_model,
            "other/x",
            "a task default wins"
        );
    }

    #[test]
    fn the_session_lease_is_thirty_seconds_unless_configured() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "").expect("writes");
        let c = Config::load(&path, &HashMap::new()).expect("loads");
        assert_eq!(
            c.session_lease_ms(&HashMap::new()).expect("default"),
            30_000
        );
        std::fs::write(&path, "[store]\nsession_lease_seconds = 5\n").expect("writes");
        let c = Config::load(&path, &HashMap::new()).expect("loads");
        assert_eq!(c.session_lease_ms(&HashMap::new()).expect("file"), 5_000);
        let over = env(&[("HECATE_SESSION_LEASE_SECONDS", "2")]);
        assert_eq!(c.session_lease_ms(&over).expect("env"), 2_000);
        for bad in ["0", "soon"] {
            let e = c
                .session_lease_ms(&env(&[("HECATE_SESSION_LEASE_SECONDS", bad)]))
                .expect_err("refused");
            assert!(
                e.to_string().contains("SESSION_LEASE") || e.to_string().contains("session_lease"),
                "{e}"
            );
        }
    }

    #[test]
    fn agent_processes_idle_for_half_an_hour_unless_configured() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        let none = HashMap::new();
        let c = Config::load(&path, &none).expect("loads");
        assert_eq!(
            c.agent_process_idle(&none).expect("default"),
            Some(std::time::Duration::from_secs(1800))
        );
        std::fs::write(&path, "[agents]\nprocess_idle_ms = 0\n").expect("writes");
        let c = Config::load(&path, &none).expect("loads");
        assert_eq!(c.agent_process_idle(&none).expect("off"), None);
        let over = env(&[("HECATE_AGENT_PROCESS_IDLE_MS", "250")]);
        assert_eq!(
            c.agent_process_idle(&over).expect("env"),
            Some(std::time::Duration::from_millis(250))
        );
        let bad = env(&[("HECATE_AGENT_PROCESS_IDLE_MS", "soon")]);
        let e = c.agent_process_idle(&bad).expect_err("not a number");
        assert!(
            e.to_string().contains("HECATE_AGENT_PROCESS_IDLE_MS"),
            "{e}"
        );
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
    fn a_provider_can_be_turned_off_in_the_file_or_the_env() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("config.toml");
        std::fs::write(
            &path,
            "[providers.a]\nbase_url = \"http://a/v1\"\nenabled = false\n\
             [providers.b]\nbase_url = \"http://b/v1\"\nenabled = false\n",
        )
        .expect("writes");
        let c = Config::load(
            &path,
            &env(&[
                ("PROVIDER_B_ENABLED", "true"),
                ("PROVIDER_C_BASE_URL", "http://c/v1"),
                ("PROVIDER_C_ENABLED", "off"),
            ]),
        )
        .expect("loads");
        assert_eq!(c.providers.len(), 3, "disabled providers stay listed");
        assert_eq!(c.disabled_providers, ["a", "c"]);
        let routing = c.gateway_routing().expect("routing");
        assert_eq!(routing.disabled_providers, ["a", "c"]);
        let e = Config::load(&path, &env(&[("PROVIDER_A_ENABLED", "maybe")]))
            .expect_err("not a switch");
        assert!(e.to_string().contains("ENABLED"), "{e}");
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
