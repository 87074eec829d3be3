//! Upstream resources, resource templates, prompts and completions passed
//! through the hub: listed from every non-blocked upstream (prompts namespaced
//! like tools), read or fetched from the upstream that owns them, and resource
//! subscriptions forwarded upstream, refcounted hub-wide by URI.

use super::Engine;
use super::mcp_catalog::{
    LIST_TIMEOUT, ToolPolicy, UpstreamServer, annotate, client_error, expose_names, name_of,
};
use crate::adapters::mcp::Lease;
use crate::domain::error::{HecateError, Result};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Deadline of one upstream `resources/subscribe` or `resources/unsubscribe`.
const SUBSCRIBE_TIMEOUT: std::time::Duration = LIST_TIMEOUT;

/// Hub-wide upstream resource subscriptions: one upstream subscription per URI
/// however many client connections follow it, with the pool lease held (so the
/// idle sweep keeps the connection, and the subscription, alive).
#[derive(Default)]
pub(crate) struct Subscriptions {
    by_uri: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Held>>>>,
}

/// One URI's subscription: how many connections follow it and where it is held.
#[derive(Default)]
struct Held {
    count: usize,
    upstream: Option<(String, Lease)>,
}

impl Subscriptions {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<Held>>>> {
        self.by_uri.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn slot(&self, uri: &str) -> Arc<tokio::sync::Mutex<Held>> {
        self.map().entry(uri.to_string()).or_default().clone()
    }

    fn existing(&self, uri: &str) -> Option<Arc<tokio::sync::Mutex<Held>>> {
        self.map().get(uri).cloned()
    }

    fn is_current(&self, uri: &str, slot: &Arc<tokio::sync::Mutex<Held>>) -> bool {
        self.map().get(uri).is_some_and(|s| Arc::ptr_eq(s, slot))
    }

    /// Drops `slot` from the table (called with the slot locked, so a waiter on
    /// it sees it is stale and starts over).
    fn remove(&self, uri: &str, slot: &Arc<tokio::sync::Mutex<Held>>) {
        let mut map = self.map();
        if map.get(uri).is_some_and(|s| Arc::ptr_eq(s, slot)) {
            map.remove(uri);
        }
    }
}

impl Engine {
    /// The resources of every non-blocked upstream, each listed verbatim with the
    /// alias of the server that owns it.
    pub async fn mcp_resources(&self) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        for s in self
            .mcp_servers()
            .iter()
            .filter(|s| s.policy != ToolPolicy::Block)
        {
            let Ok(lease) = self.mcp_hub().pool.acquire(&s.spec, s.call_timeout).await else {
                continue;
            };
            if let Ok(list) = lease.list_resources(LIST_TIMEOUT).await {
                let mut owners = self
                    .mcp_hub()
                    .resource_owner
                    .lock()
                    .unwrap_or_else(|p| p.into_inner());
                for r in list {
                    if let Some(uri) = r.get("uri").and_then(Value::as_str) {
                        owners.insert(uri.to_string(), s.name.clone());
                    }
                    out.push((s.name.clone(), r));
                }
            }
        }
        out
    }

    /// The resource templates of every non-blocked upstream.
    pub async fn mcp_resource_templates(&self) -> Vec<(String, Value)> {
        let mut out = Vec::new();
        for s in self
            .mcp_servers()
            .iter()
            .filter(|s| s.policy != ToolPolicy::Block)
        {
            let Ok(lease) = self.mcp_hub().pool.acquire(&s.spec, s.call_timeout).await else {
                continue;
            };
            if let Ok(list) = lease.list_resource_templates(LIST_TIMEOUT).await {
                out.extend(list.into_iter().map(|t| (s.name.clone(), t)));
            }
        }
        out
    }

    /// Reads an upstream resource: from the server that listed it, else from the
    /// first non-blocked server that can read it (`not_found` when none can).
    pub async fn mcp_read_resource(&self, uri: &str) -> Result<Value> {
        let owner = self
            .mcp_hub()
            .resource_owner
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(uri)
            .cloned();
        let servers = self.mcp_servers();
        let mut order: Vec<&UpstreamServer> = servers
            .iter()
            .filter(|s| s.policy != ToolPolicy::Block)
            .collect();
        order.sort_by_key(|s| Some(&s.name) != owner.as_ref());
        for s in order {
            let Ok(lease) = self.mcp_hub().pool.acquire(&s.spec, s.call_timeout).await else {
                continue;
            };
            if let Ok(v) = lease.read_resource(uri, LIST_TIMEOUT).await {
                return Ok(v);
            }
        }
        Err(HecateError::not_found("resource", uri))
    }

