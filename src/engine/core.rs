//! The engine itself: what it holds, how it starts, the services every face
//! needs (the store, the bus, the runtimes, the configuration), and the handles
//! of its areas (`gateway()`, `mcp()`, `flows()`, `memory()`, `tasks()`), each
//! of which owns its area's operations.

use super::agent_reaper::spawn_agent_reaper;
use super::bus::EventBus;
use super::deferred::{DeferredSettings, DeferredWrites};
use super::flows::FlowSettings;
use super::gateway::{GatewayState, RoutingSettings};
use super::mcp::state::McpHub;
use super::memory::{Recall, RecallSettings};
use super::owner_id::{new_owner_id, owner_is_dead};
use super::tasks::{TaskConfig, TaskRuntime};
use super::turns::events::TurnTaps;
use crate::domain::approval::{Approval, ApprovalMode};
use crate::domain::error::Result;
use crate::domain::ids::ApprovalId;
use crate::domain::ids::{RunId, SessionId, TaskId, TaskRunId};
use crate::domain::session::Guardrails;
use crate::runtimes::a2a::A2aRuntime;
use crate::runtimes::external::ExternalRuntime;
use crate::runtimes::model::ModelRuntime;
use crate::store::history::HistoryStrategy;
use crate::store::{ReconcileReport, Store};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// How long a prompted permission request waits by default.
pub const DEFAULT_APPROVAL_TIMEOUT: Duration = Duration::from_secs(300);

/// How long an owner lease lasts without renewal.
pub const LEASE_TTL_MS: i64 = 30_000;

/// Tunables of an engine.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// This process's owner id for leases.
    pub owner_id: String,
    /// Lease lifetime; renewed at a third of it while a turn runs.
    pub lease_ttl_ms: i64,
    /// How history is loaded for a turn.
    pub history: HistoryStrategy,
    /// Guardrails applied to sessions created without their own.
    pub default_guardrails: Guardrails,
    /// How permission requests are answered when a turn names no mode.
    pub approval_mode: ApprovalMode,
    /// How long a prompted permission request waits for an answer.
    pub approval_timeout: Duration,
    /// The task runtime's tunables.
    pub tasks: TaskConfig,
    /// The model the gateway (`/v1`) routes requests that name none to
    /// (`provider/model` or a bare model), from `[gateway] default_model`.
    pub gateway_default_model: Option<String>,
    /// Requests per minute the gateway admits (`[gateway] rate_limit_rpm`; 0: no limit).
    pub gateway_rate_limit_rpm: u32,
    /// How the gateway routes: deny patterns, the daily budget, cooldowns, the
    /// circuit breaker and the capabilities the config declares.
    pub gateway_routing: RoutingSettings,
    /// The agents' flows and the chat identities (client-hosted conversations).
    pub flows: FlowSettings,
    /// Long-term recall: the embeddings model, batching, the default `recall`.
    pub memory: RecallSettings,
    /// Where records stored after the answer (traces, MCP call records) are
    /// journalled, and how they are batched.
    pub deferred: DeferredSettings,
    /// The text (answer and reasoning) an external agent's turn keeps; what it
    /// streams beyond is dropped and the cut recorded as `output_capped`.
    pub external_output_cap_bytes: usize,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            owner_id: new_owner_id(),
            lease_ttl_ms: LEASE_TTL_MS,
            history: HistoryStrategy::default(),
            default_guardrails: Guardrails::default(),
            external_output_cap_bytes: 1024 * 1024,
            approval_mode: ApprovalMode::Prompt,
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            tasks: TaskConfig::default(),
            gateway_default_model: None,
            gateway_rate_limit_rpm: 0,
            gateway_routing: RoutingSettings::default(),
            flows: FlowSettings::default(),
            memory: RecallSettings::default(),
            deferred: DeferredSettings::default(),
        }
    }
}

/// The runtimes an engine drives.
#[derive(Debug, Default)]
pub struct Runtimes {
    /// Direct model turns.
    pub model: ModelRuntime,
    /// Supervised external agents, when enabled.
    pub external: Option<ExternalRuntime>,
}

impl From<ModelRuntime> for Runtimes {
    fn from(model: ModelRuntime) -> Self {
        Self {
            model,
            external: None,
        }
    }
}

