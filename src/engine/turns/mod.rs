//! Turns: the busy rule, guardrails, leases, persistence-first prompt handling, the
//! driver, the stored ending and cancel. The runtime itself runs in `run`;
//! its events reach subscribers and the store through `sink`; a model turn
//! runs on the gateway's route candidates in `model_route`.

mod cap;
mod drive;
pub mod events;
pub mod gateway_trace;
mod model_route;
mod run;
mod sink;
mod step;
mod target;
mod trace;

use super::core::ActiveTurn;
use super::{Engine, guardrails};
use crate::domain::approval::ApprovalMode;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::event::EngineEvent;
use crate::domain::ids::{RequestId, RunId, SessionId};
use crate::domain::mcp::McpServerConfig;
use crate::domain::message::{ContentBlock, Message, NewMessage, Role, RuntimeSnapshot};
use crate::domain::provider_call::ProviderCall;
use crate::domain::run::{Run, RunEvent, RunStatus};
use crate::domain::session::{RuntimeKind, Session, SessionStatus};
use crate::domain::time::{now_millis, now_rfc3339};
use crate::domain::workspace::WorkspaceDelegate;
use crate::engine::approvals::TurnAsker;
use crate::runtimes::{TurnContext, TurnReport, TurnTarget};
use crate::store::{BeginTurn, TurnBegun};
use events::TurnEvents;
use std::sync::Arc;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use trace::TurnSpan;
use tracing::Instrument;

/// Largest prompt accepted, in bytes.
pub const MAX_PROMPT_BYTES: usize = 1024 * 1024;

/// Rejects empty prompts and prompts over `MAX_PROMPT_BYTES` with `invalid_request`.
pub fn validate_prompt(content: &str) -> Result<()> {
    if content.trim().is_empty() {
        return Err(HecateError::invalid("the prompt is empty"));
    }
    if content.len() > MAX_PROMPT_BYTES {
        return Err(HecateError::invalid(format!(
            "the prompt is {} bytes; the limit is {MAX_PROMPT_BYTES}",
            content.len()
        ))
        .with_detail("limit_bytes", MAX_PROMPT_BYTES));
    }
    Ok(())
}

/// A prompt and its per-turn overrides.
#[derive(Debug, Clone, Default)]
pub struct SendMessage {
    /// The prompt text.
    pub content: String,
    /// Runtime for this turn (must be a permitted switch).
    pub runtime_kind: Option<RuntimeKind>,
    /// Provider override.
    pub provider: Option<String>,
    /// Model override, bare or `provider/model`.
    pub model: Option<String>,
    /// System prompt override (kept on the session).
    pub system_prompt: Option<String>,
    /// Workspace override (kept on the session).
    pub workspace: Option<String>,
    /// Caller's correlation id; generated when absent.
    pub request_id: Option<String>,
    /// How this turn's permission requests are answered (engine default when absent).
    pub approval_mode: Option<ApprovalMode>,
    /// External agent for this turn (switches a Hecate Chat session to it, or an
    /// external session to another agent, which then starts a fresh native session).
    pub adapter_id: Option<String>,
    /// MCP servers the client hands to the session: an external agent uses
    /// them, and Hecate's own agent adds them to a new task's `mcp_servers`.
    pub mcp_servers: Vec<McpServerConfig>,
    /// Rich prompt content (images, resources) beside the plain text, when any.
    pub blocks: Vec<ContentBlock>,
    /// Where an external agent's fs/terminal requests go when the client serves
    /// them itself (an editor); Hecate serves them when absent.
    pub workspace_delegate: Option<Arc<dyn WorkspaceDelegate>>,
    /// The reasoning effort a model turn asks for (`low`, `medium`, `high`),
    /// when the client chose one; the model's own default otherwise.
    pub reasoning_effort: Option<String>,
}

/// A started turn: its ids, the stored user message, a live event subscription
/// (opened before the turn started, so nothing is missed) and its completion.
#[derive(Debug)]
pub struct TurnHandle {
    /// Session.
    pub session_id: SessionId,
    /// Run.
    pub run_id: RunId,
    /// The user message, already durable.
    pub user_message: Message,
    /// This turn's events, from its start to its end, over a bounded path of its
    /// own: a slow reader slows this turn and loses nothing.
    pub events: TurnEvents,
    done: JoinHandle<TurnResult>,
}