    /// The prompts of every non-blocked upstream, namespaced like tools: each is
    /// `(server, original name, exposed name, definition)`.
    pub async fn mcp_prompts(&self) -> Vec<(String, String, String, Value)> {
        let mut raw = Vec::new();
        for s in self
            .mcp_servers()
            .iter()
            .filter(|s| s.policy != ToolPolicy::Block)
        {
            let Ok(lease) = self.mcp_hub().pool.acquire(&s.spec, s.call_timeout).await else {
                continue;
            };
            if let Ok(list) = lease.list_prompts(LIST_TIMEOUT).await {
                raw.extend(list.into_iter().map(|p| (s.name.clone(), name_of(&p), p)));
            }
        }
        let pairs: Vec<(String, String)> =
            raw.iter().map(|(s, n, _)| (s.clone(), n.clone())).collect();
        let exposed = expose_names(&pairs);
        raw.into_iter()
            .zip(exposed)
            .map(|((s, n, p), e)| {
                let def = annotate(p, &e, &s, &n);
                (s, n, e, def)
            })
            .collect()
    }

    /// Asks upstream `server` for completions; params and result are the MCP
    /// `completion/complete` JSON.
    pub async fn mcp_complete(&self, server: &str, params: Value) -> Result<Value> {
        let s = self.mcp_server(server)?;
        let lease = self
            .mcp_hub()
            .pool
            .acquire(&s.spec, s.call_timeout)
            .await
            .map_err(|e| client_error(server, &e))?;
        lease
            .complete(params, LIST_TIMEOUT)
            .await
            .map_err(|e| client_error(server, &e))
    }

    /// Gets an upstream prompt by its exposed name; `not_found` when no upstream
    /// prompt has that name.
    pub async fn mcp_get_prompt(
        &self,
        exposed: &str,
        arguments: Option<Map<String, Value>>,
    ) -> Result<Value> {
        let Some((server, original, _, _)) = self
            .mcp_prompts()
            .await
            .into_iter()
            .find(|(_, _, e, _)| e == exposed)
        else {
            return Err(HecateError::not_found("prompt", exposed));
        };
        let s = self.mcp_server(&server)?;
        let lease = self
            .mcp_hub()
            .pool
            .acquire(&s.spec, s.call_timeout)
            .await
            .map_err(|e| client_error(&server, &e))?;
        lease
            .get_prompt(&original, arguments, LIST_TIMEOUT)
            .await
            .map_err(|e| client_error(&server, &e))
    }
}

impl Engine {
    /// Follows upstream resource `uri` for one more client connection. The first
    /// follower sends `resources/subscribe` to the upstream that owns the URI
    /// (from the last resource listing, listing first when it is unknown, else
    /// the first non-blocked upstream advertising subscriptions that accepts it)
    /// and holds its connection; later ones only count. `only` restricts the
    /// choice to one upstream (the `/mcp/NAME` passthrough). `not_found` when no
    /// upstream has the URI; a gateway error when the upstream failed.
    pub async fn mcp_subscribe(&self, uri: &str, only: Option<&str>) -> Result<()> {
        let subs = &self.mcp_hub().subscriptions;
        loop {
            let slot = subs.slot(uri);
            let mut held = slot.lock().await;
            if !subs.is_current(uri, &slot) {
                continue;
            }
            if held.count > 0 {
                let server = held.upstream.as_ref().map(|(s, _)| s.clone());
                if let (Some(o), Some(s)) = (only, &server)
                    && o != s
                {
                    return Err(HecateError::not_found("resource", uri));
                }
                let stale = held
                    .upstream
                    .as_ref()
                    .is_none_or(|(_, lease)| lease.is_closed());
                if stale {
                    // The connection went away under the subscription: take
                    // it out again on a fresh one (best effort).
                    match self
                        .subscribe_upstream(uri, server.as_deref().or(only))
                        .await
                    {
                        Ok(up) => held.upstream = Some(up),
                        Err(e) => {
                            tracing::warn!(uri, error = %e, "could not renew an upstream resource subscription")
                        }
                    }
                }
                held.count += 1;
                return Ok(());
            }
            return match self.subscribe_upstream(uri, only).await {
                Ok(up) => {
                    held.count = 1;
                    held.upstream = Some(up);
                    Ok(())
                }
                Err(e) => {
                    subs.remove(uri, &slot);
                    Err(e)
                }
            };
        }
    }

