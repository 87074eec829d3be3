//! Route candidates before and after they are tried, for `/v1` requests and
//! model turns alike: the checks that skip one before it is tried (a
//! disabled provider, one pointing back at this Hecate, deny patterns, tool capability, the daily budget, the provider's cooldown),
//! which upstream failures move on to the next candidate and what they teach
//! the providers' health, and the error when no candidate may be tried.

use super::record::RouteLog;
use super::routing::health::{ProviderHealth, retry_after_secs};
use super::routing::policy::{
    CAPABILITY_MISSING, CIRCUIT_OPEN, POLICY_DENIED, PROVIDER_DISABLED, PROVIDER_RATE_LIMITED,
    PROVIDER_UNHEALTHY, SELF_REFERENTIAL, budget_skip,
};
use super::routing::route::GatewayRoute;
use crate::adapters::providers::ProviderError;
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::gateway_conversation::RouteCandidate;
use crate::engine::Gateway;
use std::time::Duration;

/// Route `r` as a candidate with `outcome`, not yet skipped.
pub(crate) fn candidate(r: &GatewayRoute, outcome: &str) -> RouteCandidate {
    RouteCandidate {
        provider: r.provider.clone(),
        model: r.model.clone(),
        outcome: outcome.to_string(),
        skip_reason: None,
        detail: None,
    }
}

/// Whether an upstream failure should move the request to the next candidate
/// (and what it says of the provider): 429 is `provider_rate_limited`; 5xx,
/// 408, 401/403 (the provider refused Hecate's key) and an unreachable
/// provider are `provider_unhealthy`. Other refusals are the request's fault.
pub(crate) fn failover_reason(e: &ProviderError) -> Option<&'static str> {
    match e {
        ProviderError::Status { status: 429, .. } => Some(PROVIDER_RATE_LIMITED),
        e if e.provider_side() => Some(PROVIDER_UNHEALTHY),
        _ => None,
    }
}

/// Teaches the providers' `health` what failure `e` of `provider` says: a 429
/// cools it down for its `retry-after`, any other counts toward its circuit.
pub(crate) fn learn_failure(health: &ProviderHealth, provider: &str, e: &ProviderError) {
    match e {
        ProviderError::Status {
            status: 429,
            retry_after,
            ..
        } => health.rate_limited(provider, retry_after.as_deref().and_then(retry_after_secs)),
        _ => health.failed(provider),
    }
}

impl<'e> Gateway<'e> {
    /// The other providers serving `model` than `first`, in routing order,
    /// each checked as `/v1` checks its candidates (for a request of
    /// `namespace` without tools): the routes, their checked candidates and
    /// the cooldowns of the skipped ones. Looked up when `first` failed or was
    /// skipped, so an answered call costs no lookup.
    pub(crate) async fn fallbacks(
        self,
        namespace: &str,
        first: &str,
        model: &str,
    ) -> (Vec<GatewayRoute>, Vec<RouteCandidate>, Vec<Duration>) {
        let routes: Vec<GatewayRoute> = match self.candidates(Some(model)).await {
            Ok(all) => all.into_iter().filter(|r| r.provider != first).collect(),
            Err(_) => Vec::new(),
        };
        let (checked, cooldowns) = self.check_candidates(namespace, false, &routes).await;
        (routes, checked, cooldowns)
    }

