//! `hecate doctor`: where things are, whether the store is healthy, and provider
//! readiness checks (credentials / models / health / routing).

use super::Cli;
use super::context::{DB_FILE, load_config, open_store};
use super::output::{Format, print_resource, print_text};
use crate::adapters::providers::{ProviderClient, ProviderConfig};
use serde::Serialize;
use std::fmt::Write as _;
use std::time::{Duration, Instant};

/// Arguments of `hecate doctor`.
#[derive(Debug, clap::Args)]
pub struct DoctorArgs {
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Seconds to wait for each provider's model listing.
    #[arg(long, default_value_t = 5)]
    pub timeout: u64,
}

/// One readiness check.
#[derive(Debug, Serialize)]
struct Check {
    name: &'static str,
    status: &'static str,
    reason: String,
    message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    operator_action: Option<String>,
}

/// One provider's readiness.
#[derive(Debug, Serialize)]
struct ProviderStatus {
    name: String,
    kind: &'static str,
    base_url: String,
    source: String,
    healthy: bool,
    routing_ready: bool,
    models: Vec<String>,
    model_count: usize,
    latency_ms: Option<u128>,
    readiness_checks: Vec<Check>,
}

fn is_local(url: &str) -> bool {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_string))
        .is_some_and(|h| h == "localhost" || h == "::1" || h == "[::1]" || h.starts_with("127."))
}

