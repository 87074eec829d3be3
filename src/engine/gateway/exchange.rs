//! One gateway exchange: the request's route candidates, each checked before it
//! is tried (`candidates.rs`), then tried in order — a provider that answers 429, 5xx, 401/403
//! or cannot be reached is recorded as failed and the next candidate is tried —
//! and the first answer relayed in the client's format. The route (its reason
//! and every candidate's outcome) goes on the request's trace.

use super::candidates::{failover_reason, learn_failure, nothing_routable};
use super::record::{Answerer, RouteLog, TraceStart};
use super::routing::route::{self, GatewayRoute};
use super::{GatewayCall, INVALID_BODY};
use crate::adapters::gateway::{RelayMode, UpstreamAnswer, relay, wire_format};
use crate::adapters::providers::ProviderConfig;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::engine::Gateway;
use crate::model_wire::requests::prepare::prepare_body;
use crate::model_wire::requests::transcript::apply_system_prompt;
use crate::model_wire::{Exchange, ExchangeEnd, OnEnd};
use crate::telemetry::spans::{Inference, InferenceEnd};
use std::time::{SystemTime, UNIX_EPOCH};
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
        let (candidates, cooldowns) = self
            .check_candidates(&call.namespace, call.facts.has_tools, &routes)
            .await;
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
            let sent_at = std::time::Instant::now();
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
                    learn_failure(&gw.health, &r.provider, &e);
                    last_error = Some(e.into_hecate(&r.provider, &r.model));
                    continue;
                }
            };
            gw.health.succeeded(&r.provider);
            gw.health.answered_in(&r.provider, sent_at.elapsed());
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