    /// Checks each candidate before it is tried; answers the log with every
    /// candidate `pending` or `skipped`, and the cooldowns of the skipped ones.
    /// A request of `namespace` offering tools (`has_tools`) skips models
    /// marked as not calling them.
    pub(crate) async fn check_candidates(
        self,
        namespace: &str,
        has_tools: bool,
        routes: &[GatewayRoute],
    ) -> (Vec<RouteCandidate>, Vec<Duration>) {
        let gw = &self.engine.inner.gateway;
        let spent = match gw.routing.daily_budget_micros_usd {
            Some(_) => self.gateway_spent_today(namespace).await,
            None => 0,
        };
        let mut out = Vec::with_capacity(routes.len());
        let mut cooldowns = Vec::new();
        for r in routes {
            let mut c = candidate(r, "pending");
            let price = self
                .engine
                .inner
                .model
                .pricebook()
                .price(&r.provider, &r.model)
                .map(|p| (p.input_micros_per_mtok, p.output_micros_per_mtok));
            if gw.routing.disabled(&r.provider) {
                c.skip_reason = Some(PROVIDER_DISABLED.into());
                c.detail = Some(
                    "the provider is disabled (enabled = false or PROVIDER_<NAME>_ENABLED=false)"
                        .into(),
                );
            } else if self.is_self_referential(&r.provider) {
                c.skip_reason = Some(PROVIDER_UNHEALTHY.into());
                c.detail = Some(format!(
                    "{SELF_REFERENTIAL}: its base URL points back at this Hecate; routing to it would loop"
                ));
            } else if gw.routing.denies(&r.provider, &r.model) {
                c.skip_reason = Some(POLICY_DENIED.into());
                c.detail = Some("a [gateway] deny pattern names it".into());
            } else if has_tools
                && self
                    .capabilities(&r.provider, &r.model)
                    .await
                    .refuses_tools()
            {
                c.skip_reason = Some(CAPABILITY_MISSING.into());
                c.detail = Some(
                    "the request offers tools; the model is marked tool_calling = none".into(),
                );
            } else if let Some(skip) = budget_skip(gw.routing.daily_budget_micros_usd, price, spent)
            {
                c.skip_reason = Some(skip.into());
                c.detail = Some(format!(
                    "today's spend {spent} of {} micro-USD",
                    gw.routing.daily_budget_micros_usd.unwrap_or(0)
                ));
            } else if let Some(b) = gw.health.blocked(&r.provider) {
                c.skip_reason = Some(b.reason.into());
                c.detail = Some(format!(
                    "cooling down for {:.1} s",
                    b.remaining.as_secs_f64()
                ));
                cooldowns.push(b.remaining);
            }
            if c.skip_reason.is_some() {
                c.outcome = "skipped".into();
            }
            out.push(c);
        }
        (out, cooldowns)
    }
}

