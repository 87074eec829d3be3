//! Provider readiness for operators: the built-in presets a provider picker
//! offers, each configured provider's readiness checklist (credentials, models,
//! health, routing; the seed's vocabulary), and advisory discovery of local model
//! servers on their default loopback ports.

use crate::adapters::providers::{ProviderClient, ProviderConfig, ProviderKind};
use crate::domain::provider_readiness::{
    disabled_explained, routing_blocker, self_referential_explained,
};
use crate::engine::Gateway;
use crate::engine::gateway::routing::health::Snapshot;
use crate::engine::gateway::routing::policy::{
    DEFAULT_MODEL_ONLY, PROVIDER_DISABLED, PROVIDER_SLOW, SELF_REFERENTIAL,
};
use serde::Serialize;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// How long one readiness or discovery probe may take.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// A provider Hecate knows how to reach, for a picker.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderPreset {
    /// Preset id (also the suggested provider name).
    pub id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// `cloud` or `local`.
    pub kind: &'static str,
    /// The wire protocol Hecate speaks to it (`openai` or `anthropic`).
    pub protocol: &'static str,
    /// Its default base URL.
    pub base_url: &'static str,
    /// The variable its key is usually kept in (empty for local servers).
    pub api_key_env: &'static str,
    /// A model to start with.
    pub default_model: &'static str,
    /// The command a local server is started with (empty for cloud ones).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub command: &'static str,
    /// Where local discovery looks for it (empty for cloud ones).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub probe_url: &'static str,
    /// One line about it.
    pub description: &'static str,
    /// The `PROVIDER_<NAME>_*` variables that configure it, ready to paste.
    pub env_snippet: String,
}

/// The built-in presets.
pub fn presets() -> Vec<ProviderPreset> {
    let p = |id: &'static str,
             name,
             kind,
             protocol,
             base_url,
             api_key_env: &'static str,
             default_model,
             command,
             probe_url,
             description| {
        let upper = id.to_uppercase();
        let mut env_snippet =
            format!("PROVIDER_{upper}_KIND={protocol}\nPROVIDER_{upper}_BASE_URL={base_url}");
        if !api_key_env.is_empty() {
            env_snippet.push_str(&format!("\nPROVIDER_{upper}_API_KEY=${api_key_env}"));
        }
        ProviderPreset {
            id,
            name,
            kind,
            protocol,
            base_url,
            api_key_env,
            default_model,
            command,
            probe_url,
            description,
            env_snippet,
        }
    };
    vec![
        p(
            "openai",
            "OpenAI",
            "cloud",
            "openai",
            "https://api.openai.com/v1",
            "OPENAI_API_KEY",
            "gpt-4o-mini",
            "",
            "",
            "OpenAI's Chat Completions API.",
        ),
        p(
            "anthropic",
            "Anthropic",
            "cloud",
            "anthropic",
            "https://api.anthropic.com",
            "ANTHROPIC_API_KEY",
            "claude-sonnet-4-5",
            "",
            "",
            "Anthropic's Messages API.",
        ),
        p(
            "openrouter",
            "OpenRouter",
            "cloud",
            "openai",
            "https://openrouter.ai/api/v1",
            "OPENROUTER_API_KEY",
            "openai/gpt-4o-mini",
            "",
            "",
            "Many vendors' models behind one OpenAI-compatible API.",
        ),
        p(
            "groq",
            "Groq",
            "cloud",
            "openai",
            "https://api.groq.com/openai/v1",
            "GROQ_API_KEY",
            "llama-3.1-8b-instant",
            "",
            "",
            "Groq's OpenAI-compatible API.",
        ),
        p(
            "ollama",
            "Ollama",
            "local",
            "openai",
            "http://127.0.0.1:11434/v1",
            "",
            "qwen2.5-coder",
            "ollama",
            "http://127.0.0.1:11434/v1/models",
            "Local models served by Ollama.",
        ),
        p(
            "lmstudio",
            "LM Studio",
            "local",
            "openai",
            "http://127.0.0.1:1234/v1",
            "",
            "qwen2.5-coder-7b-instruct",
            "lms",
            "http://127.0.0.1:1234/v1/models",
            "Local models served by LM Studio.",
        ),
        p(
            "llamacpp",
            "llama.cpp server",
            "local",
            "openai",
            "http://127.0.0.1:8080/v1",
            "",
            "default",
            "llama-server",
            "http://127.0.0.1:8080/v1/models",
            "A GGUF model served by llama.cpp's llama-server.",
        ),
        p(
            "vllm",
            "vLLM",
            "local",
            "openai",
            "http://127.0.0.1:8000/v1",
            "",
            "Qwen/Qwen2.5-Coder-7B-Instruct",
            "vllm",
            "http://127.0.0.1:8000/v1/models",
            "Models served by vLLM's OpenAI-compatible server.",
        ),
    ]
}

