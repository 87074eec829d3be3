//! Running one turn's runtime: the permission asker and context it gets, the
//! events it streams (through the event sink), the partial answer on failure,
//! the workspace diff around an agent's turn (external or Hecate's), and the ending that
//! `finish_turn` stores.

use super::sink::{EventSink, FLUSH_EVERY};
use super::step::{Step, poll_step};
use crate::domain::approval::ApprovalMode;
use crate::domain::error::{ErrorType, HecateError, Result};
use crate::domain::event::RuntimeEvent;
use crate::domain::ids::CallId;
use crate::domain::message::{
    ContentBlock, Message, MessageStatus, NewMessage, Role, RuntimeSnapshot, plain_text,
};
use crate::domain::provider_call::ProviderCall;
use crate::domain::run::{Run, RunStatus};
use crate::domain::session::{Session, SessionStatus};
use crate::domain::time::now_rfc3339;
use crate::domain::workspace::WorkspaceDelegate;
use crate::engine::Engine;
use crate::engine::approvals::TurnAsker;
use crate::engine::memory::TurnRecall;
use crate::runtimes::{TurnContext, TurnEnd, TurnReport, TurnTarget};
use crate::store::{FinishTurn, NewArtifact, NewRunEvent};
use futures::FutureExt;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Who may answer a turn's permission requests, and how to stop it.
pub(super) struct TurnPolicy {
    pub(super) namespace: String,
    pub(super) approval_mode: ApprovalMode,
    pub(super) cancel: CancellationToken,
    pub(super) delegate: Option<Arc<dyn WorkspaceDelegate>>,
    /// The reasoning effort a model turn asks for, when chosen.
    pub(super) reasoning_effort: Option<String>,
    /// Whether the turn named the session (its title is announced first).
    pub(super) named: bool,
}

