//! The bridge's per-process and per-thread state: configuration, the current target
//! of each session, and the client's capabilities.

use crate::domain::ids::SessionId;
use crate::domain::mcp::McpServerConfig;
use crate::engine::Engine;
use crate::engine::targets::{Target, TargetRef};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// How `hecate acp` was configured.
#[derive(Debug, Clone, Default)]
pub struct BridgeConfig {
    /// Namespace sessions are created and listed in.
    pub namespace: String,
    /// Default target for new sessions (`model:P/M` or `agent:ID`).
    pub default_target: Option<String>,
    /// How long to wait for providers to list models when offering targets.
    pub discovery_timeout: Duration,
}

/// One editor thread as the bridge sees it.
#[derive(Debug, Clone)]
pub struct Thread {
    /// The target answering the next prompt.
    pub target: TargetRef,
    /// The working directory the editor gave.
    pub cwd: String,
    /// MCP servers the editor passed.
    pub mcp_servers: Vec<McpServerConfig>,
}

/// State shared by every handler.
pub struct Shared {
    /// The engine.
    pub engine: Engine,
    /// Configuration.
    pub config: BridgeConfig,
    threads: Mutex<HashMap<SessionId, Thread>>,
    client_fs: Mutex<(bool, bool, bool)>,
}

impl Shared {
    /// New state over `engine`.
    pub fn new(engine: Engine, config: BridgeConfig) -> Self {
        Self {
            engine,
            config,
            threads: Mutex::new(HashMap::new()),
            client_fs: Mutex::new((false, false, false)),
        }
    }

    fn threads(&self) -> std::sync::MutexGuard<'_, HashMap<SessionId, Thread>> {
        self.threads.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The thread of a session, if this process knows it.
    pub fn thread(&self, id: &SessionId) -> Option<Thread> {
        self.threads().get(id).cloned()
    }

    /// Records (or replaces) a thread.
    pub fn set_thread(&self, id: SessionId, thread: Thread) {
        self.threads().insert(id, thread);
    }

    /// Changes a thread's target.
    pub fn set_target(&self, id: &SessionId, target: TargetRef) -> bool {
        match self.threads().get_mut(id) {
            Some(t) => {
                t.target = target;
                true
            }
            None => false,
        }
    }

    /// Remembers what the client can do (fs read, fs write, terminal).
    pub fn set_client_caps(&self, read: bool, write: bool, terminal: bool) {
        *self.client_fs.lock().unwrap_or_else(|p| p.into_inner()) = (read, write, terminal);
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
