//! Upstream resource subscriptions, refcounted hub-wide by URI: the first
//! follower of a URI subscribes on the upstream that owns it and holds its pool
//! lease; the last one unsubscribes. A keeper task renews a subscription whose
//! upstream connection went away (a crash, an eviction) with backoff, and tells
//! the followers the resource may have changed meanwhile. An HTTP upstream that
//! restarts is not seen as gone (rmcp's client keeps its transport open and
//! re-initializes the session when a request gets 404), so the keeper also
//! sends each subscription held on an HTTP upstream again every
//! [`HTTP_REFRESH`], which takes it out on the new session.

use super::state::Held;
use super::types::{LIST_TIMEOUT, McpChange, ServerSpec, ToolPolicy, UpstreamServer, client_error};
use crate::adapters::mcp::Lease;
use crate::domain::error::{HecateError, Result};
use crate::engine::{Engine, Mcp};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often the keeper looks for subscriptions whose connection went away.
const RENEW_CHECK: Duration = Duration::from_secs(1);
/// The longest wait between two renewal attempts of one subscription.
const RENEW_BACKOFF_MAX: Duration = Duration::from_secs(60);
/// How often a subscription held on a Streamable HTTP upstream is sent again.
const HTTP_REFRESH: Duration = Duration::from_secs(30);

/// Deadline of one upstream `resources/subscribe` or `resources/unsubscribe`.
const SUBSCRIBE_TIMEOUT: std::time::Duration = LIST_TIMEOUT;

/// What the keeper remembers between looks, by URI.
#[derive(Default)]
struct KeeperState {
    /// When a failed renewal may be tried again, and the wait before that try.
    retry: HashMap<String, (Instant, Duration)>,
    /// When the subscription was last sent to its (HTTP) upstream.
    refreshed: HashMap<String, Instant>,
}

/// Clears the keeper flag if the keeper task panics, so a later subscription
/// starts a new one.
struct KeeperFlag(Arc<AtomicBool>);

impl Drop for KeeperFlag {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(false, Ordering::Release);
        }
    }
}

