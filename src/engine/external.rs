//! The engine's side of external agents: which adapters exist, turns through the
//! external runtime, closing native sessions, and adapter listing and probing.

use super::Agents;
use crate::adapters::acp::agent::auth::{self, AuthStatus};
use crate::adapters::acp::agent::catalog::{ManifestError, ManifestOrigin};
use crate::adapters::acp::agent::install::{install_managed_with, package_spec};
use crate::adapters::acp::agent::launcher::{self, Availability};
use crate::adapters::acp::{AgentProbe, ProbeOptions, probe};
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::SessionId;
use crate::runtimes::external::{GatewayAccess, InstallJob, InstallTicket, LiveProcess};
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
    /// `builtin`, or `user` (from the user's config dir).
    pub origin: String,
    /// The user manifest's file, for `user` adapters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest_path: Option<std::path::PathBuf>,
    /// How Hecate drives it: `acp` (a supervised process) or `a2a` (a remote
    /// agent declared in `[a2a_agents]`, whose `command` is its card URL).
    pub driver_kind: String,
    /// Why a remote agent is `unavailable` (`card_timeout: …`), when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unavailable_reason: Option<String>,
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
        let rt = self.engine.inner.external.as_ref();
        let remote = self.engine.a2a();
        let mut facts = HashMap::new();
        for id in ids {
            if facts.contains_key(id) {
                continue;
            }
            if let Some(name) = remote.and_then(|r| r.name_of(id)) {
                facts.insert(
                    id.to_string(),
                    AdapterFacts {
                        name,
                        driver_kind: "a2a".into(),
                        cost_mode: "external".into(),
                    },
                );
            } else if let Some(m) = rt.and_then(|rt| rt.catalog().get(id)) {
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
        if self.is_remote(adapter_id) {
            return Ok(());
        }
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

    /// Whether `adapter_id` is a remote A2A agent (`[a2a_agents]`).
    pub(crate) fn is_remote(self, adapter_id: &str) -> bool {
        self.engine.a2a().is_some_and(|r| r.has_agent(adapter_id))
    }

    pub(crate) async fn run_external(self, ctx: TurnContext) -> TurnReport {
        if let crate::runtimes::TurnTarget::External { adapter_id, .. } = &ctx.target {
            if let Some(remote) = self.engine.a2a().filter(|r| r.has_agent(adapter_id)) {
                return remote.run(ctx).await;
            }
            // The stored choices, applied if the agent (re)starts for this turn.
            self.restore_choices(&ctx.session_id, adapter_id).await;
        }
        match &self.engine.inner.external {
            Some(rt) => rt.run(ctx).await,
            None => TurnReport::ended(TurnEnd::Failed(HecateError::new(
                ErrorType::AdapterNotFound,
                "external agents are not enabled in this process",
            ))),
        }
    }

    /// Every catalog agent with its availability: the ACP adapters, then the
    /// remote A2A agents (their cards fetched when not cached).
    pub async fn list(self) -> Result<Vec<AdapterStatus>> {
        let mut out = self.list_acp().await;
        if let Some(remote) = self.engine.a2a() {
            out.extend(remote.status().await.into_iter().map(remote_row));
        }
        Ok(out)
    }

    /// The ACP adapters of the catalog with their availability.
    async fn list_acp(self) -> Vec<AdapterStatus> {
        let Some(rt) = &self.engine.inner.external else {
            return Vec::new();
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
                origin: match &entry.origin {
                    ManifestOrigin::Builtin => "builtin".to_string(),
                    ManifestOrigin::User { .. } => "user".to_string(),
                },
                manifest_path: match &entry.origin {
                    ManifestOrigin::Builtin => None,
                    ManifestOrigin::User { path } => Some(path.clone()),
                },
                driver_kind: "acp".into(),
                unavailable_reason: None,
            });
        }
        out
    }

    /// Installs or refreshes `adapter_id`'s managed launcher (its npm package in
    /// Hecate's cache, staged and renamed into place) and returns the updated
    /// catalog row. Refused (`conflict`) while another install of it runs in
    /// this process.
    pub async fn install(self, adapter_id: &str) -> Result<AdapterStatus> {
        let ticket = self.begin_install(adapter_id)?;
        self.run_install(ticket).await
    }

    /// Starts [`Agents::install`] in the background and answers its job, which
    /// [`Agents::install_job`] then follows stage by stage. Unknown adapters and
    /// ones without a package are refused at once, as is a second install of
    /// the same adapter while one runs (`conflict`).
    pub fn start_install(self, adapter_id: &str) -> Result<InstallJob> {
        let ticket = self.begin_install(adapter_id)?;
        let engine = self.engine.clone();
        let id = ticket.adapter_id().to_string();
        tokio::spawn(async move {
            if let Err(e) = engine.agents().run_install(ticket).await {
                tracing::warn!(adapter_id = %id, error = %e, "managed install failed");
            }
        });
        self.install_job(adapter_id)
            .ok_or_else(|| HecateError::new(ErrorType::AdapterNotFound, adapter_id))
    }

    /// The newest install of `adapter_id` in this process, running or ended.
    pub fn install_job(self, adapter_id: &str) -> Option<InstallJob> {
        self.engine
            .inner
            .external
            .as_ref()?
            .installs()
            .get(adapter_id)
    }

    /// Checks `adapter_id` can be installed and registers its install.
    fn begin_install(self, adapter_id: &str) -> Result<InstallTicket> {
        self.check_adapter(adapter_id)?;
        let Some(rt) = &self.engine.inner.external else {
            return Err(HecateError::new(ErrorType::AdapterNotFound, adapter_id));
        };
        let Some(m) = rt.catalog().get(adapter_id) else {
            return Err(HecateError::new(ErrorType::AdapterNotFound, adapter_id));
        };
        package_spec(m).map_err(|e| e.into_hecate(adapter_id))?;
        rt.installs().begin(adapter_id).map_err(|running| {
            HecateError::new(
                ErrorType::Conflict,
                format!(
                    "an install of {adapter_id} is already running (since {})",
                    running.started_at
                ),
            )
            .with_operator_action(format!(
                "Wait for it to end: GET /hecate/v1/agent-adapters/{adapter_id}/install shows its progress."
            ))
            .with_detail("install_id", running.id.clone())
            .with_detail("adapter_id", adapter_id)
        })
    }

    /// Runs a registered install to its end, recording each stage and the outcome.
    async fn run_install(self, ticket: InstallTicket) -> Result<AdapterStatus> {
        let adapter_id = ticket.adapter_id().to_string();
        let Some(m) = self
            .engine
            .inner
            .external
            .as_ref()
            .and_then(|rt| rt.catalog().get(&adapter_id).map(|m| (rt, m)))
        else {
            let e = HecateError::new(ErrorType::AdapterNotFound, adapter_id);
            ticket.finish(Err(&e));
            return Err(e);
        };
        let (rt, m) = m;
        let installed = install_managed_with(m, rt.launcher(), &|stage| ticket.stage(stage))
            .await
            .map_err(|e| e.into_hecate(&adapter_id));
        let row = match installed {
            Ok(_) => self.list().await.and_then(|rows| {
                rows.into_iter()
                    .find(|a| a.id == adapter_id)
                    .ok_or_else(|| HecateError::new(ErrorType::AdapterNotFound, &adapter_id))
            }),
            Err(e) => Err(e),
        };
        ticket.finish(row.as_ref().map(|_| ()));
        row
    }

    /// The manifests that did not load when the catalog was read.
    pub fn manifest_errors(self) -> Vec<ManifestError> {
        self.engine
            .inner
            .external
            .as_ref()
            .map(|rt| rt.manifest_errors().to_vec())
            .unwrap_or_default()
    }

    /// The supervised agent processes running now whose sessions belong to
    /// `namespace`, oldest first, each with its session's title.
    pub async fn live_processes(self, namespace: &str) -> Vec<(LiveProcess, String)> {
        let Some(rt) = &self.engine.inner.external else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for p in rt.processes().await {
            if let Ok(session) = self.engine.get_session(namespace, &p.session_id).await {
                out.push((p, session.title));
            }
        }
        out
    }

    /// How long an unused agent process lives before Hecate stops it.
    pub fn process_idle_limit(self) -> Option<std::time::Duration> {
        self.engine.inner.external.as_ref()?.process_idle()
    }

    /// Stops the agent process of `session_id` (its process group and all; a
    /// running turn is stopped first), keeping the session: its next prompt
    /// starts a new process and reattaches. `not_found` when the session has no
    /// live process in `namespace`.
    pub async fn kill_process(
        self,
        namespace: &str,
        session_id: &SessionId,
    ) -> Result<(LiveProcess, String)> {
        let not_found = || HecateError::not_found("agent process", session_id.as_str());
        let Some(p) = self
            .live_processes(namespace)
            .await
            .into_iter()
            .find(|(p, _)| &p.session_id == session_id)
        else {
            return Err(not_found());
        };
        self.engine.close_session(namespace, session_id).await?;
        Ok(p)
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

/// A remote A2A agent as a catalog row: `available` when its card reads,
/// else `unavailable` with the reason.
fn remote_row(r: crate::runtimes::a2a::RemoteStatus) -> AdapterStatus {
    AdapterStatus {
        id: r.id,
        name: r.name,
        command: r.card_url,
        package: None,
        availability: Availability {
            available: r.available,
            path: None,
            version: None,
            version_outside_range: false,
            source: None,
        },
        status: if r.available {
            "available"
        } else {
            "unavailable"
        },
        tested_range: None,
        auth_hint: None,
        auth_status: AuthStatus::Unknown,
        auth_error: None,
        cost_mode: "external".into(),
        origin: "user".into(),
        manifest_path: None,
        driver_kind: "a2a".into(),
        unavailable_reason: r
            .reason
            .map(|(reason, message)| format!("{reason}: {message}")),
    }
}
