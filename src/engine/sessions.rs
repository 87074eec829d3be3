//! Session lifecycle: create, read, list, delete, and the assembled transcript.

use super::Engine;
use super::diffs::TURN_DIFF_ARTIFACT;
use super::external::AdapterFacts;
use super::workspace::canonical_workspace;
use crate::adapters::git::TreeDiff;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::gateway_conversation::{GatewayTrace, TraceFilter};
use crate::domain::ids::{MessageId, SessionId, TaskId, TaskRunId};
use crate::domain::memory::HistoryStrategy;
use crate::domain::message::{Message, Role};
use crate::domain::provider_call::ProviderCall;
use crate::domain::recall::SessionMemory;
use crate::domain::run::Run;
use crate::domain::segment::{Segment, derive};
use crate::domain::session::{Guardrails, RuntimeKind, Session, SessionStatus, SessionSummary};
use crate::domain::time::now_rfc3339;
use crate::domain::timing::{AgentTiming, agent_timing};
use serde::Serialize;
use std::collections::HashMap;

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

/// The most gateway calls a transcript lists (the newest ones).
const MAX_LISTED_GATEWAY_CALLS: usize = 1000;

/// A session with everything stored about it.
#[derive(Debug, Clone, Serialize)]
pub struct Transcript {
    /// The header.
    #[serde(flatten)]
    pub session: Session,
    /// Messages in sequence order.
    pub messages: Vec<Message>,
    /// Provider calls in order.
    pub provider_calls: Vec<ProviderCall>,
    /// Derived segments.
    pub segments: Vec<Segment>,
    /// Runs in order.
    pub runs: Vec<Run>,
    /// The model calls the session's supervised agent made through Hecate's
    /// `/v1` (`[agents.gateway]`), oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gateway_calls: Vec<GatewayTrace>,
    /// Catalog facts of the adapters the messages name, by adapter id.
    #[serde(skip)]
    pub adapters: HashMap<String, AdapterFacts>,
    /// The timing of each Hecate Agent answer whose task run has ended.
    #[serde(skip)]
    pub timings: HashMap<MessageId, AgentTiming>,
    /// The stored diff stat of each external-agent answer that changed files.
    #[serde(skip)]
    pub diff_stats: HashMap<MessageId, String>,
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

    /// Reads a session with its messages, provider calls, runs and segments.
    pub async fn transcript(&self, namespace: &str, id: &SessionId) -> Result<Transcript> {
        let store = self.store();
        let session = store.get_session(namespace, id).await?;
        // Three independent reads, answered by as many reader connections at once.
        let (messages, provider_calls, runs) = tokio::try_join!(
            store.list_messages(id, None, usize::MAX),
            store.list_provider_calls(id),
            store.list_runs(id),
        )?;
        let adapters = self.agents().adapter_facts(
            messages
                .iter()
                .filter_map(|m| m.runtime.adapter_id.as_deref()),
        );
        let (timings, diff_stats, gateway_calls) = tokio::try_join!(
            self.timings(&messages),
            self.diff_stats(&messages),
            self.agent_gateway_calls(&session),
        )?;
        Ok(Transcript {
            segments: derive(&messages),
            session,
            messages,
            provider_calls,
            runs,
            gateway_calls,
            adapters,
            timings,
            diff_stats,
        })
    }

    /// The gateway traces filed under a session that has run an external agent
    /// (`X-Hecate-Agent-Session`), oldest first; none for other sessions.
    async fn agent_gateway_calls(&self, session: &Session) -> Result<Vec<GatewayTrace>> {
        if session.adapter_id.is_none() {
            return Ok(Vec::new());
        }
        let filter = TraceFilter {
            session_id: Some(session.id.to_string()),
            limit: MAX_LISTED_GATEWAY_CALLS,
            ..TraceFilter::default()
        };
        self.inner.deferred.traces.flush().await;
        let mut calls = self
            .store()
            .list_traces(&session.namespace, &filter)
            .await?;
        calls.reverse();
        Ok(calls)
    }

    /// The timing of each Hecate Agent answer, from its ended task run.
    async fn timings(&self, messages: &[Message]) -> Result<HashMap<MessageId, AgentTiming>> {
        let store = self.store();
        let mut out = HashMap::new();
        for m in messages.iter().filter(|m| m.role == Role::Assistant) {
            let (Some(task), Some(run)) = (&m.runtime.task_id, &m.runtime.task_run_id) else {
                continue;
            };
            let (task, run) = (TaskId(task.clone()), TaskRunId(run.clone()));
            let r = match store.get_task_run(&task, &run).await {
                Ok(r) => r,
                // The task was deleted; the answer stays without timing.
                Err(e) if e.error_type == ErrorType::NotFound => continue,
                Err(e) => return Err(e),
            };
            let (steps, approvals) = tokio::try_join!(
                store.list_task_steps(&run),
                store.list_task_approvals(&task)
            )?;
            if let Some(t) = agent_timing(&r, &steps, &approvals) {
                out.insert(m.id.clone(), t);
            }
        }
        Ok(out)
    }

    /// The diff stat stored with each external-agent answer (the newest diff,
    /// refreshed by a revert).
    async fn diff_stats(&self, messages: &[Message]) -> Result<HashMap<MessageId, String>> {
        let store = self.store();
        let mut out = HashMap::new();
        for m in messages
            .iter()
            .filter(|m| m.role == Role::Assistant && m.runtime.adapter_id.is_some())
        {
            let newest = store
                .list_artifacts(&m.id)
                .await?
                .into_iter()
                .rfind(|(kind, _, _)| kind == TURN_DIFF_ARTIFACT);
            if let Some((_, _, data)) = newest
                && let Ok(diff) = serde_json::from_str::<TreeDiff>(&data)
                && !diff.stat.trim().is_empty()
            {
                out.insert(m.id.clone(), diff.stat);
            }
        }
        Ok(out)
    }

    /// Deletes a session and everything it owns; a running turn is cancelled first.
    pub async fn delete_session(&self, namespace: &str, id: &SessionId) -> Result<()> {
        // Confirm the session is visible in this namespace before touching turns.
        self.get_session(namespace, id).await?;
        self.close_session(namespace, id).await?;
        self.store().delete_session(namespace, id).await
    }

    /// Closes a session's native agent session and process, keeping its history.
    pub async fn close_session(&self, namespace: &str, session_id: &SessionId) -> Result<()> {
        self.get_session(namespace, session_id).await?;
        if let Some(turn) = self.active().get(session_id).cloned() {
            turn.cancel.cancel();
        }
        if let Some(rt) = &self.inner.external {
            rt.close(session_id).await;
        }
        Ok(())
    }
}