impl<'e> Mcp<'e> {
    /// Follows upstream resource `uri` for one more client connection. The first
    /// follower sends `resources/subscribe` to the upstream that owns the URI
    /// (from the last resource listing, listing first when it is unknown, else
    /// the first non-blocked upstream advertising subscriptions that accepts it)
    /// and holds its connection; later ones only count. `only` restricts the
    /// choice to one upstream (the `/mcp/NAME` passthrough). `not_found` when no
    /// upstream has the URI; a gateway error when the upstream failed.
    pub async fn subscribe(self, uri: &str, only: Option<&str>) -> Result<()> {
        let subs = &self.engine.mcp_hub().subscriptions;
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
                if let Some(server) = held.stale_server() {
                    // The connection went away under the subscription: take it
                    // out again now rather than at the keeper's next look.
                    if let Err(e) = self.renew(uri, &mut held, &server, true).await {
                        tracing::warn!(uri, server, error = %e, "could not renew an upstream resource subscription");
                    }
                }
                held.count += 1;
                return Ok(());
            }
            return match self.subscribe_upstream(uri, only).await {
                Ok(up) => {
                    held.count = 1;
                    held.upstream = Some(up);
                    self.keep_subscriptions();
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
    pub async fn unsubscribe(self, uri: &str) -> Result<bool> {
        let subs = &self.engine.mcp_hub().subscriptions;
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
                                self.engine.mcp_hub().pool.evict(lease);
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
    /// background (one [`Mcp::unsubscribe`](crate::engine::Mcp::unsubscribe) per URI).
    pub fn release_subscriptions(self, uris: Vec<String>) {
        if uris.is_empty() || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let engine = self.engine.clone();
        tokio::spawn(async move {
            for uri in uris {
                if let Err(e) = engine.mcp().unsubscribe(&uri).await {
                    tracing::warn!(uri, error = %e, "releasing an upstream resource subscription failed");
                }
            }
        });
    }

    /// Starts the keeper task unless it runs; it ends when nothing is followed
    /// or the engine is gone (it holds the engine weakly).
    fn keep_subscriptions(self) {
        let subs = &self.engine.mcp_hub().subscriptions;
        if tokio::runtime::Handle::try_current().is_err()
            || subs.keeper.swap(true, Ordering::AcqRel)
        {
            return;
        }
        let flag = KeeperFlag(subs.keeper.clone());
        let engine = Arc::downgrade(&self.engine.inner);
        tokio::spawn(async move {
            let _flag = flag;
            let mut state = KeeperState::default();
            loop {
                tokio::time::sleep(RENEW_CHECK).await;
                let Some(inner) = engine.upgrade() else {
                    return;
                };
                if !(Engine { inner }).mcp().keep_once(&mut state).await {
                    return;
                }
            }
        });
    }

    /// One look of the keeper: renews each followed subscription whose upstream
    /// connection closed, unless its retry is not due (waits double from
    /// 2 × [`RENEW_CHECK`] up to [`RENEW_BACKOFF_MAX`] while renewal fails), and
    /// sends again those held on an HTTP upstream for [`HTTP_REFRESH`]. `false`
    /// when nothing is followed and the keeper should end.
    async fn keep_once(self, state: &mut KeeperState) -> bool {
        let subs = &self.engine.mcp_hub().subscriptions;
        let followed = subs.snapshot();
        if followed.is_empty() {
            subs.keeper.store(false, Ordering::Release);
            // A subscription taken out just now saw the keeper running: go on.
            return !subs.snapshot().is_empty() && !subs.keeper.swap(true, Ordering::AcqRel);
        }
        state
            .retry
            .retain(|uri, _| followed.iter().any(|(u, _)| u == uri));
        state
            .refreshed
            .retain(|uri, _| followed.iter().any(|(u, _)| u == uri));
        for (uri, slot) in followed {
            // A busy slot is being changed by a follower: look again next time.
            let Ok(held) = slot.try_lock() else { continue };
            let (server, stale) = match (held.stale_server(), held.live_server()) {
                (Some(server), _) => (server, true),
                (None, Some(server)) => (server, false),
                (None, None) => continue,
            };
            drop(held);
            if stale {
                if state
                    .retry
                    .get(&uri)
                    .is_some_and(|(at, _)| Instant::now() < *at)
                {
                    continue;
                }
            } else {
                state.retry.remove(&uri);
                let since = *state
                    .refreshed
                    .entry(uri.clone())
                    .or_insert_with(Instant::now);
                let http = self
                    .mcp_server(&server)
                    .is_ok_and(|s| matches!(s.spec, ServerSpec::Http { .. }));
                if !http || since.elapsed() < HTTP_REFRESH {
                    continue;
                }
                state.refreshed.insert(uri.clone(), Instant::now());
            }
            match self.take_out_again(&uri, &slot, &server, stale).await {
                Ok(()) => {
                    state.retry.remove(&uri);
                }
                Err(e) => {
                    let wait = state
                        .retry
                        .get(&uri)
                        .map_or(RENEW_CHECK * 2, |(_, w)| (*w * 2).min(RENEW_BACKOFF_MAX));
                    tracing::warn!(uri, server, error = %e, retry_in_ms = wait.as_millis() as u64, "could not renew an upstream resource subscription");
                    state.retry.insert(uri, (Instant::now() + wait, wait));
                }
            }
        }
        true
    }

    /// Subscribes `uri` again on `server` for the followers of `slot`. The
    /// upstream is brought up before the slot is locked, so followers coming and
    /// going never wait on a slow start; nothing is done when the slot changed
    /// meanwhile. `announce` tells the followers the resource may have changed.
    async fn take_out_again(
        self,
        uri: &str,
        slot: &Arc<tokio::sync::Mutex<Held>>,
        server: &str,
        announce: bool,
    ) -> Result<()> {
        let s = self.mcp_server(server)?;
        let _warm = self.lease(&s).await?;
        let mut held = slot.lock().await;
        let same = held.count > 0
            && held
                .upstream
                .as_ref()
                .is_some_and(|(name, _)| name == server)
            && self.engine.mcp_hub().subscriptions.is_current(uri, slot);
        if !same {
            return Ok(());
        }
        self.renew(uri, &mut held, server, announce).await
    }

    /// Takes out `uri`'s subscription again on `server` for its followers and,
    /// when `announce`, tells them the resource may have changed while it was
    /// not followed.
    async fn renew(self, uri: &str, held: &mut Held, server: &str, announce: bool) -> Result<()> {
        let up = self.subscribe_upstream(uri, Some(server)).await?;
        held.upstream = Some(up);
        if announce {
            tracing::info!(uri, server, "renewed an upstream resource subscription");
            let _ = self
                .engine
                .mcp_hub()
                .changes
                .send(McpChange::ResourceUpdated(uri.to_string()));
        }
        Ok(())
    }

    /// Takes out the upstream subscription of `uri`: on its owner when known,
    /// else on the first eligible upstream that accepts it.
    async fn subscribe_upstream(self, uri: &str, only: Option<&str>) -> Result<(String, Lease)> {
        let servers = self.servers();
        let eligible =
            |s: &&UpstreamServer| s.policy != ToolPolicy::Block && only.is_none_or(|o| s.name == o);
        let owner = || {
            self.engine
                .mcp_hub()
                .resource_owner
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get(uri)
                .cloned()
        };
        let mut known = owner();
        if known.is_none() {
            self.resources().await;
            known = owner();
        }
        if let Some(s) =
            known.and_then(|name| servers.iter().filter(eligible).find(|s| s.name == name))
        {
            return self.subscribe_on(s, uri).await;
        }
        for s in servers.iter().filter(eligible) {
            let Ok(lease) = self.lease(s).await else {
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
                        self.engine.mcp_hub().pool.evict(&lease);
                    }
                    tracing::debug!(server = %s.name, uri, error = %e, "upstream refused a resource subscription");
                }
            }
        }
        Err(HecateError::not_found("resource", uri))
    }

    async fn subscribe_on(self, s: &UpstreamServer, uri: &str) -> Result<(String, Lease)> {
        let hub = self.engine.mcp_hub();
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
