//! Provider readiness for `hecate doctor`: credentials, model discovery (one model
//! listing with a timeout), health and routing, per configured provider, with its
//! base URL redacted. A provider the config disables, or one whose base URL
//! points back at the address `hecate serve` listens on, is not probed and says
//! why (`provider_disabled`, `self_referential`), as the gateway's status does.
//! Also the one doctor line that sums each provider up.

use super::check::Check;
use crate::adapters::providers::{ProviderClient, ProviderConfig};
use crate::domain::provider_readiness::{
    disabled_explained, routing_blocker, self_referential_explained,
};
use crate::domain::redact::{redact_url, redact_urls_in};
use crate::engine::gateway::catalog::providers::points_at_self;
use crate::engine::gateway::routing::policy::{PROVIDER_DISABLED, SELF_REFERENTIAL};
use serde::Serialize;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// Why a provider is kept out of routing before it is asked anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotProbed {
    /// `enabled = false` or `PROVIDER_<NAME>_ENABLED=false`.
    Disabled,
    /// Its base URL points at this address, where `hecate serve` listens.
    SelfReferential(SocketAddr),
}

impl NotProbed {
    /// Why `cfg` is not probed, given the config's disabled providers and the
    /// address `hecate serve` would listen on.
    pub fn of(
        cfg: &ProviderConfig,
        disabled: &[String],
        listen: Option<SocketAddr>,
    ) -> Option<Self> {
        if disabled.contains(&cfg.name) {
            Some(Self::Disabled)
        } else {
            listen
                .filter(|own| points_at_self(&cfg.base_url, *own))
                .map(Self::SelfReferential)
        }
    }
}

/// One readiness step of a provider (credentials, models, health, routing).
#[derive(Debug, Serialize)]
pub struct Readiness {
    /// The step.
    pub name: &'static str,
    /// `ok`, `warning`, `unknown` or `blocked`.
    pub status: &'static str,
    /// Stable reason code.
    pub reason: String,
    /// What was found.
    pub message: String,
    /// What to do, when the step is blocked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator_action: Option<String>,
}

/// One provider's readiness, as `hecate doctor --format json` reports it.
#[derive(Debug, Serialize)]
pub struct ProviderCheck {
    /// Provider name.
    pub name: String,
    /// `openai` or `anthropic`.
    pub kind: &'static str,
    /// Base URL, credentials redacted.
    pub base_url: String,
    /// Where the definition came from (`file`, `env`, `file+env`).
    pub source: String,
    /// Whether an API key is configured (the key itself is never reported).
    pub api_key_present: bool,
    /// The model listing answered.
    pub healthy: bool,
    /// Hecate would route to it.
    pub routing_ready: bool,
    /// Discovered (or else declared) models.
    pub models: Vec<String>,
    /// How many.
    pub model_count: usize,
    /// How long the listing took.
    pub latency_ms: Option<u128>,
    /// The steps above, in order.
    pub readiness_checks: Vec<Readiness>,
}

impl ProviderCheck {
    /// Whether the config keeps this provider out of routing.
    pub fn is_disabled(&self) -> bool {
        self.readiness_checks
            .iter()
            .any(|r| r.status == "blocked" && r.reason == PROVIDER_DISABLED)
    }
}

fn is_local(url: &str) -> bool {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .is_some_and(|h| h == "localhost" || h == "::1" || h == "[::1]" || h.starts_with("127."))
}

