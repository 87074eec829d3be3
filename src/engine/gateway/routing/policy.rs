//! The gateway's routing settings (`[gateway]` deny patterns, the daily budget,
//! the cooldown and the circuit breaker's threshold, and the capabilities the
//! config declares per model) and the pure checks that skip a route candidate
//! before it is tried: `provider_disabled`, `policy_denied`,
//! `preflight_price_missing` and `budget_denied`.

use crate::domain::capability::CapabilityDeclaration;
use std::time::Duration;

/// Skip reason of a candidate a `[gateway] deny` pattern names.
pub const POLICY_DENIED: &str = "policy_denied";
/// Skip reason of a priced candidate while the daily budget is spent.
pub const BUDGET_DENIED: &str = "budget_denied";
/// Skip reason of a candidate without a known price while a budget is set.
pub const PREFLIGHT_PRICE_MISSING: &str = "preflight_price_missing";
/// Skip reason of a tool request to a model marked `tool_calling = none`.
pub const CAPABILITY_MISSING: &str = "capability_missing";
/// Skip (or failure) reason of a provider that answered 429 (or is cooling down from one).
pub const PROVIDER_RATE_LIMITED: &str = "provider_rate_limited";
/// Skip reason of a provider whose circuit breaker is open.
pub const CIRCUIT_OPEN: &str = "circuit_open";
/// Failure reason of a provider that failed (5xx, unreachable, key refused) when tried.
pub const PROVIDER_UNHEALTHY: &str = "provider_unhealthy";
/// Skip (and routing-readiness) reason of a provider the config turned off
/// (`enabled = false` or `PROVIDER_<NAME>_ENABLED=false`).
pub const PROVIDER_DISABLED: &str = "provider_disabled";
/// Readiness (health check) reason, and skip detail, of a provider whose base
/// URL points back at this Hecate's own listen address: routing to it would loop.
pub const SELF_REFERENTIAL: &str = "self_referential";
/// Readiness (health check) reason of a provider whose average answer time is
/// at or above [`RoutingSettings::slow_after`]; it stays routable.
pub const PROVIDER_SLOW: &str = "provider_slow";
/// Readiness (models check) reason of a provider whose model discovery gave
/// nothing, so only the gateway's default model is known to it.
pub const DEFAULT_MODEL_ONLY: &str = "default_model_only";

/// The default average answer time at or above which a provider is
/// `provider_slow` (`[gateway] slow_provider_ms`).
pub const DEFAULT_SLOW_AFTER: Duration = Duration::from_secs(10);

/// The default cooldown of a provider after a 429 without `Retry-After`, or
/// after its circuit breaker opens.
pub const DEFAULT_COOLDOWN: Duration = Duration::from_secs(30);
/// The default number of consecutive failures that open a provider's circuit.
pub const DEFAULT_CIRCUIT_FAILURES: u32 = 3;
/// How often, by default, `hecate serve` reads the cooldowns other processes on
/// the store have learnt.
pub const DEFAULT_COOLDOWN_SYNC: Duration = Duration::from_secs(1);

/// How the gateway routes: what it refuses, what it may spend, how long it
/// leaves a failing provider alone, and what the config says models can do.
#[derive(Debug, Clone)]
pub struct RoutingSettings {
    /// `provider/model` patterns (`*` matches any run of characters) the
    /// gateway never routes to.
    pub deny: Vec<String>,
    /// What `/v1` may spend per UTC day, in micro-USD (`None`: no budget).
    pub daily_budget_micros_usd: Option<i64>,
    /// How long a provider is skipped after a 429 without `Retry-After`, or
    /// after its circuit opens.
    pub cooldown: Duration,
    /// Consecutive failures (5xx, unreachable, key refused) that open a
    /// provider's circuit.
    pub circuit_failures: u32,
    /// How often the cooldowns other processes on the store learnt are read.
    pub cooldown_sync: Duration,
    /// Capabilities declared in the config: (provider, model or `*`, what it says).
    pub declared_capabilities: Vec<(String, String, CapabilityDeclaration)>,
    /// Whether a model takes a reasoning effort, as the config declares it:
    /// (provider, model or `*`, whether it does).
    pub declared_reasoning: Vec<(String, String, bool)>,
    /// Providers the config turned off: listed, skipped as `provider_disabled`.
    pub disabled_providers: Vec<String>,
    /// The average answer time at or above which a provider is `provider_slow`.
    pub slow_after: Duration,
}

