//! The engine's half of the model gateway (`/v1`): which provider answers a
//! request (`route.rs`), the routable model list, and the exchange itself —
//! the body prepared for the provider, the upstream call and the relay of its
//! answer, with the end of every exchange (outcome and usage) logged and
//! recorded (`record.rs`: the chat session a request names, the trace of every
//! request), the recorded sessions and traces read back (`chats.rs`), and the
//! local rate limit on `/v1` (`limit.rs`). The wire work is `adapters::gateway`'s; the types a bridge needs are
//! re-exported here.

pub mod chats;
pub mod limit;
pub mod providers;
pub mod record;
pub mod route;

pub use crate::adapters::gateway::models::{ListedModel, anthropic_list, openai_list};
pub use crate::adapters::gateway::{
    ByteStream, Exchange, ExchangeBody, ExchangeEnd, ExchangeOutcome, RequestFacts, TokenUsage,
    TranslateError, WireFormat,
};
pub use record::{HISTORY_MISMATCH, SessionBinding, TraceStart};
pub use route::{
    DISCOVERY_TIMEOUT, GatewayRoute, MODEL_AMBIGUOUS, MODEL_NOT_FOUND, MODEL_REQUIRED,
    ProviderModels,
};

use super::Engine;
use crate::adapters::gateway::{RelayMode, Upstream, prepare_body, relay};
/// How an upstream provider failed, before it is classified into a `HecateError`.
pub use crate::adapters::providers::ProviderError;
use crate::adapters::providers::{ProviderClient, ProviderConfig};
use crate::adapters::telemetry::spans::{Inference, InferenceEnd};
use crate::domain::error::{HecateError, Result};
use serde_json::Value;
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};
use tracing::Instrument as _;

/// Detail `reason` of a request body the gateway refuses (or cannot translate).
pub const INVALID_BODY: &str = "invalid_request";

/// The gateway's own state: its upstream HTTP client (built on first use, so
/// an engine that never serves `/v1` never builds it) and the default model.
#[derive(Debug)]
pub struct GatewayState {
    upstream: OnceLock<Upstream>,
    default_model: Option<String>,
    limiter: limit::RateLimiter,
}

impl GatewayState {
    /// State routing model-less requests to `default_model`, admitting
    /// `rate_limit_rpm` requests per minute (0: no limit).
    pub fn new(default_model: Option<String>, rate_limit_rpm: u32) -> Self {
        Self {
            upstream: OnceLock::new(),
            default_model,
            limiter: limit::RateLimiter::new(rate_limit_rpm),
        }
    }

    /// The upstream caller, built on first use.
    fn upstream(&self) -> Result<&Upstream> {
        if let Some(u) = self.upstream.get() {
            return Ok(u);
        }
        let http = ProviderClient::default_http()
            .map_err(|e| HecateError::gateway(format!("building the gateway HTTP client: {e}")))?;
        Ok(self.upstream.get_or_init(|| Upstream::new(http)))
    }
}

/// One client request for the gateway.
#[derive(Debug, Clone)]
pub struct GatewayCall {
    /// The client's wire format.
    pub ingress: WireFormat,
    /// The request body as the client sent it.
    pub body: Value,
    /// What was read from it (model, streaming).
    pub facts: RequestFacts,
    /// The client's `anthropic-version` / `anthropic-beta` headers.
    pub anthropic_headers: Vec<(String, String)>,
    /// The request's correlation id (`X-Request-Id`).
    pub request_id: String,
    /// The request's trace id (`X-Trace-Id`).
    pub trace_id: String,
    /// Namespace of the serving process (sessions and traces live in it).
    pub namespace: String,
    /// The chat session to record the exchange in, when the client named one.
    pub session_id: Option<String>,
    /// The session whose supervised agent makes this call
    /// (`X-Hecate-Agent-Session`): the trace is filed under it, with no
    /// transcript matching.
    pub agent_session: Option<String>,
}

