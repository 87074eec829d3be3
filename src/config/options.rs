//! Conversions of the file's sections into the options other layers take: provider
//! configs, upstream MCP servers, the MCP pool tunables, the HTTP server's connection
//! limits, ACP timeouts, the terminal sandbox, guardrails, the history strategy,
//! prices and the approval mode. Each validates its section and names the file and
//! key when a value is unusable.

use super::error::ConfigError;
use super::schema::{
    AgentsSection, ApprovalsSection, GuardrailsSection, HistorySection, McpPoolSection,
    McpServerSection, PriceSection, ProviderSection, ServerSection, TasksSection, TerminalsSection,
};
use crate::adapters::acp::{AcpOptions, SandboxMode, TerminalSandbox};
use crate::adapters::mcp::PoolOptions;
use crate::adapters::mcp::ServerSpec;
use crate::adapters::mcp::spec::sets_authorization;
use crate::adapters::providers::pricing::Price;
use crate::adapters::providers::{ProviderConfig, ProviderKind};
use crate::domain::approval::ApprovalMode;
use crate::domain::redact::redact_url;
use crate::domain::session::Guardrails;
use crate::domain::task::ApprovalPolicy;
use crate::engine::tasks::TaskConfig;
use crate::engine::{ToolPolicy, UpstreamServer};
use crate::store::history::{HistoryParts, HistoryStrategy};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

/// The longest global layer of the agent's system prompt (`[tasks] system_prompt`).
const MAX_GLOBAL_PROMPT_BYTES: usize = 64 * 1024;

/// Validates merged provider sections (secrets already resolved) into provider
/// configs: the kind defaults to `openai`, well-known names get a default base URL.
/// Also answers the names of the providers turned off (`enabled = false`, under
/// `PROVIDER_<NAME>_ENABLED`).
pub(super) fn providers(
    merged: BTreeMap<String, ProviderSection>,
) -> Result<(Vec<ProviderConfig>, Vec<String>), ConfigError> {
    let mut providers = Vec::new();
    let mut disabled = Vec::new();
    for (name, p) in merged {
        let enabled = match p.enabled_env.as_deref().map(str::trim) {
            None | Some("") => p.enabled.unwrap_or(true),
            Some(v) => parse_switch(v).ok_or_else(|| ConfigError::Provider {
                name: name.clone(),
                message: format!("PROVIDER_<NAME>_ENABLED={v:?} is not true or false"),
            })?,
        };
        if !enabled {
            disabled.push(name.clone());
        }
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
            message: format!("base_url {:?} is not a URL: {e}", redact_url(&base_url)),
        })?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(ConfigError::Provider {
                name,
                message: format!("base_url {:?} must be http or https", redact_url(&base_url)),
            });
        }
        providers.push(ProviderConfig {
            api_key: p.api_key,
            name,
            kind,
            base_url,
            models: p.models,
        });
    }
    Ok((providers, disabled))
}

/// `true`/`false` as an environment variable may spell it.
fn parse_switch(v: &str) -> Option<bool> {
    match v.to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Some(true),
        "false" | "0" | "no" | "off" => Some(false),
        _ => None,
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

/// The history strategy `[history]` selects (a window of 100 by default); an
/// unknown strategy name or a summary setting out of range is a parse error
/// naming the key (`[history] strategy`, `[history] max_messages`).
pub(super) fn history(path: &Path, h: &HistorySection) -> Result<HistoryStrategy, ConfigError> {
    let parts = HistoryParts {
        strategy: h.strategy.as_deref().unwrap_or("buffer_window"),
        window: h.window,
        max_tokens: h.max_tokens,
        summarize_every: h.summarize_every,
        max_messages: h.max_messages,
    };
    HistoryStrategy::from_parts(|key| format!("[history] {key}"), parts).map_err(|e| {
        ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.message,
        }
    })
}

