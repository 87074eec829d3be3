//! One gateway exchange: the request's route candidates, each checked before it
//! is tried (deny patterns, tool capability, the daily budget, the provider's
//! cooldown), then tried in order — a provider that answers 429, 5xx, 401/403
//! or cannot be reached is recorded as failed and the next candidate is tried —
//! and the first answer relayed in the client's format. The route (its reason
//! and every candidate's outcome) goes on the request's trace.

use super::record::{Answerer, RouteLog, TraceStart};
use super::routing::health::retry_after_secs;
use super::routing::policy::{
    CAPABILITY_MISSING, CIRCUIT_OPEN, POLICY_DENIED, PROVIDER_RATE_LIMITED, PROVIDER_UNHEALTHY,
    budget_skip,
};
use super::routing::route::{self, GatewayRoute};
use super::{GatewayCall, INVALID_BODY};
use crate::adapters::gateway::{RelayMode, UpstreamAnswer, relay, wire_format};
use crate::adapters::providers::ProviderConfig;
use crate::adapters::providers::ProviderError;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::gateway_conversation::RouteCandidate;
use crate::engine::Gateway;
use crate::model_wire::requests::prepare::prepare_body;
use crate::model_wire::requests::transcript::apply_system_prompt;
use crate::model_wire::{Exchange, ExchangeEnd, OnEnd};
use crate::telemetry::spans::{Inference, InferenceEnd};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tracing::Instrument as _;

/// A failed exchange: before an answer started (its trace still to be
/// written), or after (the end already recorded it).
enum Failure {
    Early(HecateError),
    Answered(HecateError),
}

impl From<HecateError> for Failure {
    fn from(e: HecateError) -> Self {
        Self::Early(e)
    }
}

fn candidate(r: &GatewayRoute, outcome: &str) -> RouteCandidate {
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
fn failover_reason(e: &ProviderError) -> Option<&'static str> {
    match e {
        ProviderError::Status { status: 429, .. } => Some(PROVIDER_RATE_LIMITED),
        e if e.provider_side() => Some(PROVIDER_UNHEALTHY),
        _ => None,
    }
}

impl<'e> Gateway<'e> {
    /// Every provider that may answer a request's model (or the default model),
    /// in the order they are tried; providers that declare no models are asked
    /// for their list only when the quick look finds none.
    pub async fn candidates(self, requested: Option<&str>) -> Result<Vec<GatewayRoute>> {
        let default = self.engine.inner.gateway.default_model.as_deref();
        route::route_candidates(&self.engine.inner.model, requested, default).await
    }

    /// Routes `call`, sends it to the first candidate provider that can take it
    /// (in its format) and relays the answer in the client's format; the
    /// exchange is recorded when it ends (its trace with the route, and its chat
    /// session when it names one), a failure before the answer as a failed trace.
    pub async fn exchange(self, call: GatewayCall) -> Result<Exchange> {
        let start = TraceStart {
            namespace: call.namespace.clone(),
            request_id: call.request_id.clone(),
            trace_id: call.trace_id.clone(),
            ingress: call.ingress,
            requested_model: call.facts.model.clone().unwrap_or_default(),
            session_id: call.session_id.clone().or(call.agent_session.clone()),
            started_at: crate::domain::time::now_rfc3339(),
            started: std::time::Instant::now(),
        };
        let mut log = RouteLog::default();
        match self.gateway_answer(call, start.clone(), &mut log).await {
            Ok(exchange) => Ok(exchange),
            Err(Failure::Early(mut e)) => {
                if !log.candidates.is_empty()
                    && let Ok(v) = serde_json::to_value(&log.candidates)
                {
                    e = e.with_detail("route_candidates", v);
                }
                self.gateway_record_failure(&start, &log, &e).await;
                Err(e)
            }
            Err(Failure::Answered(e)) => Err(e),
        }
    }