/// One item of a provider's readiness checklist.
#[derive(Debug, Clone, Serialize)]
pub struct ReadinessCheck {
    /// `credentials`, `models`, `health` or `routing`.
    pub name: &'static str,
    /// `ok`, `warning`, `blocked` or `unknown`.
    pub status: &'static str,
    /// A stable reason for clients to branch on.
    pub reason: &'static str,
    /// What to show the operator.
    pub message: String,
    /// The repair step, when one is needed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator_action: Option<String>,
}

/// What the router has learnt of a provider in this process: its cooldown
/// (a 429's `Retry-After`, or an open circuit), failures in a row, and its
/// average answer time.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderHealthState {
    /// `closed` (tried normally), `open` (skipped after failures) or
    /// `rate_limited` (skipped after a 429).
    pub circuit: &'static str,
    /// Failures in a row since its last answer.
    pub consecutive_failures: u32,
    /// Milliseconds left in its cooldown, while it is skipped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cooldown_remaining_ms: Option<u64>,
    /// Its average answer time (sent to response headers; the newest answer
    /// weighs 0.3), once it answered a `/v1` request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub average_latency_ms: Option<u64>,
    /// How many answers that average is made of.
    pub latency_samples: u64,
    /// The average at or above which it is `provider_slow`.
    pub slow_after_ms: u64,
}