/// The approval mode `[approvals]` selects for turns that name none (`prompt` by
/// default).
pub(super) fn approval_mode(
    path: &Path,
    a: &ApprovalsSection,
) -> Result<ApprovalMode, ConfigError> {
    match a.mode.as_deref() {
        None => Ok(ApprovalMode::Prompt),
        Some(m) => ApprovalMode::parse(m).ok_or_else(|| ConfigError::Parse {
            path: path.to_path_buf(),
            message: format!("[approvals] mode {m:?} is not prompt, auto or deny"),
        }),
    }
}

/// How long a prompted approval waits (`[approvals] timeout_ms`, 300 s by default).
pub(super) fn approval_timeout(a: &ApprovalsSection) -> Duration {
    Duration::from_millis(a.timeout_ms.unwrap_or(300_000))
}

/// The ACP client's timeouts: `[agents]` over the defaults.
pub(super) fn acp(agents: &AgentsSection) -> AcpOptions {
    let mut acp = AcpOptions::default();
    let ms = Duration::from_millis;
    if let Some(v) = agents.idle_timeout_ms {
        acp.prompt_idle_timeout = Some(ms(v));
    }
    if let Some(v) = agents.turn_timeout_ms {
        acp.prompt_timeout = Some(ms(v));
    }
    if let Some(v) = agents.start_timeout_ms {
        acp.initialize_timeout = ms(v);
        acp.new_session_timeout = ms(v);
    }
    if let Some(v) = agents.cancel_grace_ms {
        acp.cancel_grace = ms(v);
    }
    acp
}

/// The sandbox agent terminals run in: `[terminals]` under
/// `HECATE_TERMINAL_SANDBOX`, `HECATE_TERMINAL_NETWORK` and `HECATE_TERMINAL_BWRAP`
/// (off, with the network, by default).
pub(super) fn terminal_sandbox(
    path: &Path,
    t: &TerminalsSection,
    env: &HashMap<String, String>,
) -> Result<TerminalSandbox, ConfigError> {
    let bad = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let mode = match env.get("HECATE_TERMINAL_SANDBOX") {
        Some(v) => SandboxMode::parse(v).ok_or_else(|| {
            bad(format!(
                "HECATE_TERMINAL_SANDBOX={v:?} is not off, read_only or workspace_only"
            ))
        })?,
        None => match &t.sandbox {
            Some(v) => SandboxMode::parse(v).ok_or_else(|| {
                bad(format!(
                    "[terminals] sandbox {v:?} is not off, read_only or workspace_only"
                ))
            })?,
            None => SandboxMode::Off,
        },
    };
    let network = match env.get("HECATE_TERMINAL_NETWORK") {
        Some(v) => match v.trim() {
            "true" | "1" => true,
            "false" | "0" => false,
            _ => {
                return Err(bad(format!(
                    "HECATE_TERMINAL_NETWORK={v:?} is not true or false"
                )));
            }
        },
        None => t.network.unwrap_or(true),
    };
    let bwrap = match env.get("HECATE_TERMINAL_BWRAP") {
        Some(v) if !v.trim().is_empty() => Some(std::path::PathBuf::from(v.trim())),
        _ => t.bwrap.clone(),
    };
    if let Some(b) = bwrap.as_deref().filter(|b| !b.is_absolute()) {
        return Err(bad(format!(
            "[terminals] bwrap {:?} must be an absolute path",
            b.display().to_string()
        )));
    }
    Ok(TerminalSandbox {
        mode,
        network,
        bwrap,
    })
}

/// The upstream MCP servers of `[mcp_servers.NAME]`, validated.
pub(super) fn mcp_servers(
    path: &Path,
    sections: &BTreeMap<String, McpServerSection>,
) -> Result<Vec<UpstreamServer>, ConfigError> {
    let bad = |name: &str, message: String| ConfigError::Parse {
        path: path.to_path_buf(),
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
    for (name, s) in sections {
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
            policy_configured: s.policy.is_some(),
            tool_policies,
            call_timeout: s.timeout_ms.map(Duration::from_millis),
            oauth: super::mcp_oauth::client_settings(
                path,
                name,
                s.oauth.as_ref(),
                s.url.is_some(),
                sets_authorization(s.headers.keys()),
            )?,
        });
    }
    Ok(out)
}