impl TurnHandle {
    /// Waits for the turn to end; events not read by then are no longer kept.
    pub async fn wait(&mut self) -> TurnResult {
        self.events.close();
        match (&mut self.done).await {
            Ok(r) => r,
            Err(e) => TurnResult::lost(self.run_id.clone(), &self.session_id, e.to_string()),
        }
    }
}

/// How a turn ended and what it stored.
#[derive(Debug, Clone)]
pub struct TurnResult {
    /// The run as stored at the end.
    pub run: Run,
    /// The assistant message (partial and marked when the turn did not complete).
    pub assistant: Option<Message>,
    /// The error, when the turn failed.
    pub error: Option<HecateError>,
    /// Whether the session just crossed a summarization boundary.
    pub summarization_needed: bool,
    /// What a model turn stored beside its run and answer, so its answer to
    /// the client needs no read of the store (see `Engine::turn_transcript`).
    pub stored: Option<StoredTurn>,
}

/// The rest of what a finished model turn wrote, kept in memory: the session
/// header, its prompt, the provider call and the run's event log.
#[derive(Debug, Clone)]
pub struct StoredTurn {
    /// The session header as written with the turn's end.
    pub session: Session,
    /// The prompt as stored when the turn began.
    pub user: Message,
    /// The provider call that produced the answer, when one was made.
    pub call: Option<ProviderCall>,
    /// The run's events as stored, in sequence order.
    pub events: Vec<RunEvent>,
}

impl TurnResult {
    fn lost(run_id: RunId, session_id: &SessionId, why: String) -> Self {
        let error = HecateError::gateway(format!("turn task ended abnormally: {why}"));
        Self {
            run: Run {
                id: run_id,
                session_id: session_id.clone(),
                status: RunStatus::Failed,
                error_type: Some(error.error_type.code().to_string()),
                error_message: Some(error.message.clone()),
                request_id: String::new(),
                trace_id: None,
                span_id: None,
                started_at: String::new(),
                completed_at: None,
                duration_ms: None,
            },
            assistant: None,
            error: Some(error),
            summarization_needed: false,
            stored: None,
        }
    }
}

/// Removes the in-process busy marker when a turn ends or fails to start.
struct ActiveGuard {
    engine: Engine,
    session_id: SessionId,
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        self.engine.active().remove(&self.session_id);
    }
}

/// What a turn carries from `send_message` through `start_turn` to its driver.
struct TurnParts {
    session: Session,
    run: Run,
    target: TurnTarget,
    namespace: String,
    approval_mode: ApprovalMode,
    cancel: CancellationToken,
    /// Why the turn was stopped, set by whoever stopped it.
    cancel_reason: Arc<std::sync::OnceLock<&'static str>>,
    delegate: Option<Arc<dyn WorkspaceDelegate>>,
    reasoning_effort: Option<String>,
    guard: ActiveGuard,
    trace: TurnSpan,
    /// Whether the turn gave the session its title (announced as its first event).
    named: bool,
}

/// What `send_message` checked, for `start_turn` to store and run.
struct TurnStart {
    parts: TurnParts,
    user: NewMessage,
}

/// Everything the driver needs, moved into its task.
struct TurnPlan {
    parts: TurnParts,
    snapshot: RuntimeSnapshot,
    /// What the runtime sees of the transcript, read by `begin_turn`.
    history: Vec<Message>,
    /// The stored prompt.
    user: Message,
}

