//! The catalog face of the engine's MCP hub: configuring upstream servers and the
//! pool, probing one, listing each upstream's tools (cached, with failures
//! remembered briefly), and the aggregated catalog (namespaced `NAME__tool`,
//! collision-free, within MCP's 64-character limit). Tool definitions stay opaque
//! JSON here: the engine parses no MCP.

use super::state::IndexedCatalog;
use super::types::{
    LIST_TIMEOUT, McpCatalog, McpChange, ServerSpec, ToolPolicy, UpstreamFailure, UpstreamServer,
    UpstreamTool, client_error, expose_names,
};
use crate::adapters::mcp::Lease;
use crate::adapters::mcp::tool_def::{annotate, name_of};
use crate::adapters::mcp::{EntryInfo, McpProbe, PoolOptions, PoolStats};
use crate::domain::error::{HecateError, Result};
use crate::engine::Mcp;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;

/// How long a failed upstream listing is remembered before it is tried again, so
/// one broken upstream does not make every listing wait for it.
const FAILURE_TTL: Duration = Duration::from_secs(5);

/// Deadline of a probe (spawn, initialize, tools/list).
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

impl<'e> Mcp<'e> {
    /// Replaces the configured upstream servers (names must be unique); clients
    /// are told their lists changed.
    pub fn configure_servers(self, servers: Vec<UpstreamServer>) -> Result<()> {
        let mut seen = HashSet::new();
        for s in &servers {
            if s.name.is_empty() || !seen.insert(s.name.clone()) {
                return Err(HecateError::invalid(format!(
                    "MCP server names must be unique and non-empty: {:?}",
                    s.name
                )));
            }
        }
        let hub = self.engine.mcp_hub();
        *hub.servers.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(servers);
        hub.tools.lock().unwrap_or_else(|p| p.into_inner()).clear();
        hub.forget_catalog();
        self.configure_sign_ins();
        for c in [McpChange::Tools, McpChange::Resources, McpChange::Prompts] {
            let _ = hub.changes.send(c);
        }
        Ok(())
    }

    /// The configured upstream servers.
    pub fn servers(self) -> Arc<Vec<UpstreamServer>> {
        self.engine.mcp_hub().servers()
    }

    /// Changes bridges relay to their clients (`list_changed`, resource updates).
    pub fn changes(self) -> broadcast::Receiver<McpChange> {
        self.engine.mcp_hub().changes.subscribe()
    }

    /// Replaces the MCP client pool's tunables (`[mcp_pool]`): idle TTL, LRU
    /// cap, ping interval and bring-up deadline apply from the next sweep and
    /// bring-up on.
    pub fn configure_pool(self, opts: PoolOptions) {
        self.engine.mcp_hub().pool.set_options(opts);
    }

    /// The client pool's entries, leases in use and idle entries.
    pub fn pool_stats(self) -> PoolStats {
        self.engine.mcp_hub().pool.stats()
    }

    /// The client pool's cached connections, most recently used first.
    pub fn pool_entries(self) -> Vec<EntryInfo> {
        self.engine.mcp_hub().pool.entries()
    }

    /// Brings an upstream up outside the pool, lists its tools (un-namespaced)
    /// and tears it down, within 10 seconds. A failure is `invalid_request`
    /// whatever the cause (the definition is what is being tested), with the
    /// failed `stage` in its details.
    pub async fn probe(self, spec: &ServerSpec) -> Result<McpProbe> {
        self.probe_named("probe", spec).await
    }

    /// Probes one server entry shaped like a task's `mcp_servers` item (`name`
    /// defaults to `probe`); answers the name and what the probe found.
    pub async fn probe_entry(self, entry: &Value) -> Result<(String, McpProbe)> {
        let e = super::entry::parse(entry, Some("probe"))?;
        let report = self.probe_named(&e.name, &e.spec).await?;
        Ok((e.name, report))
    }