/// A configured provider's readiness.
#[derive(Debug, Clone, Serialize)]
pub struct ProviderStatus {
    /// The provider's name.
    pub name: String,
    /// `local` (a loopback address) or `cloud`.
    pub kind: &'static str,
    /// Its wire protocol.
    pub protocol: &'static str,
    /// `healthy`, `unhealthy` or `disabled`.
    pub status: &'static str,
    /// Whether the config leaves it on (`enabled = false` or
    /// `PROVIDER_<NAME>_ENABLED=false` turn it off: listed, never routed to).
    pub enabled: bool,
    /// Whether it answered its model list.
    pub healthy: bool,
    /// Its base URL.
    pub base_url: String,
    /// The models it declares or listed.
    pub models: Vec<String>,
    /// How many.
    pub model_count: usize,
    /// `present`, `missing` or `not_required`.
    pub credential_state: &'static str,
    /// Whether credentials are in order.
    pub credential_ready: bool,
    /// Whether the router may send it traffic now.
    pub routing_ready: bool,
    /// Why not, in the route diagnostics' vocabulary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub routing_blocked_reason: Option<&'static str>,
    /// The checklist.
    pub readiness_checks: Vec<ReadinessCheck>,
    /// Cooldown, circuit and latency as the router sees them.
    pub health: ProviderHealthState,
    /// The probe's error, when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Whether `base_url` names a loopback host.
fn is_local(base_url: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .is_some_and(|h| {
            h == "localhost"
                || h.trim_matches(['[', ']'])
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        })
}

/// Whether `base_url` points back at `own`, the address this Hecate serves
/// on: the same port (the scheme's default when the URL names none) on a
/// loopback host (`localhost`, `127.0.0.0/8`, `::1`), on `own`'s own IP, or on
/// `0.0.0.0`/`::`. (A LAN name or address of this machine while it listens on
/// every interface is not recognised.) Routing to such a provider would loop.
pub fn points_at_self(base_url: &str, own: SocketAddr) -> bool {
    let Ok(url) = reqwest::Url::parse(base_url) else {
        return false;
    };
    if url.port_or_known_default() != Some(own.port()) {
        return false;
    }
    let Some(host) = url.host_str() else {
        return false;
    };
    if host.eq_ignore_ascii_case("localhost") {
        return true;
    }
    match host.trim_matches(['[', ']']).parse::<std::net::IpAddr>() {
        Ok(ip) => ip.is_loopback() || ip == own.ip() || ip.is_unspecified(),
        Err(_) => false,
    }
}

fn check(
    name: &'static str,
    status: &'static str,
    reason: &'static str,
    message: impl Into<String>,
    operator_action: Option<&str>,
) -> ReadinessCheck {
    ReadinessCheck {
        name,
        status,
        reason,
        message: message.into(),
        operator_action: operator_action.map(str::to_string),
    }
}

/// The health check of a provider that was probed (or not), given what the
/// router learnt of it: `self_referential` and `provider_unhealthy` block;
/// `provider_slow` (its average answer time at or above `slow_after`) warns.
fn health_check(
    self_ref: Option<SocketAddr>,
    probe: Option<(bool, Option<&str>)>,
    learnt: &Snapshot,
    slow_after: Duration,
) -> ReadinessCheck {
    if let Some(own) = self_ref {
        let (message, action) = self_referential_explained(own);
        return check(
            "health",
            "blocked",
            SELF_REFERENTIAL,
            message,
            Some(&action),
        );
    }
    match probe {
        None => check(
            "health",
            "unknown",
            "not_probed",
            "The provider is disabled, so it was not probed.",
            None,
        ),
        Some((false, error)) => check(
            "health",
            "blocked",
            "provider_unhealthy",
            format!(
                "The provider did not answer its model list: {}",
                error.unwrap_or("unknown error")
            ),
            Some("Check that the provider runs and that its base URL is right."),
        ),
        Some((true, _)) => match learnt.latency.filter(|l| l.average >= slow_after) {
            Some(l) => check(
                "health",
                "warning",
                PROVIDER_SLOW,
                format!(
                    "Its answers take {} ms on average over {} answer(s) (slow from {} ms); it stays routable.",
                    l.average.as_millis(),
                    l.samples,
                    slow_after.as_millis()
                ),
                Some(
                    "Expect slow answers: check the provider's load, or route latency-sensitive work elsewhere.",
                ),
            ),
            None => check(
                "health",
                "ok",
                "healthy",
                "The provider answered its model list.",
                None,
            ),
        },
    }
}

/// The model the gateway's default model (`provider/model`) names on `provider`.
fn default_model_of(default: Option<&str>, provider: &str) -> Option<String> {
    let (p, m) = default?.trim().split_once('/')?;
    (p == provider && !m.is_empty()).then(|| m.to_string())
}

/// What the router learnt of a provider, for the operator.
fn health_state(learnt: &Snapshot, slow_after: Duration) -> ProviderHealthState {
    ProviderHealthState {
        circuit: match learnt.blocked.map(|b| b.reason) {
            None => "closed",
            Some(r) if r == super::super::routing::policy::PROVIDER_RATE_LIMITED => "rate_limited",
            Some(_) => "open",
        },
        consecutive_failures: learnt.consecutive_failures,
        cooldown_remaining_ms: learnt.blocked.map(|b| b.remaining.as_millis() as u64),
        average_latency_ms: learnt.latency.map(|l| l.average.as_millis() as u64),
        latency_samples: learnt.latency.map_or(0, |l| l.samples),
        slow_after_ms: slow_after.as_millis() as u64,
    }
}

/// A local server found (or not) by discovery.
#[derive(Debug, Clone, Serialize)]
pub struct LocalDiscovery {
    /// The preset it matches.
    pub preset_id: &'static str,
    /// Display name.
    pub name: &'static str,
    /// The base URL to configure.
    pub base_url: &'static str,
    /// What was asked.
    pub probe_url: &'static str,
    /// `running` (the probe answered 2xx), `installed` (the command is on PATH)
    /// or `not_detected`.
    pub status: &'static str,
    /// The command looked for.
    pub command: &'static str,
    /// Whether it is on PATH.
    pub command_available: bool,
    /// Where.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command_path: Option<PathBuf>,
    /// Whether the probe answered 2xx.
    pub http_available: bool,
    /// Models the server listed.
    pub model_count: usize,
    /// Their ids.
    pub models: Vec<String>,
}

/// The first `command` on `PATH`.
fn on_path(command: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(command))
        .find(|p| p.is_file())
}

impl<'e> Gateway<'e> {
    /// Tells the gateway the address this process serves HTTP on, so that a
    /// provider pointing back at it reads `self_referential` (and is not probed
    /// or routed to). Only the first call counts.
    pub fn set_own_address(self, addr: SocketAddr) {
        let _ = self.engine.inner.gateway.own_address.set(addr);
    }