impl Engine {
    pub(super) async fn run_turn(
        &self,
        session: &mut Session,
        run: &Run,
        mut snapshot: RuntimeSnapshot,
        target: TurnTarget,
        history: Vec<Message>,
        policy: TurnPolicy,
    ) -> Result<TurnEnding> {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        if policy.named {
            let _ = tx.send(RuntimeEvent::SessionInfo {
                title: Some(session.title.clone()),
                updated_at: Some(session.updated_at.clone()),
            });
        }
        let workspace = session.workspace.clone();
        let asker = Arc::new(TurnAsker {
            engine: self.clone(),
            namespace: policy.namespace.clone(),
            adapter_id: session.adapter_id.clone(),
            workspace: workspace.clone(),
            mode: policy.approval_mode,
            timeout: self.inner.config.approval_timeout,
            cancel: policy.cancel.clone(),
            // The driver runs inside the turn's span.
            span: tracing::Span::current(),
        });
        // An external agent's streamed text is bounded per turn (a runaway agent
        // cannot grow memory or a row without bound); models are bounded by their
        // token limits.
        let cap = matches!(target, TurnTarget::External { .. })
            .then_some(self.inner.config.external_output_cap_bytes);
        let baseline = match (&target, &workspace) {
            // The agents edit the workspace: their turn's changes are captured
            // (files list, diffs, revert) the same way.
            (TurnTarget::External { .. } | TurnTarget::Agent { .. }, Some(ws)) => {
                crate::engine::diffs::baseline(ws).await
            }
            _ => None,
        };
        let (history, recalled) = match (&target, self.recall(session, &history, &tx).await) {
            // A model gets the recalled messages as a system message right
            // before the prompt.
            (TurnTarget::Model { .. }, Some(message)) => {
                let mut history = history;
                history.insert(history.len().saturating_sub(1), message);
                (history, None)
            }
            (_, recalled) => (history, recalled.map(|m| m.content)),
        };
        let ctx = TurnContext {
            session_id: session.id.clone(),
            run_id: run.id.clone(),
            request_id: run.request_id.clone(),
            target: target.clone(),
            system: session.system_prompt.clone(),
            history,
            recalled,
            cancel: policy.cancel.clone(),
            events: tx,
            asker: asker.clone(),
            workspace_delegate: policy.delegate.clone(),
            reasoning_effort: policy.reasoning_effort.clone(),
        };
        // A panicking runtime fails the turn like any other error, so the turn is
        // still recorded, its lease released and its channel closed.
        let runtime_fut = std::panic::AssertUnwindSafe(self.run_runtime(ctx, asker))
            .catch_unwind()
            .map(|ended| {
                ended.unwrap_or_else(|panic| {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".to_string());
                    TurnReport::ended(TurnEnd::Failed(HecateError::new(
                        ErrorType::GatewayError,
                        format!("the runtime panicked: {what}"),
                    )))
                })
            });
        tokio::pin!(runtime_fut);
        // A model turn's answer is built from what it stored (see `StoredTurn`),
        // unless the session also shows its agent's gateway calls, which are read.
        let keep_stored =
            matches!(target, TurnTarget::Model { .. }) && session.adapter_id.is_none();
        let mut sink = EventSink::new(
            self.clone(),
            session.id.clone(),
            run.id.clone(),
            cap,
            keep_stored,
        );
        // Streamed events reach the store within FLUSH_EVERY even when the stream
        // pauses, so a killed Hecate leaves what the user saw (startup
        // reconciliation turns it into the partial answer).
        let flush_timer = tokio::time::sleep(FLUSH_EVERY);
        tokio::pin!(flush_timer);
        let mut armed_for: Option<Instant> = None;
        let report: TurnReport = loop {
            let due = sink.flush_due();
            if let Some(at) = due
                && armed_for != Some(at)
            {
                flush_timer.as_mut().reset(at.into());
                armed_for = Some(at);
            }
            let step = std::future::poll_fn(|cx| {
                let flush = due.is_some().then_some(flush_timer.as_mut());
                poll_step(cx, &mut rx, runtime_fut.as_mut(), flush)
            })
            .await;
            match step {
                Step::Event(ev) => {
                    sink.push_queued(ev, &mut rx, |ev| follow_title(session, ev))
                        .await
                }
                Step::Flush => sink.flush().await,
                Step::Ended(report) => break *report,
            }
        };
        while let Ok(ev) = rx.try_recv() {
            follow_title(session, &ev);
            sink.push(ev).await;
        }

        let (status, msg_status, error) = match &report.end {
            TurnEnd::Completed => (RunStatus::Completed, MessageStatus::Completed, None),
            TurnEnd::Failed(e) => (RunStatus::Failed, MessageStatus::Failed, Some(e.clone())),
            TurnEnd::Cancelled => (RunStatus::Cancelled, MessageStatus::Cancelled, None),
        };
        let blocks = if report.blocks.is_empty() {
            sink.partial_blocks()
        } else {
            report.blocks.clone()
        };
        let turn_diff = match (&baseline, &workspace) {
            (Some(base), Some(ws)) => crate::engine::diffs::capture(ws, base)
                .await
                .filter(|d| !d.files.is_empty()),
            _ => None,
        };
        super::trace::record_report(
            &report,
            matches!(target, TurnTarget::External { .. }),
            plain_text(&blocks).len(),
            turn_diff.is_some(),
        );
        if let Some(trace) = super::gateway_trace::model_turn_trace(session, run, &target, &report)
        {
            self.inner.deferred.traces.record(trace);
        }
        if report.native_session_id.is_some() {
            session.native_session_id = report.native_session_id.clone();
        }
        let (provider, model) = match (&target, &report.answered_by) {
            // A model turn that failed over is the answering provider's.
            (TurnTarget::Model { .. }, Some(by)) => {
                snapshot.provider = Some(by.provider.clone());
                snapshot.model = Some(by.model.clone());
                session.provider = Some(by.provider.clone());
                session.model = Some(by.model.clone());
                (by.provider.clone(), by.model.clone())
            }
            (
                TurnTarget::Model {
                    provider, model, ..
                },
                None,
            ) => (provider.clone(), model.clone()),
            (TurnTarget::External { adapter_id, .. }, _) => (adapter_id.clone(), String::new()),
            (
                TurnTarget::Agent {
                    provider, model, ..
                },
                _,
            ) => (provider.clone(), model.clone()),
        };
        if let Some((task, task_run)) = &report.backing_task {
            snapshot.task_id = Some(task.to_string());
            snapshot.task_run_id = Some(task_run.to_string());
        }
        let call = report.called_upstream.then(|| ProviderCall {
            id: CallId::generate(),
            session_id: session.id.clone(),
            run_id: Some(run.id.clone()),
            request_id: run.request_id.clone(),
            provider,
            model,
            usage: report.usage.unwrap_or_default(),
            cost_micros_usd: report.cost_micros_usd,
            duration_ms: report.duration_ms,
            created_at: now_rfc3339(),
        });
        let mut assistant = NewMessage::text(Role::Assistant, plain_text(&blocks), snapshot);
        assistant.content_blocks = if blocks
            .iter()
            .all(|b| matches!(b, ContentBlock::Text { .. }))
        {
            Vec::new()
        } else {
            blocks
        };
        assistant.tool_calls = report.tool_calls.clone();
        assistant.produced_by_call_id = call.as_ref().map(|c| c.id.clone());
        assistant.run_id = Some(run.id.clone());
        assistant.status = msg_status;
        assistant.error = match (&error, status) {
            (Some(e), _) => Some(e.error_type.code().to_string()),
            (None, RunStatus::Cancelled) => Some("cancelled".to_string()),
            _ => None,
        };

        let now = now_rfc3339();
        session.status = match status {
            RunStatus::Completed => SessionStatus::Completed,
            RunStatus::Cancelled => SessionStatus::Cancelled,
            _ => SessionStatus::Failed,
        };
        session.last_activity_at = now.clone();
        session.updated_at = now;
        let artifacts = match &turn_diff {
            Some(d) => vec![NewArtifact {
                kind: crate::engine::diffs::TURN_DIFF_ARTIFACT.to_string(),
                path: String::new(),
                data: serde_json::to_string(d)
                    .map_err(|e| HecateError::store(format!("encoding a diff: {e}")))?,
            }],
            None => Vec::new(),
        };
        let finish = FinishTurn {
            owner: self.inner.config.owner_id.clone(),
            session: session.clone(),
            run_id: run.id.clone(),
            status,
            error: error
                .as_ref()
                .map(|e| (e.error_type.code().to_string(), e.message.clone())),
            assistant,
            call,
            artifacts,
            // The last batch is stored with the answer, in the same transaction.
            events: sink.take_pending(),
        };
        Ok(TurnEnding {
            finish,
            error,
            stored_events: sink.take_stored(),
        })
    }