/// A turn in progress in this process.
#[derive(Debug, Clone)]
pub(super) struct ActiveTurn {
    /// The run the turn stores.
    pub(super) run_id: RunId,
    pub(super) cancel: CancellationToken,
    /// Why it was stopped, when it was: the first reason given wins.
    pub(super) cancel_reason: Arc<std::sync::OnceLock<&'static str>>,
    /// The task run a Hecate Agent turn follows, once it started one.
    pub(super) backing: Arc<Mutex<Option<(TaskId, TaskRunId)>>>,
}

impl ActiveTurn {
    /// Stops the turn for `reason` (`requested`, `session_closed`, `shutdown`),
    /// which its run metric and span carry.
    pub(super) fn stop(&self, reason: &'static str) {
        let _ = self.cancel_reason.set(reason);
        self.cancel.cancel();
    }
}

/// The session engine shared by every bridge in a process.
#[derive(Clone)]
pub struct Engine {
    pub(super) inner: Arc<Inner>,
}

pub(super) struct Inner {
    pub(super) store: Arc<dyn Store>,
    pub(super) model: ModelRuntime,
    pub(super) external: Option<Arc<ExternalRuntime>>,
    /// Remote A2A agents, once attached (`Engine::attach_a2a`).
    pub(super) a2a: std::sync::OnceLock<Arc<A2aRuntime>>,
    pub(super) bus: EventBus,
    pub(super) config: EngineConfig,
    pub(super) active: Mutex<HashMap<SessionId, ActiveTurn>>,
    pub(super) waiters: Mutex<HashMap<ApprovalId, oneshot::Sender<Approval>>>,
    pub(super) turn_taps: TurnTaps,
    pub(super) mcp: Arc<McpHub>,
    pub(super) deferred: DeferredWrites,
    pub(super) tasks: TaskRuntime,
    pub(super) gateway: GatewayState,
    pub(super) recall: Recall,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("owner_id", &self.inner.config.owner_id)
            .finish()
    }
}

impl Engine {
    /// Builds an engine over `store` and `model`, and reconciles whatever dead
    /// processes left running or pending.
    pub async fn start(
        store: Arc<dyn Store>,
        runtimes: Runtimes,
        config: EngineConfig,
    ) -> Result<(Self, ReconcileReport)> {
        let deferred = DeferredWrites::start(&store, &config.deferred, &config.owner_id).await;
        let tasks = TaskRuntime::new(
            store.clone(),
            runtimes.model.clone(),
            config.tasks.clone(),
            config.owner_id.clone(),
        );
        let gateway = GatewayState::new(
            config.gateway_default_model.clone(),
            config.gateway_rate_limit_rpm,
            config.gateway_routing.clone(),
        );
        let external = runtimes.external.map(Arc::new);
        if let Some(rt) = &external {
            spawn_agent_reaper(rt);
        }
        let recall = Recall::start(store.clone(), config.memory.clone());
        let mcp_hub = McpHub::start();
        tasks.attach_mcp(mcp_hub.clone(), deferred.audit.clone());
        tasks.attach_provider_health(gateway.health());
        tasks.attach_traces(deferred.traces.clone());
        let engine = Self {
            inner: Arc::new(Inner {
                store,
                model: runtimes.model,
                external: external.clone(),
                a2a: std::sync::OnceLock::new(),
                bus: EventBus::default(),
                config,
                active: Mutex::new(HashMap::new()),
                waiters: Mutex::new(HashMap::new()),
                turn_taps: TurnTaps::default(),
                mcp: mcp_hub,
                deferred,
                tasks,
                gateway,
                recall,
            }),
        };
        let report = engine.store().reconcile(Arc::new(owner_is_dead)).await?;
        if report != ReconcileReport::default() {
            tracing::warn!(
                runs_failed = report.runs_failed,
                approvals_cancelled = report.approvals_cancelled,
                answers_kept = report.answers_kept,
                "startup reconcile closed work left by a stopped process"
            );
        }
        Ok((engine, report))
    }

    /// Shuts down every supervised agent and stores the queued audit records
    /// (process exit).
    pub async fn shutdown(&self) {
        for turn in self.active().values() {
            turn.stop("shutdown");
        }
        if let Some(rt) = &self.inner.external {
            rt.close_all().await;
        }
        self.inner.deferred.close().await;
        self.memory().flush_recall().await;
    }

