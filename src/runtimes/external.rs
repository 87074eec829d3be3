//! The external-agent runtime: one supervised ACP agent process and one native
//! session per Hecate session, each prompt the next ACP turn. Reattaches after a
//! restart with `session/resume` (or else `session/load`) when the agent
//! supports it, and otherwise opens a fresh native session primed with the
//! stored transcript; sends `session/close` before stopping an agent.

use crate::adapters::acp::agent::catalog::{AgentManifest, Catalog, ManifestError};
use crate::adapters::acp::agent::launcher::LauncherOptions;
use crate::adapters::acp::{
    AcpError, AcpOptions, AgentConnection, NativeSession, StopReason, TurnIo,
};
use crate::adapters::process::env::sanitized_env;
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::ids::SessionId;
use crate::domain::provider_call::ReportedCost;
use crate::runtimes::{TurnContext, TurnEnd, TurnReport, TurnTarget};
use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

mod choose;
mod gateway_access;
mod installs;
mod lifecycle;
mod prompt;
mod roots;
mod settings;
mod signin;

pub use crate::adapters::acp::OptionValue;
pub use gateway_access::GatewayAccess;
pub use installs::{InstallJob, InstallJobs, InstallState, InstallTicket, StageMark};
pub use lifecycle::Attach;
use prompt::{fit_to_agent, has_earlier_turns, prompt_blocks};
pub use settings::{AgentSettings, Choices, ModeRule, OpenAgent, SettingError, StaleChoice};

/// A live agent bound to one Hecate session.
struct LiveAgent {
    conn: Arc<AgentConnection>,
    native_id: String,
    adapter_id: String,
    /// The agent session's running cost total as last reported, and whether it
    /// is known from the session's start (a session Hecate created) or only from
    /// some point on.
    cost: std::sync::Mutex<CostBaseline>,
    /// Turns running on it now, and when the last one ended (idle reaping).
    usage: std::sync::Mutex<Usage>,
    /// When it attached (RFC 3339).
    started_at: String,
    /// The modes and options its native session offers now.
    settings: std::sync::Mutex<AgentSettings>,
    /// Whether its native session was new when it attached (not loaded), so a
    /// first turn that asks for a fresh native session may take it.
    fresh: bool,
    /// Whether a turn has run on it.
    turned: std::sync::atomic::AtomicBool,
}

/// One supervised agent process as an operator sees it.
#[derive(Debug, Clone)]
pub struct LiveProcess {
    /// The Hecate session it serves.
    pub session_id: SessionId,
    /// Its adapter.
    pub adapter_id: String,
    /// The agent's own session id.
    pub native_session_id: String,
    /// The process id (the leader of its process group).
    pub pid: u32,
    /// Whether the process is still running.
    pub alive: bool,
    /// Turns running on it now.
    pub turns: usize,
    /// How long no turn has used it (none while a turn runs).
    pub idle: Option<Duration>,
    /// When it attached (RFC 3339).
    pub started_at: String,
}

/// How a live agent is being used.
#[derive(Debug, Clone, Copy)]
struct Usage {
    turns: usize,
    since: Instant,
}

/// A turn's hold on a live agent: while any exists the agent is never reaped
/// (a pending permission request happens inside a turn, so it keeps it too).
struct InUse(Arc<LiveAgent>);

impl InUse {
    /// Marks one more turn on `live`.
    fn take(live: Arc<LiveAgent>) -> Self {
        live.usage_mut().turns += 1;
        Self(live)
    }
}

impl std::ops::Deref for InUse {
    type Target = LiveAgent;
    fn deref(&self) -> &LiveAgent {
        &self.0
    }
}

impl Drop for InUse {
    fn drop(&mut self) {
        let mut u = self.0.usage_mut();
        u.turns = u.turns.saturating_sub(1);
        u.since = Instant::now();
    }
}

/// What a live agent's running cost total stood at before the next turn.
#[derive(Debug, Clone, Default)]
enum CostBaseline {
    /// The native session is new: the first total is all this session spent.
    #[default]
    FromStart,
    /// The total after the previous turn.
    Known(ReportedCost),
    /// A reloaded session whose earlier total Hecate never saw.
    Unknown,
}

impl LiveAgent {
    fn usage_mut(&self) -> std::sync::MutexGuard<'_, Usage> {
        self.usage.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn settings_mut(&self) -> std::sync::MutexGuard<'_, AgentSettings> {
        self.settings.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether no turn holds it and the last one ended at least `idle` ago.
    fn idle_for(&self, idle: Duration) -> bool {
        let u = self.usage_mut();
        u.turns == 0 && u.since.elapsed() >= idle
    }

