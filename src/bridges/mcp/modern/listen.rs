//! `subscriptions/listen` (protocol 2026-07-28), which replaces
//! `resources/subscribe` and the session's standing notifications: the client
//! names what it wants (list changes, updates of resource URIs); Hecate honours
//! list changes of tools, prompts and resources, updates of its own sessions
//! (`hecate://sessions/{id}`, while a turn streams, throttled) and of upstream
//! resources (followed through the engine for the stream's life). rmcp sends
//! the acknowledgement with what was honoured, tags each notification with the
//! stream's id and drops what was not asked for.

use crate::bridges::mcp::access::identity_of;
use crate::bridges::mcp::errors::resource_not_found;
use crate::bridges::mcp::server::HecateMcp;
use crate::bridges::mcp::uris::{SCHEME, SESSIONS_URI};
use crate::bridges::mcp::watch::{ListenOutlet, pump};
use rmcp::ErrorData;
use rmcp::model::SubscriptionFilter;
use rmcp::service::SubscriptionContext;

impl HecateMcp {
    /// Whether this connection can follow updates of `uri`: one of Hecate's
    /// sessions on the hub, any upstream URI (the upstream decides when the
    /// stream starts).
    fn can_follow(&self, uri: &str) -> bool {
        match uri.strip_prefix(SCHEME) {
            Some(_) if self.is_hub() => uri
                .strip_prefix(&format!("{SESSIONS_URI}/"))
                .is_some_and(|id| !id.is_empty() && !id.contains('/')),
            _ => !uri.is_empty(),
        }
    }

    /// The part of `requested` this connection honours (rmcp narrows it further
    /// to what the capabilities advertise).
    pub(crate) fn honoured(&self, requested: &SubscriptionFilter) -> SubscriptionFilter {
        let mut accepted = requested.clone();
        if let Some(uris) = accepted.resource_subscriptions.as_mut() {
            uris.retain(|u| self.can_follow(u));
        }
        accepted
    }

    /// Serves one acknowledged stream until the client cancels it or goes away
    /// (or the connection ends). An upstream URI the upstream refuses ends the
    /// stream with that error.
    pub(crate) async fn serve_listen(&self, sub: SubscriptionContext) -> Result<(), ErrorData> {
        // A key follows only the resources it may see.
        let identity = identity_of(&sub.request_context().extensions);
        if let Some(hidden) = sub
            .accepted()
            .resource_subscriptions
            .iter()
            .flatten()
            .find(|u| !self.may_see_resource(&identity, u))
        {
            return Err(resource_not_found(hidden));
        }
        let upstream: Vec<String> = sub
            .accepted()
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|u| !(self.is_hub() && u.starts_with(SCHEME)))
            .cloned()
            .collect();
        let mut taken = Vec::new();
        let mut refused = None;
        for uri in &upstream {
            let held = self.follows_upstream(uri).await;
            match self.subscribe_uri(uri).await {
                Ok(()) if !held => taken.push(uri.clone()),
                Ok(()) => {}
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        if refused.is_none() {
            let stop = self.conn.stop.child_token();
            let outlet = ListenOutlet(sub.sink().clone());
            tokio::select! {
                _ = sub.cancelled() => {}
                _ = pump(self.engine.clone(), outlet, stop.clone()) => {}
            }
            stop.cancel();
        }
        for uri in taken {
            if let Err(e) = self.unsubscribe_uri(&uri).await {
                tracing::debug!(%uri, error = %e.message, "releasing an upstream subscription failed");
            }
        }
        refused.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use crate::bridges::mcp::server::{HecateMcp, McpServerOptions};
    use crate::engine::{Engine, ToolLoading};
    use rmcp::model::SubscriptionFilter;

    async fn server(upstream: Option<&str>) -> HecateMcp {
        let engine = Engine::in_memory(crate::engine::Runtimes::default())
            .await
            .expect("engine");
        HecateMcp::new(
            engine,
            McpServerOptions {
                namespace: "default".into(),
                transport: "stdio".into(),
                upstream: upstream.map(str::to_string),
                tool_loading: ToolLoading::All,
            },
        )
    }

    #[tokio::test]
    async fn the_hub_honours_its_sessions_and_upstream_uris() {
        let hub = server(None).await;
        let requested = SubscriptionFilter::builder()
            .tools_list_changed()
            .resource_subscriptions([
                "hecate://sessions/s1",
                "hecate://sessions",
                "hecate://adapters",
                "hecate://sessions/a/b",
                "file:///tmp/x",
            ])
            .build();
        let honoured = hub.honoured(&requested);
        assert_eq!(honoured.tools_list_changed, Some(true));
        assert_eq!(
            honoured.resource_subscriptions,
            Some(vec!["hecate://sessions/s1".into(), "file:///tmp/x".into()])
        );
        let single = server(Some("fx")).await;
        let honoured = single.honoured(&requested);
        assert_eq!(honoured.resource_subscriptions.map(|u| u.len()), Some(5));
    }
}
