//! The engine's upstream-MCP state, apart from what it does: the hub (configured
//! servers, the client pool, cached tool lists and the indexed catalog, listing
//! failures, resource owners, the change feed), the hub-wide resource
//! subscription table and the gateway sessions' leases. The behaviour lives in
//! the `impl Engine` files beside it, which import this; this imports none of them.

use super::types::{McpCatalog, McpChange, UpstreamServer, UpstreamTool};
use crate::adapters::mcp::{Changed, Lease, Pool, PoolOptions};
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::ids::SessionId;
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, RwLock, Weak};
use tokio::sync::broadcast;
use tokio::task::JoinHandle;

/// The engine's upstream-MCP state.
pub(crate) struct McpHub {
    pub(crate) servers: RwLock<Arc<Vec<UpstreamServer>>>,
    pub(crate) pool: Pool,
    pub(crate) tools: Mutex<HashMap<String, Vec<Value>>>,
    /// The whole catalog, built while every upstream listed fine; dropped (and
    /// its generation bumped) whenever a tool list or the configuration changes.
    pub(crate) catalog: Mutex<(u64, Option<Arc<IndexedCatalog>>)>,
    /// Set while a background build of the catalog runs.
    pub(crate) warming: std::sync::atomic::AtomicBool,
    pub(crate) failures: Mutex<HashMap<String, (std::time::Instant, HecateError)>>,
    /// Servers whose last connect, listing or call was refused for want of a
    /// sign-in, with that error; the next success, a login or a logout clears it.
    pub(crate) sign_ins_needed: Mutex<HashMap<String, HecateError>>,
    pub(crate) resource_owner: Mutex<HashMap<String, String>>,
    /// Upstream resource subscriptions, refcounted across client connections.
    pub(crate) subscriptions: Subscriptions,
    pub(crate) changes: broadcast::Sender<McpChange>,
    pub(crate) gateways: Gateways,
}

impl McpHub {
    /// A hub with no upstream yet and a pool over Hecate's sanitized environment.
    pub(crate) fn start() -> Arc<Self> {
        let env = crate::adapters::process::env::current_env();
        let pool = Pool::new(
            PoolOptions::default(),
            crate::adapters::mcp::base_env(&env),
            env,
        );
        let (changes, _) = broadcast::channel(256);
        let hub = Arc::new(Self {
            servers: RwLock::new(Arc::new(Vec::new())),
            pool,
            tools: Mutex::new(HashMap::new()),
            catalog: Mutex::new((0, None)),
            warming: std::sync::atomic::AtomicBool::new(false),
            failures: Mutex::new(HashMap::new()),
            sign_ins_needed: Mutex::new(HashMap::new()),
            resource_owner: Mutex::new(HashMap::new()),
            subscriptions: Default::default(),
            changes,
            gateways: Gateways::default(),
        });
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(forward_changes(Arc::downgrade(&hub), hub.pool.changes()));
        }
        hub
    }

    pub(crate) fn servers(&self) -> Arc<Vec<UpstreamServer>> {
        self.servers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn cached_tools(&self, server: &str) -> Option<Vec<Value>> {
        self.tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(server)
            .cloned()
    }

    /// Records how a connect, listing or call of `server` ended: a refusal for
    /// want of a sign-in (`auth_required`) marks the server, a success clears the
    /// mark, and any other failure says nothing about the sign-in.
    pub(crate) fn note_sign_in(&self, server: &str, outcome: Option<&HecateError>) {
        let mut needed = self
            .sign_ins_needed
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        match outcome {
            None => {
                needed.remove(server);
            }
            Some(e) if e.error_type == ErrorType::AuthRequired => {
                needed.insert(server.to_string(), e.clone());
            }
            Some(_) => {}
        }
    }

    /// The refusal of `server`'s last connect, listing or call for want of a
    /// sign-in, unless something succeeded since.
    pub(crate) fn sign_in_needed(&self, server: &str) -> Option<HecateError> {
        self.sign_ins_needed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(server)
            .cloned()
    }

    pub(crate) fn forget_tools(&self, servers: &[String]) {
        let mut cache = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        for s in servers {
            cache.remove(s);
        }
        drop(cache);
        self.forget_catalog();
    }

    pub(crate) fn forget_catalog(&self) {
        let mut c = self.catalog.lock().unwrap_or_else(|p| p.into_inner());
        c.0 += 1;
        c.1 = None;
    }

    /// The cached catalog and the generation it belongs to.
    pub(crate) fn cached_catalog(&self) -> (u64, Option<Arc<IndexedCatalog>>) {
        let c = self.catalog.lock().unwrap_or_else(|p| p.into_inner());
        (c.0, c.1.clone())
    }

    /// Caches `catalog` unless something changed since generation `generation`.
    pub(crate) fn keep_catalog(&self, generation: u64, catalog: Arc<IndexedCatalog>) {
        let mut c = self.catalog.lock().unwrap_or_else(|p| p.into_inner());
        if c.0 == generation {
            c.1 = Some(catalog);
        }
    }
}