    /// This turn's cost in micro-USD from the total the agent reported at its
    /// end, and the new baseline; unknown unless the agent reported one.
    fn turn_cost(&self, reported: Option<&ReportedCost>) -> Option<i64> {
        let reported = reported?;
        let mut baseline = self.cost.lock().unwrap_or_else(|p| p.into_inner());
        let spent = match &*baseline {
            CostBaseline::FromStart => reported.turn_micros_usd(None),
            CostBaseline::Known(before) => reported.turn_micros_usd(Some(before)),
            CostBaseline::Unknown => None,
        };
        *baseline = CostBaseline::Known(reported.clone());
        spent
    }
}

/// Supervises external agents for the engine.
pub struct ExternalRuntime {
    catalog: Arc<Catalog>,
    launcher: LauncherOptions,
    base_env: HashMap<String, String>,
    extra_env: HashMap<String, Vec<(String, String)>>,
    options: AcpOptions,
    live: Mutex<HashMap<SessionId, Arc<LiveAgent>>>,
    process_idle: Option<Duration>,
    /// Session modes chosen per adapter over the manifests' `initial_mode`.
    modes: HashMap<String, String>,
    /// Adapters whose model calls go through Hecate's `/v1` (`[agents.gateway]`).
    gateway_adapters: HashSet<String>,
    /// Where that `/v1` is and the key it takes, once known.
    gateway: std::sync::RwLock<Option<GatewayAccess>>,
    /// Managed installs running or ended in this process.
    installs: Arc<InstallJobs>,
    /// The manifests that did not load when the catalog was read.
    manifest_errors: Vec<ManifestError>,
    /// What editors chose per session (modes, option values), applied on attach.
    choices: std::sync::Mutex<HashMap<SessionId, (String, Choices)>>,
    /// The additional directories editors gave per session (`roots`).
    roots: std::sync::Mutex<HashMap<SessionId, Vec<std::path::PathBuf>>>,
    /// Agents kept after asking to sign in, per adapter, with the workspace
    /// each runs in (`signin`).
    parked: Mutex<HashMap<String, (Arc<AgentConnection>, String)>>,
}

impl std::fmt::Debug for ExternalRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalRuntime")
            .field("adapters", &self.catalog.ids())
            .finish()
    }
}

impl ExternalRuntime {
    /// A runtime over `catalog`; `base_env` is Hecate's own environment (filtered per
    /// manifest before it reaches an agent) and `extra_env` per-adapter opt-ins.
    pub fn new(
        catalog: Catalog,
        launcher: LauncherOptions,
        base_env: HashMap<String, String>,
        extra_env: HashMap<String, Vec<(String, String)>>,
        options: AcpOptions,
    ) -> Self {
        Self {
            catalog: Arc::new(catalog),
            launcher,
            base_env,
            extra_env,
            options,
            live: Mutex::new(HashMap::new()),
            process_idle: None,
            modes: HashMap::new(),
            gateway_adapters: HashSet::new(),
            gateway: std::sync::RwLock::new(None),
            installs: Arc::new(InstallJobs::default()),
            manifest_errors: Vec::new(),
            choices: std::sync::Mutex::new(HashMap::new()),
            roots: std::sync::Mutex::new(HashMap::new()),
            parked: Mutex::new(HashMap::new()),
        }
    }

    /// The same runtime remembering the manifests that did not load.
    pub fn with_manifest_errors(mut self, errors: Vec<ManifestError>) -> Self {
        self.manifest_errors = errors;
        self
    }

    /// The manifests that did not load when the catalog was read.
    pub fn manifest_errors(&self) -> &[ManifestError] {
        &self.manifest_errors
    }

    /// The managed installs of this process.
    pub fn installs(&self) -> &Arc<InstallJobs> {
        &self.installs
    }

    /// The same runtime pointing the agents of `adapters` at Hecate's `/v1`
    /// (`access`, when already known; see [`ExternalRuntime::set_gateway`]).
    pub fn with_gateway(
        mut self,
        adapters: HashSet<String>,
        access: Option<GatewayAccess>,
    ) -> Self {
        self.gateway_adapters = adapters;
        self.gateway = std::sync::RwLock::new(access);
        self
    }