impl Engine {
    /// Starts a turn: validates, stores the user message, and runs the runtime in the
    /// background. Errors here mean nothing started (and nothing was stored); a
    /// refused turn whose request carries a request id leaves a failed gateway
    /// trace under it, so the id in the error envelope finds why.
    pub async fn send_message(
        &self,
        namespace: &str,
        session_id: &SessionId,
        req: SendMessage,
    ) -> Result<TurnHandle> {
        let refused = req
            .request_id
            .clone()
            .map(|request_id| gateway_trace::Refused {
                request_id,
                namespace: namespace.to_string(),
                session_id: session_id.to_string(),
                provider: req.provider.clone(),
                model: req.model.clone(),
                started_at: now_rfc3339(),
            });
        let started = std::time::Instant::now();
        let out = self.begin_send(namespace, session_id, req).await;
        if let (Err(e), Some(refused)) = (&out, refused) {
            let trace = refused.trace(e, started.elapsed().as_millis() as i64);
            self.inner.deferred.traces.record(trace);
        }
        out
    }

    /// [`Engine::send_message`] without the trace of a refusal.
    async fn begin_send(
        &self,
        namespace: &str,
        session_id: &SessionId,
        req: SendMessage,
    ) -> Result<TurnHandle> {
        validate_prompt(&req.content)?;
        let mut session = self.get_session(namespace, session_id).await?;
        let kind = req.runtime_kind.unwrap_or(session.runtime_kind);
        // Hand-off: a session may move between any targets between turns; the
        // new one gets the stored transcript as its history (an external agent a
        // fresh native session primed with it).
        let leaving_agent = session.runtime_kind.leaves_external_agent(kind);
        if leaving_agent {
            session.native_session_id = None;
        }
        // An external agent keeps its own context, which Hecate cannot summarize:
        // at the summary boundary of a `summary_buffer` session it is handed off
        // instead, to a fresh native session primed with what the strategy loads.
        let strategy = session.history.unwrap_or(self.inner.config.history);
        if kind == RuntimeKind::ExternalAgent
            && session.native_session_id.is_some()
            && strategy.summarizes()
            && strategy.summarization_needed(self.store().count_messages(&session.id).await?, 2)
        {
            tracing::info!(session_id = %session.id, "summary boundary: the agent gets a fresh session primed with the strategy's history");
            session.native_session_id = None;
        }
        // The workspace is canonicalised once per turn: here when the request
        // names one, otherwise (for an external agent) by `turn_target`.
        let named_workspace = req.workspace.as_deref().filter(|w| !w.is_empty());
        if let Some(w) = named_workspace {
            session.workspace = Some(crate::engine::workspace::canonical_workspace(w)?);
        }
        if kind == RuntimeKind::ExternalAgent
            && let Some(a) = req.adapter_id.as_ref().filter(|a| !a.is_empty())
            && session.adapter_id.as_ref() != Some(a)
        {
            self.agents().check_adapter(a)?;
            session.adapter_id = Some(a.clone());
            session.native_session_id = None;
        }
        // A turn running here answers busy first, naming the task run it follows.
        let running_here = self
            .active()
            .get(session_id)
            .map(|t| t.backing.lock().unwrap_or_else(|p| p.into_inner()).clone());
        if let Some(backing) = running_here {
            return Err(self.busy_turn(namespace, session_id, backing).await);
        }
        // A live task-backed segment makes every turn busy, model turns too.
        let backing = self.backing_run(namespace, &session).await?;
        let target = self
            .turn_target(&session, kind, &req, named_workspace.is_some(), backing)
            .await?;
        if let TurnTarget::External { workspace, .. } | TurnTarget::Agent { workspace, .. } =
            &target
        {
            session.workspace = Some(workspace.clone());
        }
        guardrails::check(&session, now_millis())?;
        let capabilities = match &target {
            TurnTarget::Model {
                provider, model, ..
            }
            | TurnTarget::Agent {
                provider, model, ..
            } => Some(self.gateway().capabilities(provider, model).await),
            _ => None,
        };
        // Tools are on for Hecate's agent: a model marked as not calling tools
        // cannot run it (an unknown one may).
        if let (
            TurnTarget::Agent {
                provider, model, ..
            },
            Some(caps),
        ) = (&target, &capabilities)
            && caps.refuses_tools()
        {
            return Err(HecateError::new(
                ErrorType::ModelCapabilityRequired,
                format!("{provider}/{model} is marked as not calling tools (tool_calling = none)"),
            )
            .with_detail("provider", provider.clone())
            .with_detail("model", model.clone())
            .with_detail(
                "capabilities",
                serde_json::to_value(caps).unwrap_or(serde_json::Value::Null),
            ));
        }

        let cancel = CancellationToken::new();
        let cancel_reason = Arc::new(std::sync::OnceLock::new());
        let run_id = RunId::generate();
        let taken = {
            let mut active = self.active();
            match active.get(session_id) {
                Some(t) => Some(t.backing.lock().unwrap_or_else(|p| p.into_inner()).clone()),
                None => {
                    active.insert(
                        session_id.clone(),
                        ActiveTurn {
                            run_id: run_id.clone(),
                            cancel: cancel.clone(),
                            cancel_reason: cancel_reason.clone(),
                            backing: Default::default(),
                        },
                    );
                    None
                }
            }
        };
        if let Some(backing) = taken {
            return Err(self.busy_turn(namespace, session_id, backing).await);
        }
        let guard = ActiveGuard {
            engine: self.clone(),
            session_id: session_id.clone(),
        };
        let now = now_rfc3339();
        let request_id = req
            .request_id
            .clone()
            .unwrap_or_else(|| RequestId::generate().0);
        // The turn's span exists before its run is stored, so the run (and the
        // answer) carry the ids the trace is exported with.
        let trace = self.open_turn_span(session_id, &run_id, &request_id, kind, &target);
        let run = Run {
            id: run_id,
            session_id: session_id.clone(),
            status: RunStatus::Running,
            error_type: None,
            error_message: None,
            request_id,
            trace_id: trace.ids.as_ref().map(|i| i.trace_id.clone()),
            span_id: trace.ids.as_ref().map(|i| i.span_id.clone()),
            started_at: now.clone(),
            completed_at: None,
            duration_ms: None,
        };
        if leaving_agent && let Some(rt) = &self.inner.external {
            // Its native session no longer follows the transcript.
            rt.close(session_id).await;
        }
        session.runtime_kind = kind;
        if let TurnTarget::Model {
            provider, model, ..
        }
        | TurnTarget::Agent {
            provider, model, ..
        } = &target
        {
            session.provider = Some(provider.clone());
            session.model = Some(model.clone());
        }
        if let Some(sp) = req.system_prompt.clone() {
            session.system_prompt = Some(sp).filter(|s| !s.is_empty());
        }
        session.status = SessionStatus::Running;
        session.turns_used += 1;
        session
            .session_started_at
            .get_or_insert_with(|| now.clone());
        session.updated_at = now.clone();
        // A thread with the provisional title is named after its first prompt.
        let named =
            crate::domain::session_title::name_from_first_prompt(&mut session, &req.content);

        // The segment id is provisional: `begin_turn` keeps the previous message's
        // when it ran the same target.
        let snapshot = RuntimeSnapshot {
            runtime_kind: kind,
            segment_id: crate::domain::ids::SegmentId::generate(),
            provider: (kind != RuntimeKind::ExternalAgent)
                .then(|| session.provider.clone())
                .flatten(),
            model: (kind != RuntimeKind::ExternalAgent)
                .then(|| session.model.clone())
                .flatten(),
            adapter_id: (kind == RuntimeKind::ExternalAgent)
                .then(|| session.adapter_id.clone())
                .flatten(),
            task_id: None,
            task_run_id: None,
            capabilities,
        };
        let mut user = NewMessage::text(Role::User, req.content.clone(), snapshot);
        user.content_blocks = req.blocks.clone();
        user.run_id = Some(run.id.clone());
        let plan = TurnStart {
            parts: TurnParts {
                session,
                run,
                target,
                namespace: namespace.to_string(),
                approval_mode: req.approval_mode.unwrap_or(self.inner.config.approval_mode),
                cancel,
                cancel_reason,
                delegate: req.workspace_delegate.clone(),
                reasoning_effort: req.reasoning_effort.clone(),
                guard,
                trace,
                named,
            },
            user,
        };
        // Started on a task of its own: a caller that goes away while the prompt
        // is being stored (an HTTP client disconnecting) leaves a turn that runs
        // to its end, never a stored prompt that nothing drives.
        let engine = self.clone();
        tokio::spawn(async move { engine.start_turn(plan).await })
            .await
            .map_err(|e| {
                HecateError::new(ErrorType::GatewayError, format!("starting the turn: {e}"))
            })?
    }

