//! The engine's side of external agents: which adapters exist, turns through the
//! external runtime, closing native sessions, and adapter listing and probing.

use super::Agents;
use crate::adapters::acp::agent::auth::{self, AuthStatus};
use crate::adapters::acp::agent::install::install_managed;
use crate::adapters::acp::agent::launcher::{self, Availability};
use crate::adapters::acp::{AgentProbe, ProbeOptions, probe};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::runtimes::external::GatewayAccess;
use crate::runtimes::{TurnContext, TurnEnd, TurnReport};
use crate::telemetry::metrics;
use serde::Serialize;
use std::collections::HashMap;

/// One catalog agent as `adapters list` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct AdapterStatus {
    /// Adapter id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Direct command.
    pub command: String,
    /// Managed npm package, when any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// Where it was found and at which version.
    #[serde(flatten)]
    pub availability: Availability,
    /// `available` or `missing`.
    pub status: &'static str,
    /// Tested version range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tested_range: Option<String>,
    /// How to authenticate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_hint: Option<String>,
    /// `ok`, `unauthenticated`, `billing` or `unknown`, from env vars and login
    /// files (the agent is not started).
    pub auth_status: AuthStatus,
    /// Why the status is not `ok`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_error: Option<String>,
    /// Always `external`: the agent bills its own provider.
    pub cost_mode: String,
    /// Built-in or from the user's config dir.
    pub origin: String,
}

/// What the catalog says about an adapter, for rendering its messages.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AdapterFacts {
    /// Display name.
    pub name: String,
    /// How Hecate drives it (`acp`).
    pub driver_kind: String,
    /// How its cost is known (`external`: only when the agent reports it).
    pub cost_mode: String,
}

impl<'e> Agents<'e> {
    /// How many supervised agent processes are running now.
    pub async fn processes(self) -> usize {
        match &self.engine.inner.external {
            Some(rt) => rt.live_count().await,
            None => 0,
        }
    }

    /// Catalog facts of the registered adapters among `ids`.
    pub(crate) fn adapter_facts<'a>(
        self,
        ids: impl Iterator<Item = &'a str>,
    ) -> HashMap<String, AdapterFacts> {
        let Some(rt) = &self.engine.inner.external else {
            return HashMap::new();
        };
        let mut facts = HashMap::new();
        for id in ids {
            if facts.contains_key(id) {
                continue;
            }
            if let Some(m) = rt.catalog().get(id) {
                facts.insert(
                    id.to_string(),
                    AdapterFacts {
                        name: m.name.clone(),
                        driver_kind: "acp".into(),
                        cost_mode: m.cost_mode.clone(),
                    },
                );
            }
        }
        facts
    }

    /// Tells agents opted into `[agents.gateway]` that Hecate's `/v1` is at
    /// `base_url` (`http://HOST:PORT`) and takes `token` (when one is set).
    pub fn point_at_gateway(self, base_url: &str, token: Option<&str>) {
        if let Some(rt) = &self.engine.inner.external {
            rt.set_gateway(GatewayAccess::new(base_url, token));
        }
    }

    /// The command the catalog starts adapter `adapter_id` with, when it knows it.
    pub(crate) fn adapter_command(self, adapter_id: &str) -> Option<String> {
        let rt = self.engine.inner.external.as_ref()?;
        rt.catalog().get(adapter_id).map(|m| m.command.clone())
    }

    /// `agent_chat.adapter_not_found` unless `adapter_id` is registered.
    pub(crate) fn check_adapter(self, adapter_id: &str) -> Result<()> {
        match &self.engine.inner.external {
            Some(rt) if rt.has_adapter(adapter_id) => Ok(()),
            Some(rt) => Err(HecateError::new(
                ErrorType::AdapterNotFound,
                format!("external agent adapter {adapter_id:?} is not registered"),
            )
            .with_detail("adapters", rt.catalog().ids())),
            None => Err(HecateError::new(
                ErrorType::AdapterNotFound,
                "external agents are not enabled in this process",
            )),
        }
    }

    pub(crate) async fn run_external(self, ctx: TurnContext) -> TurnReport {
        match &self.engine.inner.external {
            Some(rt) => rt.run(ctx).await,
            None => TurnReport::ended(TurnEnd::Failed(HecateError::new(
                ErrorType::AdapterNotFound,
                "external agents are not enabled in this process",
            ))),
        }
    }

    /// Every catalog agent with its availability.
    pub async fn list(self) -> Result<Vec<AdapterStatus>> {
        let Some(rt) = &self.engine.inner.external else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        let home = rt.base_env().get("HOME").map(std::path::PathBuf::from);
        for entry in rt.catalog().entries() {
            let m = &entry.manifest;
            let env = rt.env_for(m);
            let availability = launcher::availability(m, rt.launcher(), &env).await;
            let auth = auth::check(m, &env, home.as_deref());
            out.push(AdapterStatus {
                id: m.id.clone(),
                name: m.name.clone(),
                command: m.command.clone(),
                package: m.package.clone(),
                status: if availability.available {
                    "available"
                } else {
                    "missing"
                },
                availability,
                tested_range: m.tested_range.clone(),
                auth_hint: m.auth.hint.clone(),
                auth_status: auth.status,
                auth_error: auth.error,
                cost_mode: m.cost_mode.clone(),
                origin: format!("{:?}", entry.origin).to_lowercase(),
            });
        }
        Ok(out)
    }

    /// Installs or refreshes `adapter_id`'s managed launcher (its npm package in
    /// Hecate's cache, staged and renamed into place) and returns the updated
    /// catalog row.
    pub async fn install(self, adapter_id: &str) -> Result<AdapterStatus> {
        self.check_adapter(adapter_id)?;
        let Some(rt) = &self.engine.inner.external else {
            return Err(HecateError::new(ErrorType::AdapterNotFound, adapter_id));
        };
        let Some(m) = rt.catalog().get(adapter_id) else {
            return Err(HecateError::new(ErrorType::AdapterNotFound, adapter_id));
        };
        install_managed(m, rt.launcher())
            .await
            .map_err(|e| e.into_hecate(adapter_id))?;
        self.list()
            .await?
            .into_iter()
            .find(|a| a.id == adapter_id)
            .ok_or_else(|| HecateError::new(ErrorType::AdapterNotFound, adapter_id))
    }

    /// Spawns an agent in a temporary workspace and classifies whether it is ready.
    pub async fn probe(self, adapter_id: &str) -> Result<AgentProbe> {
        self.check_adapter(adapter_id)?;
        let Some(rt) = &self.engine.inner.external else {
            return Err(HecateError::new(ErrorType::AdapterNotFound, adapter_id));
        };
        let Some(m) = rt.catalog().get(adapter_id) else {
            return Err(HecateError::new(ErrorType::AdapterNotFound, adapter_id));
        };
        let extra: Vec<(String, String)> = rt
            .env_for(m)
            .into_iter()
            .filter(|(k, _)| !rt.base_env().contains_key(k))
            .collect();
        let opts = ProbeOptions {
            launcher: rt.launcher().clone(),
            acp: rt.options().clone(),
            base_env: rt.base_env().clone(),
            extra_env: extra,
            limit: crate::adapters::acp::agent::probe::PROBE_LIMIT,
        };
        let report = probe(m, &opts).await;
        let name = |v: serde_json::Result<serde_json::Value>| {
            v.ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        };
        metrics::probe(
            adapter_id,
            &name(serde_json::to_value(report.status)),
            &name(serde_json::to_value(report.stage)),
        );
        Ok(report)
    }
}
