//! Upstream MCP servers as the engine sees them: their configuration and policy,
//! the client pool, the aggregated catalog of tools (namespaced `NAME__tool`,
//! collision-free, within MCP's 64-character limit), resources and prompts, and
//! the change feed bridges turn into `list_changed` notifications. Tool and
//! prompt definitions stay opaque JSON here: the engine parses no MCP.

use super::Engine;
use crate::adapters::mcp::{Changed, McpClientError, Pool, PoolOptions, PoolStats, ProbeReport};
use crate::domain::error::{HecateError, Result};
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::Duration;
use tokio::sync::broadcast;

pub use crate::adapters::mcp::ServerSpec;

/// Longest tool or prompt name MCP clients accept.
pub const MAX_TOOL_NAME: usize = 64;

/// Default deadline of one proxied call, and of listing an upstream's catalog.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// Deadline of listing one upstream's tools, resources or prompts.
pub(crate) const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// How long a failed upstream listing is remembered before it is tried again, so
/// one broken upstream does not make every listing wait for it.
const FAILURE_TTL: Duration = Duration::from_secs(5);

/// Deadline of a probe (spawn, initialize, tools/list).
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The `_meta` key naming a proxied tool's upstream server and original name.
pub const UPSTREAM_META_KEY: &str = "hecate/upstream";

/// What the hub does with calls to an upstream tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolPolicy {
    /// Call without asking.
    Auto,
    /// Ask through the approval coordinator first.
    RequireApproval,
    /// Never call; the tool is hidden.
    Block,
}

impl ToolPolicy {
    /// Parses `auto`, `require_approval` or `block`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Self::Auto),
            "require_approval" => Some(Self::RequireApproval),
            "block" => Some(Self::Block),
            _ => None,
        }
    }

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::RequireApproval => "require_approval",
            Self::Block => "block",
        }
    }
}

/// One configured upstream server (`[mcp_servers.NAME]`).
#[derive(Debug, Clone)]
pub struct UpstreamServer {
    /// The alias; prefixes its tools (`NAME__tool`).
    pub name: String,
    /// How to reach it.
    pub spec: ServerSpec,
    /// Policy for its tools.
    pub policy: ToolPolicy,
    /// Per-tool overrides of the policy, by the tool's own name.
    pub tool_policies: BTreeMap<String, ToolPolicy>,
    /// Deadline of one call (the hub default when absent).
    pub call_timeout: Option<Duration>,
}

impl UpstreamServer {
    /// The policy that applies to `tool`.
    pub fn policy_for(&self, tool: &str) -> ToolPolicy {
        self.tool_policies.get(tool).copied().unwrap_or(self.policy)
    }
}

/// One upstream tool as the hub exposes it.
#[derive(Debug, Clone, Serialize)]
pub struct UpstreamTool {
    /// Server alias.
    pub server: String,
    /// The tool's own name upstream.
    pub tool: String,
    /// The name callers use.
    pub exposed: String,
    /// The policy that applies.
    pub policy: ToolPolicy,
    /// The definition to list: the upstream's, verbatim, with `name` replaced by
    /// `exposed` and the origin recorded under `_meta["hecate/upstream"]`.
    /// Shared, so the call path's lookups do not copy large schemas.
    pub definition: Arc<Value>,
}

/// An upstream that could not be listed.
#[derive(Debug, Clone, Serialize)]
pub struct UpstreamFailure {
    /// Server alias.
    pub server: String,
    /// Why.
    pub error: HecateError,
}

/// The aggregated tools of every upstream, with the ones that failed.
#[derive(Debug, Clone, Default, Serialize)]
pub struct McpCatalog {
    /// Tools, in configuration order.
    pub tools: Vec<UpstreamTool>,
    /// Upstreams that could not be listed.
    pub failures: Vec<UpstreamFailure>,
}

/// Something bridges should tell their MCP clients about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpChange {
    /// The aggregated tool list changed.
    Tools,
    /// The aggregated resource list changed.
    Resources,
    /// The aggregated prompt list changed.
    Prompts,
    /// One upstream resource changed.
    ResourceUpdated(String),
}

/// The engine's upstream-MCP state.
pub(crate) struct McpHub {
    servers: RwLock<Arc<Vec<UpstreamServer>>>,
    pub(crate) pool: Pool,
    tools: Mutex<HashMap<String, Vec<Value>>>,
    /// The whole catalog, built while every upstream listed fine; dropped (and
    /// its generation bumped) whenever a tool list or the configuration changes.
    catalog: Mutex<(u64, Option<Arc<IndexedCatalog>>)>,
    /// Set while a background build of the catalog runs.
    warming: std::sync::atomic::AtomicBool,
    failures: Mutex<HashMap<String, (std::time::Instant, HecateError)>>,
    pub(crate) resource_owner: Mutex<HashMap<String, String>>,
    /// Upstream resource subscriptions, refcounted across client connections.
    pub(crate) subscriptions: super::mcp_subscriptions::Subscriptions,
    pub(crate) changes: broadcast::Sender<McpChange>,
    pub(crate) gateways: super::mcp_gateway::Gateways,
}

