//! `TaskRuntime`, the handle every face holds, with its configuration and the
//! state its workers share.

use super::super::gateway::routing::health::ProviderHealth;
use super::super::mcp::audit::AuditWriter;
use super::super::mcp::state::McpHub;
use super::live_text::{LivePiece, LiveText};
use crate::domain::gateway_conversation::GatewayTrace;
use crate::domain::ids::{SessionId, TaskId, TaskRunId};
use crate::domain::task::{ApprovalPolicy, DEFAULT_GLOBAL_PROMPT, TaskEvent};
use crate::engine::batch_writer::BatchWriter;
use crate::runtimes::model::ModelRuntime;
use crate::store::Store;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, broadcast, mpsc};
use tokio_util::sync::CancellationToken;

/// Default lease a worker holds on a run, renewed at a third of it.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// Tunables of the task runtime.
#[derive(Debug, Clone)]
pub struct TaskConfig {
    /// Lease a worker holds on a claimed run.
    pub lease: Duration,
    /// How often an idle worker looks for work queued by other processes (work
    /// queued here wakes it at once).
    pub poll: Duration,
    /// Workers per process.
    pub workers: usize,
    /// Which approval gates are on.
    pub approval_policy: ApprovalPolicy,
    /// Where task workspaces are made.
    pub data_dir: PathBuf,
    /// Most `mcp_servers` entries one task may name (0 disables the check).
    pub max_mcp_servers_per_task: usize,
    /// The model an `agent_loop` task without `requested_model` uses
    /// (`provider/model` or a bare model; empty: none).
    pub default_model: String,
    /// URL patterns the `http_request` tool may reach (empty: none).
    pub http_allow: Vec<String>,
    /// The global layer of every `agent_loop` task's system prompt (empty:
    /// none).
    pub system_prompt: String,
}

impl Default for TaskConfig {
    fn default() -> Self {
        Self {
            lease: DEFAULT_LEASE,
            poll: Duration::from_millis(500),
            workers: 2,
            approval_policy: ApprovalPolicy::default(),
            data_dir: std::env::temp_dir().join("hecate-tasks"),
            max_mcp_servers_per_task: 16,
            default_model: String::new(),
            http_allow: Vec::new(),
            system_prompt: DEFAULT_GLOBAL_PROMPT.to_string(),
        }
    }
}

/// The task runtime of one process.
#[derive(Clone)]
pub struct TaskRuntime {
    pub(in crate::engine) inner: Arc<Inner>,
}

pub(in crate::engine) struct Inner {
    pub(in crate::engine) store: Arc<dyn Store>,
    pub(in crate::engine) models: ModelRuntime,
    pub(in crate::engine) config: TaskConfig,
    pub(in crate::engine) owner: String,
    pub(in crate::engine) wake: Notify,
    pub(in crate::engine) events: broadcast::Sender<TaskEvent>,
    pub(in crate::engine) running: Mutex<HashMap<TaskRunId, CancellationToken>>,
    pub(in crate::engine) patching: tokio::sync::Mutex<()>,
    pub(in crate::engine) workers: AtomicUsize,
    /// The engine's MCP hub (configured servers and the client pool), once
    /// attached; `agent_loop` runs have no MCP tools without it.
    pub(in crate::engine) mcp: std::sync::OnceLock<Arc<McpHub>>,
    /// The engine's MCP audit log writer, once attached; MCP calls of
    /// `agent_loop` runs are recorded in it.
    pub(in crate::engine) audit: std::sync::OnceLock<AuditWriter>,
    /// The gateway's provider health, once attached: `agent_loop` turns skip a
    /// provider cooling down and report what they learn of one.
    pub(in crate::engine) provider_health: std::sync::OnceLock<Arc<ProviderHealth>>,
    /// The trace an `agent_loop` task's runs join, by task: the span of the
    /// session turn that started it, while that turn follows it.
    pub(in crate::engine) trace_parents: std::sync::Mutex<HashMap<TaskId, opentelemetry::Context>>,
    /// What the model of a task a turn follows says, as it says it.
    pub(in crate::engine) live: LiveText,
    /// The engine's gateway trace writer, once attached: `agent_loop` model
    /// turns are traced like `/v1` requests.
    pub(in crate::engine) traces: std::sync::OnceLock<BatchWriter<GatewayTrace>>,
    /// The additional directories an editor gave each chat session (checked,
    /// canonical, not stored), for the `agent_loop` tasks its turns start.
    pub(in crate::engine) session_roots: Mutex<HashMap<SessionId, Vec<PathBuf>>>,
}

impl std::fmt::Debug for TaskRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskRuntime")
            .field("owner", &self.inner.owner)
            .finish()
    }
}

