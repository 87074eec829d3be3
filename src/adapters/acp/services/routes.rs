//! State shared between a connection's handlers and its callers: which native
//! session's updates go where (the running turn's event channel, or a
//! `session/load` replay), the permission asker of the running turn, and activity
//! tracking for the idle timeout.

use crate::adapters::acp::services::terminal::Terminals;
use crate::adapters::acp::services::terminal_sandbox::TerminalSandbox;
use crate::adapters::sandbox::paths::{Confined, PathRejection, confine_roots};
use crate::domain::event::RuntimeEvent;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::permission::PermissionAsker;
use crate::domain::provider_call::ReportedCost;
use crate::domain::workspace::{DelegateCapabilities, WorkspaceDelegate};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

/// When the agent last showed signs of life, and how many of its requests to us
/// are still being served (time spent waiting on us is not idleness).
#[derive(Debug)]
pub(crate) struct Liveness {
    last: Mutex<Instant>,
    inflight: AtomicUsize,
}

impl Liveness {
    pub(crate) fn new() -> Self {
        Self {
            last: Mutex::new(Instant::now()),
            inflight: AtomicUsize::new(0),
        }
    }

    pub(crate) fn touch(&self) {
        if let Ok(mut l) = self.last.lock() {
            *l = Instant::now();
        }
    }

    /// How long the agent has been silent; zero while we are serving it.
    pub(crate) fn idle_for(&self) -> Duration {
        if self.inflight.load(Ordering::Acquire) > 0 {
            return Duration::ZERO;
        }
        self.last.lock().map(|l| l.elapsed()).unwrap_or_default()
    }

    /// Marks one agent request as being served until the guard drops.
    pub(crate) fn serving(self: &Arc<Self>) -> ServingGuard {
        self.touch();
        self.inflight.fetch_add(1, Ordering::AcqRel);
        ServingGuard(self.clone())
    }
}

/// Ends a "serving the agent" interval.
pub(crate) struct ServingGuard(Arc<Liveness>);

impl Drop for ServingGuard {
    fn drop(&mut self) {
        self.0.inflight.fetch_sub(1, Ordering::AcqRel);
        self.0.touch();
    }
}

/// The running cost total an agent last reported during a turn (`usage_update`).
#[derive(Debug, Default)]
pub(crate) struct CostTally(Mutex<Option<ReportedCost>>);

impl CostTally {
    /// Keeps the newest total.
    pub(crate) fn record(&self, cost: ReportedCost) {
        if let Ok(mut c) = self.0.lock() {
            *c = Some(cost);
        }
    }

    /// The newest total, if any arrived.
    pub(crate) fn latest(&self) -> Option<ReportedCost> {
        self.0.lock().ok().and_then(|c| c.clone())
    }
}

/// The turn a native session is running.
#[derive(Clone)]
pub(crate) struct TurnRoute {
    pub session_id: SessionId,
    pub run_id: RunId,
    pub asker: Arc<dyn PermissionAsker>,
    /// Cancelled when the turn is cancelled or ends: pending asks answer `cancelled`.
    pub cancel: CancellationToken,
    /// Serves fs/terminal requests instead of Hecate (the editor), when set.
    pub delegate: Option<Arc<dyn WorkspaceDelegate>>,
    /// The agent's reported cost total, as of its latest `usage_update`.
    pub cost: Arc<CostTally>,
}

/// Where one native session's traffic goes.
#[derive(Clone)]
pub(crate) struct Route {
    pub events: UnboundedSender<RuntimeEvent>,
    pub turn: Option<TurnRoute>,
    pub activity: Arc<Liveness>,
}

/// A connection's shared state.
pub(crate) struct ConnectionState {
    /// The canonical workspace every fs/terminal request is confined to.
    pub workspace: PathBuf,
    /// The agent's sanitized environment (terminals start from it).
    pub env: Vec<(String, String)>,
    /// Whether every update is also kept as a raw frame.
    pub raw_frames: bool,
    /// Terminals the agent created.
    pub terminals: Terminals,
    routes: Mutex<HashMap<String, Route>>,
    editor_terminals: Mutex<HashMap<String, Arc<dyn WorkspaceDelegate>>>,
    /// URL elicitations relayed to an editor, by elicitation id, until the agent
    /// says they completed.
    url_elicitations: Mutex<HashMap<String, Arc<dyn WorkspaceDelegate>>>,
    /// The additional directories (canonical) the editor granted the session
    /// beside the workspace: fs and terminal requests may reach them too.
    additional: Mutex<Vec<PathBuf>>,
}