impl Default for RoutingSettings {
    fn default() -> Self {
        Self {
            deny: Vec::new(),
            daily_budget_micros_usd: None,
            cooldown: DEFAULT_COOLDOWN,
            circuit_failures: DEFAULT_CIRCUIT_FAILURES,
            cooldown_sync: DEFAULT_COOLDOWN_SYNC,
            declared_capabilities: Vec::new(),
            declared_reasoning: Vec::new(),
            disabled_providers: Vec::new(),
            slow_after: DEFAULT_SLOW_AFTER,
        }
    }
}

impl RoutingSettings {
    /// Whether the config turned `provider` off.
    pub fn disabled(&self, provider: &str) -> bool {
        self.disabled_providers.iter().any(|p| p == provider)
    }

    /// Whether a deny pattern names `provider`/`model`.
    pub fn denies(&self, provider: &str, model: &str) -> bool {
        let id = format!("{provider}/{model}");
        self.deny.iter().any(|p| glob(p.trim(), &id))
    }

    /// What the config declares for `provider`/`model` (the exact model first,
    /// then the provider's `*`).
    pub fn declared(&self, provider: &str, model: &str) -> Vec<&CapabilityDeclaration> {
        let exact = self
            .declared_capabilities
            .iter()
            .filter(|(p, m, _)| p == provider && m == model);
        let any = self
            .declared_capabilities
            .iter()
            .filter(|(p, m, _)| p == provider && m == "*");
        exact.chain(any).map(|(_, _, d)| d).collect()
    }

    /// Whether the config says `provider`/`model` takes a reasoning effort (the
    /// exact model first, then the provider's `*`); `None` when it is silent.
    pub fn declared_reasoning(&self, provider: &str, model: &str) -> Option<bool> {
        let find = |wanted: &str| {
            self.declared_reasoning
                .iter()
                .find(|(p, m, _)| p == provider && m == wanted)
                .map(|(_, _, r)| *r)
        };
        find(model).or_else(|| find("*"))
    }
}

/// Whether `pattern` (with `*` wildcards) matches all of `text`.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || !text[first.len()..].ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(at) => rest = &rest[at + middle.len()..],
            None => return false,
        }
    }
    true
}

/// The budget check of one candidate: `None` when it may be tried.
/// `price_per_mtok` is its (input, output) price when known; `spent` what
/// today's traces cost.
pub fn budget_skip(
    budget: Option<i64>,
    price_per_mtok: Option<(i64, i64)>,
    spent: i64,
) -> Option<&'static str> {
    let limit = budget?;
    match price_per_mtok {
        None => Some(PREFLIGHT_PRICE_MISSING),
        Some((0, 0)) => None,
        Some(_) if spent >= limit => Some(BUDGET_DENIED),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deny_patterns_match_whole_ids_with_wildcards() {
        let s = RoutingSettings {
            deny: vec!["openai/*".into(), "*/o1-pro".into(), "a/exact".into()],
            ..Default::default()
        };
        assert!(s.denies("openai", "gpt-4o"));
        assert!(s.denies("router", "o1-pro"));
        assert!(s.denies("a", "exact"));
        assert!(!s.denies("a", "exactly"));
        assert!(!s.denies("ollama", "qwen"));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxc"));
        assert!(glob("*", ""));
    }

    #[test]
    fn a_budget_skips_priced_candidates_once_spent_and_unpriced_ones_always() {
        assert_eq!(budget_skip(None, None, 10), None);
        assert_eq!(
            budget_skip(Some(100), None, 0),
            Some(PREFLIGHT_PRICE_MISSING)
        );
        assert_eq!(budget_skip(Some(100), Some((1, 2)), 99), None);
        assert_eq!(
            budget_skip(Some(100), Some((1, 2)), 100),
            Some(BUDGET_DENIED)
        );
        assert_eq!(budget_skip(Some(100), Some((0, 0)), 1000), None);
    }

    #[test]
    fn declared_capabilities_prefer_the_exact_model_over_the_providers_star() {
        let d = |ctx| CapabilityDeclaration {
            max_context_tokens: Some(ctx),
            ..Default::default()
        };
        let s = RoutingSettings {
            declared_capabilities: vec![
                ("p".into(), "*".into(), d(1)),
                ("p".into(), "m".into(), d(2)),
            ],
            ..Default::default()
        };
        let got: Vec<_> = s
            .declared("p", "m")
            .iter()
            .map(|d| d.max_context_tokens)
            .collect();
        assert_eq!(got, [Some(2), Some(1)]);
        assert_eq!(s.declared("p", "other").len(), 1);
        assert!(s.declared("q", "m").is_empty());
    }
}
