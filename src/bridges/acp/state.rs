//! The bridge's per-process and per-thread state: configuration, the current target
//! of each session, the client's capabilities, and the prompts in flight (so a
//! `session/cancel` that overtakes a starting turn still stops it).

use super::convert::{nothing_configured, target_of, to_rpc};
use crate::domain::ids::SessionId;
use crate::domain::mcp::McpServerConfig;
use crate::domain::task::ToolAccess;
use crate::domain::workspace::DelegateCapabilities;
use crate::engine::Engine;
use crate::engine::targets::{Target, TargetRef};
use agent_client_protocol::Error;
use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How `hecate acp` was configured.
#[derive(Debug, Clone, Default)]
pub struct BridgeConfig {
    /// Namespace sessions are created and listed in.
    pub namespace: String,
    /// Default target for new sessions (`model:P/M`, `agent:ID`, `hecate:P/M` or `hecate`).
    pub default_target: Option<String>,
    /// How long to wait for providers to list models when offering targets.
    pub discovery_timeout: Duration,
}

/// One editor thread as the bridge sees it.
#[derive(Debug, Clone)]
pub struct Thread {
    /// The target answering the next prompt.
    pub target: TargetRef,
    /// The working directory the editor gave (empty when unknown: a thread
    /// recovered from the store without a workspace).
    pub cwd: String,
    /// MCP servers the editor passed.
    pub mcp_servers: Vec<McpServerConfig>,
    /// The reasoning effort chosen for a model target or Hecate's agent
    /// (`thought_level`); the model's own default when unset.
    pub thought_level: Option<String>,
    /// The tools chosen for Hecate's agent (`tools`).
    pub tools: ToolAccess,
}