    /// An engine over a fresh in-memory store (tests and throwaway tools).
    pub async fn in_memory(runtimes: Runtimes) -> Result<Self> {
        let store = crate::store::SqliteStore::open_in_memory()?;
        Ok(
            Self::start(Arc::new(store), runtimes, EngineConfig::default())
                .await?
                .0,
        )
    }

    /// Makes the remote A2A agents of `runtime` targets of this engine (once;
    /// a second call is ignored).
    pub fn attach_a2a(&self, runtime: A2aRuntime) {
        if self.inner.a2a.set(Arc::new(runtime)).is_err() {
            tracing::warn!("remote A2A agents were already attached");
        }
    }

    /// The remote A2A agents' runtime, when attached.
    pub(super) fn a2a(&self) -> Option<&Arc<A2aRuntime>> {
        self.inner.a2a.get()
    }

    /// The event bus, for bridges that stream engine events.
    pub fn bus(&self) -> &EventBus {
        &self.inner.bus
    }

    /// The model runtime (its providers), for readiness reporting.
    pub fn model_runtime(&self) -> &ModelRuntime {
        &self.inner.model
    }

    /// The durable task runtime.
    pub fn tasks(&self) -> &TaskRuntime {
        &self.inner.tasks
    }

    /// The model gateway: routing, `/v1` exchanges, recorded chat sessions and
    /// traces, provider status and model capabilities.
    pub fn gateway(&self) -> Gateway<'_> {
        Gateway { engine: self }
    }

    /// The hub's upstream MCP servers: the pool, the aggregated catalog,
    /// proxied tool calls, resources, prompts and subscriptions.
    pub fn mcp(&self) -> Mcp<'_> {
        Mcp { engine: self }
    }

    /// Client-hosted flows: chat identities and the conversations a flow runs.
    pub fn flows(&self) -> Flows<'_> {
        Flows { engine: self }
    }

    /// Long-term recall: its status and search.
    pub fn memory(&self) -> Memory<'_> {
        Memory { engine: self }
    }

    /// External agents: the adapter catalog, installs and probes, and the
    /// supervised processes.
    pub fn agents(&self) -> Agents<'_> {
        Agents { engine: self }
    }

    /// Approvals and grants: listing and deciding approvals, operator-made
    /// grants, and their retention.
    pub fn approvals(&self) -> Approvals<'_> {
        Approvals { engine: self }
    }

    /// The engine's configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.inner.config
    }

    /// The store's identity and health.
    pub async fn store_health(&self) -> Result<crate::store::StoreHealth> {
        self.store().health().await
    }

    /// Number of turns running in this process.
    pub fn running_turns(&self) -> usize {
        self.active().len()
    }

    pub(super) fn active(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, ActiveTurn>> {
        self.inner.active.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn waiters(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<ApprovalId, oneshot::Sender<Approval>>> {
        self.inner.waiters.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The upstream MCP hub's state (pool, catalogs, subscriptions).
    pub(crate) fn mcp_hub(&self) -> &McpHub {
        &self.inner.mcp
    }

    /// The store every engine operation reads and writes.
    pub(super) fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }
}

/// The model gateway's operations, from [`Engine::gateway`].
#[derive(Clone, Copy)]
pub struct Gateway<'e> {
    pub(super) engine: &'e Engine,
}

/// The upstream MCP hub's operations, from [`Engine::mcp`].
#[derive(Clone, Copy)]
pub struct Mcp<'e> {
    pub(super) engine: &'e Engine,
}

/// The client-hosted flows' operations, from [`Engine::flows`].
#[derive(Clone, Copy)]
pub struct Flows<'e> {
    pub(super) engine: &'e Engine,
}

/// Long-term recall's operations, from [`Engine::memory`].
#[derive(Clone, Copy)]
pub struct Memory<'e> {
    pub(super) engine: &'e Engine,
}

/// The approvals' and grants' operations, from [`Engine::approvals`].
#[derive(Clone, Copy)]
pub struct Approvals<'e> {
    pub(super) engine: &'e Engine,
}

/// The external agents' operations, from [`Engine::agents`].
#[derive(Clone, Copy)]
pub struct Agents<'e> {
    pub(super) engine: &'e Engine,
}
