//! The contract for what Hecate's A2A server keeps across restarts and
//! replicas: its conversations (`a2a_contexts`: an agent's `contextId` in a
//! namespace is one session, bound once, the first binding winning), its
//! tasks (`a2a_tasks`: a header to filter on and the record as JSON, written
//! when a task starts, when its state changes and when it ends) and their
//! push notification configs (`a2a_push_configs`). Every key starts with the
//! namespace; contexts and tasks go with their session, configs with their
//! task.

use crate::domain::a2a_task::{
    A2aContext, A2aPushConfigRow, A2aTaskPage, A2aTaskQuery, A2aTaskRow,
};
use crate::domain::error::Result;
use crate::domain::ids::SessionId;
use async_trait::async_trait;

/// Stored A2A conversations, tasks and push notification configs.
#[async_trait]
pub trait A2aStore: Send + Sync {
    /// The session of `agent`'s conversation `context_id` in `namespace`, when
    /// it has one.
    async fn get_a2a_context(
        &self,
        namespace: &str,
        agent: &str,
        context_id: &str,
    ) -> Result<Option<SessionId>>;
    /// Binds the conversation to `context.session_id` unless it is bound
    /// already; answers the session it is bound to (the first binding wins,
    /// so two replicas racing agree). `not_found` when the session does not
    /// exist.
    async fn bind_a2a_context(&self, context: &A2aContext) -> Result<SessionId>;
    /// Inserts the task or overwrites its stored state, record and update
    /// time, unless the stored row has a newer version or is final while this
    /// one is not (its creation time stays). `not_found` when its session
    /// does not exist.
    async fn put_a2a_task(&self, task: &A2aTaskRow) -> Result<()>;
    /// Task `id` of `namespace`, when stored.
    async fn get_a2a_task(&self, namespace: &str, id: &str) -> Result<Option<A2aTaskRow>>;
    /// The tasks `query` selects, newest first (creation time, then id), and
    /// how many it matches in all.
    async fn list_a2a_tasks(&self, query: &A2aTaskQuery) -> Result<A2aTaskPage>;
    /// Inserts or replaces the config of (namespace, task, config id); a
    /// replaced one keeps its place. `not_found` when the task is not stored.
    async fn put_a2a_push_config(&self, config: &A2aPushConfigRow) -> Result<()>;
    /// The configs of a task, in the order they were first registered.
    async fn list_a2a_push_configs(
        &self,
        namespace: &str,
        task_id: &str,
    ) -> Result<Vec<A2aPushConfigRow>>;
    /// Deletes one config; answers whether it was stored.
    async fn delete_a2a_push_config(
        &self,
        namespace: &str,
        task_id: &str,
        config_id: &str,
    ) -> Result<bool>;
}