    /// Sets where agents reach the gateway (`hecate serve` once it listens);
    /// agent processes started afterwards get it.
    pub fn set_gateway(&self, access: GatewayAccess) {
        *self.gateway.write().unwrap_or_else(|p| p.into_inner()) = Some(access);
    }

    /// The gateway environment of `manifest`'s agent for `session_id`: empty
    /// unless the adapter is opted in, its manifest says how, and the gateway's
    /// address is known.
    fn gateway_env(
        &self,
        manifest: &AgentManifest,
        session_id: &SessionId,
    ) -> Vec<(String, String)> {
        if !self.gateway_adapters.contains(&manifest.id) {
            return Vec::new();
        }
        if manifest.gateway.env.is_empty() {
            tracing::warn!(adapter_id = %manifest.id, "[agents.gateway] names an agent that cannot be pointed at a base URL: {}",
                manifest.gateway.note.as_deref().unwrap_or("its manifest has no [gateway] env"));
            return Vec::new();
        }
        let access = self
            .gateway
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        match access {
            Some(a) => manifest
                .gateway
                .render(&a.base_url, session_id.as_str(), &a.api_key),
            None => {
                tracing::warn!(adapter_id = %manifest.id, "no gateway address is known in this process (set [agents] gateway_url, or run the agent under `hecate serve`); the agent uses its own model endpoint");
                Vec::new()
            }
        }
    }

    /// The same runtime putting each adapter named in `modes` into that ACP
    /// session mode instead of its manifest's `initial_mode` (`[agents.modes]`).
    pub fn with_modes(mut self, modes: HashMap<String, String>) -> Self {
        self.modes = modes;
        self
    }

    /// The same runtime stopping agent processes unused for `idle` (see
    /// [`ExternalRuntime::reap_idle`]); `None` keeps them for the session's life.
    pub fn with_process_idle(mut self, idle: Option<Duration>) -> Self {
        self.process_idle = idle;
        self
    }

    /// How long an unused agent process lives, when limited.
    pub fn process_idle(&self) -> Option<Duration> {
        self.process_idle
    }