impl ConnectionState {
    pub(crate) fn new(
        workspace: PathBuf,
        env: Vec<(String, String)>,
        raw_frames: bool,
        terminal_sandbox: TerminalSandbox,
    ) -> Self {
        Self {
            workspace,
            env,
            raw_frames,
            terminals: Terminals::new(terminal_sandbox),
            routes: Mutex::new(HashMap::new()),
            editor_terminals: Mutex::new(HashMap::new()),
            url_elicitations: Mutex::new(HashMap::new()),
            additional: Mutex::new(Vec::new()),
        }
    }

    /// Sets the additional directories (absolute, canonical, checked by the
    /// caller) that fs and terminal requests may reach beside the workspace.
    pub(crate) fn set_additional_directories(&self, dirs: Vec<PathBuf>) {
        *self.additional.lock().unwrap_or_else(|p| p.into_inner()) = dirs;
    }

    /// The additional directories granted beside the workspace.
    pub(crate) fn additional_directories(&self) -> Vec<PathBuf> {
        self.additional
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Confines an agent's path to the workspace or an additional directory.
    pub(crate) fn confine(&self, requested: &Path) -> Result<Confined, PathRejection> {
        confine_roots(&self.workspace, &self.additional_directories(), requested)
    }

    /// The running turn's delegate for `native_id`, when it serves what `serves` picks.
    pub(crate) fn delegate(
        &self,
        native_id: &str,
        serves: impl Fn(DelegateCapabilities) -> bool,
    ) -> Option<Arc<dyn WorkspaceDelegate>> {
        self.route(native_id)?
            .turn?
            .delegate
            .filter(|d| serves(d.capabilities()))
    }

    /// Remembers that terminal `id` lives in `delegate` (or forgets it with `None`).
    pub(crate) fn set_editor_terminal(
        &self,
        id: &str,
        delegate: Option<Arc<dyn WorkspaceDelegate>>,
    ) {
        if let Ok(mut m) = self.editor_terminals.lock() {
            match delegate {
                Some(d) => m.insert(id.to_string(), d),
                None => m.remove(id),
            };
        }
    }

    /// The delegate owning terminal `id`, when the editor created it.
    pub(crate) fn editor_terminal(&self, id: &str) -> Option<Arc<dyn WorkspaceDelegate>> {
        self.editor_terminals.lock().ok()?.get(id).cloned()
    }

    /// Remembers that URL elicitation `id` went to `delegate`.
    pub(crate) fn set_url_elicitation(&self, id: &str, delegate: Arc<dyn WorkspaceDelegate>) {
        if let Ok(mut m) = self.url_elicitations.lock() {
            m.insert(id.to_string(), delegate);
        }
    }

    /// The delegate URL elicitation `id` went to, forgotten as it is taken.
    pub(crate) fn take_url_elicitation(&self, id: &str) -> Option<Arc<dyn WorkspaceDelegate>> {
        self.url_elicitations.lock().ok()?.remove(id)
    }

    pub(crate) fn route(&self, native_id: &str) -> Option<Route> {
        self.routes.lock().ok()?.get(native_id).cloned()
    }

    pub(crate) fn set_route(&self, native_id: &str, route: Route) {
        if let Ok(mut r) = self.routes.lock() {
            r.insert(native_id.to_string(), route);
        }
    }

    pub(crate) fn clear_route(&self, native_id: &str) {
        let removed = self
            .routes
            .lock()
            .ok()
            .and_then(|mut r| r.remove(native_id));
        if let Some(turn) = removed.and_then(|r| r.turn) {
            turn.cancel.cancel();
        }
    }

    /// Sends `event` to whoever listens to `native_id` (dropped when no one does).
    pub(crate) fn emit(&self, native_id: &str, event: RuntimeEvent) {
        if let Some(route) = self.route(native_id) {
            let _ = route.events.send(event);
        }
    }

    /// Sends a diagnostic to every active listener and to the log.
    pub(crate) fn diagnostic(&self, data: Value) {
        tracing::info!(diagnostic = %data, "ACP agent diagnostic");
        let routes: Vec<Route> = match self.routes.lock() {
            Ok(r) => r.values().cloned().collect(),
            Err(_) => return,
        };
        for route in routes {
            let _ = route.events.send(RuntimeEvent::Raw { data: data.clone() });
        }
    }
}
