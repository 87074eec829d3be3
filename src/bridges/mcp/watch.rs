//! Watchers of a connection's notifications: upstream list changes become
//! `list_changed` notifications, and engine events of watched sessions become
//! `notifications/resources/updated` (throttled while a turn streams). Where
//! they go is an [`Outlet`]: the session of a client that initialized (its
//! `resources/subscribe` set, protocol 2025-11-25, started once the client is
//! initialized), or one `subscriptions/listen` stream (protocol 2026-07-28,
//! the filter it was acknowledged with). They stop when the connection or the
//! stream ends, or the client is gone.

use super::server::HecateMcp;
use super::uris::session_uri;
use crate::domain::event::EngineEvent;
use crate::engine::bus::Received;
use crate::engine::{Engine, McpChange};
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::service::{SubscriptionSendError, SubscriptionSink};
use rmcp::{Peer, RoleServer};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Least time between two updates of one resource while a turn streams.
const UPDATE_EVERY: Duration = Duration::from_millis(250);

/// The client is gone (or the stream closed): the watcher stops.
#[derive(Debug)]
pub(crate) struct Gone;

/// Where a watcher's notifications go.
pub(crate) trait Outlet: Clone + Send + Sync + 'static {
    /// Sends a list change, or an update of a resource the outlet watches.
    fn send(&self, change: McpChange) -> impl Future<Output = Result<(), Gone>> + Send;
    /// Whether updates of `uri` are wanted.
    fn watches(&self, uri: &str) -> bool;
}

/// The session of a client that initialized: list changes always, updates of
/// the URIs it subscribed to with `resources/subscribe`.
#[derive(Clone)]
struct SessionOutlet {
    peer: Peer<RoleServer>,
    subs: Arc<Mutex<HashSet<String>>>,
}

impl Outlet for SessionOutlet {
    async fn send(&self, change: McpChange) -> Result<(), Gone> {
        let sent = match change {
            McpChange::Tools => self.peer.notify_tool_list_changed().await,
            McpChange::Resources => self.peer.notify_resource_list_changed().await,
            McpChange::Prompts => self.peer.notify_prompt_list_changed().await,
            McpChange::ResourceUpdated(uri) if self.watches(&uri) => {
                self.peer
                    .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                    .await
            }
            McpChange::ResourceUpdated(_) => Ok(()),
        };
        sent.map_err(|_| Gone)
    }

    fn watches(&self, uri: &str) -> bool {
        self.subs
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(uri)
    }
}

/// One `subscriptions/listen` stream: rmcp's sink sends what the acknowledged
/// filter holds, tagged with the stream's id, and refuses the rest.
#[derive(Clone)]
pub(crate) struct ListenOutlet(pub(crate) SubscriptionSink);

impl Outlet for ListenOutlet {
    async fn send(&self, change: McpChange) -> Result<(), Gone> {
        let sink = &self.0;
        let sent = match change {
            McpChange::Tools => sink.notify_tool_list_changed().await,
            McpChange::Resources => sink.notify_resource_list_changed().await,
            McpChange::Prompts => sink.notify_prompt_list_changed().await,
            McpChange::ResourceUpdated(uri) => sink.notify_resource_updated(uri).await,
        };
        match sent {
            Ok(()) | Err(SubscriptionSendError::NotificationNotAccepted(_)) => Ok(()),
            Err(e) => {
                tracing::debug!(error = %e, "a listen stream ended");
                Err(Gone)
            }
        }
    }

    fn watches(&self, uri: &str) -> bool {
        self.0
            .accepted()
            .resource_subscriptions
            .as_ref()
            .is_some_and(|uris| uris.iter().any(|u| u == uri))
    }
}

/// Starts the watchers of `server`'s connection with `peer` (a client that
/// initialized).
pub(crate) fn start(server: &HecateMcp, peer: Peer<RoleServer>) {
    let outlet = SessionOutlet {
        peer,
        subs: server.conn.subscriptions.clone(),
    };
    tokio::spawn(pump(
        server.engine.clone(),
        outlet,
        server.conn.stop.clone(),
    ));
}

/// Sends the engine's list changes and watched session updates to `outlet`
/// until `stop` fires or the outlet is gone.
pub(crate) async fn pump<O: Outlet>(engine: Engine, outlet: O, stop: CancellationToken) {
    let lists = {
        let (outlet, stop) = (outlet.clone(), stop.clone());
        let mut changes = engine.mcp().changes();
        async move {
            loop {
                let change = tokio::select! {
                    _ = stop.cancelled() => return,
                    c = changes.recv() => match c {
                        Ok(c) => c,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => McpChange::Tools,
                        Err(_) => return,
                    },
                };
                if outlet.send(change).await.is_err() {
                    stop.cancel();
                    return;
                }
            }
        }
    };
    let sessions = {
        let mut events = engine.bus().subscribe(None);
        let stop = stop.clone();
        async move {
            let mut last: HashMap<String, Instant> = HashMap::new();
            loop {
                let ev = tokio::select! {
                    _ = stop.cancelled() => return,
                    ev = events.recv() => match ev {
                        Some(Received::Event(ev)) => ev,
                        Some(Received::Lagged(_)) => continue,
                        None => return,
                    },
                };
                let uri = session_uri(ev.session_id());
                if !outlet.watches(&uri) {
                    continue;
                }
                let streaming = matches!(ev, EngineEvent::Runtime { .. });
                if streaming && last.get(&uri).is_some_and(|t| t.elapsed() < UPDATE_EVERY) {
                    continue;
                }
                last.insert(uri.clone(), Instant::now());
                if outlet.send(McpChange::ResourceUpdated(uri)).await.is_err() {
                    stop.cancel();
                    return;
                }
            }
        }
    };
    tokio::join!(lists, sessions);
}