impl McpHub {
    /// A hub with no upstream yet and a pool over Hecate's sanitized environment.
    pub(crate) fn start() -> Arc<Self> {
        let env = crate::adapters::acp::env::current_env();
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
            resource_owner: Mutex::new(HashMap::new()),
            subscriptions: Default::default(),
            changes,
            gateways: super::mcp_gateway::Gateways::default(),
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

    fn cached_tools(&self, server: &str) -> Option<Vec<Value>> {
        self.tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(server)
            .cloned()
    }

    fn forget_tools(&self, servers: &[String]) {
        let mut cache = self.tools.lock().unwrap_or_else(|p| p.into_inner());
        for s in servers {
            cache.remove(s);
        }
        drop(cache);
        self.forget_catalog();
    }

    fn forget_catalog(&self) {
        let mut c = self.catalog.lock().unwrap_or_else(|p| p.into_inner());
        c.0 += 1;
        c.1 = None;
    }

    /// The cached catalog and the generation it belongs to.
    fn cached_catalog(&self) -> (u64, Option<Arc<IndexedCatalog>>) {
        let c = self.catalog.lock().unwrap_or_else(|p| p.into_inner());
        (c.0, c.1.clone())
    }

    /// Caches `catalog` unless something changed since generation `generation`.
    fn keep_catalog(&self, generation: u64, catalog: Arc<IndexedCatalog>) {
        let mut c = self.catalog.lock().unwrap_or_else(|p| p.into_inner());
        if c.0 == generation {
            c.1 = Some(catalog);
        }
    }
}

/// A complete catalog with its tools indexed by exposed name.
pub(crate) struct IndexedCatalog {
    catalog: McpCatalog,
    by_exposed: HashMap<String, usize>,
}

impl IndexedCatalog {
    fn new(catalog: McpCatalog) -> Self {
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

/// Converts a pool failure into the engine's error, keeping the stderr tail.
pub(crate) fn client_error(server: &str, e: &McpClientError) -> HecateError {
    let err = HecateError::gateway(format!("upstream MCP server {server:?}: {e}"))
        .with_detail("server", server)
        .with_operator_action(
            "Check the [mcp_servers] entry (`hecate mcp probe` runs it alone) and the upstream's stderr.",
        );
    match e {
        McpClientError::Secret { name } => {
            HecateError::invalid(format!("upstream MCP server {server:?}: {e}"))
                .with_detail("server", server)
                .with_detail("variable", name.clone())
        }
        McpClientError::Config(_) => {
            HecateError::invalid(format!("upstream MCP server {server:?}: {e}"))
                .with_detail("server", server)
        }
        McpClientError::Timeout { .. } => err.with_detail("timeout", true),
        _ => err,
    }
}

/// Exposed names for `(server, name)` pairs, in order: `server__name` with
/// characters outside `[A-Za-z0-9_.-]` replaced, shortened with a hash suffix
/// past [`MAX_TOOL_NAME`], and suffixed `_2`, `_3`, ... on collision.
pub fn expose_names(pairs: &[(String, String)]) -> Vec<String> {
    let mut used: HashSet<String> = HashSet::new();
    let mut out = Vec::with_capacity(pairs.len());
    for (server, name) in pairs {
        let raw = format!("{server}__{name}");
        let clean: String = raw
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let base = if clean.len() > MAX_TOOL_NAME {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            raw.hash(&mut h);
            let suffix = format!("_{:08x}", h.finish() as u32);
            format!("{}{suffix}", &clean[..MAX_TOOL_NAME - suffix.len()])
        } else {
            clean
        };
        let mut candidate = base.clone();
        let mut n = 2;
        while used.contains(&candidate) {
            let suffix = format!("_{n}");
            let keep = base.len().min(MAX_TOOL_NAME - suffix.len());
            candidate = format!("{}{suffix}", &base[..keep]);
            n += 1;
        }
        used.insert(candidate.clone());
        out.push(candidate);
    }
    out
}

pub(crate) fn annotate(
    mut definition: Value,
    exposed: &str,
    server: &str,
    original: &str,
) -> Value {
    if let Some(obj) = definition.as_object_mut() {
        obj.insert("name".into(), Value::String(exposed.to_string()));
        let meta = obj
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(m) = meta.as_object_mut() {
            m.insert(
                UPSTREAM_META_KEY.into(),
                json!({"server": server, "name": original}),
            );
        }
    }
    definition
}

pub(crate) fn name_of(v: &Value) -> String {
    v.get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

impl Engine {
    pub(crate) fn mcp_hub(&self) -> &McpHub {
        &self.inner.mcp
    }

    /// Replaces the configured upstream servers (names must be unique); clients
    /// are told their lists changed.
    pub fn configure_mcp_servers(&self, servers: Vec<UpstreamServer>) -> Result<()> {
        let mut seen = HashSet::new();
        for s in &servers {
            if s.name.is_empty() || !seen.insert(s.name.clone()) {
                return Err(HecateError::invalid(format!(
                    "MCP server names must be unique and non-empty: {:?}",
                    s.name
                )));
            }
        }
        let hub = self.mcp_hub();
        *hub.servers.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(servers);
        hub.tools.lock().unwrap_or_else(|p| p.into_inner()).clear();
        hub.forget_catalog();
        for c in [McpChange::Tools, McpChange::Resources, McpChange::Prompts] {
            let _ = hub.changes.send(c);
        }
        Ok(())
    }

    /// The configured upstream servers.
    pub fn mcp_servers(&self) -> Arc<Vec<UpstreamServer>> {
        self.mcp_hub().servers()
    }

    /// Changes bridges relay to their clients (`list_changed`, resource updates).
    pub fn mcp_changes(&self) -> broadcast::Receiver<McpChange> {
        self.mcp_hub().changes.subscribe()
    }

    /// Replaces the MCP client pool's tunables (`[mcp_pool]`): idle TTL, LRU
    /// cap, ping interval and bring-up deadline apply from the next sweep and
    /// bring-up on.
    pub fn configure_mcp_pool(&self, opts: PoolOptions) {
        self.mcp_hub().pool.set_options(opts);
    }

    /// The client pool's entries, leases in use and idle entries.
    pub fn mcp_pool_stats(&self) -> PoolStats {
        self.mcp_hub().pool.stats()
    }

    /// Brings an upstream up outside the pool, lists its tools (un-namespaced)
    /// and tears it down, within 10 seconds.
    pub async fn mcp_probe(&self, spec: &ServerSpec) -> Result<ProbeReport> {
        self.mcp_hub()
            .pool
            .probe(spec, PROBE_TIMEOUT)
            .await
            .map_err(|e| client_error("probe", &e))
    }

    async fn upstream_tools(&self, server: &UpstreamServer) -> Result<Vec<Value>> {
        let hub = self.mcp_hub();
        if let Some(t) = hub.cached_tools(&server.name) {
            return Ok(t);
        }
        let recent = hub
            .failures
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&server.name)
            .filter(|(at, _)| at.elapsed() < FAILURE_TTL)
            .map(|(_, e)| e.clone());
        if let Some(e) = recent {
            return Err(e);
        }
        let result = self.list_upstream_tools(server).await;
        let mut failures = hub.failures.lock().unwrap_or_else(|p| p.into_inner());
        match &result {
            Ok(_) => failures.remove(&server.name),
            Err(e) => failures.insert(server.name.clone(), (std::time::Instant::now(), e.clone())),
        };
        result
    }

    async fn list_upstream_tools(&self, server: &UpstreamServer) -> Result<Vec<Value>> {
        let hub = self.mcp_hub();
        let lease = hub
            .pool
            .acquire(&server.spec, server.call_timeout)
            .await
            .map_err(|e| client_error(&server.name, &e))?;
        let tools = match lease.list_tools(LIST_TIMEOUT).await {
            Ok(t) => t,
            Err(e) => {
                if e.is_fatal_to_connection() {
                    hub.pool.evict(&lease);
                }
                return Err(client_error(&server.name, &e));
            }
        };
        hub.tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(server.name.clone(), tools.clone());
        Ok(tools)
    }

    /// The aggregated tools of every non-blocked upstream (blocked tools hidden).
    pub async fn mcp_tools(&self) -> McpCatalog {
        match self.mcp_catalog_if_complete().await {
            Ok(c) => c.catalog.clone(),
            Err(partial) => partial,
        }
    }

    /// The catalog, from the cache when it holds one; a catalog built while
    /// every upstream listed fine is cached, a partial one is returned as `Err`.
    pub(crate) async fn mcp_catalog_if_complete(
        &self,
    ) -> std::result::Result<Arc<IndexedCatalog>, McpCatalog> {
        let hub = self.mcp_hub();
        let (generation, cached) = hub.cached_catalog();
        if let Some(c) = cached {
            return Ok(c);
        }
        let servers = self.mcp_servers();
        let catalog = self.mcp_tools_of(servers.iter().collect()).await;
        if !catalog.failures.is_empty() {
            return Err(catalog);
        }
        let indexed = Arc::new(IndexedCatalog::new(catalog));
        hub.keep_catalog(generation, indexed.clone());
        Ok(indexed)
    }

    /// Builds the complete catalog in the background (once at a time), so the
    /// next calls find their tool in the cache.
    pub(crate) fn warm_mcp_catalog(&self) {
        let hub = self.mcp_hub();
        if hub.warming.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        let engine = self.clone();
        tokio::spawn(async move {
            let _ = engine.mcp_catalog_if_complete().await;
            engine
                .mcp_hub()
                .warming
                .store(false, std::sync::atomic::Ordering::Release);
        });
    }

    /// The cached complete catalog, without listing anything.
    pub(crate) fn mcp_cached_catalog(&self) -> Option<Arc<IndexedCatalog>> {
        self.mcp_hub().cached_catalog().1
    }

    /// The tools of `servers` only, named as in the full catalog (server names
    /// contain no `__`, so names of different servers cannot collide except in
    /// degenerate cases).
    pub(crate) async fn mcp_tools_of(&self, servers: Vec<&UpstreamServer>) -> McpCatalog {
        let active: Vec<&UpstreamServer> = servers
            .into_iter()
            .filter(|s| s.policy != ToolPolicy::Block || !s.tool_policies.is_empty())
            .collect();
        let lists = futures::future::join_all(active.iter().map(|s| self.upstream_tools(s))).await;
        let mut catalog = McpCatalog::default();
        let mut pairs = Vec::new();
        let mut defs = Vec::new();
        for (server, list) in active.iter().zip(lists) {
            match list {
                Ok(tools) => {
                    for t in tools {
                        let name = name_of(&t);
                        let policy = server.policy_for(&name);
                        if policy == ToolPolicy::Block {
                            continue;
                        }
                        pairs.push((server.name.clone(), name));
                        defs.push((policy, t));
                    }
                }
                Err(error) => catalog.failures.push(UpstreamFailure {
                    server: server.name.clone(),
                    error,
                }),
            }
        }
        let exposed = expose_names(&pairs);
        for (((server, tool), exposed), (policy, def)) in pairs.into_iter().zip(exposed).zip(defs) {
            let definition = Arc::new(annotate(def, &exposed, &server, &tool));
            catalog.tools.push(UpstreamTool {
                server,
                tool,
                exposed,
                policy,
                definition,
            });
        }
        catalog
    }

    /// Finds the server configured under `name`.
    pub(crate) fn mcp_server(&self, name: &str) -> Result<UpstreamServer> {
        self.mcp_servers()
            .iter()
            .find(|s| s.name == name)
            .cloned()
            .ok_or_else(|| HecateError::not_found("MCP server", name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str, n: &str) -> (String, String) {
        (s.to_string(), n.to_string())
    }

    #[test]
    fn names_are_namespaced_unique_and_short_enough() {
        let long = "x".repeat(80);
        let names = expose_names(&[
            p("fs", "read_file"),
            p("other", "read_file"),
            p("a", "b__c"),
            p("a__b", "c"),
            p("srv", &long),
            p("srv", &format!("{long}y")),
            p("we ird", "na/me"),
        ]);
        assert_eq!(names[0], "fs__read_file");
        assert_eq!(names[1], "other__read_file");
        assert_eq!(names[2], "a__b__c");
        assert_eq!(names[3], "a__b__c_2", "collisions get a suffix");
        assert!(names.iter().all(|n| n.len() <= MAX_TOOL_NAME), "{names:?}");
        assert_ne!(names[4], names[5]);
        assert_eq!(names[6], "we_ird__na_me");
        let unique: HashSet<&String> = names.iter().collect();
        assert_eq!(unique.len(), names.len());
    }

    #[test]
    fn annotation_keeps_the_schema_and_records_the_origin() {
        let def = json!({"name": "echo", "inputSchema": {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "$defs": {"x": {}}}, "_meta": {"k": 1}});
        let out = annotate(def.clone(), "up__echo", "up", "echo");
        assert_eq!(out["name"], "up__echo");
        assert_eq!(out["inputSchema"], def["inputSchema"]);
        assert_eq!(out["_meta"]["k"], 1);
        assert_eq!(out["_meta"][UPSTREAM_META_KEY]["name"], "echo");
    }

    #[test]
    fn per_tool_policy_overrides_the_server() {
        let s = UpstreamServer {
            name: "fs".into(),
            spec: ServerSpec::Http {
                url: "http://127.0.0.1:1/mcp".into(),
                headers: BTreeMap::new(),
            },
            policy: ToolPolicy::Auto,
            tool_policies: [("write".to_string(), ToolPolicy::RequireApproval)].into(),
            call_timeout: None,
        };
        assert_eq!(s.policy_for("write"), ToolPolicy::RequireApproval);
        assert_eq!(s.policy_for("read"), ToolPolicy::Auto);
        assert_eq!(ToolPolicy::parse("block"), Some(ToolPolicy::Block));
        assert_eq!(ToolPolicy::parse("nope"), None);
    }
}