    /// Stores the prompt (`begin_turn`) and spawns the turn's driver.
    async fn start_turn(&self, plan: TurnStart) -> Result<TurnHandle> {
        let TurnStart { parts, user } = plan;
        let (session, run) = (&parts.session, &parts.run);
        let session_id = session.id.clone();
        // One transaction: lease, run, user message (durable before the runtime
        // sees it), session header and the history read back; on failure nothing
        // is stored.
        let begun = self
            .store()
            .begin_turn(BeginTurn {
                owner: self.inner.config.owner_id.clone(),
                lease_ttl_ms: self.inner.config.lease_ttl_ms,
                session: session.clone(),
                run: run.clone(),
                user,
                history: session.history.unwrap_or(self.inner.config.history),
            })
            .await?;
        let (user_message, history) = match begun {
            TurnBegun::Started { user, history } => (*user, history),
            TurnBegun::HeldElsewhere { owner } => {
                return Err(HecateError::new(
                    ErrorType::SessionBusyElsewhere,
                    format!("session {session_id} is driven by another Hecate process"),
                )
                .with_detail("owner_id", owner));
            }
        };
        let snapshot = user_message.runtime.clone();
        self.memory().index_message(session, &user_message);

        let events = self.inner.turn_taps.open(&session_id, &run.id);
        self.emit(EngineEvent::TurnStarted {
            session_id: session_id.clone(),
            run_id: run.id.clone(),
        })
        .await;
        let span = parts.trace.span.clone();
        let run_id = run.id.clone();
        let plan = TurnPlan {
            parts,
            snapshot,
            history,
            user: user_message.clone(),
        };
        let engine = self.clone();
        let done = tokio::spawn(async move { engine.drive(plan).await }.instrument(span));
        Ok(TurnHandle {
            session_id,
            run_id,
            user_message,
            events,
            done,
        })
    }

