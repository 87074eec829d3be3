//! One prompt turn: `session/prompt` while the agent's updates stream into the
//! turn's event channel and its permission requests go to the turn's asker;
//! cancellation with a grace period, idle and overall timeouts, and agent death.

use crate::adapters::acp::agent::process::exited_error;
use crate::adapters::acp::client::{AgentConnection, RouteGuard};
use crate::adapters::acp::convert::{StopReason, prompt_blocks};
use crate::adapters::acp::error::{AcpError, Stage};
use crate::adapters::acp::services::routes::{CostTally, Liveness, Route, TurnRoute};
use crate::domain::event::RuntimeEvent;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::message::ContentBlock;
use crate::domain::permission::PermissionAsker;
use crate::domain::provider_call::{ReportedCost, Usage};
use crate::domain::workspace::WorkspaceDelegate;
use agent_client_protocol::v1::schema::{CancelNotification, PromptRequest, Usage as AcpUsage};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;

const TICK: Duration = Duration::from_millis(100);

/// What a turn needs from its caller: where events go, who answers permission
/// requests, the Hecate ids, and the cancellation signal.
#[derive(Clone)]
pub struct TurnIo {
    /// Normalized events (plus raw frames and diagnostics) as they happen.
    pub events: UnboundedSender<RuntimeEvent>,
    /// Answers the agent's permission requests.
    pub asker: Arc<dyn PermissionAsker>,
    /// The Hecate session.
    pub session_id: SessionId,
    /// The Hecate run.
    pub run_id: RunId,
    /// Cancelled to stop the turn.
    pub cancel: CancellationToken,
    /// Serves the agent's fs/terminal requests instead of Hecate (an editor), when set.
    pub delegate: Option<Arc<dyn WorkspaceDelegate>>,
}

impl std::fmt::Debug for TurnIo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnIo")
            .field("session_id", &self.session_id)
            .field("run_id", &self.run_id)
            .finish_non_exhaustive()
    }
}

/// How a turn ended and what the agent said it used.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptOutcome {
    /// The agent's stop reason (`Cancelled` once the turn was cancelled).
    pub stop_reason: StopReason,
    /// The turn's token usage, when the agent's prompt response carried it.
    pub usage: Option<Usage>,
    /// The agent session's running cost total, as of its last `usage_update`
    /// during the turn.
    pub session_cost: Option<ReportedCost>,
}

impl AgentConnection {
    /// Runs one turn in native session `native_id`. Returns the agent's stop
    /// reason (`Cancelled` once `io.cancel` fired, after the agent ends the turn or
    /// the grace period passes, whichever is first) with the usage and cost it
    /// reported.
    pub async fn prompt(
        &self,
        native_id: &str,
        blocks: Vec<ContentBlock>,
        io: TurnIo,
    ) -> Result<PromptOutcome, AcpError> {
        let cost = Arc::new(CostTally::default());
        let ended = |stop_reason: StopReason, usage: Option<Usage>| PromptOutcome {
            stop_reason,
            usage,
            session_cost: cost.latest(),
        };
        let activity = Arc::new(Liveness::new());
        let turn_cancel = io.cancel.child_token();
        let _route = RouteGuard::set(
            &self.shared,
            native_id,
            Route {
                events: io.events.clone(),
                turn: Some(TurnRoute {
                    session_id: io.session_id.clone(),
                    run_id: io.run_id.clone(),
                    asker: io.asker.clone(),
                    cancel: turn_cancel.clone(),
                    delegate: io.delegate.clone(),
                    cost: cost.clone(),
                }),
                activity: activity.clone(),
            },
        );
        let request = PromptRequest::new(native_id.to_string(), prompt_blocks(&blocks));
        let response = self.cx.send_request(request).block_task();
        tokio::pin!(response);
        let deadline = self.options.prompt_timeout.map(|d| Instant::now() + d);
        let mut cancelled_at: Option<Instant> = None;
        let mut tick = tokio::time::interval(TICK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                biased;
                r = &mut response => {
                    return match (r, cancelled_at) {
                        (Ok(resp), Some(_)) => Ok(ended(StopReason::Cancelled, resp.usage.as_ref().map(turn_usage))),
                        (Err(_), Some(_)) => Ok(ended(StopReason::Cancelled, None)),
                        (Ok(resp), None) => Ok(ended(resp.stop_reason.into(), resp.usage.as_ref().map(turn_usage))),
                        (Err(e), None) => Err(self.failure(Stage::Prompt, e).await),
                    };
                }
                _ = self.process.wait_exit() => {
                    if cancelled_at.is_some() {
                        return Ok(ended(StopReason::Cancelled, None));
                    }
                    return Err(exited_error(&self.process).await);
                }
                _ = io.cancel.cancelled(), if cancelled_at.is_none() => {
                    cancelled_at = Some(Instant::now());
                    turn_cancel.cancel();
                    self.send_cancel(native_id);
                }
                _ = tick.tick() => {
                    if let Some(at) = cancelled_at {
                        if at.elapsed() >= self.options.cancel_grace {
                            tracing::info!(session = native_id, "agent did not end the cancelled turn within the grace period");
                            return Ok(ended(StopReason::Cancelled, None));
                        }
                        continue;
                    }
                    let idle = self
                        .options
                        .prompt_idle_timeout
                        .is_some_and(|limit| activity.idle_for() >= limit);
                    let overdue = deadline.is_some_and(|d| Instant::now() >= d);
                    if idle || overdue {
                        tracing::warn!(session = native_id, idle, overdue, "agent turn timed out");
                        turn_cancel.cancel();
                        self.send_cancel(native_id);
                        return Err(AcpError::Timeout { stage: Stage::Prompt });
                    }
                }
            }
        }
    }

    fn send_cancel(&self, native_id: &str) {
        if let Err(e) = self
            .cx
            .send_notification(CancelNotification::new(native_id.to_string()))
        {
            tracing::debug!(error = %e.message, "could not send session/cancel");
        }
    }
}

/// The turn usage of an ACP prompt response in Hecate's terms (cache reads count
/// as input, reasoning as output, as providers bill them).
fn turn_usage(u: &AcpUsage) -> Usage {
    let prompt =
        u.input_tokens + u.cached_read_tokens.unwrap_or(0) + u.cached_write_tokens.unwrap_or(0);
    let completion = u.output_tokens + u.thought_tokens.unwrap_or(0);
    Usage {
        prompt_tokens: prompt,
        completion_tokens: completion,
        total_tokens: u.total_tokens.max(prompt + completion),
    }
}