/// A complete catalog with its tools indexed by exposed name.
pub(crate) struct IndexedCatalog {
    pub(crate) catalog: McpCatalog,
    pub(crate) by_exposed: HashMap<String, usize>,
}

impl IndexedCatalog {
    pub(crate) fn new(catalog: McpCatalog) -> Self {
        let by_exposed = catalog
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.exposed.clone(), i))
            .collect();
        Self {
            catalog,
            by_exposed,
        }
    }

    /// The tool exposed as `exposed`.
    pub(crate) fn get(&self, exposed: &str) -> Option<&UpstreamTool> {
        self.by_exposed
            .get(exposed)
            .and_then(|&i| self.catalog.tools.get(i))
    }

    /// The exposed name of `server`'s tool `tool`.
    pub(crate) fn exposed_name(&self, server: &str, tool: &str) -> Option<&str> {
        self.catalog
            .tools
            .iter()
            .find(|t| t.server == server && t.tool == tool)
            .map(|t| t.exposed.as_str())
    }
}

async fn forward_changes(hub: Weak<McpHub>, mut rx: broadcast::Receiver<(u64, Changed)>) {
    loop {
        let (key, changed) = match rx.recv().await {
            Ok(v) => v,
            Err(broadcast::error::RecvError::Lagged(_)) => continue,
            Err(broadcast::error::RecvError::Closed) => return,
        };
        let Some(hub) = hub.upgrade() else { return };
        let affected: Vec<String> = hub
            .servers()
            .iter()
            .filter(|s| hub.pool.resolve(&s.spec).is_ok_and(|t| t.key() == key))
            .map(|s| s.name.clone())
            .collect();
        let change = match changed {
            Changed::Tools => {
                hub.forget_tools(&affected);
                McpChange::Tools
            }
            Changed::Resources => McpChange::Resources,
            Changed::Prompts => McpChange::Prompts,
            Changed::Resource(uri) => McpChange::ResourceUpdated(uri),
        };
        let _ = hub.changes.send(change);
    }
}

/// Hub-wide upstream resource subscriptions: one upstream subscription per URI
/// however many client connections follow it, with the pool lease held (so the
/// idle sweep keeps the connection, and the subscription, alive).
#[derive(Default)]
pub(crate) struct Subscriptions {
    by_uri: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Held>>>>,
    /// Set while the keeper task runs (shared with it, so a panic can clear it).
    pub(crate) keeper: Arc<AtomicBool>,
}

/// One URI's subscription: how many connections follow it and where it is held.
#[derive(Default)]
pub(crate) struct Held {
    pub(crate) count: usize,
    pub(crate) upstream: Option<(String, Lease)>,
}

impl Held {
    /// The upstream of a followed subscription whose connection went away.
    pub(crate) fn stale_server(&self) -> Option<String> {
        self.upstream
            .as_ref()
            .filter(|(_, lease)| self.count > 0 && lease.is_closed())
            .map(|(s, _)| s.clone())
    }

    /// The upstream of a followed subscription whose connection is open.
    pub(crate) fn live_server(&self) -> Option<String> {
        self.upstream
            .as_ref()
            .filter(|(_, lease)| self.count > 0 && !lease.is_closed())
            .map(|(s, _)| s.clone())
    }
}

impl Subscriptions {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<Held>>>> {
        self.by_uri.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(crate) fn slot(&self, uri: &str) -> Arc<tokio::sync::Mutex<Held>> {
        self.map().entry(uri.to_string()).or_default().clone()
    }

    /// Every URI followed now, with its slot.
    pub(crate) fn snapshot(&self) -> Vec<(String, Arc<tokio::sync::Mutex<Held>>)> {
        self.map()
            .iter()
            .map(|(u, s)| (u.clone(), s.clone()))
            .collect()
    }

    pub(crate) fn existing(&self, uri: &str) -> Option<Arc<tokio::sync::Mutex<Held>>> {
        self.map().get(uri).cloned()
    }

    pub(crate) fn is_current(&self, uri: &str, slot: &Arc<tokio::sync::Mutex<Held>>) -> bool {
        self.map().get(uri).is_some_and(|s| Arc::ptr_eq(s, slot))
    }

    /// Drops `slot` from the table (called with the slot locked, so a waiter on
    /// it sees it is stale and starts over).
    pub(crate) fn remove(&self, uri: &str, slot: &Arc<tokio::sync::Mutex<Held>>) {
        let mut map = self.map();
        if map.get(uri).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            map.remove(uri);
        }
    }
}

/// Gateway sessions known to exist and the leases this process holds on them.
#[derive(Default)]
pub(crate) struct Gateways {
    pub(crate) created: Mutex<HashSet<SessionId>>,
    pub(crate) held: Mutex<HashMap<SessionId, (usize, JoinHandle<()>)>>,
    pub(crate) acquiring: tokio::sync::Mutex<()>,
}
