//! The session engine: the only place that decides. Sessions, turns, the busy rule,
//! guardrails, owner leases, runtime switching, event fan-out and reconciliation.
//! It knows no wire format.

mod agent_chat;
mod agent_reaper;
mod approvals;
mod batch_writer;
pub mod bus;
pub mod deferred;
pub mod diffs;
mod emit;
mod external;
pub mod flows;
pub mod gateway;
pub mod grants;
pub mod guardrails;
pub mod mcp;
pub mod memory;
pub mod owner;
mod owner_id;
mod queries;
mod sessions;
pub mod targets;
pub mod tasks;
mod turns;
pub mod workspace;

pub use crate::adapters::acp::{AgentProbe, ProbeStatus};
pub use crate::adapters::git::TurnFileChange;
/// The spans of calls made to Hecate (HTTP requests, MCP calls) and their ids,
/// for the bridges.
pub use crate::adapters::telemetry::spans::{
    http_request, http_response, mcp_server_call, mcp_server_end,
};
pub use crate::adapters::telemetry::{SpanIds, span_ids};
pub use external::{AdapterFacts, AdapterStatus};
pub use mcp::{
    ApprovalPrompter, MAX_TOOL_NAME, McpCallOptions, McpCatalog, McpChange, ServerSpec, ToolPolicy,
    UPSTREAM_META_KEY, UpstreamFailure, UpstreamNotice, UpstreamServer, UpstreamTool, expose_names,
};
pub use sessions::{CreateSession, Transcript};
pub use turns::events::TurnEvents;
pub use turns::{SendMessage, TurnHandle, TurnResult, validate_prompt};

use crate::domain::approval::{Approval, ApprovalMode};
use crate::domain::error::Result;
use crate::domain::ids::ApprovalId;
use crate::domain::ids::{SessionId, TaskId, TaskRunId};
use crate::domain::session::Guardrails;
use crate::runtimes::external::ExternalRuntime;
use crate::runtimes::model::ModelRuntime;
use crate::store::history::HistoryStrategy;
use crate::store::{ReconcileReport, Store};
use bus::EventBus;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

/// Largest prompt accepted, in bytes.
pub const MAX_PROMPT_BYTES: usize = 1024 * 1024;

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
    pub tasks: tasks::TaskConfig,
    /// The model the gateway (`/v1`) routes requests that name none to
    /// (`provider/model` or a bare model), from `[gateway] default_model`.
    pub gateway_default_model: Option<String>,
    /// Requests per minute the gateway admits (`[gateway] rate_limit_rpm`; 0: no limit).
    pub gateway_rate_limit_rpm: u32,
    /// How the gateway routes: deny patterns, the daily budget, cooldowns, the
    /// circuit breaker and the capabilities the config declares.
    pub gateway_routing: gateway::RoutingSettings,
    /// The agents' flows and the chat identities (client-hosted conversations).
    pub flows: flows::FlowSettings,
    /// Long-term recall: the embeddings model, batching, the default `recall`.
    pub memory: memory::RecallSettings,
    /// Where records stored after the answer (traces, MCP call records) are
    /// journalled, and how they are batched.
    pub deferred: deferred::DeferredSettings,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            owner_id: owner_id::new_owner_id(),
            lease_ttl_ms: LEASE_TTL_MS,
            history: HistoryStrategy::default(),
            default_guardrails: Guardrails::default(),
            approval_mode: ApprovalMode::Prompt,
            approval_timeout: DEFAULT_APPROVAL_TIMEOUT,
            tasks: tasks::TaskConfig::default(),
            gateway_default_model: None,
            gateway_rate_limit_rpm: 0,
            gateway_routing: gateway::RoutingSettings::default(),
            flows: flows::FlowSettings::default(),
            memory: memory::RecallSettings::default(),
            deferred: deferred::DeferredSettings::default(),
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
struct ActiveTurn {
    cancel: CancellationToken,
    /// The task run a Hecate Agent turn follows, once it started one.
    backing: Arc<Mutex<Option<(TaskId, TaskRunId)>>>,
}

/// The session engine shared by every bridge in a process.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn Store>,
    model: ModelRuntime,
    external: Option<Arc<ExternalRuntime>>,
    bus: EventBus,
    config: EngineConfig,
    active: Mutex<HashMap<SessionId, ActiveTurn>>,
    waiters: Mutex<HashMap<ApprovalId, oneshot::Sender<Approval>>>,
    turn_taps: turns::events::TurnTaps,
    mcp: Arc<mcp::state::McpHub>,
    deferred: deferred::DeferredWrites,
    tasks: tasks::TaskRuntime,
    gateway: gateway::GatewayState,
    recall: memory::Recall,
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
        let deferred =
            deferred::DeferredWrites::start(&store, &config.deferred, &config.owner_id).await;
        let tasks = tasks::TaskRuntime::new(
            store.clone(),
            runtimes.model.clone(),
            config.tasks.clone(),
            config.owner_id.clone(),
        );
        let gateway = gateway::GatewayState::new(
            config.gateway_default_model.clone(),
            config.gateway_rate_limit_rpm,
            config.gateway_routing.clone(),
        );
        let external = runtimes.external.map(Arc::new);
        if let Some(rt) = &external {
            agent_reaper::spawn_agent_reaper(rt);
        }
        let recall = memory::Recall::start(store.clone(), config.memory.clone());
        let mcp_hub = mcp::state::McpHub::start();
        tasks.attach_mcp(mcp_hub.clone(), deferred.audit.clone());
        tasks.attach_provider_health(gateway.health());
        let engine = Self {
            inner: Arc::new(Inner {
                store,
                model: runtimes.model,
                external: external.clone(),
                bus: EventBus::default(),
                config,
                active: Mutex::new(HashMap::new()),
                waiters: Mutex::new(HashMap::new()),
                turn_taps: turns::events::TurnTaps::default(),
                mcp: mcp_hub,
                deferred,
                tasks,
                gateway,
                recall,
            }),
        };
        let report = engine
            .store()
            .reconcile(Arc::new(owner_id::owner_is_dead))
            .await?;
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

    /// An engine over a fresh in-memory store (tests and throwaway tools).
    pub async fn in_memory(runtimes: Runtimes) -> Result<Self> {
        let store = crate::store::SqliteStore::open_in_memory()?;
        Ok(
            Self::start(Arc::new(store), runtimes, EngineConfig::default())
                .await?
                .0,
        )
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
    pub fn tasks(&self) -> &tasks::TaskRuntime {
        &self.inner.tasks
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

    fn active(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, ActiveTurn>> {
        self.inner.active.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn waiters(&self) -> std::sync::MutexGuard<'_, HashMap<ApprovalId, oneshot::Sender<Approval>>> {
        self.inner.waiters.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The store every engine operation reads and writes.
    fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }
}