/// Checks one provider: credentials, one model listing within `timeout`, health
/// and routing; a provider kept out of routing (`not_probed`) is not asked.
pub async fn provider_status(
    http: reqwest::Client,
    cfg: ProviderConfig,
    source: String,
    timeout: Duration,
    not_probed: Option<NotProbed>,
) -> ProviderCheck {
    let mut checks = Vec::new();
    let cred_ok = cfg.api_key.is_some() || is_local(&cfg.base_url);
    checks.push(match (&cfg.api_key, cred_ok) {
        (Some(_), _) => Readiness {
            name: "credentials",
            status: "ok",
            reason: "configured".into(),
            message: "An API key is configured.".into(),
            operator_action: None,
        },
        (None, true) => Readiness {
            name: "credentials",
            status: "ok",
            reason: "not_required".into(),
            message: "No credentials are required for this local provider.".into(),
            operator_action: None,
        },
        (None, false) => Readiness {
            name: "credentials",
            status: "blocked",
            reason: "credential_missing".into(),
            message: "No API key is configured.".into(),
            operator_action: Some(format!(
                "Add or rotate credentials: api_key in [providers.{0}] or PROVIDER_{1}_API_KEY.",
                cfg.name,
                cfg.name.to_ascii_uppercase()
            )),
        },
    });
    if let Some(why) = not_probed {
        return kept_out(cfg, source, checks, why);
    }
    let client = ProviderClient::new(http, cfg.clone());
    let started = Instant::now();
    let listed = tokio::time::timeout(timeout, client.list_models()).await;
    let latency = started.elapsed().as_millis();
    let (healthy, models, health_check, models_check) = match listed {
        Ok(Ok(models)) => {
            let n = models.len();
            let models_check = if n > 0 {
                Readiness {
                    name: "models",
                    status: "ok",
                    reason: "models_discovered".into(),
                    message: format!("{n} model(s) discovered."),
                    operator_action: None,
                }
            } else {
                Readiness {
                    name: "models",
                    status: "blocked",
                    reason: "no_models".into(),
                    message: "The provider lists no models.".into(),
                    operator_action: Some("Start the provider and load at least one model.".into()),
                }
            };
            (
                true,
                models,
                Readiness {
                    name: "health",
                    status: "ok",
                    reason: "healthy".into(),
                    message: format!("The provider answered in {latency} ms."),
                    operator_action: None,
                },
                models_check,
            )
        }
        failure => {
            let why = match failure {
                Ok(Err(e)) => redact_urls_in(&e.to_string()),
                _ => format!("no answer within {} s", timeout.as_secs()),
            };
            let declared = !cfg.models.is_empty();
            (
                false,
                cfg.models.clone(),
                Readiness {
                    name: "health",
                    status: "blocked",
                    reason: "provider_unhealthy".into(),
                    message: why,
                    operator_action: Some(
                        "Start the provider or fix its base_url, then run `hecate doctor` again."
                            .into(),
                    ),
                },
                Readiness {
                    name: "models",
                    status: if declared { "warning" } else { "unknown" },
                    reason: if declared {
                        "default_model_only".into()
                    } else {
                        "discovery_failed".into()
                    },
                    message: if declared {
                        "Discovery failed; using the models declared in the config.".into()
                    } else {
                        "The provider could not return a model list.".into()
                    },
                    operator_action: None,
                },
            )
        }
    };
    let blocker = routing_blocker(cred_ok, None, healthy, !models.is_empty());
    checks.push(models_check);
    checks.push(health_check);
    checks.push(match blocker {
        None => Readiness {
            name: "routing",
            status: "ok",
            reason: "routable".into(),
            message: "The provider is eligible for routing.".into(),
            operator_action: None,
        },
        Some(r) => Readiness {
            name: "routing",
            status: "blocked",
            reason: r.into(),
            message: "Hecate will not route to this provider until the blocked checks pass.".into(),
            operator_action: Some("Fix the blocked checks above.".into()),
        },
    });
    ProviderCheck {
        api_key_present: cfg.api_key.is_some(),
        kind: cfg.kind.as_str(),
        base_url: redact_url(&cfg.base_url),
        name: cfg.name,
        source,
        healthy,
        routing_ready: blocker.is_none(),
        model_count: models.len(),
        models,
        latency_ms: Some(latency),
        readiness_checks: checks,
    }
}

