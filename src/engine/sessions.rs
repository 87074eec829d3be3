//! Session lifecycle: create, read, list, delete and close.

use super::Engine;
use super::workspace::canonical_workspace;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::ids::SessionId;
use crate::domain::memory::HistoryStrategy;
use crate::domain::recall::SessionMemory;
use crate::domain::session::{Guardrails, RuntimeKind, Session, SessionStatus, SessionSummary};
use crate::domain::time::now_rfc3339;

/// What a caller asks for when creating a session.
#[derive(Debug, Clone, Default)]
pub struct CreateSession {
    /// Title; a default is derived when absent.
    pub title: Option<String>,
    /// Runtime kind (`model` when absent).
    pub runtime_kind: Option<RuntimeKind>,
    /// Provider name.
    pub provider: Option<String>,
    /// Model, bare or as `provider/model`.
    pub model: Option<String>,
    /// External-agent adapter id.
    pub adapter_id: Option<String>,
    /// Workspace directory.
    pub workspace: Option<String>,
    /// System prompt for model turns.
    pub system_prompt: Option<String>,
    /// Limits; the engine defaults when absent.
    pub guardrails: Option<Guardrails>,
    /// Working-memory strategy; the config's `[history]` when absent.
    pub history: Option<HistoryStrategy>,
    /// The long-term memory user and per-turn recall; `[memory] recall` when
    /// `recall` is absent.
    pub memory: SessionMemory,
}

impl Engine {
    /// Creates a session after validating its runtime target and workspace.
    #[tracing::instrument(skip(self, req), fields(namespace))]
    pub async fn create_session(&self, namespace: &str, req: CreateSession) -> Result<Session> {
        let kind = req.runtime_kind.unwrap_or(RuntimeKind::Model);
        let workspace = match req.workspace.as_deref().filter(|w| !w.is_empty()) {
            Some(w) => Some(canonical_workspace(w)?),
            None => None,
        };
        let (provider, model) = match kind {
            RuntimeKind::Model | RuntimeKind::Agent => {
                // Hecate's own agent without a model runs on the hub's default.
                let fallback = (kind == RuntimeKind::Agent && req.provider.is_none())
                    .then(|| self.default_agent_model())
                    .flatten();
                let model = req.model.as_deref().or(fallback).unwrap_or_default();
                let target = self
                    .gateway()
                    .route_model(req.provider.as_deref(), model)
                    .await?;
                if kind == RuntimeKind::Agent && workspace.is_none() {
                    return Err(HecateError::new(
                        ErrorType::WorkspaceRequired,
                        "the agent runtime needs a workspace",
                    ));
                }
                (Some(target.provider), Some(target.model))
            }
            RuntimeKind::ExternalAgent => {
                let adapter = req.adapter_id.clone().unwrap_or_default();
                self.agents().check_adapter(&adapter)?;
                if workspace.is_none() {
                    return Err(HecateError::new(
                        ErrorType::WorkspaceRequired,
                        "external agents need a workspace",
                    ));
                }
                (None, None)
            }
        };
        let now = now_rfc3339();
        let title = req
            .title
            .filter(|t| !t.trim().is_empty())
            .unwrap_or_else(|| "Hecate Chat".to_string());
        let session = Session {
            namespace: namespace.to_string(),
            id: SessionId::generate(),
            title,
            runtime_kind: kind,
            provider,
            model,
            adapter_id: (kind == RuntimeKind::ExternalAgent)
                .then(|| req.adapter_id.clone())
                .flatten(),
            workspace,
            system_prompt: req.system_prompt.filter(|s| !s.is_empty()),
            status: SessionStatus::Idle,
            native_session_id: None,
            guardrails: req
                .guardrails
                .unwrap_or(self.inner.config.default_guardrails),
            history: Some(req.history.unwrap_or(self.inner.config.history)),
            memory: SessionMemory {
                user: req.memory.user,
                recall: Some(
                    req.memory
                        .recall
                        .unwrap_or(self.inner.config.memory.default_recall),
                ),
            },
            turns_used: 0,
            session_started_at: None,
            last_activity_at: now.clone(),
            created_at: now.clone(),
            updated_at: now,
        };
        self.store().create_session(&session).await?;
        tracing::info!(session_id = %session.id, runtime = %kind, "session created");
        Ok(session)
    }

    /// Reads a session header.
    pub async fn get_session(&self, namespace: &str, id: &SessionId) -> Result<Session> {
        self.store().get_session(namespace, id).await
    }

    /// Lists sessions of a namespace, newest first.
    pub async fn list_sessions(
        &self,
        namespace: &str,
        limit: usize,
    ) -> Result<Vec<SessionSummary>> {
        self.store().list_sessions(namespace, limit).await
    }

    /// Deletes a session and everything it owns; a running turn is cancelled first.
    pub async fn delete_session(&self, namespace: &str, id: &SessionId) -> Result<()> {
        // Confirm the session is visible in this namespace before touching turns.
        let session = self.get_session(namespace, id).await?;
        self.end_session(id, true).await;
        self.store().delete_session(namespace, id).await?;
        super::a2a_tasks::remove_conversation_dir(self, session.workspace.as_deref());
        Ok(())
    }

    /// Closes a session's native agent session and process, keeping its history.
    pub async fn close_session(&self, namespace: &str, session_id: &SessionId) -> Result<()> {
        self.get_session(namespace, session_id).await?;
        self.end_session(session_id, false).await;
        Ok(())
    }

    /// Stops a session's running turn and lets go of its agent (`session/close`,
    /// and `session/delete` when `delete`, for agents that offer them).
    async fn end_session(&self, session_id: &SessionId, delete: bool) {
        if let Some(turn) = self.active().get(session_id).cloned() {
            turn.stop("session_closed");
        }
        // An editor that opens the thread again sends its directories again.
        self.set_agent_directories(session_id, Vec::new());
        if let Some(rt) = &self.inner.external {
            if delete {
                rt.delete(session_id).await;
            } else {
                rt.close(session_id).await;
            }
        }
    }
}
