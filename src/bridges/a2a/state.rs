//! What every A2A handler shares: the engine, the namespace served, the task
//! registry, the push notification sender, the access guard and whether a
//! bearer token is required.

use super::push::Notifier;
use super::tasks::Registry;
use crate::bridges::access::Guard;
use crate::engine::Engine;
use std::sync::Arc;

/// How the A2A face is mounted by the HTTP server.
#[derive(Clone)]
pub struct A2aConfig {
    /// The engine every operation goes through.
    pub engine: Engine,
    /// The namespace the server's sessions live in.
    pub namespace: Arc<str>,
    /// The shared access rules (Host/Origin and the bearer token).
    pub guard: Arc<Guard>,
    /// Whether a credential is required (`[server] token` or an identity
    /// provider): the cards then name an HTTP bearer scheme and offer the
    /// authenticated extended card.
    pub bearer: bool,
}

/// The state of the A2A handlers.
#[derive(Clone)]
pub struct A2aState {
    /// The engine.
    pub engine: Engine,
    /// The namespace served.
    pub namespace: Arc<str>,
    /// The tasks and conversations of this process.
    pub registry: Arc<Registry>,
    /// Posts push notifications to the tasks' webhooks.
    pub notifier: Arc<Notifier>,
    /// The access rules.
    pub guard: Arc<Guard>,
    /// Whether a credential is required (and the extended card served).
    pub bearer: bool,
}

impl A2aState {
    /// The state for `config`, with an empty registry.
    pub fn new(config: A2aConfig) -> Self {
        Self {
            engine: config.engine,
            namespace: config.namespace,
            registry: Arc::new(Registry::default()),
            notifier: Arc::new(Notifier::default()),
            guard: config.guard,
            bearer: config.bearer,
        }
    }
}