/// The error of a request whose every candidate was skipped: 429 while they
/// are all rate limited, `agent_chat.model_capability_required` when none
/// takes tools, else `route_impossible` (with a `retry_after` while all are
/// cooling down), the candidates in its details either way.
pub(crate) fn nothing_routable(log: &RouteLog, cooldowns: &[Duration]) -> HecateError {
    let reasons: Vec<&str> = log
        .candidates
        .iter()
        .filter_map(|c| c.skip_reason.as_deref())
        .collect();
    let first = log.candidates.first();
    let retry_after = cooldowns
        .iter()
        .min()
        .map(|d| d.as_secs_f64().ceil().max(1.0) as u64)
        .map(|s| s.to_string());
    let all = |set: &[&str]| !reasons.is_empty() && reasons.iter().all(|r| set.contains(r));
    let named = first.map_or(String::new(), |c| format!("{}/{}", c.provider, c.model));
    let e = if all(&[PROVIDER_RATE_LIMITED]) {
        HecateError::new(
            ErrorType::RateLimitExceeded,
            format!("{named}: every provider that serves this model is cooling down after a 429"),
        )
        .with_user_message("The model provider is rate limiting requests.")
        .with_operator_action("Wait for cooldown or route elsewhere.")
        .with_detail("reason", PROVIDER_RATE_LIMITED)
    } else if all(&[CAPABILITY_MISSING]) {
        HecateError::new(
            ErrorType::ModelCapabilityRequired,
            format!("{named} is marked as not calling tools, and the request offers tools"),
        )
        .with_detail("reason", CAPABILITY_MISSING)
    } else if all(&[PROVIDER_DISABLED]) {
        HecateError::new(
            ErrorType::RouteImpossible,
            format!("{named}: every provider that serves this model is disabled"),
        )
        .with_operator_action(
            "Enable the provider (PROVIDER_<NAME>_ENABLED=true, or remove enabled = false), or choose a model another provider serves.",
        )
        .with_detail("reason", PROVIDER_DISABLED)
    } else if all(&[PROVIDER_RATE_LIMITED, CIRCUIT_OPEN]) {
        HecateError::new(
            ErrorType::RouteImpossible,
            format!("{named}: every provider that serves this model is cooling down after failures"),
        )
        .with_operator_action("Wait for cooldown, check the providers (GET /hecate/v1/providers/status), or route elsewhere.")
        .with_detail("reason", CIRCUIT_OPEN)
    } else {
        HecateError::new(
            ErrorType::RouteImpossible,
            format!(
                "no candidate for {named} may be tried: {}",
                reasons.join(", ")
            ),
        )
        .with_operator_action(
            "See route_candidates: lift the deny pattern, raise the budget, or choose another model.",
        )
        .with_detail("reason", reasons.first().copied().unwrap_or("route_impossible"))
    };
    let mut e = match first {
        Some(c) => e
            .with_detail("provider", c.provider.clone())
            .with_detail("model", c.model.clone()),
        None => e,
    };
    if let Some(r) = retry_after.filter(|_| !all(&[CAPABILITY_MISSING])) {
        e = e.with_detail("retry_after", r);
    }
    e
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skipped(reason: &str) -> RouteCandidate {
        RouteCandidate {
            provider: "p".into(),
            model: "m".into(),
            outcome: "skipped".into(),
            skip_reason: Some(reason.into()),
            detail: None,
        }
    }

    fn log(reasons: &[&str]) -> RouteLog {
        RouteLog {
            reason: "requested_model".into(),
            candidates: reasons.iter().map(|r| skipped(r)).collect(),
        }
    }

    #[test]
    fn skipped_candidates_explain_the_error() {
        let secs = [Duration::from_millis(1500), Duration::from_secs(9)];
        let e = nothing_routable(&log(&[PROVIDER_RATE_LIMITED]), &secs);
        assert_eq!(e.error_type, ErrorType::RateLimitExceeded);
        assert_eq!(e.details["retry_after"], "2");
        let e = nothing_routable(&log(&[PROVIDER_RATE_LIMITED, CIRCUIT_OPEN]), &secs);
        assert_eq!(e.error_type, ErrorType::RouteImpossible);
        assert_eq!(e.details["reason"], CIRCUIT_OPEN);
        let e = nothing_routable(&log(&[CAPABILITY_MISSING]), &[]);
        assert_eq!(e.error_type, ErrorType::ModelCapabilityRequired);
        assert!(e.details.get("retry_after").is_none());
        let e = nothing_routable(&log(&[PROVIDER_DISABLED]), &[]);
        assert_eq!(e.error_type, ErrorType::RouteImpossible);
        assert_eq!(e.details["reason"], PROVIDER_DISABLED);
        assert!(e.operator_action.contains("ENABLED"), "{e:?}");
        let e = nothing_routable(&log(&[POLICY_DENIED, "budget_denied"]), &[]);
        assert_eq!(e.error_type, ErrorType::RouteImpossible);
        assert_eq!(e.details["reason"], POLICY_DENIED);
        assert_eq!(e.details["provider"], "p");
    }

    #[test]
    fn only_provider_side_failures_fail_over() {
        let s = |status| ProviderError::Status {
            status,
            body: String::new(),
            retry_after: None,
        };
        assert_eq!(failover_reason(&s(429)), Some(PROVIDER_RATE_LIMITED));
        assert_eq!(failover_reason(&s(503)), Some(PROVIDER_UNHEALTHY));
        assert_eq!(failover_reason(&s(401)), Some(PROVIDER_UNHEALTHY));
        assert_eq!(
            failover_reason(&ProviderError::Unreachable("refused".into())),
            Some(PROVIDER_UNHEALTHY)
        );
        assert_eq!(failover_reason(&s(400)), None);
        assert_eq!(failover_reason(&s(404)), None);
    }
}
