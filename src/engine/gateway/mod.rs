//! The engine's half of the model gateway (`/v1`): which provider answers a
//! request (`route.rs`), the routable model list, and the exchange itself —
//! the body prepared for the provider, the upstream call and the relay of its
//! answer, with the end of every exchange (outcome and usage) logged and
//! recorded (`record.rs`: the chat session a request names, the trace of every
//! request), the recorded sessions and traces read back (`chats.rs`), and the
//! local rate limit on `/v1` (`limit.rs`). The exchange (`exchange.rs`) tries
//! the route's candidates in turn, each first checked (`candidates.rs`, shared
//! with model turns) against the routing
//! settings (`policy.rs`), the providers' cooldowns (`health.rs`), today's
//! spend (`budget.rs`) and the models' capabilities (`capabilities.rs`, with the
//! tool-calling probe in `probe.rs`); `counters.rs` keeps the process's totals
//! for the system stats, and `sync.rs` shares cooldowns through the store. The formats are
//! `crate::model_wire`'s; the upstream call and the relay `adapters::gateway`'s.

pub mod candidates;
pub mod catalog;
pub mod conversations;
pub mod counters;
pub mod exchange;
pub mod record;
pub mod routing;
mod state;

pub use catalog::capabilities::CapabilityOverride;
pub use catalog::probe::ToolCallingProbe;
pub use record::{HISTORY_MISMATCH, RouteLog, SessionBinding, TraceStart};
pub use routing::policy::RoutingSettings;
pub use routing::route::{
    DISCOVERY_TIMEOUT, GatewayRoute, ListedModel, MODEL_AMBIGUOUS, MODEL_NOT_FOUND, MODEL_REQUIRED,
    ProviderModels,
};
pub use state::GatewayState;

use crate::domain::error::{ErrorType, HecateError, Result};
use crate::engine::Gateway;
use crate::model_wire::{RequestFacts, WireFormat};
use serde_json::Value;

/// Detail `reason` of a request body the gateway refuses (or cannot translate).
pub const INVALID_BODY: &str = "invalid_request";

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

impl<'e> Gateway<'e> {
    /// The provider and model a chat or agent turn runs on. A bare model that
    /// configured providers declare goes to the first of the gateway's route
    /// candidates that is not cooling down (the order `/v1` tries them in), so a
    /// turn and a `/v1` request for the same model resolve alike; a
    /// `provider/model` or a pinned provider resolve as the model runtime says; a
    /// bare model no provider declares or lists is `model_not_configured` with
    /// `suggested_models` and each provider's readiness.
    pub(crate) async fn route_model(
        self,
        provider: Option<&str>,
        model: &str,
    ) -> Result<crate::runtimes::model::ModelTarget> {
        let bare = model.trim();
        let pinned = provider.is_some_and(|p| !p.trim().is_empty());
        if !pinned && !bare.is_empty() && !bare.contains('/') {
            // The candidates `/v1` would try: what providers declare, else what
            // they list when asked (discovery).
            let model_runtime = &self.engine.inner.model;
            match routing::route::route_candidates(model_runtime, Some(bare), None).await {
                Ok(routes) => {
                    let health = self.engine.inner.gateway.health();
                    let chosen = routes
                        .iter()
                        .find(|r| health.blocked(&r.provider).is_none())
                        .or(routes.first());
                    if let Some(r) = chosen {
                        return model_runtime.resolve(Some(&r.provider), &r.model);
                    }
                }
                // No provider declares or lists it: the seed's 422, its
                // `suggested_models` from the route, with each provider's
                // readiness as the providers status reports it.
                Err(e) if e.error_type == ErrorType::ModelNotConfigured => {
                    return Err(self.with_readiness(e).await);
                }
                Err(_) => {}
            }
        }
        self.engine.inner.model.resolve(provider, model)
    }

    /// `e` with each provider's routing readiness (`providers`: name,
    /// `routing_ready`, `routing_blocked_reason`), probed as
    /// `GET /hecate/v1/providers/status` probes it.
    async fn with_readiness(self, e: HecateError) -> HecateError {
        let rows: Vec<serde_json::Value> = self
            .provider_status()
            .await
            .into_iter()
            .map(|p| {
                serde_json::json!({
                    "provider": p.name,
                    "routing_ready": p.routing_ready,
                    "routing_blocked_reason": p.routing_blocked_reason,
                })
            })
            .collect();
        e.with_detail("providers", rows)
    }

    /// What this process's gateway answered since it started.
    pub fn totals(self) -> counters::GatewayTotals {
        self.engine.inner.gateway.counters.totals()
    }

    /// The local rate limiter's decision for one `/v1` request.
    pub fn admit(self) -> routing::limit::RateDecision {
        self.engine.inner.gateway.limiter.check()
    }

    /// What routing knows about every configured provider; providers that
    /// declare no models are asked for their list when `discover` is set.
    pub async fn providers(self, discover: bool) -> Vec<ProviderModels> {
        routing::route::providers_of(&self.engine.inner.model, discover).await
    }

    /// Every routable model id (`provider/model`, and bare ids that are
    /// unambiguous), with its effective capabilities and whether it is the
    /// default model.
    pub async fn models(self) -> Vec<ListedModel> {
        let mut models = routing::route::listing(&self.providers(true).await);
        let pairs: Vec<(String, String)> = models
            .iter()
            .map(|m| (m.provider.clone(), m.model.clone()))
            .collect();
        let caps = self.capabilities_of(&pairs).await;
        let default = self
            .engine
            .inner
            .gateway
            .default_model
            .as_deref()
            .map(str::trim);
        for (m, c) in models.iter_mut().zip(caps) {
            m.capabilities = Some(c);
            m.default =
                default.is_some_and(|d| d == m.id || d == format!("{}/{}", m.provider, m.model));
        }
        models
    }

    /// Resolves a request's model (or the default model) to a provider.
    pub async fn route(self, requested: Option<&str>) -> Result<GatewayRoute> {
        let default = self.engine.inner.gateway.default_model.as_deref();
        routing::route::route(&self.engine.inner.model, requested, default).await
    }
}