    /// Stops following `uri` for one client connection; the last follower sends
    /// `resources/unsubscribe` upstream and releases the connection. `Ok(false)`
    /// when nobody followed it. The hub-side subscription is released even when
    /// the upstream fails to answer (that failure is returned).
    pub async fn mcp_unsubscribe(&self, uri: &str) -> Result<bool> {
        let subs = &self.mcp_hub().subscriptions;
        loop {
            let Some(slot) = subs.existing(uri) else {
                return Ok(false);
            };
            let mut held = slot.lock().await;
            if !subs.is_current(uri, &slot) {
                continue;
            }
            if held.count > 1 {
                held.count -= 1;
                return Ok(true);
            }
            held.count = 0;
            let upstream = held.upstream.take();
            let result = match &upstream {
                Some((server, lease)) if !lease.is_closed() => {
                    match lease.unsubscribe(uri, SUBSCRIBE_TIMEOUT).await {
                        Ok(_) => Ok(true),
                        Err(e) => {
                            if e.is_fatal_to_connection() {
                                self.mcp_hub().pool.evict(lease);
                            }
                            Err(client_error(server, &e))
                        }
                    }
                }
                _ => Ok(true),
            };
            subs.remove(uri, &slot);
            drop(held);
            drop(upstream);
            return result;
        }
    }

    /// Releases the subscriptions of a client connection that ended, in the
    /// background (one [`Engine::mcp_unsubscribe`] per URI).
    pub fn mcp_release_subscriptions(&self, uris: Vec<String>) {
        if uris.is_empty() || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let engine = self.clone();
        tokio::spawn(async move {
            for uri in uris {
                if let Err(e) = engine.mcp_unsubscribe(&uri).await {
                    tracing::warn!(uri, error = %e, "releasing an upstream resource subscription failed");
                }
            }
        });
    }

    /// Takes out the upstream subscription of `uri`: on its owner when known,
    /// else on the first eligible upstream that accepts it.
    async fn subscribe_upstream(&self, uri: &str, only: Option<&str>) -> Result<(String, Lease)> {
        let servers = self.mcp_servers();
        let eligible =
            |s: &&UpstreamServer| s.policy != ToolPolicy::Block && only.is_none_or(|o| s.name == o);
        let owner = || {
            self.mcp_hub()
                .resource_owner
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(uri)
                .cloned()
        };
        let mut known = owner();
        if known.is_none() {
            self.mcp_resources().await;
            known = owner();
        }
        if let Some(s) =
            known.and_then(|name| servers.iter().filter(eligible).find(|s| s.name == name))
        {
            return self.subscribe_on(s, uri).await;
        }
        for s in servers.iter().filter(eligible) {
            let Ok(lease) = self.mcp_hub().pool.acquire(&s.spec, s.call_timeout).await else {
                continue;
            };
            if !lease.supports_subscribe() {
                continue;
            }
            match lease.subscribe(uri, SUBSCRIBE_TIMEOUT).await {
                Ok(true) => return Ok((s.name.clone(), lease)),
                Ok(false) => {}
                Err(e) => {
                    if e.is_fatal_to_connection() {
                        self.mcp_hub().pool.evict(&lease);
                    }
                    tracing::debug!(server = %s.name, uri, error = %e, "upstream refused a resource subscription");
                }
            }
        }
        Err(HecateError::not_found("resource", uri))
    }

    async fn subscribe_on(&self, s: &UpstreamServer, uri: &str) -> Result<(String, Lease)> {
        let hub = self.mcp_hub();
        let lease = hub
            .pool
            .acquire(&s.spec, s.call_timeout)
            .await
            .map_err(|e| client_error(&s.name, &e))?;
        match lease.subscribe(uri, SUBSCRIBE_TIMEOUT).await {
            Ok(true) => Ok((s.name.clone(), lease)),
            Ok(false) => Err(HecateError::invalid(format!(
                "upstream MCP server {:?} does not support resource subscriptions",
                s.name
            ))
            .with_detail("server", s.name.clone())
            .with_detail("uri", uri)),
            Err(e) => {
                if e.is_fatal_to_connection() {
                    hub.pool.evict(&lease);
                }
                Err(client_error(&s.name, &e))
            }
        }
    }
}
