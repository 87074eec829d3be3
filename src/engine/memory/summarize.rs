//! Summaries on request of the session's strategy: the session's model reads what
//! the strategy loads (the last summary and everything after it) and its answer is
//! appended as a new `is_summary` message. History is never rewritten; a failed
//! summary is logged and recorded as a `summary_failed` event on the turn's run.

use crate::domain::error::{HecateError, Result};
use crate::domain::ids::RunId;
use crate::domain::memory::HistoryStrategy;
use crate::domain::message::{Message, NewMessage, Role};
use crate::domain::session::{RuntimeKind, Session};
use crate::domain::time::now_rfc3339;
use crate::engine::Memory;
use crate::engine::gateway::candidates::{failover_reason, learn_failure};
use crate::runtimes::model::ModelTarget;
use crate::store::NewRunEvent;
use serde_json::json;

/// The text every summary message starts with.
pub const SUMMARY_PREFIX: &str = "Summary: ";

/// The instruction the model gets, after the messages to summarize.
pub const SUMMARY_INSTRUCTION: &str = "Summarize the conversation above in a few sentences \
     for your own later reference: keep names, facts, decisions and open questions. \
     Answer with the summary only.";

impl<'e> Memory<'e> {
    /// Writes a summary for `session` on a task of its own when its strategy asks
    /// for one; `run` is the turn that crossed the boundary. External-agent sessions
    /// are not summarized: `send_message` hands them off to a fresh native session
    /// at the boundary instead.
    pub(crate) fn spawn_summary(self, session: Session, run: RunId) {
        let strategy = session.history.unwrap_or(self.engine.inner.config.history);
        if !strategy.summarizes() || session.runtime_kind == RuntimeKind::ExternalAgent {
            return;
        }
        let engine = self.engine.clone();
        tokio::spawn(async move {
            match engine.memory().write_summary(&session, strategy).await {
                Ok(m) => {
                    tracing::info!(session_id = %session.id, sequence = m.sequence, "summary written");
                    engine
                        .memory()
                        .note_summary(
                            &run,
                            "summary_written",
                            json!({"message_id": m.id, "sequence": m.sequence}),
                        )
                        .await;
                }
                Err(e) => {
                    tracing::warn!(session_id = %session.id, error_type = %e.error_type, "summary failed: {}", e.message);
                    engine
                        .memory()
                        .note_summary(
                            &run,
                            "summary_failed",
                            json!({"type": e.error_type, "message": e.message}),
                        )
                        .await;
                }
            }
        });
    }

    /// Asks the session's model for a summary of what `strategy` loads and appends
    /// it to the stream.
    async fn write_summary(self, session: &Session, strategy: HistoryStrategy) -> Result<Message> {
        let (Some(provider), Some(model)) = (&session.provider, &session.model) else {
            return Err(HecateError::invalid(
                "the session has no model to summarize with",
            ));
        };
        let target = ModelTarget {
            provider: provider.clone(),
            model: model.clone(),
        };
        let mut context = self
            .engine
            .store()
            .load_history(&session.id, strategy)
            .await?;
        let Some(last) = context.last() else {
            return Err(HecateError::invalid(
                "the session has no messages to summarize",
            ));
        };
        let snapshot = last.runtime.clone();
        context.push(Message::unstored(Role::User, SUMMARY_INSTRUCTION));
        let text = self.summary_text(session, target, context).await?;
        let mut summary = NewMessage::text(
            Role::System,
            format!("{SUMMARY_PREFIX}{}", text.trim()),
            snapshot,
        );
        summary.is_summary = true;
        let stored = self
            .engine
            .store()
            .append_exchange(&session.id, vec![summary], None)
            .await?;
        stored
            .into_iter()
            .next()
            .ok_or_else(|| HecateError::invalid("the store returned no summary message"))
    }

    /// The summary from the session's provider or, when that one fails before
    /// answering, from the next provider serving the model that the route's
    /// checks let through (cooldowns, deny patterns, budget), as a model turn
    /// fails over; the last failure when none answers.
    async fn summary_text(
        self,
        session: &Session,
        first: ModelTarget,
        context: Vec<Message>,
    ) -> Result<String> {
        let engine = self.engine;
        let health = engine.inner.gateway.health();
        let system = session.system_prompt.clone();
        let mut targets = vec![first.clone()];
        let mut widened = false;
        let mut i = 0;
        let mut last: Option<HecateError> = None;
        while i < targets.len() || !widened {
            if i == targets.len() {
                widened = true;
                let (routes, checked, _) = engine
                    .gateway()
                    .fallbacks(&session.namespace, &first.provider, &first.model)
                    .await;
                targets.extend(routes.into_iter().zip(checked).filter_map(|(r, c)| {
                    (c.outcome == "pending").then_some(ModelTarget {
                        provider: r.provider,
                        model: r.model,
                    })
                }));
                continue;
            }
            let target = &targets[i];
            i += 1;
            match engine
                .inner
                .model
                .complete(target, system.clone(), context.clone())
                .await
            {
                Ok(text) => {
                    health.succeeded(&target.provider);
                    return Ok(text);
                }
                Err(Ok(e)) if failover_reason(&e).is_some() => {
                    learn_failure(&health, &target.provider, &e);
                    tracing::info!(provider = %target.provider, error = %e, "a summary's provider failed; trying the next");
                    last = Some(e.into_hecate(&target.provider, &target.model));
                }
                Err(Ok(e)) => return Err(e.into_hecate(&target.provider, &target.model)),
                Err(Err(e)) => return Err(e),
            }
        }
        Err(last.unwrap_or_else(|| HecateError::gateway("no provider could write the summary")))
    }

    /// Records what became of a summary as the next event of the turn's run.
    async fn note_summary(self, run: &RunId, kind: &str, data: serde_json::Value) {
        let store = self.engine.store();
        let next = match store.list_run_events(run, None).await {
            Ok(events) => events.last().map_or(1, |e| e.sequence + 1),
            Err(e) => {
                tracing::warn!(error = %e.message, "reading the run's events failed");
                return;
            }
        };
        let event = NewRunEvent {
            sequence: next,
            event_type: kind.to_string(),
            data,
            occurred_at: now_rfc3339(),
        };
        if let Err(e) = store.append_run_events(run, &[event]).await {
            tracing::warn!(error = %e.message, "recording the summary event failed");
        }
    }
}