async fn provider_status(
    http: reqwest::Client,
    cfg: ProviderConfig,
    source: String,
    timeout: Duration,
) -> ProviderStatus {
    let mut checks = Vec::new();
    let cred_ok = cfg.api_key.is_some() || is_local(&cfg.base_url);
    checks.push(match (&cfg.api_key, cred_ok) {
        (Some(_), _) => Check {
            name: "credentials",
            status: "ok",
            reason: "configured".into(),
            message: "An API key is configured.".into(),
            operator_action: None,
        },
        (None, true) => Check {
            name: "credentials",
            status: "ok",
            reason: "not_required".into(),
            message: "No credentials are required for this local provider.".into(),
            operator_action: None,
        },
        (None, false) => Check {
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
    let client = ProviderClient::new(http, cfg.clone());
    let started = Instant::now();
    let listed = tokio::time::timeout(timeout, client.list_models()).await;
    let latency = started.elapsed().as_millis();
    let (healthy, models, health_check, models_check) = match listed {
        Ok(Ok(models)) => {
            let n = models.len();
            let models_check = if n > 0 {
                Check {
                    name: "models",
                    status: "ok",
                    reason: "models_discovered".into(),
                    message: format!("{n} model(s) discovered."),
                    operator_action: None,
                }
            } else {
                Check {
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
                Check {
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
                Ok(Err(e)) => e.to_string(),
                _ => format!("no answer within {} s", timeout.as_secs()),
            };
            let declared = !cfg.models.is_empty();
            (
                false,
                cfg.models.clone(),
                Check {
                    name: "health",
                    status: "blocked",
                    reason: "provider_unhealthy".into(),
                    message: why,
                    operator_action: Some(
                        "Start the provider or fix its base_url, then run `hecate doctor` again."
                            .into(),
                    ),
                },
                Check {
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
    let routing_blocker = if !cred_ok {
        Some("credential_missing")
    } else if !healthy {
        Some("provider_unhealthy")
    } else if models.is_empty() {
        Some("no_models")
    } else {
        None
    };
    checks.push(models_check);
    checks.push(health_check);
    checks.push(match routing_blocker {
        None => Check {
            name: "routing",
            status: "ok",
            reason: "routable".into(),
            message: "The provider is eligible for routing.".into(),
            operator_action: None,
        },
        Some(r) => Check {
            name: "routing",
            status: "blocked",
            reason: r.into(),
            message: "Hecate will not route to this provider until the blocked checks pass.".into(),
            operator_action: Some("Fix the blocked checks above.".into()),
        },
    });
    ProviderStatus {
        kind: cfg.kind.as_str(),
        base_url: cfg.base_url,
        name: cfg.name,
        source,
        healthy,
        routing_ready: routing_blocker.is_none(),
        model_count: models.len(),
        models,
        latency_ms: Some(latency),
        readiness_checks: checks,
    }
}

pub async fn run(cli: &Cli, args: &DoctorArgs) -> anyhow::Result<i32> {
    let config = load_config(cli)?;
    let store = open_store(cli);
    let http = ProviderClient::default_http()?;
    let timeout = Duration::from_secs(args.timeout.max(1));
    let statuses = futures::future::join_all(config.providers.iter().map(|p| {
        let source = config
            .provider_sources
            .get(&p.name)
            .cloned()
            .unwrap_or_default();
        provider_status(http.clone(), p.clone(), source, timeout)
    }))
    .await;
    let (data_dir, store_report) = match &store {
        Ok((dir, s)) => (
            dir.display().to_string(),
            s.health()
                .await
                .map(|h| serde_json::to_value(h).unwrap_or_default())
                .unwrap_or_else(|e| serde_json::json!({"error": e})),
        ),
        Err(e) => (
            cli.data_dir
                .clone()
                .map(|d| d.display().to_string())
                .unwrap_or_else(|| super::context::default_data_dir().display().to_string()),
            serde_json::json!({"error": e.to_string()}),
        ),
    };
    let store_ok =
        store_report.get("error").is_none() && store_report["integrity"].as_str() == Some("ok");
    let ready = statuses.iter().any(|s| s.routing_ready);
    if args.format == Format::Json {
        print_resource(
            "doctor",
            &serde_json::json!({
                "version": env!("CARGO_PKG_VERSION"),
                "config_path": config.path,
                "config_exists": config.file_exists,
                "data_dir": data_dir,
                "store": store_report,
                "providers": statuses,
            }),
        )?;
    } else {
        let mut out = String::new();
        let _ = writeln!(out, "hecate {}", env!("CARGO_PKG_VERSION"));
        let _ = writeln!(
            out,
            "config:   {} ({})",
            config.path.display(),
            if config.file_exists {
                "found"
            } else {
                "not present; using defaults and env"
            }
        );
        let _ = writeln!(out, "data dir: {data_dir} (database {DB_FILE})");
        match store_report.get("error") {
            Some(e) => {
                let _ = writeln!(
                    out,
                    "store:    FAILED: {}",
                    e.as_str().unwrap_or(&e.to_string())
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "store:    {} schema v{} · {} bytes · integrity {}",
                    store_report["backend"].as_str().unwrap_or("?"),
                    store_report["schema_version"],
                    store_report["size_bytes"],
                    store_report["integrity"].as_str().unwrap_or("?")
                );
            }
        }
        if statuses.is_empty() {
            let _ = writeln!(
                out,
                "providers: none configured. Add [providers.NAME] to the config file or set \
                 PROVIDER_<NAME>_BASE_URL (and _API_KEY, _KIND)."
            );
        }
        for s in &statuses {
            let _ = writeln!(
                out,
                "provider {} ({}, {}, from {}): {}",
                s.name,
                s.kind,
                s.base_url,
                s.source,
                if s.routing_ready {
                    "ready"
                } else {
                    "not ready"
                }
            );
            for c in &s.readiness_checks {
                let _ = writeln!(
                    out,
                    "  {:<11} {:<8} {:<20} {}",
                    c.name, c.status, c.reason, c.message
                );
                if let Some(a) = &c.operator_action {
                    let _ = writeln!(out, "  {:<11} -> {a}", "");
                }
            }
            if !s.models.is_empty() {
                let _ = writeln!(out, "  models: {}", s.models.join(", "));
            }
        }
        print_text(&out)?;
    }
    Ok(if !store_ok {
        8
    } else if !statuses.is_empty() && !ready {
        5
    } else {
        0
    })
}