    /// Signals the running turn of a session to stop; `session_not_running` when
    /// this process runs none.
    pub async fn cancel(&self, namespace: &str, session_id: &SessionId) -> Result<()> {
        self.cancel_matching(namespace, session_id, None).await
    }

    /// Stops the session's running turn only when it is run `run_id`: a turn
    /// that ended is never mistaken for the next one. `session_not_running`
    /// when that run does not run here (any more).
    pub async fn cancel_run(
        &self,
        namespace: &str,
        session_id: &SessionId,
        run_id: &RunId,
    ) -> Result<()> {
        self.cancel_matching(namespace, session_id, Some(run_id))
            .await
    }

    async fn cancel_matching(
        &self,
        namespace: &str,
        session_id: &SessionId,
        run_id: Option<&RunId>,
    ) -> Result<()> {
        self.get_session(namespace, session_id).await?;
        match self.active().get(session_id) {
            Some(turn) if run_id.is_none_or(|r| *r == turn.run_id) => {
                turn.stop("requested");
                Ok(())
            }
            _ => Err(HecateError::new(
                ErrorType::SessionNotRunning,
                match run_id {
                    Some(r) => {
                        format!("run {r} of session {session_id} is not running in this process")
                    }
                    None => format!("session {session_id} has no running turn in this process"),
                },
            )),
        }
    }

    /// Runs the runtime that answers `ctx.target`.
    pub(super) async fn run_runtime(&self, ctx: TurnContext, asker: Arc<TurnAsker>) -> TurnReport {
        match &ctx.target {
            TurnTarget::Model { .. } => self.run_model_turn(ctx, &asker.namespace).await,
            TurnTarget::External { .. } => self.agents().run_external(ctx).await,
            TurnTarget::Agent { .. } => self.run_agent(ctx, asker).await,
        }
    }

    async fn release_lease(&self, session_id: &SessionId) {
        let owner = self.inner.config.owner_id.clone();
        if let Err(e) = self.store().release_lease(session_id, &owner).await {
            tracing::warn!(error = %e, "could not release session lease");
        }
    }
}