impl Engine {
    /// The local rate limiter's decision for one `/v1` request.
    pub fn gateway_admit(&self) -> limit::RateDecision {
        self.inner.gateway.limiter.check()
    }

    /// What routing knows about every configured provider; providers that
    /// declare no models are asked for their list when `discover` is set.
    pub async fn gateway_providers(&self, discover: bool) -> Vec<ProviderModels> {
        route::providers_of(&self.inner.model, discover).await
    }

    /// Every routable model id (`provider/model`, and bare ids that are unambiguous).
    pub async fn gateway_models(&self) -> Vec<ListedModel> {
        route::listing(&self.gateway_providers(true).await)
    }

    /// Resolves a request's model (or the default model) to a provider.
    pub async fn gateway_route(&self, requested: Option<&str>) -> Result<GatewayRoute> {
        let default = self.inner.gateway.default_model.as_deref();
        route::route(&self.inner.model, requested, default).await
    }

    /// Routes `call`, sends it to the provider in the provider's format and
    /// relays the answer in the client's format; the exchange is recorded when it
    /// ends (its trace, and its chat session when it names one), a failure before
    /// the answer as a failed trace.
    pub async fn gateway_exchange(&self, call: GatewayCall) -> Result<Exchange> {
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
        match self.gateway_answer(call, start.clone()).await {
            Ok(exchange) => Ok(exchange),
            Err(Failure::Early(e)) => {
                self.gateway_record_failure(&start, &e).await;
                Err(e)
            }
            Err(Failure::Answered(e)) => Err(e),
        }
    }

    /// The exchange itself; a failure says whether the end was already recorded.
    async fn gateway_answer(
        &self,
        call: GatewayCall,
        start: TraceStart,
    ) -> std::result::Result<Exchange, Failure> {
        let binding = match &call.session_id {
            Some(id) => Some(
                self.gateway_bind_session(&call.namespace, id, call.ingress, &call.body)
                    .await?,
            ),
            None => None,
        };
        let route = self.gateway_route(call.facts.model.as_deref()).await?;
        let Some(client) = self
            .inner
            .model
            .providers()
            .find(|c| c.config().name == route.provider)
        else {
            return Err(HecateError::gateway(format!(
                "provider {:?} disappeared while routing",
                route.provider
            ))
            .into());
        };
        let config = client.config();
        let target = WireFormat::of_provider(config.kind);
        let body = prepare_body(call.ingress, target, &call.body, &route.model).map_err(|e| {
            HecateError::invalid(e.to_string())
                .with_detail("reason", INVALID_BODY)
                .with_detail("provider", route.provider.clone())
        })?;
        let fail = |e: ProviderError| e.into_hecate(&route.provider, &route.model);
        let traced = gateway_span(&call, config, &route);
        let sent = self
            .inner
            .gateway
            .upstream()?
            .send(config, &body, &call.anthropic_headers)
            .instrument(traced.span().clone())
            .await;
        let resp = match sent {
            Ok(r) => r,
            Err(e) => {
                let (kind, message) = (e.error_type(), e.to_string());
                traced.gateway_end("failed", None);
                traced.finish(InferenceEnd {
                    error: Some((&kind, &message)),
                    ..Default::default()
                });
                return Err(fail(e).into());
            }
        };
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
        let (engine, provider, model) = (self.clone(), route.provider.clone(), route.model.clone());
        let on_end: crate::adapters::gateway::OnEnd = Box::new(move |end: ExchangeEnd| {
            Box::pin(async move {
                engine
                    .gateway_record_end(start, binding, provider, model, end, traced)
                    .await;
            })
        });
        let body = relay(resp, mode, on_end)
            .await
            .map_err(|e| Failure::Answered(fail(e)))?;
        Ok(Exchange {
            provider: route.provider,
            model: route.model,
            body,
        })
    }
}

/// Opens the `chat {model}` span of a `/v1` request routed to `route` at the
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
