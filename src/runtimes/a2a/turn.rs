//! One turn on a remote agent: the message sent (streamed when the card offers
//! it), the task followed to its end, each `input-required` asked as a Hecate
//! approval whose answer goes back as the next message of the same task, a
//! cancel passed on as `CancelTask`, and the task's artifacts kept with the turn
//! (their text streamed as the answer, the whole artifacts in a raw event). A
//! task still running when its stream closes (or breaks) is followed with
//! `SubscribeToTask`, again after each dropped stream; one still running when
//! a send without streaming answers, or whose agent refuses the subscribe, is
//! polled with `GetTask`.

use super::errors::into_hecate;
use crate::a2a_wire::{Artifact, Message, Part, StreamResponse, TaskState};
use crate::adapters::a2a::{A2aClient, A2aClientError, EventStream};
use crate::domain::error::{ErrorType, HecateError};
use crate::domain::event::RuntimeEvent;
use crate::domain::permission::{
    PermissionKind, PermissionOption, PermissionOutcome, PermissionRequest,
};
use crate::runtimes::TurnContext;
use futures::StreamExt;
use serde_json::json;
use std::time::Duration;

/// How long a `CancelTask` passed on after a cancel may take.
const CANCEL_LIMIT: Duration = Duration::from_secs(5);

/// How often a task still running after its send or stream is polled.
const POLL_EVERY: Duration = Duration::from_secs(1);

/// The first pause before subscribing again after a subscribe stream closed
/// without news; it doubles up to [`POLL_EVERY`].
const RESUBSCRIBE_PAUSE: Duration = Duration::from_millis(250);

/// The option ids of an `input-required` approval.
const APPROVE: &str = "approve";
const REJECT: &str = "reject";

/// What starts a turn.
pub(super) struct Start {
    /// The message text.
    pub text: String,
    /// The conversation to continue, when the session has one.
    pub context_id: Option<String>,
    /// Whether to stream.
    pub streaming: bool,
}

