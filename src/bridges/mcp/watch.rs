//! Per-connection watchers started once the client is initialized: upstream
//! list changes become `list_changed` notifications, and engine events of
//! subscribed sessions become `notifications/resources/updated` (throttled while
//! a turn streams). They stop when the connection is dropped or the client is
//! gone.

use super::server::HecateMcp;
use super::uris::session_uri;
use crate::domain::event::EngineEvent;
use crate::engine::McpChange;
use crate::engine::bus::Received;
use rmcp::model::ResourceUpdatedNotificationParam;
use rmcp::{Peer, RoleServer};
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Least time between two updates of one resource while a turn streams.
const UPDATE_EVERY: Duration = Duration::from_millis(250);

fn subscribed(subs: &Mutex<HashSet<String>>, uri: &str) -> bool {
    subs.lock().unwrap_or_else(|p| p.into_inner()).contains(uri)
}

/// Starts the watchers of `server`'s connection with `peer`.
pub(crate) fn start(server: &HecateMcp, peer: Peer<RoleServer>) {
    let stop = server.conn.stop.clone();
    let subs = server.conn.subscriptions.clone();
    let mut changes = server.engine.mcp().changes();
    {
        let (peer, stop, subs) = (peer.clone(), stop.clone(), subs.clone());
        tokio::spawn(async move {
            loop {
                let change = tokio::select! {
                    _ = stop.cancelled() => return,
                    c = changes.recv() => match c {
                        Ok(c) => c,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => McpChange::Tools,
                        Err(_) => return,
                    },
                };
                let sent = match change {
                    McpChange::Tools => peer.notify_tool_list_changed().await,
                    McpChange::Resources => peer.notify_resource_list_changed().await,
                    McpChange::Prompts => peer.notify_prompt_list_changed().await,
                    McpChange::ResourceUpdated(uri) if subscribed(&subs, &uri) => {
                        peer.notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                            .await
                    }
                    McpChange::ResourceUpdated(_) => Ok(()),
                };
                if sent.is_err() {
                    return;
                }
            }
        });
    }
    let mut events = server.engine.bus().subscribe(None);
    let subs: Arc<Mutex<HashSet<String>>> = subs;
    tokio::spawn(async move {
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
            if !subscribed(&subs, &uri) {
                continue;
            }
            let streaming = matches!(ev, EngineEvent::Runtime { .. });
            if streaming && last.get(&uri).is_some_and(|t| t.elapsed() < UPDATE_EVERY) {
                continue;
            }
            last.insert(uri.clone(), Instant::now());
            if peer
                .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                .await
                .is_err()
            {
                return;
            }
        }
    });
}
