//! What Hecate's A2A server keeps in the store, reached by the bridge through
//! the engine (`engine.a2a_tasks()`): each (agent, `contextId`) conversation's
//! session, the tasks with their records, and their push notification
//! configs; and, for a task whose turn ran in another process, how its run
//! stands in the store (a stopped process's turns are closed by the startup
//! reconcile and the owner sweep, so a run never stays `running` after its
//! owner is gone).

use super::Engine;
use crate::domain::ErrorType;
use crate::domain::a2a_task::{
    A2aContext, A2aPushConfigRow, A2aTaskPage, A2aTaskQuery, A2aTaskRow,
};
use crate::domain::error::Result;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::message::Role;
use crate::domain::run::RunStatus;
use crate::domain::time::now_rfc3339;

/// The A2A server's stored conversations and tasks, from [`Engine::a2a_tasks`].
#[derive(Clone, Copy)]
pub struct A2aTasks<'e> {
    engine: &'e Engine,
}

/// How a task's run stands in the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRun {
    /// Its status.
    pub status: RunStatus,
    /// Its error as (type, message), when it failed.
    pub error: Option<(String, String)>,
    /// The answer it stored (the whole one, or what streamed before it was
    /// interrupted), when there is one.
    pub answer: Option<String>,
}

/// Where the directories of conversations that named no workspace are made.
fn conversation_root(engine: &Engine) -> std::path::PathBuf {
    engine.inner.config.tasks.data_dir.join("conversations")
}

/// Removes `workspace` when it is a directory [`A2aTasks::new_conversation_dir`]
/// made (never a directory a client named).
pub(super) fn remove_conversation_dir(engine: &Engine, workspace: Option<&str>) {
    let Some(dir) = workspace.map(std::path::Path::new) else {
        return;
    };
    let root = conversation_root(engine);
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    if dir.parent() == Some(root.as_path())
        && let Err(e) = std::fs::remove_dir_all(dir)
        && e.kind() != std::io::ErrorKind::NotFound
    {
        tracing::warn!(dir = %dir.display(), error = %e, "could not remove a conversation's directory");
    }
}

impl Engine {
    /// The A2A server's stored conversations, tasks and push notification
    /// configs.
    pub fn a2a_tasks(&self) -> A2aTasks<'_> {
        A2aTasks { engine: self }
    }
}

impl A2aTasks<'_> {
    /// The session of `agent`'s conversation `context_id` in `namespace`, when
    /// one is bound.
    pub async fn context(
        &self,
        namespace: &str,
        agent: &str,
        context_id: &str,
    ) -> Result<Option<SessionId>> {
        self.engine
            .store()
            .get_a2a_context(namespace, agent, context_id)
            .await
    }

    /// Binds the conversation to `session_id` unless it is bound already;
    /// answers the session it is bound to (the first binding, on any replica,
    /// wins).
    pub async fn bind_context(
        &self,
        namespace: &str,
        agent: &str,
        context_id: &str,
        session_id: &SessionId,
    ) -> Result<SessionId> {
        self.engine
            .store()
            .bind_a2a_context(&A2aContext {
                namespace: namespace.to_string(),
                agent: agent.to_string(),
                context_id: context_id.to_string(),
                session_id: session_id.clone(),
                created_at: now_rfc3339(),
            })
            .await
    }

    /// A new, empty directory of Hecate's own for a conversation whose client
    /// named no workspace (`conversations/<id>` under the task runtime's data directory), so an
    /// agent never works wherever the server happened to be started. It goes
    /// with its session ([`Engine::delete_session`]).
    pub fn new_conversation_dir(&self) -> Result<std::path::PathBuf> {
        let dir = conversation_root(self.engine).join(uuid::Uuid::new_v4().simple().to_string());
        std::fs::create_dir_all(&dir).map_err(|e| {
            crate::domain::error::HecateError::new(
                ErrorType::WorkspaceRequired,
                format!(
                    "cannot create a directory for the conversation at {}: {e}",
                    dir.display()
                ),
            )
        })?;
        Ok(dir)
    }

    /// Stores a task as it is now (an older version than the stored one is
    /// left out).
    pub async fn save(&self, task: &A2aTaskRow) -> Result<()> {
        self.engine.store().put_a2a_task(task).await
    }

    /// Task `id` of `namespace`, when stored.
    pub async fn get(&self, namespace: &str, id: &str) -> Result<Option<A2aTaskRow>> {
        self.engine.store().get_a2a_task(namespace, id).await
    }

    /// A page of stored tasks, newest first, and how many match.
    pub async fn list(&self, query: &A2aTaskQuery) -> Result<A2aTaskPage> {
        self.engine.store().list_a2a_tasks(query).await
    }

    /// Stores a push notification config of a stored task.
    pub async fn put_push_config(&self, config: &A2aPushConfigRow) -> Result<()> {
        self.engine.store().put_a2a_push_config(config).await
    }

    /// The push notification configs of a task, in the order registered.
    pub async fn push_configs(
        &self,
        namespace: &str,
        task_id: &str,
    ) -> Result<Vec<A2aPushConfigRow>> {
        self.engine
            .store()
            .list_a2a_push_configs(namespace, task_id)
            .await
    }

    /// Deletes a push notification config; answers whether one was stored.
    pub async fn delete_push_config(
        &self,
        namespace: &str,
        task_id: &str,
        config_id: &str,
    ) -> Result<bool> {
        self.engine
            .store()
            .delete_a2a_push_config(namespace, task_id, config_id)
            .await
    }

    /// How run `run_id` of session `session_id` stands in the store (`None`
    /// when it is not that session's run): its status, its error, and the
    /// answer it stored once it ended.
    pub async fn run(&self, session_id: &SessionId, run_id: &RunId) -> Result<Option<StoredRun>> {
        let store = self.engine.store();
        let run = match store.get_run(run_id).await {
            Ok(r) if &r.session_id == session_id => r,
            Ok(_) => return Ok(None),
            Err(e) if e.error_type == ErrorType::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let ended = !matches!(run.status, RunStatus::Running | RunStatus::AwaitingApproval);
        let answer = if ended {
            store
                .list_run_messages(session_id, std::slice::from_ref(run_id))
                .await?
                .into_iter()
                .rev()
                .find(|m| m.role == Role::Assistant && !m.content.is_empty())
                .map(|m| m.content)
        } else {
            None
        };
        Ok(Some(StoredRun {
            status: run.status,
            error: run.error_type.zip(run.error_message),
            answer,
        }))
    }
}