/// How a turn on a remote agent failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum TurnError {
    /// Talking to the agent failed.
    #[error(transparent)]
    Client(#[from] A2aClientError),
    /// The agent ended the task as failed, rejected or asking for authentication.
    #[error("the remote task ended {state}: {message}")]
    Task {
        /// The state it ended in.
        state: &'static str,
        /// What the agent said.
        message: String,
    },
    /// The stream ended before the task reached an end.
    #[error("the agent's stream ended while the task was still {0}")]
    Unfinished(&'static str),
}

impl TurnError {
    /// The error as a Hecate error about agent `agent_id`.
    pub(super) fn into_hecate(self, agent_id: &str) -> HecateError {
        match self {
            Self::Client(e) => into_hecate(&e, agent_id),
            Self::Task { state, message } => HecateError::new(
                ErrorType::GatewayError,
                format!("{agent_id}: the remote task ended {state}: {message}"),
            )
            .with_user_message(format!(
                "The remote A2A agent {agent_id} failed the task: {message}"
            ))
            .with_operator_action(
                "Read the agent's message; fix the request or the agent and retry.",
            )
            .with_detail("reason", format!("task_{state}"))
            .with_detail("adapter_id", agent_id)
            .with_detail("driver_kind", "a2a"),
            Self::Unfinished(state) => HecateError::new(
                ErrorType::GatewayError,
                format!("{agent_id}: the agent's stream ended while the task was still {state}"),
            )
            .with_detail("reason", "stream_unfinished")
            .with_detail("adapter_id", agent_id)
            .with_detail("driver_kind", "a2a"),
        }
    }
}

/// How the turn ended.
pub(super) enum Ending {
    /// The task completed (or the agent answered directly).
    Completed,
    /// Cancelled by Hecate (passed on) or by the agent.
    Cancelled,
    /// Failed.
    Failed(TurnError),
}

/// What a turn left.
pub(super) struct Outcome {
    /// How it ended.
    pub end: Ending,
    /// The conversation the agent put it in.
    pub context_id: Option<String>,
}

/// What is known of the task as its events arrive.
#[derive(Default)]
struct Follow {
    task_id: Option<String>,
    context_id: Option<String>,
    state: Option<TaskState>,
    /// The state's message text.
    status_text: String,
    artifacts: Vec<Artifact>,
    /// Whether any answer text was passed on.
    answered: bool,
    /// The artifact whose text was passed on last.
    last_artifact: Option<String>,
    /// How many events were taken in.
    taken: usize,
}

impl Follow {
    /// The task's id while it neither ended nor waits for input.
    fn running(&self) -> Option<String> {
        self.task_id
            .clone()
            .filter(|_| !self.state.is_some_and(TaskState::ends_a_wait))
    }

    /// Takes in one event, passing new answer text on to `ctx`.
    fn take(&mut self, ev: StreamResponse, ctx: &TurnContext) {
        self.taken += 1;
        match ev {
            StreamResponse::Task(t) => {
                self.task_id = Some(t.id);
                self.context_id = Some(t.context_id);
                self.state = Some(t.status.state);
                self.status_text = t.status.message.map(|m| m.text()).unwrap_or_default();
                for a in t.artifacts {
                    // Only what this snapshot adds to an artifact is new text.
                    let known = self
                        .artifacts
                        .iter()
                        .position(|k| k.artifact_id == a.artifact_id);
                    let seen = known.map_or(0, |i| self.artifacts[i].parts.len());
                    if a.parts.len() > seen {
                        self.emit_parts(&a.artifact_id, &a.parts[seen..], ctx);
                    }
                    match known {
                        Some(i) => self.artifacts[i] = a,
                        None => self.artifacts.push(a),
                    }
                }
            }
            StreamResponse::Message(m) => {
                self.context_id = m.context_id.clone().or(self.context_id.take());
                self.state = Some(TaskState::Completed);
                self.status_text = String::new();
                self.emit_text(m.text(), ctx);
            }
            StreamResponse::StatusUpdate(s) => {
                self.task_id = Some(s.task_id);
                self.context_id = Some(s.context_id);
                self.state = Some(s.status.state);
                self.status_text = s.status.message.map(|m| m.text()).unwrap_or_default();
            }
            StreamResponse::ArtifactUpdate(u) => {
                self.task_id = Some(u.task_id);
                self.context_id = Some(u.context_id);
                self.emit_parts(&u.artifact.artifact_id, &u.artifact.parts, ctx);
                match self
                    .artifacts
                    .iter_mut()
                    .find(|k| k.artifact_id == u.artifact.artifact_id)
                {
                    Some(known) if u.append => known.parts.extend(u.artifact.parts),
                    Some(known) => *known = u.artifact,
                    None => self.artifacts.push(u.artifact),
                }
            }
        }
    }

    /// Passes on the text of artifact `id`'s `parts` (pieces of one text, so
    /// joined as they are), a blank line apart from another artifact's text.
    fn emit_parts(&mut self, id: &str, parts: &[Part], ctx: &TurnContext) {
        let text: String = parts.iter().filter_map(|p| p.text.as_deref()).collect();
        if text.is_empty() {
            return;
        }
        if self.answered && self.last_artifact.as_deref() != Some(id) {
            self.emit_text("\n\n".into(), ctx);
        }
        self.last_artifact = Some(id.to_string());
        self.emit_text(text, ctx);
    }

    fn emit_text(&mut self, text: String, ctx: &TurnContext) {
        if text.is_empty() {
            return;
        }
        self.answered = true;
        let _ = ctx.events.send(RuntimeEvent::TextDelta { text });
    }
}

/// Runs the turn `start` describes through `client`.
pub(super) async fn drive(client: &A2aClient, ctx: &TurnContext, start: Start) -> Outcome {
    let mut follow = Follow {
        context_id: start.context_id.clone(),
        ..Follow::default()
    };
    let mut message = Message::user(&start.text, start.context_id, None);
    let end = loop {
        let step = tokio::select! {
            biased;
            () = ctx.cancel.cancelled() => None,
            r = exchange(client, &message, start.streaming, &mut follow, ctx) => Some(r),
        };
        let Some(result) = step else {
            pass_cancel_on(client, &follow).await;
            break Ending::Cancelled;
        };
        if let Err(e) = result {
            break Ending::Failed(e);
        }
        match follow.state {
            Some(TaskState::Completed) => break Ending::Completed,
            Some(TaskState::Canceled) => break Ending::Cancelled,
            Some(TaskState::InputRequired) => {
                let answer = tokio::select! {
                    biased;
                    () = ctx.cancel.cancelled() => None,
                    a = ask(ctx, &follow) => a,
                };
                let Some(answer) = answer else {
                    pass_cancel_on(client, &follow).await;
                    break Ending::Cancelled;
                };
                message = Message::user(answer, follow.context_id.clone(), follow.task_id.clone());
            }
            Some(s @ (TaskState::Failed | TaskState::Rejected | TaskState::AuthRequired)) => {
                break Ending::Failed(TurnError::Task {
                    state: state_name(s),
                    message: if follow.status_text.is_empty() {
                        "no message".into()
                    } else {
                        follow.status_text.clone()
                    },
                });
            }
            other => {
                break Ending::Failed(TurnError::Unfinished(state_name(
                    other.unwrap_or(TaskState::Unspecified),
                )));
            }
        }
    };
    if matches!(end, Ending::Completed) && !follow.answered && !follow.status_text.is_empty() {
        // An agent may answer in its final status message rather than an artifact.
        let _ = ctx.events.send(RuntimeEvent::TextDelta {
            text: follow.status_text.clone(),
        });
    }
    if follow.task_id.is_some() {
        let _ = ctx.events.send(RuntimeEvent::Raw {
            data: json!({"a2a": {
                "task_id": follow.task_id,
                "context_id": follow.context_id,
                "state": follow.state.map(state_name),
                "artifacts": follow.artifacts,
            }}),
        });
    }
    Outcome {
        end,
        context_id: follow.context_id,
    }
}

/// Sends `message` and follows the task until it ends or waits for input.
async fn exchange(
    client: &A2aClient,
    message: &Message,
    streaming: bool,
    follow: &mut Follow,
    ctx: &TurnContext,
) -> Result<(), TurnError> {
    if !streaming {
        let answer = client.send(message).await?;
        follow.take(answer, ctx);
        return poll(client, follow, ctx).await;
    }
    let events = client.stream(message).await?;
    if drain(events, follow, ctx).await? {
        return Ok(());
    }
    resubscribe(client, follow, ctx).await
}

/// Takes in `events` until the task ends or waits for input (`true`), or the
/// stream closes or its connection breaks before that (`false`).
async fn drain(
    mut events: EventStream,
    follow: &mut Follow,
    ctx: &TurnContext,
) -> Result<bool, TurnError> {
    while let Some(ev) = events.next().await {
        match ev {
            Ok(ev) => {
                follow.take(ev, ctx);
                if follow.state.is_some_and(TaskState::ends_a_wait) {
                    return Ok(true);
                }
            }
            Err(A2aClientError::Unreachable { message, .. }) => {
                tracing::debug!(task_id = ?follow.task_id, %message, "the agent's stream dropped");
                return Ok(false);
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(false)
}

/// Follows a task whose stream closed before it ended or waited for input:
/// re-attached with `SubscribeToTask`, again after each dropped stream (at
/// once when the last one brought news, else after a growing pause), until it
/// ends or waits; polled with `GetTask` once the agent refuses the subscribe.
async fn resubscribe(
    client: &A2aClient,
    follow: &mut Follow,
    ctx: &TurnContext,
) -> Result<(), TurnError> {
    let mut pause = Duration::ZERO;
    while let Some(id) = follow.running() {
        if !pause.is_zero() {
            tokio::time::sleep(pause).await;
        }
        let events = match client.subscribe(&id).await {
            Ok(events) => events,
            Err(A2aClientError::Remote { code, message }) => {
                tracing::debug!(task_id = %id, code, %message,
                    "the agent refused SubscribeToTask; polling the task");
                return poll(client, follow, ctx).await;
            }
            Err(e) => return Err(e.into()),
        };
        let before = follow.taken;
        if drain(events, follow, ctx).await? {
            return Ok(());
        }
        // The first event of a subscribe stream is the task as it was.
        pause = if follow.taken - before > 1 {
            Duration::ZERO
        } else {
            (pause * 2).clamp(RESUBSCRIBE_PAUSE, POLL_EVERY)
        };
    }
    Ok(())
}

/// Follows a task that is still running with `GetTask` (a send answered
/// before the task ended, or an agent that refuses `SubscribeToTask`) until it
/// ends or waits for input.
async fn poll(client: &A2aClient, follow: &mut Follow, ctx: &TurnContext) -> Result<(), TurnError> {
    while let Some(id) = follow.running() {
        tokio::time::sleep(POLL_EVERY).await;
        let task = client.get_task(&id).await?;
        follow.take(StreamResponse::Task(Box::new(task)), ctx);
    }
    Ok(())
}

/// Asks whoever answers approvals about the agent's question; answers the text
/// sent back (`approve` or `reject`), or `None` when nobody answered.
async fn ask(ctx: &TurnContext, follow: &Follow) -> Option<&'static str> {
    let question = if follow.status_text.is_empty() {
        "The remote agent asks for input to continue".to_string()
    } else {
        follow.status_text.clone()
    };
    let request = PermissionRequest {
        session_id: ctx.session_id.clone(),
        run_id: ctx.run_id.clone(),
        tool_call_id: format!("a2a-input-{}", follow.task_id.as_deref().unwrap_or("task")),
        title: question.clone(),
        tool_kind: Some("other".into()),
        raw: json!({"a2a": {"state": "input-required", "task_id": follow.task_id,
            "context_id": follow.context_id, "question": question}}),
        options: vec![
            PermissionOption {
                id: APPROVE.into(),
                name: "Approve".into(),
                kind: PermissionKind::AllowOnce,
            },
            PermissionOption {
                id: REJECT.into(),
                name: "Reject".into(),
                kind: PermissionKind::RejectOnce,
            },
        ],
    };
    match ctx.asker.ask(request).await {
        PermissionOutcome::Selected { option_id } if option_id == APPROVE => Some(APPROVE),
        PermissionOutcome::Selected { .. } => Some(REJECT),
        PermissionOutcome::Cancelled => None,
    }
}

/// Passes a cancel on to the agent as `CancelTask` (best effort, briefly).
async fn pass_cancel_on(client: &A2aClient, follow: &Follow) {
    let Some(id) = &follow.task_id else {
        return;
    };
    match tokio::time::timeout(CANCEL_LIMIT, client.cancel_task(id)).await {
        Ok(Ok(_)) => tracing::debug!(task_id = %id, "remote task cancelled"),
        Ok(Err(e)) => {
            tracing::warn!(task_id = %id, error = %e, "the remote agent refused the cancel")
        }
        Err(_) => tracing::warn!(task_id = %id, "the remote agent did not answer the cancel"),
    }
}

/// A state's short name (`completed`, `input_required`, …).
fn state_name(s: TaskState) -> &'static str {
    match s {
        TaskState::Submitted => "submitted",
        TaskState::Working => "working",
        TaskState::Completed => "completed",
        TaskState::Failed => "failed",
        TaskState::Canceled => "canceled",
        TaskState::InputRequired => "input_required",
        TaskState::Rejected => "rejected",
        TaskState::AuthRequired => "auth_required",
        TaskState::Unspecified => "unspecified",
    }
}