    /// Checks each candidate before it is tried; answers the log with every
    /// candidate `pending` or `skipped`, and the cooldowns of the skipped ones.
    async fn gateway_check_candidates(
        self,
        call: &GatewayCall,
        routes: &[GatewayRoute],
    ) -> (Vec<RouteCandidate>, Vec<Duration>) {
        let gw = &self.engine.inner.gateway;
        let spent = match gw.routing.daily_budget_micros_usd {
            Some(_) => self.gateway_spent_today(&call.namespace).await,
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
            if gw.routing.denies(&r.provider, &r.model) {
                c.skip_reason = Some(POLICY_DENIED.into());
                c.detail = Some("a [gateway] deny pattern names it".into());
            } else if call.facts.has_tools
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

    /// The exchange itself; a failure says whether the end was already recorded.
    async fn gateway_answer(
        self,
        call: GatewayCall,
        start: TraceStart,
        log: &mut RouteLog,
    ) -> std::result::Result<Exchange, Failure> {
        let mut call = call;
        let binding = match &call.session_id {
            Some(id) => {
                let b = self
                    .bind_session(&call.namespace, id, call.ingress, &call.body)
                    .await?;
                apply_system_prompt(call.ingress, &mut call.body, &b.system_prompt);
                Some(b)
            }
            None => None,
        };
        let routes = self.candidates(call.facts.model.as_deref()).await?;
        log.reason = routes
            .first()
            .map(|r| r.reason.to_string())
            .unwrap_or_default();
        let (candidates, cooldowns) = self.gateway_check_candidates(&call, &routes).await;
        log.candidates = candidates;
        let gw = &self.engine.inner.gateway;
        let mut last_error = None;
        for (i, r) in routes.iter().enumerate() {
            if log.candidates[i].outcome != "pending" {
                continue;
            }
            let Some(client) = self.engine.inner.model.client(&r.provider) else {
                return Err(HecateError::gateway(format!(
                    "provider {:?} disappeared while routing",
                    r.provider
                ))
                .into());
            };
            let config = client.config();
            let target = wire_format(config.kind);
            let body = prepare_body(call.ingress, target, &call.body, &r.model).map_err(|e| {
                HecateError::invalid(e.to_string())
                    .with_detail("reason", INVALID_BODY)
                    .with_detail("provider", r.provider.clone())
            })?;
            let traced = gateway_span(&call, config, r);
            let sent = gw
                .upstream()?
                .send(config, &body, &call.anthropic_headers)
                .instrument(traced.span().clone())
                .await;
            let resp = match sent {
                Ok(resp) => resp,
                Err(e) => {
                    let (kind, message) = (e.error_type(), e.to_string());
                    traced.gateway_end("failed", None);
                    traced.finish(InferenceEnd {
                        error: Some((&kind, &message)),
                        ..Default::default()
                    });
                    let c = &mut log.candidates[i];
                    c.outcome = "failed".into();
                    c.detail = Some(e.to_string());
                    let Some(reason) = failover_reason(&e) else {
                        return Err(e.into_hecate(&r.provider, &r.model).into());
                    };
                    c.skip_reason = Some(reason.into());
                    match &e {
                        ProviderError::Status {
                            status: 429,
                            retry_after,
                            ..
                        } => gw.health.rate_limited(
                            &r.provider,
                            retry_after.as_deref().and_then(retry_after_secs),
                        ),
                        _ => gw.health.failed(&r.provider),
                    }
                    last_error = Some(e.into_hecate(&r.provider, &r.model));
                    continue;
                }
            };
            gw.health.succeeded(&r.provider);
            log.candidates[i].outcome = "selected".into();
            for later in &mut log.candidates[i + 1..] {
                if later.outcome == "pending" {
                    later.outcome = "unused".into();
                }
            }
            return self
                .gateway_relay(
                    &call,
                    start,
                    binding,
                    log.clone(),
                    resp,
                    Answerer {
                        provider: r.provider.clone(),
                        model: r.model.clone(),
                        traced,
                    },
                )
                .await;
        }
        let e = match last_error {
            Some(e) => e,
            None => nothing_routable(log, &cooldowns),
        };
        if e.error_type == ErrorType::ModelCapabilityRequired
            && let Some(r) = routes.first()
            && let Ok(caps) = serde_json::to_value(self.capabilities(&r.provider, &r.model).await)
        {
            return Err(e.with_detail("capabilities", caps).into());
        }
        Err(e.into())
    }

    /// Relays the chosen provider's answer; its end is recorded with the route.
    async fn gateway_relay(
        self,
        call: &GatewayCall,
        start: TraceStart,
        binding: Option<super::SessionBinding>,
        log: RouteLog,
        resp: UpstreamAnswer,
        answerer: Answerer,
    ) -> std::result::Result<Exchange, Failure> {
        let (provider, model) = (answerer.provider.clone(), answerer.model.clone());
        let target = self
            .engine
            .inner
            .model
            .client(&provider)
            .map(|c| wire_format(c.config().kind))
            .unwrap_or(call.ingress);
        let mode = RelayMode {
            ingress: call.ingress,
            target,
            stream: call.facts.stream,
            include_usage: call.facts.include_usage,
            created: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_secs())
                .unwrap_or(0),
        };
        let engine = self.engine.clone();
        let on_end: OnEnd = Box::new(move |end: ExchangeEnd| {
            Box::pin(async move {
                engine
                    .gateway()
                    .gateway_record_end(start, binding, log, answerer, end)
                    .await;
            })
        });
        let body = relay(resp, mode, on_end)
            .await
            .map_err(|e| Failure::Answered(e.into_hecate(&provider, &model)))?;
        Ok(Exchange {
            provider,
            model,
            body,
        })
    }
}

/// Opens the `chat {model}` span of a `/v1` request tried at `route`, the
/// provider `config` describes.
fn gateway_span(call: &GatewayCall, config: &ProviderConfig, route: &GatewayRoute) -> Inference {
    let requested = call.facts.model.as_deref().unwrap_or(&route.model);
    let mut traced = Inference::start(
        config.kind.as_str(),
        &route.provider,
        requested,
        &config.base_url,
    );
    traced.gateway(
        &call.request_id,
        call.ingress.as_str(),
        call.facts.stream,
        call.session_id.as_deref().or(call.agent_session.as_deref()),
    );
    if let Some(s) = &call.agent_session {
        traced.agent_session(s);
    }
    traced.routed(&route.provider, &route.model);
    traced
}

/// The error of a request whose every candidate was skipped: 429 while they
/// are all rate limited, `agent_chat.model_capability_required` when none
/// takes tools, else `route_impossible` (with a `retry_after` while all are
/// cooling down), the candidates in its details either way.
fn nothing_routable(log: &RouteLog, cooldowns: &[Duration]) -> HecateError {
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
