//! The `[gateway]` routing keys and the providers' `capabilities` tables,
//! converted into the engine's routing settings; an unusable value names the
//! file and the key.

use super::error::ConfigError;
use super::schema::{CapabilitySection, GatewaySection, ProviderSection};
use crate::domain::capability::{CapabilityDeclaration, ToolCalling};
use crate::engine::gateway::RoutingSettings;
use crate::engine::gateway::routing::policy::{
    DEFAULT_CIRCUIT_FAILURES, DEFAULT_COOLDOWN, DEFAULT_COOLDOWN_SYNC, DEFAULT_SLOW_AFTER,
};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

fn invalid(path: &Path, message: String) -> ConfigError {
    ConfigError::Parse {
        path: path.to_path_buf(),
        message,
    }
}

fn declaration(
    path: &Path,
    key: &str,
    c: &CapabilitySection,
) -> Result<CapabilityDeclaration, ConfigError> {
    let tool_calling = c
        .tool_calling
        .as_deref()
        .map(|t| {
            ToolCalling::parse(t).ok_or_else(|| {
                invalid(
                    path,
                    format!("{key}.tool_calling = {t:?} is not unknown, none, basic or parallel"),
                )
            })
        })
        .transpose()?;
    Ok(CapabilityDeclaration {
        tool_calling,
        streaming: c.streaming,
        vision: c.vision,
        max_context_tokens: c.max_context_tokens,
    })
}

/// The routing settings `[gateway]` and `[providers.NAME.capabilities."MODEL"]` say.
pub(super) fn routing(
    path: &Path,
    g: &GatewaySection,
    providers: &BTreeMap<String, ProviderSection>,
) -> Result<RoutingSettings, ConfigError> {
    let daily_budget_micros_usd = match g.daily_budget_usd {
        None => None,
        Some(usd) if usd.is_finite() && usd >= 0.0 => Some((usd * 1e6).round() as i64),
        Some(usd) => {
            return Err(invalid(
                path,
                format!("[gateway] daily_budget_usd = {usd} is not a non-negative amount"),
            ));
        }
    };
    if let Some(bad) = g.deny.iter().find(|p| p.trim().is_empty()) {
        return Err(invalid(
            path,
            format!(
                "[gateway] deny holds an empty pattern ({bad:?}); write provider/model with * wildcards"
            ),
        ));
    }
    let mut declared_capabilities = Vec::new();
    let mut declared_reasoning = Vec::new();
    for (name, p) in providers {
        for (model, c) in &p.capabilities {
            let key = format!("[providers.{name}.capabilities.{model:?}]");
            declared_capabilities.push((name.clone(), model.clone(), declaration(path, &key, c)?));
            if let Some(r) = c.reasoning {
                declared_reasoning.push((name.clone(), model.clone(), r));
            }
        }
    }
    Ok(RoutingSettings {
        deny: g.deny.clone(),
        daily_budget_micros_usd,
        cooldown: g
            .cooldown_secs
            .map_or(DEFAULT_COOLDOWN, Duration::from_secs),
        circuit_failures: g
            .circuit_failures
            .unwrap_or(DEFAULT_CIRCUIT_FAILURES)
            .max(1),
        cooldown_sync: g.cooldown_sync_ms.map_or(DEFAULT_COOLDOWN_SYNC, |ms| {
            Duration::from_millis(ms.max(10))
        }),
        declared_capabilities,
        declared_reasoning,
        // Filled in from the merged providers by `Config::gateway_routing`.
        disabled_providers: Vec::new(),
        slow_after: g
            .slow_provider_ms
            .map_or(DEFAULT_SLOW_AFTER, |ms| Duration::from_millis(ms.max(1))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<RoutingSettings, ConfigError> {
        let file: super::super::schema::FileConfig = toml::from_str(text).expect("toml");
        routing(Path::new("hecate.toml"), &file.gateway, &file.providers)
    }

    #[test]
    fn gateway_routing_keys_and_declared_capabilities_are_read() {
        let s = parse(
            r#"
            [gateway]
            deny = ["openai/*"]
            daily_budget_usd = 1.5
            cooldown_secs = 7
            circuit_failures = 1
            cooldown_sync_ms = 250
            slow_provider_ms = 1500
            [providers.local]
            base_url = "http://127.0.0.1:1/v1"
            [providers.local.capabilities."qwen"]
            tool_calling = "none"
            max_context_tokens = 32768
            "#,
        )
        .expect("valid");
        assert_eq!(s.deny, ["openai/*"]);
        assert_eq!(s.daily_budget_micros_usd, Some(1_500_000));
        assert_eq!(s.cooldown, Duration::from_secs(7));
        assert_eq!(s.circuit_failures, 1);
        assert_eq!(s.cooldown_sync, Duration::from_millis(250));
        assert_eq!(s.slow_after, Duration::from_millis(1500));
        let d = s.declared("local", "qwen");
        assert_eq!(d[0].tool_calling, Some(ToolCalling::None));
        assert_eq!(d[0].max_context_tokens, Some(32768));
        let e = parse("[providers.local.capabilities.\"m\"]\ntool_calling = \"sometimes\"\n")
            .expect_err("bad level");
        assert!(e.to_string().contains("tool_calling"), "{e}");
        assert!(parse("[gateway]\ndaily_budget_usd = -1.0\n").is_err());
        let d = parse("").expect("defaults");
        assert_eq!(d.cooldown, DEFAULT_COOLDOWN);
        assert_eq!(d.cooldown_sync, DEFAULT_COOLDOWN_SYNC);
        assert_eq!(d.slow_after, DEFAULT_SLOW_AFTER);
        assert_eq!(d.daily_budget_micros_usd, None);
    }
}