    /// [`Mcp::probe`](crate::engine::Mcp::probe) for a server called `name`.
    pub async fn probe_named(self, name: &str, spec: &ServerSpec) -> Result<McpProbe> {
        self.engine
            .mcp_hub()
            .pool
            .probe(spec, PROBE_TIMEOUT)
            .await
            .map_err(|f| {
                let e = client_error(name, &f.error);
                let mut out =
                    HecateError::invalid(format!("{} failed: {}", f.stage.as_str(), e.message));
                out.details = e.details;
                out.operator_action = e.operator_action;
                out.with_detail("stage", f.stage.as_str())
            })
    }

    pub(super) async fn upstream_tools(self, server: &UpstreamServer) -> Result<Vec<Value>> {
        let hub = self.engine.mcp_hub();
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

    async fn list_upstream_tools(self, server: &UpstreamServer) -> Result<Vec<Value>> {
        let hub = self.engine.mcp_hub();
        let lease = self.lease(server).await?;
        lease.name_as(&server.name);
        let tools = match lease.list_tools(LIST_TIMEOUT).await {
            Ok(t) => t,
            Err(e) => {
                if e.is_fatal_to_connection() {
                    hub.pool.evict(&lease);
                }
                let e = client_error(&server.name, &e);
                hub.note_sign_in(&server.name, Some(&e));
                return Err(e);
            }
        };
        hub.note_sign_in(&server.name, None);
        lease.note_tool_count(tools.len());
        hub.tools
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(server.name.clone(), tools.clone());
        Ok(tools)
    }

    /// The aggregated tools of every non-blocked upstream (blocked tools hidden).
    pub async fn tools(self) -> McpCatalog {
        match self.mcp_catalog_if_complete().await {
            Ok(c) => c.catalog.clone(),
            Err(partial) => partial,
        }
    }

    /// The catalog, from the cache when it holds one; a catalog built while
    /// every upstream listed fine is cached, a partial one is returned as `Err`.
    pub(crate) async fn mcp_catalog_if_complete(
        self,
    ) -> std::result::Result<Arc<IndexedCatalog>, McpCatalog> {
        let hub = self.engine.mcp_hub();
        let (generation, cached) = hub.cached_catalog();
        if let Some(c) = cached {
            return Ok(c);
        }
        let servers = self.servers();
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
    pub(crate) fn warm_mcp_catalog(self) {
        let hub = self.engine.mcp_hub();
        if hub.warming.swap(true, std::sync::atomic::Ordering::AcqRel) {
            return;
        }
        let engine = self.engine.clone();
        tokio::spawn(async move {
            let _ = engine.mcp().mcp_catalog_if_complete().await;
            engine
                .mcp_hub()
                .warming
                .store(false, std::sync::atomic::Ordering::Release);
        });
    }

    /// The cached complete catalog, without listing anything.
    pub(crate) fn mcp_cached_catalog(self) -> Option<Arc<IndexedCatalog>> {
        self.engine.mcp_hub().cached_catalog().1
    }

    /// The tools of `servers` only, named as in the full catalog (server names
    /// contain no `__`, so names of different servers cannot collide except in
    /// degenerate cases).
    pub(crate) async fn mcp_tools_of(self, servers: Vec<&UpstreamServer>) -> McpCatalog {
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
                        let policy = server.policy_for_tool(&name, &t);
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
    pub(crate) fn mcp_server(self, name: &str) -> Result<UpstreamServer> {
        self.servers()
            .iter()
            .find(|s| s.name == name)
            .cloned()
            .ok_or_else(|| HecateError::not_found("MCP server", name))
    }

    /// A pooled connection to upstream `s`, started or reused; a failure to
    /// reach it is `s`'s client error (a refused sign-in is remembered for the
    /// server's state).
    pub(crate) async fn lease(self, s: &UpstreamServer) -> Result<Lease> {
        let hub = self.engine.mcp_hub();
        hub.pool
            .acquire(&s.spec, s.call_timeout)
            .await
            .map_err(|e| {
                let e = client_error(&s.name, &e);
                hub.note_sign_in(&s.name, Some(&e));
                e
            })
    }
}