/// State shared by every handler.
pub struct Shared {
    /// The engine.
    pub engine: Engine,
    /// Configuration.
    pub config: BridgeConfig,
    threads: Mutex<HashMap<SessionId, Thread>>,
    client_caps: Mutex<DelegateCapabilities>,
    prompts: Mutex<HashMap<SessionId, (u64, CancellationToken)>>,
    next_prompt: AtomicU64,
    /// Whether the editor runs on this machine (stdio), so a terminal re-run
    /// of its `hecate acp` command reaches this machine's agents.
    local_editor: AtomicBool,
    /// Whether the editor advertised `auth.terminal`.
    terminal_auth: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Shared {
    /// New state over `engine`.
    pub fn new(engine: Engine, config: BridgeConfig) -> Self {
        Self {
            engine,
            config,
            threads: Mutex::new(HashMap::new()),
            client_caps: Mutex::new(DelegateCapabilities::default()),
            prompts: Mutex::new(HashMap::new()),
            next_prompt: AtomicU64::new(1),
            local_editor: AtomicBool::new(false),
            terminal_auth: AtomicBool::new(false),
        }
    }

    /// The thread of a session, if this process knows it.
    pub fn thread(&self, id: &SessionId) -> Option<Thread> {
        lock(&self.threads).get(id).cloned()
    }

    /// The thread of `id`, from this process's memory or else rebuilt from the
    /// store (its last target and workspace, and the choices of Hecate's own
    /// options).
    pub async fn thread_or_stored(&self, id: &SessionId) -> Result<Thread, Error> {
        if let Some(t) = self.thread(id) {
            return Ok(t);
        }
        let ns = &self.config.namespace;
        let s = self
            .engine
            .get_session(ns, id)
            .await
            .map_err(|e| to_rpc(&e))?;
        let target = target_of(&s).ok_or_else(nothing_configured)?;
        let chosen = self
            .engine
            .hecate_choices(ns, id)
            .await
            .map_err(|e| to_rpc(&e))?;
        let t = Thread {
            target,
            // No workspace stays empty (never `/`): the Hecate agent then needs one.
            cwd: s.workspace.clone().unwrap_or_default(),
            mcp_servers: Vec::new(),
            thought_level: chosen.thought_level,
            tools: chosen.tools,
        };
        self.set_thread(id.clone(), t.clone());
        Ok(t)
    }

    /// Records (or replaces) a thread.
    pub fn set_thread(&self, id: SessionId, thread: Thread) {
        lock(&self.threads).insert(id, thread);
    }

    /// Forgets a thread (closed or deleted); a later request rebuilds it from the store.
    pub fn forget_thread(&self, id: &SessionId) {
        lock(&self.threads).remove(id);
    }

    /// Changes a thread's target.
    pub fn set_target(&self, id: &SessionId, target: TargetRef) -> bool {
        match lock(&self.threads).get_mut(id) {
            Some(t) => {
                t.target = target;
                true
            }
            None => false,
        }
    }

    /// Sets a thread's reasoning effort (`None`: the model's default).
    pub fn set_thought_level(&self, id: &SessionId, level: Option<String>) -> bool {
        match lock(&self.threads).get_mut(id) {
            Some(t) => {
                t.thought_level = level;
                true
            }
            None => false,
        }
    }

    /// Sets the tools of a thread's Hecate agent.
    pub fn set_tools(&self, id: &SessionId, tools: ToolAccess) -> bool {
        match lock(&self.threads).get_mut(id) {
            Some(t) => {
                t.tools = tools;
                true
            }
            None => false,
        }
    }

    /// Remembers what the client serves itself (fs read, fs write, terminal,
    /// elicitation).
    pub fn set_client_caps(&self, caps: DelegateCapabilities) {
        *lock(&self.client_caps) = caps;
    }

    /// What the client serves itself.
    pub fn client_caps(&self) -> DelegateCapabilities {
        *lock(&self.client_caps)
    }

    /// Marks the editor as one on this machine (served on stdio).
    pub fn set_local_editor(&self) {
        self.local_editor.store(true, Ordering::Relaxed);
    }

    /// Remembers whether the editor advertised `auth.terminal`.
    pub fn set_terminal_auth(&self, on: bool) {
        self.terminal_auth.store(on, Ordering::Relaxed);
    }

    /// Whether the editor can run an agent's terminal sign-in: it advertised
    /// `auth.terminal` and runs on this machine (an editor behind `/acp` would
    /// run it on its own).
    pub fn runs_terminal_logins(&self) -> bool {
        self.local_editor.load(Ordering::Relaxed) && self.terminal_auth.load(Ordering::Relaxed)
    }

    /// Marks a prompt of `id` as received and returns its ticket and cancel token
    /// (fired by `session/cancel`). Called from the dispatch loop, so it is in
    /// place before any cancel the client sends after the prompt.
    pub fn prompt_received(&self, id: &SessionId) -> (u64, CancellationToken) {
        let ticket = self.next_prompt.fetch_add(1, Ordering::Relaxed);
        let token = CancellationToken::new();
        lock(&self.prompts).insert(id.clone(), (ticket, token.clone()));
        (ticket, token)
    }

    /// Forgets the prompt of `id` with `ticket` (a newer prompt keeps its entry).
    pub fn prompt_done(&self, id: &SessionId, ticket: u64) {
        let mut prompts = lock(&self.prompts);
        if prompts.get(id).is_some_and(|(t, _)| *t == ticket) {
            prompts.remove(id);
        }
    }

    /// Fires the cancel token of `id`'s prompt, when one is in flight.
    pub fn cancel_prompt(&self, id: &SessionId) -> bool {
        match lock(&self.prompts).get(id) {
            Some((_, t)) => {
                t.cancel();
                true
            }
            None => false,
        }
    }

    /// The targets on offer now.
    pub async fn targets(&self) -> Vec<Target> {
        self.engine.targets(self.config.discovery_timeout).await
    }

    /// The target a new thread starts with: configured default, else the first offered.
    pub async fn default_target(&self) -> Option<TargetRef> {
        if let Some(t) = &self.config.default_target
            && let Ok(r) = TargetRef::parse(t)
        {
            return Some(r);
        }
        self.targets()
            .await
            .first()
            .and_then(|t| TargetRef::parse(&t.id).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_cancel_reaches_the_prompt_in_flight_and_only_that_one() {
        let engine = Engine::in_memory(crate::engine::Runtimes::default())
            .await
            .expect("engine");
        let shared = Shared::new(engine, BridgeConfig::default());
        let sid = SessionId::from("s");
        assert!(!shared.cancel_prompt(&sid), "nothing in flight");
        let (first, first_token) = shared.prompt_received(&sid);
        let (second, second_token) = shared.prompt_received(&sid);
        shared.prompt_done(&sid, first);
        assert!(
            shared.cancel_prompt(&sid),
            "the newer prompt is still in flight"
        );
        assert!(second_token.is_cancelled() && !first_token.is_cancelled());
        shared.prompt_done(&sid, second);
        assert!(!shared.cancel_prompt(&sid));
    }
}