/// The MCP client pool's tunables: `[mcp_pool]` over the defaults, validated.
pub(super) fn mcp_pool(path: &Path, p: McpPoolSection) -> Result<PoolOptions, ConfigError> {
    /// Longest duration accepted, in seconds (one year).
    const MAX_SECS: u64 = 365 * 24 * 3600;
    /// Longest ping deadline accepted, in seconds: pings of idle connections run
    /// one after another, so a long deadline holds up the whole sweep.
    const MAX_PING_TIMEOUT_SECS: u64 = 300;
    let bad = |key: &str, message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message: format!("[mcp_pool] {key} {message}"),
    };
    let secs = |key: &str, v: Option<u64>, min: u64| match v {
        None => Ok(None),
        Some(v) if v < min || v > MAX_SECS => Err(bad(
            key,
            format!("= {v} is out of range ({min} to {MAX_SECS} seconds)"),
        )),
        Some(v) => Ok(Some(Duration::from_secs(v))),
    };
    let mut opts = PoolOptions::default();
    if let Some(v) = secs("idle_ttl_secs", p.idle_ttl_secs, 1)? {
        opts.idle_ttl = v;
    }
    if let Some(v) = secs("ping_interval_secs", p.ping_interval_secs, 0)? {
        opts.ping_interval = v;
    }
    match p.ping_timeout_secs {
        Some(v) if !(1..=MAX_PING_TIMEOUT_SECS).contains(&v) => {
            return Err(bad(
                "ping_timeout_secs",
                format!("= {v} is out of range (1 to {MAX_PING_TIMEOUT_SECS} seconds)"),
            ));
        }
        Some(v) => opts.ping_timeout = Duration::from_secs(v),
        None => {}
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
        Some(v) => opts.retry_delay = Duration::from_millis(v),
        None => {}
    }
    match p.max_entries {
        Some(0) => return Err(bad("max_entries", "= 0 must be at least 1".into())),
        Some(n) => opts.max_entries = n,
        None => {}
    }
    Ok(opts)
}

/// The HTTP server's connection limits: `[server]` over the defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerLimits {
    /// Deadline for a request head (default 10 s).
    pub header_read_timeout: Duration,
    /// Longest wait for the next part of a request body (default 30 s).
    pub body_read_timeout: Duration,
    /// Most connections served at once (default 1024).
    pub max_connections: usize,
}

impl Default for ServerLimits {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            body_read_timeout: Duration::from_secs(30),
            max_connections: 1024,
        }
    }
}

/// The HTTP server's connection limits of `[server]`, validated.
pub(super) fn server_limits(
    path: &Path,
    s: &ServerSection,
    env: &HashMap<String, String>,
) -> Result<ServerLimits, ConfigError> {
    /// Longest timeout accepted, in seconds.
    const MAX_TIMEOUT_SECS: u64 = 3600;
    let bad = |key: &str, message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message: format!("[server] {key} {message}"),
    };
    let secs = |key: &str, v: u64| {
        if (1..=MAX_TIMEOUT_SECS).contains(&v) {
            Ok(Duration::from_secs(v))
        } else {
            Err(bad(
                key,
                format!("= {v} is out of range (1 to {MAX_TIMEOUT_SECS} seconds)"),
            ))
        }
    };
    // The environment (`HECATE_SERVER_<KEY>`) wins over the file.
    let number = |key: &str, file: Option<u64>| -> Result<Option<u64>, ConfigError> {
        let var = format!("HECATE_SERVER_{}", key.to_ascii_uppercase());
        match env.get(&var) {
            Some(v) => v
                .trim()
                .parse::<u64>()
                .map(Some)
                .map_err(|_| bad(key, format!("({var}={v:?}) is not a whole number"))),
            None => Ok(file),
        }
    };
    let mut limits = ServerLimits::default();
    if let Some(v) = number("header_read_timeout_secs", s.header_read_timeout_secs)? {
        limits.header_read_timeout = secs("header_read_timeout_secs", v)?;
    }
    if let Some(v) = number("body_read_timeout_secs", s.body_read_timeout_secs)? {
        limits.body_read_timeout = secs("body_read_timeout_secs", v)?;
    }
    let max = number("max_connections", s.max_connections.map(|n| n as u64))?;
    match max.map(|n| usize::try_from(n).unwrap_or(usize::MAX)) {
        Some(0) => return Err(bad("max_connections", "= 0 must be at least 1".into())),
        Some(n) => limits.max_connections = n,
        None => {}
    }
    Ok(limits)
}

