//! The gateway's own state, held by the engine.

use super::catalog::capability_cache;
use super::counters;
use super::routing::policy::RoutingSettings;
use super::routing::{health, limit, spend};
use crate::adapters::gateway::Upstream;
use crate::adapters::providers::ProviderClient;
use crate::domain::error::{HecateError, Result};
use std::sync::OnceLock;

/// The gateway's own state: its upstream HTTP client (built on first use, so
/// an engine that never serves `/v1` never builds it), the default model, the
/// rate limiter, the routing settings with what was learnt of each provider,
/// the cached capability records, today's spend and the process's totals.
#[derive(Debug)]
pub struct GatewayState {
    pub(super) upstream: OnceLock<Upstream>,
    pub(super) default_model: Option<String>,
    pub(super) limiter: limit::RateLimiter,
    pub(super) routing: RoutingSettings,
    pub(super) health: std::sync::Arc<health::ProviderHealth>,
    pub(super) capabilities: capability_cache::CapabilityCache,
    pub(super) spend: spend::SpendTracker,
    pub(super) counters: counters::GatewayCounters,
    /// The address this process serves HTTP on, once `hecate serve` bound it: a
    /// provider whose base URL points here is `self_referential`.
    pub(super) own_address: OnceLock<std::net::SocketAddr>,
}

impl GatewayState {
    /// State routing model-less requests to `default_model`, admitting
    /// `rate_limit_rpm` requests per minute (0: no limit), routing as `routing` says.
    pub fn new(
        default_model: Option<String>,
        rate_limit_rpm: u32,
        routing: RoutingSettings,
    ) -> Self {
        Self {
            upstream: OnceLock::new(),
            default_model,
            limiter: limit::RateLimiter::new(rate_limit_rpm),
            health: std::sync::Arc::new(health::ProviderHealth::new(
                routing.cooldown,
                routing.circuit_failures,
            )),
            routing,
            capabilities: Default::default(),
            spend: Default::default(),
            counters: Default::default(),
            own_address: OnceLock::new(),
        }
    }

    /// What is known of each provider's health, shared with the agent loop so
    /// that both skip a provider cooling down and both teach it.
    pub(crate) fn health(&self) -> std::sync::Arc<health::ProviderHealth> {
        self.health.clone()
    }

    /// The upstream caller, built on first use.
    pub(super) fn upstream(&self) -> Result<&Upstream> {
        if let Some(u) = self.upstream.get() {
            return Ok(u);
        }
        let http = ProviderClient::default_http()
            .map_err(|e| HecateError::gateway(format!("building the gateway HTTP client: {e}")))?;
        Ok(self.upstream.get_or_init(|| Upstream::new(http)))
    }
}