impl TaskRuntime {
    /// A runtime over `store` whose `agent_loop` runs call `models`; `owner`
    /// names this process in queue leases.
    pub fn new(
        store: Arc<dyn Store>,
        models: ModelRuntime,
        config: TaskConfig,
        owner: String,
    ) -> Self {
        let (events, _) = broadcast::channel(1024);
        Self {
            inner: Arc::new(Inner {
                store,
                models,
                config,
                owner,
                wake: Notify::new(),
                events,
                running: Mutex::new(HashMap::new()),
                patching: tokio::sync::Mutex::new(()),
                workers: AtomicUsize::new(0),
                mcp: std::sync::OnceLock::new(),
                audit: std::sync::OnceLock::new(),
                provider_health: std::sync::OnceLock::new(),
                trace_parents: std::sync::Mutex::new(HashMap::new()),
                live: LiveText::default(),
                traces: std::sync::OnceLock::new(),
                session_roots: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Gives `agent_loop` runs the engine's MCP hub (its configured servers and
    /// client pool) and audit log writer; only the first call counts.
    /// Makes the runs of `task` claimed by this process join the trace of
    /// `parent` (a session turn's span context) until [`TaskRuntime::forget_trace_parent`].
    pub(crate) fn set_trace_parent(&self, task: &TaskId, parent: opentelemetry::Context) {
        self.inner
            .trace_parents
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(task.clone(), parent);
    }

    /// Stops joining `task`'s runs to a turn's trace.
    pub(crate) fn forget_trace_parent(&self, task: &TaskId) {
        self.inner
            .trace_parents
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(task);
    }

    /// Hears what the model of `task`'s runs executed here says, as it says
    /// it, until [`TaskRuntime::forget_live`].
    pub(in crate::engine) fn listen_live(
        &self,
        task: &TaskId,
    ) -> mpsc::UnboundedReceiver<LivePiece> {
        self.inner.live.listen(task)
    }

    /// Stops hearing `task`'s runs.
    pub(in crate::engine) fn forget_live(&self, task: &TaskId) {
        self.inner.live.forget(task);
    }

    /// The trace `task`'s runs join, when a turn of this process follows it.
    pub(in crate::engine) fn trace_parent(&self, task: &TaskId) -> Option<opentelemetry::Context> {
        self.inner
            .trace_parents
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(task)
            .cloned()
    }

    pub(crate) fn attach_mcp(&self, hub: Arc<McpHub>, audit: AuditWriter) {
        let _ = self.inner.mcp.set(hub);
        let _ = self.inner.audit.set(audit);
    }

    /// Gives `agent_loop` model turns the engine's gateway trace writer; only
    /// the first call counts.
    pub(crate) fn attach_traces(&self, traces: BatchWriter<GatewayTrace>) {
        let _ = self.inner.traces.set(traces);
    }

    /// Stores the trace of an `agent_loop` model turn (after the answer, like
    /// a `/v1` request's); without a writer attached it is dropped.
    pub(in crate::engine) fn record_trace(&self, trace: GatewayTrace) {
        if let Some(w) = self.inner.traces.get() {
            w.record(trace);
        }
    }

    /// Shares the gateway's provider health with `agent_loop` turns.
    pub(crate) fn attach_provider_health(&self, health: Arc<ProviderHealth>) {
        let _ = self.inner.provider_health.set(health);
    }

    /// The configuration.
    pub fn config(&self) -> &TaskConfig {
        &self.inner.config
    }

    /// Whether workers of this process are claiming runs now (`hecate serve`
    /// starts them; `hecate mcp` only for a `start_task` that waits).
    pub fn workers_running(&self) -> bool {
        self.inner.workers.load(Ordering::SeqCst) > 0
    }

    /// Workers this process runs now.
    pub fn worker_count(&self) -> usize {
        self.inner.workers.load(Ordering::SeqCst)
    }

    /// Runs this process's workers are executing now.
    pub fn runs_executing(&self) -> usize {
        self.running().len()
    }

    /// How many runs of the shared queue wait for a worker and how many are
    /// leased, across every process on the store.
    pub async fn queue_depth(
        &self,
    ) -> crate::domain::error::Result<crate::store::tasks::QueueDepth> {
        self.store().task_queue_depth().await
    }

    /// Task events as this process stores them (a follower that lags re-reads
    /// the store; events of other processes only come from the store).
    pub fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.inner.events.subscribe()
    }

    pub(in crate::engine) fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }

    pub(in crate::engine) fn publish(&self, events: Vec<TaskEvent>) {
        for e in events {
            let _ = self.inner.events.send(e);
        }
    }

    pub(in crate::engine) fn running(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<TaskRunId, CancellationToken>> {
        self.inner.running.lock().unwrap_or_else(|p| p.into_inner())
    }
}