    /// Whether `provider`'s base URL points back at this process's own address.
    pub(crate) fn is_self_referential(self, provider: &str) -> bool {
        let Some(own) = self.engine.inner.gateway.own_address.get() else {
            return false;
        };
        self.engine
            .inner
            .model
            .client(provider)
            .is_some_and(|c| points_at_self(&c.config().base_url, *own))
    }

    /// The readiness of every configured provider, probed now (each at most
    /// `PROBE_TIMEOUT`, all at once). A disabled provider, or one pointing back
    /// at this Hecate, is not probed.
    pub async fn provider_status(self) -> Vec<ProviderStatus> {
        let clients: Vec<_> = self.engine.inner.model.providers().collect();
        let gw = &self.engine.inner.gateway;
        let own = gw.own_address.get().copied();
        let slow_after = gw.routing.slow_after;
        let default_model = gw.default_model.as_deref();
        futures::future::join_all(clients.into_iter().map(|c| async move {
            let cfg = c.config();
            let enabled = !gw.routing.disabled(&cfg.name);
            let self_ref = own.filter(|o| points_at_self(&cfg.base_url, *o));
            let local = is_local(&cfg.base_url);
            let has_key = cfg.api_key.as_deref().is_some_and(|k| !k.trim().is_empty());
            let credential_state = match (has_key, local) {
                (true, _) => "present",
                (false, true) => "not_required",
                (false, false) => "missing",
            };
            let credential_ready = credential_state != "missing";
            let probed = enabled && self_ref.is_none();
            let (healthy, listed, error) = if probed {
                match tokio::time::timeout(PROBE_TIMEOUT, c.list_models()).await {
                    Ok(Ok(models)) => (true, models, None),
                    Ok(Err(e)) => (false, Vec::new(), Some(e.to_string())),
                    Err(_) => (
                        false,
                        Vec::new(),
                        Some(format!("no answer within {} s", PROBE_TIMEOUT.as_secs())),
                    ),
                }
            } else {
                (false, Vec::new(), None)
            };
            let declared = !cfg.models.is_empty();
            let fallback = default_model_of(default_model, &cfg.name);
            let mut models = if declared { cfg.models.clone() } else { listed };
            let mut checks = vec![if credential_ready {
                check(
                    "credentials",
                    "ok",
                    credential_state,
                    if has_key {
                        "An API key is configured."
                    } else {
                        "No credentials are required for this provider."
                    },
                    None,
                )
            } else {
                check(
                    "credentials",
                    "blocked",
                    "credential_missing",
                    "No API key is configured for this cloud provider.",
                    Some("Add or rotate credentials: set api_key or PROVIDER_<NAME>_API_KEY."),
                )
            }];
            checks.push(match (declared, models.len(), &fallback) {
                (true, n, _) => check(
                    "models",
                    "ok",
                    "models_declared",
                    format!("{n} model(s) declared."),
                    None,
                ),
                (false, 0, Some(m)) if probed => {
                    let m = m.clone();
                    models.push(m.clone());
                    check(
                        "models",
                        "warning",
                        DEFAULT_MODEL_ONLY,
                        format!(
                            "Model discovery gave nothing; only the gateway's default model {m} is known."
                        ),
                        Some("Declare the provider's models (models = [...] or PROVIDER_<NAME>_MODELS), or make its model list answer."),
                    )
                }
                (false, 0, _) if healthy => check(
                    "models",
                    "warning",
                    "no_models",
                    "The provider listed no models.",
                    Some("Start the provider and load at least one model, or declare models."),
                ),
                (false, 0, _) if !probed => check(
                    "models",
                    "unknown",
                    "not_probed",
                    "The provider was not asked for its models.",
                    None,
                ),
                (false, 0, _) => check(
                    "models",
                    "unknown",
                    "discovery_failed",
                    "The provider could not return a model list.",
                    None,
                ),
                (false, n, _) => check(
                    "models",
                    "ok",
                    "models_discovered",
                    format!("{n} model(s) discovered."),
                    None,
                ),
            });
            let learnt = gw.health.snapshot(&cfg.name);
            checks.push(health_check(
                self_ref,
                probed.then_some((healthy, error.as_deref())),
                &learnt,
                slow_after,
            ));
            let cooling = learnt.blocked;
            let blocked = if enabled {
                routing_blocker(
                    credential_ready,
                    cooling.as_ref().map(|b| b.reason),
                    healthy,
                    !models.is_empty(),
                )
            } else {
                Some(PROVIDER_DISABLED)
            };
            checks.push(match blocked {
                None => check(
                    "routing",
                    "ok",
                    "routable",
                    "The provider is eligible for routing.",
                    None,
                ),
                Some(PROVIDER_DISABLED) => {
                    let (message, action) = disabled_explained(&cfg.name);
                    check("routing", "blocked", PROVIDER_DISABLED, message, Some(&action))
                }
                Some(r) => match cooling {
                    Some(b) => check(
                        "routing",
                        "blocked",
                        r,
                        format!(
                            "The router skips this provider for {:.0} s more ({r}).",
                            b.remaining.as_secs_f64().ceil()
                        ),
                        Some("Wait for cooldown or route elsewhere."),
                    ),
                    None => check(
                        "routing",
                        "blocked",
                        r,
                        "The router skips this provider until the checks above pass.",
                        None,
                    ),
                },
            });
            ProviderStatus {
                name: cfg.name.clone(),
                kind: if local { "local" } else { "cloud" },
                protocol: match cfg.kind {
                    ProviderKind::Openai => "openai",
                    ProviderKind::Anthropic => "anthropic",
                },
                status: if !enabled {
                    "disabled"
                } else if healthy {
                    "healthy"
                } else {
                    "unhealthy"
                },
                enabled,
                healthy,
                base_url: cfg.base_url.clone(),
                model_count: models.len(),
                models,
                credential_state,
                credential_ready,
                routing_ready: blocked.is_none(),
                routing_blocked_reason: blocked,
                readiness_checks: checks,
                health: health_state(&learnt, slow_after),
                error,
            }
        }))
        .await
    }
}