    /// The adapter catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.catalog
    }

    /// The connection options (timeouts).
    pub fn options(&self) -> &AcpOptions {
        &self.options
    }

    /// Hecate's own environment as agents see it before filtering.
    pub fn base_env(&self) -> &HashMap<String, String> {
        &self.base_env
    }

    /// The launcher options (cache dir, PATH).
    pub fn launcher(&self) -> &LauncherOptions {
        &self.launcher
    }

    /// The environment an adapter's process receives.
    pub fn env_for(&self, manifest: &AgentManifest) -> Vec<(String, String)> {
        let extra = self
            .extra_env
            .get(&manifest.id)
            .cloned()
            .unwrap_or_default();
        sanitized_env(&self.base_env, &manifest.env_allow, &extra)
    }

    /// Whether `adapter_id` is in the catalog.
    pub fn has_adapter(&self, adapter_id: &str) -> bool {
        self.catalog.get(adapter_id).is_some()
    }

    /// Number of live agent processes.
    pub async fn live_count(&self) -> usize {
        self.live.lock().await.len()
    }

    /// The live agent processes, oldest first.
    pub async fn processes(&self) -> Vec<LiveProcess> {
        let live = self.live.lock().await;
        let mut out: Vec<LiveProcess> = live
            .iter()
            .map(|(id, l)| {
                let u = *l.usage_mut();
                LiveProcess {
                    session_id: id.clone(),
                    adapter_id: l.adapter_id.clone(),
                    native_session_id: l.native_id.clone(),
                    pid: l.conn.pid(),
                    alive: l.conn.is_alive(),
                    turns: u.turns,
                    idle: (u.turns == 0).then(|| u.since.elapsed()),
                    started_at: l.started_at.clone(),
                }
            })
            .collect();
        out.sort_by(|a, b| a.started_at.cmp(&b.started_at));
        out
    }

    /// Shuts down the agent process of one session, if any, after
    /// `session/close` when the agent offers it.
    pub async fn close(&self, session_id: &SessionId) {
        let live = self.live.lock().await.remove(session_id);
        if let Some(l) = live {
            shutdown(l).await;
        }
    }

    /// Like [`ExternalRuntime::close`], also passing `session/delete` on when
    /// the agent offers it (the Hecate session is being deleted).
    pub async fn delete(&self, session_id: &SessionId) {
        let live = self.live.lock().await.remove(session_id);
        if let Some(l) = live {
            lifecycle::release(&l.conn, &l.native_id, true).await;
        }
    }

    /// Stops the agent processes no turn has used for `idle` (process group
    /// and all, after `session/close` when offered); their sessions reattach on
    /// the next prompt (`session/resume` or `session/load`, or a fresh native
    /// session primed with the transcript). Answers how many were stopped.
    pub async fn reap_idle(&self, idle: Duration) -> usize {
        let reaped: Vec<(SessionId, Arc<LiveAgent>)> = {
            let mut live = self.live.lock().await;
            let ids: Vec<SessionId> = live
                .iter()
                .filter(|(_, l)| l.idle_for(idle))
                .map(|(id, _)| id.clone())
                .collect();
            ids.into_iter()
                .filter_map(|id| live.remove(&id).map(|l| (id, l)))
                .collect()
        };
        let n = reaped.len();
        for (id, l) in reaped {
            tracing::info!(session_id = %id, adapter_id = %l.adapter_id, "stopping an idle agent process");
            shutdown(l).await;
        }
        n
    }

    /// Shuts down every agent process (all at once, each after its
    /// `session/close` when offered).
    pub async fn close_all(&self) {
        let all: Vec<_> = self.live.lock().await.drain().map(|(_, l)| l).collect();
        futures::future::join_all(all.into_iter().map(shutdown)).await;
        self.drop_parked().await;
    }

    /// Runs one turn through the session's agent.
    pub async fn run(&self, ctx: TurnContext) -> TurnReport {
        let TurnTarget::External {
            adapter_id,
            workspace,
            native_session_id,
            mcp_servers,
        } = ctx.target.clone()
        else {
            return TurnReport::ended(TurnEnd::Failed(HecateError::new(
                ErrorType::RuntimeMismatch,
                "the external runtime can only run external-agent turns",
            )));
        };
        let elicitation = ctx
            .workspace_delegate
            .as_ref()
            .map(|d| d.capabilities().elicitation)
            .unwrap_or_default();
        let open = OpenAgent {
            session_id: &ctx.session_id,
            adapter_id: &adapter_id,
            workspace: &workspace,
            native_session_id: native_session_id.as_deref(),
            mcp_servers: &mcp_servers,
            earlier_turns: has_earlier_turns(&ctx.history),
            elicitation,
        };
        let (live, attach) = match self.attach(open).await {
            Ok(x) => x,
            Err(e) => {
                return TurnReport::ended(TurnEnd::Failed(e));
            }
        };
        let prompt = match fit_to_agent(
            prompt_blocks(
                &ctx.history,
                attach == Attach::Primed,
                ctx.recalled.as_deref(),
            ),
            live.conn.agent_info(),
            &adapter_id,
        ) {
            Ok(p) => p,
            Err(e) => {
                let mut refused = TurnReport::ended(TurnEnd::Failed(e));
                refused.native_session_id = Some(live.native_id.clone());
                return refused;
            }
        };
        let (events, followed) = tokio::sync::mpsc::unbounded_channel();
        let io = TurnIo {
            events,
            asker: ctx.asker.clone(),
            session_id: ctx.session_id.clone(),
            run_id: ctx.run_id.clone(),
            cancel: ctx.cancel.clone(),
            delegate: ctx.workspace_delegate.clone(),
        };
        live.turned
            .store(true, std::sync::atomic::Ordering::Relaxed);
        let turn = live.conn.prompt(&live.native_id, prompt, io);
        let result = follow_settings(&live, turn, followed, &ctx.events).await;
        let mut report = TurnReport::ended(TurnEnd::Completed);
        report.native_session_id = Some(live.native_id.clone());
        match result {
            Ok(outcome) => {
                if outcome.stop_reason == StopReason::Cancelled {
                    report.end = TurnEnd::Cancelled;
                }
                // What the agent reported becomes the turn's recorded call
                // (`cost_mode = external`: unknown unless reported).
                report.cost_micros_usd = live.turn_cost(outcome.session_cost.as_ref());
                report.usage = outcome.usage;
                report.called_upstream = report.usage.is_some() || outcome.session_cost.is_some();
            }
            Err(e) => {
                let mut err = e.into_hecate(&adapter_id);
                if !err.details.contains_key("stderr_tail") {
                    let tail = live.conn.stderr_tail();
                    if !tail.is_empty() {
                        err = err.with_detail("stderr_tail", tail);
                    }
                }
                if !live.conn.is_alive() {
                    // Reap what is left of the process group (grandchildren included).
                    self.close(&ctx.session_id).await;
                } else if matches!(
                    err.details.get("reason").and_then(|r| r.as_str()),
                    Some("agent_timeout")
                ) {
                    // A hung agent cannot be trusted with the next turn: restart it then.
                    self.close(&ctx.session_id).await;
                }
                report.end = TurnEnd::Failed(err);
            }
        }
        report
    }

    /// Finds or starts the session's agent and native session as `open` says.
    /// An agent process keeps the elicitation modes it started with.
    async fn attach(&self, open: OpenAgent<'_>) -> Result<(InUse, Attach), HecateError> {
        let OpenAgent {
            session_id,
            adapter_id,
            workspace,
            native_session_id: native_id,
            mcp_servers,
            earlier_turns,
            elicitation,
        } = open;
        let existing = {
            // Taken under the map's lock, so the reaper cannot stop it meanwhile.
            let live = self.live.lock().await;
            live.get(session_id).cloned().map(InUse::take)
        };
        if let Some(l) = existing {
            if l.conn.is_alive() && l.adapter_id == adapter_id {
                if native_id == Some(l.native_id.as_str()) {
                    return Ok((l, Attach::Live));
                }
                // Opened ahead of its first turn (an editor's `session/new`):
                // the fresh native session the engine asks for.
                if native_id.is_none()
                    && l.fresh
                    && !l.turned.load(std::sync::atomic::Ordering::Relaxed)
                {
                    let attach = if earlier_turns {
                        Attach::Primed
                    } else {
                        Attach::Live
                    };
                    return Ok((l, attach));
                }
            }
            drop(l);
            // A dead process, the session switched to another agent, or the
            // engine asks for a fresh native session (a hand-off).
            self.close(session_id).await;
        }
        let (manifest, spec, mut env) = self.launch(adapter_id)?;
        let pointed = self.gateway_env(manifest, session_id);
        env.retain(|(k, _)| !pointed.iter().any(|(p, _)| p == k));
        env.extend(pointed);
        let ws = Path::new(workspace);
        let conn = match self.take_parked(adapter_id, workspace).await {
            Some(signed_in) => signed_in,
            None => {
                let options = AcpOptions {
                    elicitation,
                    ..self.options.clone()
                };
                Arc::new(
                    AgentConnection::start(&spec, ws, env, options)
                        .await
                        .map_err(|e| e.into_hecate(adapter_id))?,
                )
            }
        };
        conn.set_additional_directories(self.additional_directories_of(session_id));
        let mut attach = Attach::New;
        let mut native: Option<NativeSession> = None;
        if let Some(old) = native_id
            && let Some((session, how)) =
                lifecycle::reattach(&conn, manifest, old, ws, mcp_servers).await
        {
            native = Some(session);
            attach = how;
        }
        let native = match native {
            Some(n) => n,
            None => {
                let n = match conn.new_session(ws, mcp_servers).await {
                    Ok(n) => n,
                    Err(e) => {
                        return Err(self.refused_session(adapter_id, workspace, conn, e).await);
                    }
                };
                if earlier_turns {
                    attach = Attach::Primed;
                }
                n
            }
        };
        // Every attach (new, loaded or primed) gets the settings Hecate chose: an
        // agent may reload a session in its own default mode, which would let it act
        // without asking the client.
        let mode = self
            .modes
            .get(adapter_id)
            .or(manifest.quirks.initial_mode.as_ref());
        apply_session_settings(&conn, &native, mode.map(String::as_str))
            .await
            .map_err(|e| e.into_hecate(adapter_id))?;
        let mut current = AgentSettings {
            current_mode: native.current_mode_id.clone(),
            modes: native.available_modes.clone(),
            options: native.config_options.clone(),
        };
        if let Some(m) = mode.filter(|m| current.modes.iter().any(|(id, _)| id == *m)) {
            current.set_current_mode(m);
        }
        // Choices the agent no longer offers (or the mode rule no longer
        // allows) are dropped with a warning, never an error.
        let chosen = self.choices_of(session_id, adapter_id);
        let (kept, stale) = chosen.split_offered(&current, &self.mode_rule(adapter_id));
        for s in &stale {
            tracing::warn!(adapter_id, option = ?s.option, reason = s.why.reason(), error = %s.why, "a choice made earlier is no longer taken; dropped");
        }
        if !stale.is_empty() {
            self.remember(session_id, adapter_id, |c| *c = kept.clone());
        }
        apply_choices(&conn, &native.id, &kept, &mut current).await;
        let native = native.id;
        tracing::info!(adapter_id, native_session_id = %native, ?attach, "external agent attached");
        let reattached = matches!(attach, Attach::Loaded | Attach::Resumed);
        let baseline = if reattached {
            CostBaseline::Unknown
        } else {
            CostBaseline::FromStart
        };
        let live = Arc::new(LiveAgent {
            conn,
            native_id: native,
            adapter_id: adapter_id.to_string(),
            cost: std::sync::Mutex::new(baseline),
            usage: std::sync::Mutex::new(Usage {
                turns: 0,
                since: Instant::now(),
            }),
            started_at: crate::domain::time::now_rfc3339(),
            settings: std::sync::Mutex::new(current),
            fresh: !reattached,
            turned: std::sync::atomic::AtomicBool::new(false),
        });
        let held = {
            let mut map = self.live.lock().await;
            map.insert(session_id.clone(), live.clone());
            InUse::take(live)
        };
        Ok((held, attach))
    }
}