/// The readiness of a provider kept out of routing before any probe: its
/// credentials as found, its declared models, and the reason that blocks it.
fn kept_out(
    cfg: ProviderConfig,
    source: String,
    mut checks: Vec<Readiness>,
    why: NotProbed,
) -> ProviderCheck {
    checks.push(Readiness {
        name: "models",
        status: "unknown",
        reason: "not_probed".into(),
        message: format!(
            "The provider was not asked for its models; {} declared.",
            cfg.models.len()
        ),
        operator_action: None,
    });
    let ((message, action), reason) = match why {
        NotProbed::Disabled => (disabled_explained(&cfg.name), PROVIDER_DISABLED),
        NotProbed::SelfReferential(own) => (self_referential_explained(own), SELF_REFERENTIAL),
    };
    checks.push(Readiness {
        name: if why == NotProbed::Disabled {
            "routing"
        } else {
            "health"
        },
        status: "blocked",
        reason: reason.into(),
        message,
        operator_action: Some(action),
    });
    if why != NotProbed::Disabled {
        checks.push(Readiness {
            name: "routing",
            status: "blocked",
            reason: reason.into(),
            message: "Hecate will not route to this provider until the blocked checks pass.".into(),
            operator_action: Some("Fix the blocked checks above.".into()),
        });
    }
    ProviderCheck {
        api_key_present: cfg.api_key.is_some(),
        kind: cfg.kind.as_str(),
        base_url: redact_url(&cfg.base_url),
        source,
        healthy: false,
        routing_ready: false,
        model_count: cfg.models.len(),
        models: cfg.models,
        latency_ms: None,
        readiness_checks: checks,
        name: cfg.name,
    }
}

/// The doctor line of one provider: ok when Hecate would route to it, else a warning
/// with the first blocked step's fix.
pub fn line(s: &ProviderCheck) -> Check {
    let name = format!("provider {}", s.name);
    let key = if s.api_key_present {
        "API key set"
    } else {
        "no API key"
    };
    let message = format!(
        "{} at {} (from {}), {key}, {} model(s)",
        s.kind, s.base_url, s.source, s.model_count
    );
    if s.routing_ready {
        return Check::ok(name, format!("{message}, ready"));
    }
    let blocked = s
        .readiness_checks
        .iter()
        .filter(|r| r.status == "blocked")
        .min_by_key(|r| r.name == "routing");
    let why = blocked.map_or_else(|| "not ready".to_string(), |r| r.message.clone());
    let fix = blocked
        .and_then(|r| r.operator_action.clone())
        .unwrap_or_else(|| "Fix the provider's blocked readiness checks.".into());
    Check::warn(name, format!("{message}, not ready: {why}"), fix)
}

/// The required summary line: with providers configured, at least one must be
/// routable; with none, only external agents can answer (a warning).
pub fn summary(statuses: &[ProviderCheck]) -> Check {
    if statuses.is_empty() {
        return Check::warn(
            "providers",
            "No model provider is configured; only external agents can answer.",
            "Add [providers.NAME] to the config file or set PROVIDER_<NAME>_BASE_URL \
             (and _API_KEY, _KIND).",
        )
        .required();
    }
    let ready = statuses.iter().filter(|s| s.routing_ready).count();
    let disabled = statuses.iter().filter(|s| s.is_disabled()).count();
    if disabled == statuses.len() {
        return Check::warn(
            "providers",
            format!(
                "Every configured provider ({}) is disabled; only external agents can answer.",
                statuses.len()
            ),
            "Enable a provider: set PROVIDER_<NAME>_ENABLED=true, or remove enabled = false \
             from its [providers.NAME].",
        )
        .required();
    }
    let disabled_note = if disabled > 0 {
        format!(" ({disabled} disabled)")
    } else {
        String::new()
    };
    if ready == 0 {
        Check::error(
            "providers",
            format!(
                "None of the {} configured provider(s) is ready{disabled_note}.",
                statuses.len()
            ),
            "Fix the provider lines above, then run `hecate doctor` again.",
        )
        .required()
    } else {
        Check::ok(
            "providers",
            format!(
                "{ready} of {} provider(s) ready{disabled_note}.",
                statuses.len()
            ),
        )
        .required()
    }
}