impl<'e> Gateway<'e> {
    /// Looks for local model servers (see [`discover_local`]).
    pub async fn discover_local_providers(self) -> Vec<LocalDiscovery> {
        match ProviderClient::default_http() {
            Ok(http) => discover_local(&http).await,
            Err(e) => {
                tracing::warn!(error = %e, "no HTTP client for local discovery");
                Vec::new()
            }
        }
    }
}

/// Looks for the local presets' servers: each command on PATH, and each default
/// endpoint asked once (shared endpoints are reused). Creates nothing.
async fn discover_local(http: &reqwest::Client) -> Vec<LocalDiscovery> {
    let local: Vec<ProviderPreset> = presets()
        .into_iter()
        .filter(|p| p.kind == "local")
        .collect();
    let mut urls: Vec<&'static str> = local.iter().map(|p| p.base_url).collect();
    urls.sort_unstable();
    urls.dedup();
    // Each endpoint asked once, through the same client that serves the provider
    // once configured (its model list, `GET {base_url}/models`).
    let answers: HashMap<&str, Option<Vec<String>>> =
        futures::future::join_all(urls.into_iter().map(|base_url| async move {
            let client = ProviderClient::new(
                http.clone(),
                ProviderConfig {
                    name: "discovery".into(),
                    kind: ProviderKind::Openai,
                    base_url: base_url.to_string(),
                    api_key: None,
                    models: Vec::new(),
                },
            );
            let listed = tokio::time::timeout(PROBE_TIMEOUT, client.list_models()).await;
            (base_url, listed.ok().and_then(Result::ok))
        }))
        .await
        .into_iter()
        .collect();
    local
        .into_iter()
        .map(|p| {
            let command_path = on_path(p.command);
            let models = answers.get(p.base_url).cloned().flatten();
            let http_available = models.is_some();
            let models = models.unwrap_or_default();
            LocalDiscovery {
                preset_id: p.id,
                name: p.name,
                base_url: p.base_url,
                probe_url: p.probe_url,
                status: if http_available {
                    "running"
                } else if command_path.is_some() {
                    "installed"
                } else {
                    "not_detected"
                },
                command: p.command,
                command_available: command_path.is_some(),
                command_path,
                http_available,
                model_count: models.len(),
                models,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_are_local() {
        assert!(is_local("http://127.0.0.1:11434/v1"));
        assert!(is_local("http://localhost:8080/v1"));
        assert!(is_local("http://[::1]:8000/v1"));
        assert!(!is_local("https://api.openai.com/v1"));
        assert!(!is_local("not a url"));
    }

    #[test]
    fn a_base_url_on_our_own_port_and_a_local_host_points_at_self() {
        let own: SocketAddr = "127.0.0.1:8765".parse().expect("addr");
        assert!(points_at_self("http://127.0.0.1:8765/v1", own));
        assert!(points_at_self("http://localhost:8765", own));
        assert!(
            points_at_self("http://127.0.0.2:8765/v1", own),
            "all of 127/8"
        );
        assert!(points_at_self("http://[::1]:8765/v1", own));
        assert!(!points_at_self("http://127.0.0.1:8766/v1", own));
        assert!(!points_at_self("http://127.0.0.1/v1", own), "port 80");
        assert!(!points_at_self("https://api.openai.com/v1", own));
        assert!(!points_at_self("not a url", own));
        let any: SocketAddr = "0.0.0.0:443".parse().expect("addr");
        assert!(
            points_at_self("https://localhost/v1", any),
            "443 by default"
        );
        assert!(points_at_self("http://0.0.0.0:443/v1", any));
        let lan: SocketAddr = "192.168.1.5:9000".parse().expect("addr");
        assert!(points_at_self("http://192.168.1.5:9000/v1", lan));
        assert!(!points_at_self("http://192.168.1.6:9000/v1", lan));
    }

    #[test]
    fn the_health_check_blocks_a_loop_and_warns_of_a_slow_provider() {
        use crate::engine::gateway::routing::health::Latency;
        let calm = Snapshot {
            consecutive_failures: 0,
            blocked: None,
            latency: Some(Latency {
                average: Duration::from_millis(200),
                samples: 3,
            }),
        };
        let slow = Snapshot {
            latency: Some(Latency {
                average: Duration::from_millis(12_000),
                samples: 4,
            }),
            ..calm
        };
        let ten = Duration::from_secs(10);
        let own: SocketAddr = "127.0.0.1:1".parse().expect("addr");
        let c = health_check(Some(own), Some((true, None)), &calm, ten);
        assert_eq!((c.status, c.reason), ("blocked", SELF_REFERENTIAL));
        assert!(c.operator_action.is_some());
        let c = health_check(None, Some((true, None)), &calm, ten);
        assert_eq!((c.status, c.reason), ("ok", "healthy"));
        let c = health_check(None, Some((true, None)), &slow, ten);
        assert_eq!((c.status, c.reason), ("warning", PROVIDER_SLOW));
        assert!(c.message.contains("12000 ms"), "{}", c.message);
        assert!(c.operator_action.is_some());
        let c = health_check(None, Some((false, Some("refused"))), &slow, ten);
        assert_eq!((c.status, c.reason), ("blocked", "provider_unhealthy"));
        let c = health_check(None, None, &calm, ten);
        assert_eq!(c.status, "unknown");
        let h = health_state(&slow, ten);
        assert_eq!(
            (h.circuit, h.average_latency_ms, h.slow_after_ms),
            ("closed", Some(12_000), 10_000)
        );
    }

    #[test]
    fn the_default_model_names_its_provider() {
        assert_eq!(default_model_of(Some("p/m"), "p").as_deref(), Some("m"));
        assert_eq!(default_model_of(Some("q/m"), "p"), None);
        assert_eq!(default_model_of(Some("m"), "p"), None);
        assert_eq!(default_model_of(Some("p/"), "p"), None);
        assert_eq!(default_model_of(None, "p"), None);
    }

    #[test]
    fn presets_carry_their_env_snippets() {
        let all = presets();
        let openai = all.iter().find(|p| p.id == "openai").expect("openai");
        assert!(
            openai
                .env_snippet
                .contains("PROVIDER_OPENAI_API_KEY=$OPENAI_API_KEY")
        );
        let ollama = all.iter().find(|p| p.id == "ollama").expect("ollama");
        assert_eq!(ollama.kind, "local");
        assert!(!ollama.env_snippet.contains("API_KEY"));
        let mut ids: Vec<_> = all.iter().map(|p| p.id).collect();
        ids.dedup();
        assert_eq!(ids.len(), all.len(), "preset ids are unique");
    }
}