/// Puts a native session into the mode chosen for its adapter (`[agents.modes]`,
/// else the manifest's `initial_mode`). A session already in that mode is left
/// alone; a mode the agent does not offer is logged (nothing can be set); a
/// refused switch to an offered mode fails the attach, since the agent would
/// otherwise run in a mode that may not ask the client.
async fn apply_session_settings(
    conn: &AgentConnection,
    native: &NativeSession,
    mode: Option<&str>,
) -> Result<(), AcpError> {
    let Some(mode) = mode else {
        return Ok(());
    };
    if native.current_mode_id.as_deref() == Some(mode) {
        return Ok(());
    }
    let offered = native.available_modes.iter().any(|(id, _)| id == mode);
    match conn.set_mode(&native.id, mode).await {
        Ok(()) => {
            tracing::debug!(mode, native_session_id = %native.id, "session mode applied");
            Ok(())
        }
        Err(e) if offered => Err(e),
        Err(e) => {
            tracing::warn!(error = %e, mode, "the agent does not offer the manifest's initial mode");
            Ok(())
        }
    }
}

async fn shutdown(live: Arc<LiveAgent>) {
    lifecycle::release(&live.conn, &live.native_id, false).await;
}

/// Puts what an editor chose back on a native session (after a restart, a
/// reload or the reaper): each choice the agent still offers is set again; one
/// it refuses is logged and dropped from `current` only.
async fn apply_choices(
    conn: &AgentConnection,
    native_id: &str,
    chosen: &Choices,
    current: &mut AgentSettings,
) {
    if let Some(mode) = &chosen.mode
        && current.current_mode.as_deref() != Some(mode)
        && current.check_mode(mode).is_ok()
    {
        match conn.set_mode(native_id, mode).await {
            Ok(()) => current.set_current_mode(mode),
            Err(e) => tracing::warn!(error = %e, mode, "the agent refused the mode chosen earlier"),
        }
    }
    for (id, value) in &chosen.options {
        if current.check_value(id, value).is_err() {
            continue;
        }
        match conn.set_config_option(native_id, id, value).await {
            Ok(options) => current.options = options,
            Err(e) => {
                tracing::warn!(error = %e, option = %id, "the agent refused an option chosen earlier")
            }
        }
    }
}

/// Runs `turn` while its events go on to `out`, following the agent's own mode
/// and option changes into `live`'s settings; events already sent when the turn
/// ends are passed on before it returns.
async fn follow_settings<T>(
    live: &LiveAgent,
    turn: impl Future<Output = T>,
    mut events: tokio::sync::mpsc::UnboundedReceiver<crate::domain::event::RuntimeEvent>,
    out: &tokio::sync::mpsc::UnboundedSender<crate::domain::event::RuntimeEvent>,
) -> T {
    let pass = |ev: crate::domain::event::RuntimeEvent| {
        live.settings_mut().follow(&ev);
        let _ = out.send(ev);
    };
    tokio::pin!(turn);
    let mut open = true;
    let result = loop {
        tokio::select! {
            biased;
            ev = events.recv(), if open => match ev {
                Some(ev) => pass(ev),
                None => open = false,
            },
            r = &mut turn => break r,
        }
    };
    while let Ok(ev) = events.try_recv() {
        pass(ev);
    }
    result
}