    /// The session's recalled messages for this turn (one system message), when
    /// `recall = k` finds any; the run's event log gets a raw `memory` event
    /// saying what was recalled, or why recall is degraded.
    async fn recall(
        &self,
        session: &Session,
        history: &[Message],
        events: &tokio::sync::mpsc::UnboundedSender<RuntimeEvent>,
    ) -> Option<Message> {
        let prompt = history
            .last()
            .filter(|m| m.role == Role::User)
            .map(|m| m.content.clone())
            .unwrap_or_default();
        let (data, message) = match self.memory().recall_for_turn(session, &prompt).await {
            TurnRecall::Nothing => return None,
            TurnRecall::Recalled(message, hits) => {
                let recalled: Vec<_> = hits
                    .iter()
                    .map(|h| {
                        json!({"message_id": h.entry.message_id, "session_id": h.entry.session_id,
                               "score": h.score})
                    })
                    .collect();
                (
                    json!({"memory": "recalled", "messages": recalled}),
                    Some(*message),
                )
            }
            TurnRecall::Degraded(d) => {
                tracing::warn!(reason = %d.reason, "recall skipped for this turn: {}", d.message);
                (
                    json!({"memory": "recall_degraded", "reason": d.reason, "message": d.message}),
                    None,
                )
            }
        };
        // The receiver lives until the turn ends; a closed one only means shutdown.
        let _ = events.send(RuntimeEvent::Raw { data });
        message
    }
}

/// Keeps a title the runtime reported (an agent's `session_info_update`) on
/// the session header the turn's end writes.
fn follow_title(session: &mut Session, ev: &RuntimeEvent) {
    if let RuntimeEvent::SessionInfo {
        title: Some(title), ..
    } = ev
    {
        session.title = title.clone();
    }
}

/// What a turn's runtime produced, ready to be stored by `finish_turn`.
pub(super) struct TurnEnding {
    pub(super) finish: FinishTurn,
    pub(super) error: Option<HecateError>,
    /// The events stored during the turn, when its answer is built from memory.
    pub(super) stored_events: Option<Vec<NewRunEvent>>,
}

impl TurnEnding {
    /// Turns the ending into a failure: another process (`holder`) took the
    /// session's lease while this turn ran.
    pub(super) fn lost_to(&mut self, holder: String) {
        let e = HecateError::new(
            ErrorType::SessionBusyElsewhere,
            format!(
                "another Hecate process ({holder}) took over the session's lease; this turn stopped"
            ),
        )
        .with_detail("owner_id", holder);
        self.finish.status = RunStatus::Failed;
        self.finish.error = Some((e.error_type.code().to_string(), e.message.clone()));
        self.finish.assistant.status = MessageStatus::Failed;
        self.finish.assistant.error = Some(e.error_type.code().to_string());
        self.finish.session.status = SessionStatus::Failed;
        self.error = Some(e);
        // The header was not written: the answer is read back instead.
        self.stored_events = None;
    }
}