/// Default guardrails for new sessions, from `[guardrails]`.
pub(super) fn guardrails(g: GuardrailsSection) -> Guardrails {
    Guardrails {
        max_turns: g.max_turns_per_session,
        max_duration_ms: g.max_session_duration_ms,
        idle_timeout_ms: g.idle_timeout_ms,
    }
}

/// Operator price overrides of `[pricing."provider/model"]`, in micro-USD.
pub(super) fn prices(pricing: &BTreeMap<String, PriceSection>) -> HashMap<String, Price> {
    pricing
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

/// The task runtime's tunables: `[tasks]` under the environment's overrides;
/// workspaces live under `data_dir`. Unknown approval-policy names are refused.
pub(super) fn tasks(
    path: &Path,
    t: &TasksSection,
    env: &HashMap<String, String>,
    data_dir: &Path,
) -> Result<TaskConfig, ConfigError> {
    let bad = |message: String| ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    };
    let number = |name: &str, file: Option<u64>| -> Result<Option<u64>, ConfigError> {
        match env.get(name) {
            Some(v) => v
                .trim()
                .parse::<u64>()
                .map(Some)
                .map_err(|_| bad(format!("{name}={v:?} is not a whole number"))),
            None => Ok(file),
        }
    };
    let policies = env
        .get("HECATE_TASK_APPROVAL_POLICIES")
        .cloned()
        .or_else(|| t.approval_policies.clone());
    let approval_policy = match policies {
        Some(list) => ApprovalPolicy::parse(&list)
            .map_err(|e| bad(format!("[tasks] approval_policies: {}", e.message)))?,
        None => ApprovalPolicy::default(),
    };
    let mut config = TaskConfig {
        approval_policy,
        data_dir: data_dir.join("tasks"),
        ..TaskConfig::default()
    };
    if let Some(s) = number("HECATE_TASK_QUEUE_LEASE_SECONDS", t.lease_seconds)? {
        if s == 0 {
            return Err(bad("[tasks] lease_seconds must be at least 1".into()));
        }
        config.lease = Duration::from_secs(s);
    }
    if let Some(w) = number("HECATE_TASK_QUEUE_WORKERS", t.workers.map(|w| w as u64))? {
        config.workers = w as usize;
    }
    if let Some(ms) = t.poll_ms {
        config.poll = Duration::from_millis(ms.max(10));
    }
    if let Some(n) = number(
        "HECATE_TASK_MAX_MCP_SERVERS_PER_TASK",
        t.max_mcp_servers_per_task,
    )? {
        config.max_mcp_servers_per_task = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(m) = env
        .get("HECATE_TASK_DEFAULT_MODEL")
        .or(t.default_model.as_ref())
    {
        config.default_model = m.trim().to_string();
    }
    if let Some(p) = env
        .get("HECATE_TASK_SYSTEM_PROMPT")
        .or(t.system_prompt.as_ref())
    {
        if p.len() > MAX_GLOBAL_PROMPT_BYTES {
            return Err(bad(format!(
                "[tasks] system_prompt is {} bytes; at most {MAX_GLOBAL_PROMPT_BYTES} are allowed",
                p.len()
            )));
        }
        config.system_prompt = p.trim().to_string();
    }
    config.http_allow = match env.get("HECATE_TASK_HTTP_ALLOW") {
        Some(list) => list
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        None => t.http_allow.clone().unwrap_or_default(),
    };
    Ok(config)
}

#[cfg(test)]
mod tests;
