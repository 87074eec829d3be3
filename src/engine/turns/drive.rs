//! A turn after it started: the runtime driven while the session lease is
//! renewed, and the turn's end stored (tried again while the store is away).

use super::run::{TurnEnding, TurnPolicy};
use super::{StoredTurn, TurnParts, TurnPlan, TurnResult};
use crate::domain::error::{ErrorType, Result};
use crate::domain::event::EngineEvent;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::message::{Message, Role};
use crate::domain::run::{RunEvent, RunStatus};
use crate::domain::session::SessionStatus;
use crate::engine::Engine;
use crate::store::{FinishTurn, RunEnd, TurnFinished};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

impl Engine {
    pub(super) async fn drive(self, plan: TurnPlan) -> TurnResult {
        let TurnPlan {
            parts,
            snapshot,
            history,
            user,
        } = plan;
        let TurnParts {
            mut session,
            run,
            target,
            namespace,
            approval_mode,
            cancel,
            cancel_reason,
            delegate,
            reasoning_effort,
            guard,
            trace,
            named,
        } = parts;
        let lost = Arc::new(std::sync::Mutex::new(None));
        // The lease is renewed beside the turn, in this task: the renewal stops
        // when the turn ends (a renewal already queued in the store runs before
        // the release that `finish_turn` does, which queues behind it).
        let ending = {
            let renewal =
                self.clone()
                    .renew_lease(session.id.clone(), cancel.clone(), lost.clone());
            let turn = self.run_turn(
                &mut session,
                &run,
                snapshot,
                target,
                history,
                TurnPolicy {
                    namespace,
                    approval_mode,
                    cancel,
                    delegate,
                    reasoning_effort,
                    named,
                },
            );
            tokio::pin!(renewal, turn);
            tokio::select! {
                biased;
                ending = &mut turn => ending,
                () = &mut renewal => turn.await,
            }
        };
        let taken = lost.lock().unwrap_or_else(|p| p.into_inner()).take();
        if taken.is_some() {
            let _ = cancel_reason.set("lease_lost");
        }
        let result = match ending {
            Ok(mut ending) => {
                if let Some(holder) = taken {
                    ending.lost_to(holder);
                }
                self.finish_turn(ending, user).await
            }
            Err(e) => Err(e),
        };
        if let Err(e) = &result {
            // Nothing of the end was stored (or it never ran): close the run as
            // failed as far as the store still lets us, and free the session, so
            // nothing stays `running` until a restart.
            let message = e.to_string();
            if let Err(again) = self
                .store()
                .finish_run(RunEnd {
                    run_id: &run.id,
                    status: RunStatus::Failed,
                    error: Some(("store_error", &message)),
                })
                .await
            {
                tracing::warn!(error = %again, "could not mark the unrecorded turn failed");
            }
            session.status = SessionStatus::Failed;
            if let Err(again) = self.store().update_session(&session).await {
                tracing::warn!(error = %again, "could not mark the session failed");
            }
            self.release_lease(&session.id).await;
        }
        drop(guard);
        let result = match result {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(error = %e, "turn could not be recorded");
                let mut lost = TurnResult::lost(run.id.clone(), &session.id, e.to_string());
                lost.error = Some(e);
                lost
            }
        };
        // A cancelled run nobody here stopped was ended by its runtime (the
        // agent, or its process going away).
        let reason = (result.run.status == RunStatus::Cancelled)
            .then(|| cancel_reason.get().copied().unwrap_or("runtime"));
        trace.close(result.run.status, result.error.as_ref(), reason);
        self.emit(EngineEvent::TurnFinished {
            session_id: session.id.clone(),
            run_id: run.id.clone(),
            status: result.run.status,
            error: result.error.clone(),
        })
        .await;
        self.inner.turn_taps.close(&session.id, &run.id);
        result
    }

    /// Renews the session's lease while the turn runs; returns only when
    /// another process holds it (this one stalled past its lease): the turn is
    /// then stopped and the holder noted in `lost`, so the turn ends failed
    /// without writing over the new owner's session header.
    async fn renew_lease(
        self,
        session_id: SessionId,
        cancel: CancellationToken,
        lost: Arc<std::sync::Mutex<Option<String>>>,
    ) {
        let every = Duration::from_millis((self.inner.config.lease_ttl_ms / 3).max(10) as u64);
        loop {
            tokio::time::sleep(every).await;
            let owner = self.inner.config.owner_id.clone();
            let ttl = self.inner.config.lease_ttl_ms;
            match self.store().acquire_lease(&session_id, &owner, ttl).await {
                Ok(None) => {}
                Ok(Some(holder)) => {
                    tracing::warn!(%holder, "another process took over the session's lease; stopping the turn");
                    *lost.lock().unwrap_or_else(|p| p.into_inner()) = Some(holder);
                    cancel.cancel();
                    return;
                }
                Err(e) => tracing::warn!(error = %e, "lease renewal failed"),
            }
        }
    }

    /// Stores the end of a turn in one transaction (answer and its provider call,
    /// artifacts, run end, session header, lease release); `user` is the
    /// turn's stored prompt.
    async fn finish_turn(&self, ending: TurnEnding, user: Message) -> Result<TurnResult> {
        let TurnEnding {
            finish,
            error,
            stored_events,
        } = ending;
        let done = self.store_turn_end(&finish).await?;
        let session = finish.session.clone();
        if let Some(e) = &error {
            tracing::warn!(error_type = %e.error_type, "turn failed: {}", e.message);
        }
        self.memory().index_message(&session, &done.assistant);
        let needed = session
            .history
            .unwrap_or(self.inner.config.history)
            .summarization_needed(done.message_count, 2);
        if needed && error.is_none() {
            // Off the turn's path: the answer does not wait for the summary.
            self.memory().spawn_summary(session, done.run.id.clone());
        }
        let stored = stored_events.map(|mut events| {
            events.extend(finish.events);
            StoredTurn {
                session: finish.session,
                user,
                call: finish.call,
                events: events
                    .into_iter()
                    .map(|e| RunEvent {
                        run_id: done.run.id.clone(),
                        sequence: e.sequence,
                        event_type: e.event_type,
                        data: e.data,
                        occurred_at: e.occurred_at,
                    })
                    .collect(),
            }
        });
        Ok(TurnResult {
            run: done.run,
            assistant: Some(done.assistant),
            error,
            summarization_needed: needed,
            stored,
        })
    }

    /// Stores the end of a turn. A store that cannot be reached (`store_error`)
    /// is tried again, backing off, for half the session lease (the lease still
    /// keeps every other process off the session meanwhile); then the error is
    /// returned and nothing claims the answer was saved. Before each new try the
    /// run is read: when it is no longer open, an earlier try committed (only its
    /// answer was lost on the way) and what it stored is answered instead of
    /// being written twice.
    async fn store_turn_end(&self, finish: &FinishTurn) -> Result<TurnFinished> {
        let window = Duration::from_millis((self.inner.config.lease_ttl_ms / 2).max(1) as u64);
        let started = tokio::time::Instant::now();
        let mut pause = Duration::from_millis(100);
        let (run_id, session_id) = (finish.run_id.clone(), finish.session.id.clone());
        let mut tried = false;
        loop {
            if tried && let Some(done) = self.stored_turn_end(&run_id, &session_id).await {
                return Ok(done);
            }
            let e = match self.store().finish_turn(finish.clone()).await {
                Ok(done) => return Ok(done),
                Err(e) => e,
            };
            tried = true;
            if e.error_type != ErrorType::StoreError || started.elapsed() + pause > window {
                return Err(e);
            }
            tracing::warn!(error = %e, "could not store the end of the turn; trying again");
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(Duration::from_secs(1));
        }
    }

    /// What an earlier `finish_turn` of `run_id` stored, when the run is no
    /// longer open and its answer is among the session's newest messages.
    async fn stored_turn_end(
        &self,
        run_id: &RunId,
        session_id: &SessionId,
    ) -> Option<TurnFinished> {
        let run = self.store().get_run(run_id).await.ok()?;
        if matches!(run.status, RunStatus::Running | RunStatus::AwaitingApproval) {
            return None;
        }
        let newest = self.store().last_messages(session_id, 8).await.ok()?;
        let assistant = newest
            .into_iter()
            .rev()
            .find(|m| m.role == Role::Assistant && m.run_id.as_ref() == Some(run_id))?;
        let message_count = self.store().count_messages(session_id).await.ok()?;
        Some(TurnFinished {
            assistant,
            run,
            message_count,
        })
    }
}
