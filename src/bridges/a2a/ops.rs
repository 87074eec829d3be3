//! The A2A operations both bindings share: send (blocking or streamed),
//! get, list, cancel and subscribe, each through the engine's public API. A
//! new message starts a turn in its conversation's session (created on the
//! first message of an (agent, `contextId`) pair); a message naming a task in
//! `input-required` answers that task's pending approval. A send's inline push
//! notification config is checked before anything starts and registered for
//! the task before its turn is followed, so its webhook misses no event.
//! Tasks, conversations and push configs are stored (`stored.rs`): a task
//! of this process is read live, any other from the store, and a message
//! in a known `contextId` continues its session after a restart too.

use super::agents::ExposedAgent;
use super::driver::{drive, status_event};
use super::error::A2aError;
use super::input::{approval_answer, check_role, prompt_text, workspace};
use super::push::{bind, checked};
use super::state::A2aState;
use super::stored;
use super::tasks::{TaskRecord, Watcher};
use crate::a2a_wire::{
    ListTasksRequest, ListTasksResponse, SendMessageRequest, StreamResponse, Task, TaskIdRequest,
    TaskPushNotificationConfig, TaskState,
};
use crate::domain::error::ErrorType;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::time::now_rfc3339;
use crate::engine::SendMessage;
use futures::Stream;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// Default page of `ListTasks`.
const DEFAULT_PAGE: i32 = 50;
/// Largest page of `ListTasks`.
const MAX_PAGE: i32 = 100;
/// How long a cancel waits for the turn to stop.
const CANCEL_WAIT: Duration = Duration::from_secs(10);

/// Sends a message and waits until its task ends or waits for input (or at
/// once with `returnImmediately`); answers the task.
pub async fn send(
    state: &A2aState,
    agent: &ExposedAgent,
    req: SendMessageRequest,
) -> Result<Task, A2aError> {
    let config = req.configuration.clone().unwrap_or_default();
    let (record, mut watcher) = start(state, agent, req).await?;
    if config.return_immediately {
        return Ok(record.to_task(config.history_length, true));
    }
    loop {
        let now = state.registry.get(&agent.name, &record.id)?;
        if now.state.ends_a_wait() {
            return Ok(now.to_task(config.history_length, true));
        }
        if watcher.changed.changed().await.is_err() {
            return Ok(now.to_task(config.history_length, true));
        }
    }
}

/// Sends a message and streams its task: the task first, then its status and
/// artifact events until it ends or waits for input.
pub async fn send_streaming(
    state: &A2aState,
    agent: &ExposedAgent,
    req: SendMessageRequest,
) -> Result<impl Stream<Item = StreamResponse> + use<>, A2aError> {
    let (record, watcher) = start(state, agent, req).await?;
    Ok(follow(state.clone(), agent.name.clone(), record, watcher))
}

/// Re-attaches to a running task's stream: the task as it is, then its events.
pub async fn subscribe(
    state: &A2aState,
    agent: &ExposedAgent,
    req: &TaskIdRequest,
) -> Result<impl Stream<Item = StreamResponse> + use<>, A2aError> {
    let (record, watcher) = live_or_elsewhere(state, agent, &req.id, "SubscribeToTask").await?;
    if record.state.is_terminal() {
        return Err(A2aError::UnsupportedOperation(format!(
            "task {} is already {}; read it with GetTask",
            record.id,
            record.state.name()
        )));
    }
    Ok(follow(state.clone(), agent.name.clone(), record, watcher))
}

/// One task of the agent, live here or stored.
pub async fn get(
    state: &A2aState,
    agent: &ExposedAgent,
    req: &TaskIdRequest,
) -> Result<Task, A2aError> {
    if let Some(n) = req.history_length.filter(|n| *n < 0) {
        return Err(A2aError::InvalidParams(format!(
            "historyLength {n} is negative"
        )));
    }
    let record = stored::find(state, &agent.name, &req.id).await?;
    Ok(record.to_task(req.history_length, true))
}

/// A page of the agent's stored tasks, newest first.
pub async fn list(
    state: &A2aState,
    agent: &ExposedAgent,
    req: &ListTasksRequest,
) -> Result<ListTasksResponse, A2aError> {
    let size = req.page_size.unwrap_or(DEFAULT_PAGE);
    if !(1..=MAX_PAGE).contains(&size) {
        return Err(A2aError::InvalidParams(format!(
            "pageSize {size} is not between 1 and {MAX_PAGE}"
        )));
    }
    let start = match req.page_token.as_deref().filter(|t| !t.is_empty()) {
        None => 0,
        Some(t) => t.parse::<usize>().map_err(|_| {
            A2aError::InvalidParams(format!("pageToken {t:?} is not one this server gave"))
        })?,
    };
    let (page, total) = stored::list(
        state,
        &agent.name,
        req.context_id.as_deref().filter(|c| !c.is_empty()),
        req.status.filter(|s| *s != TaskState::Unspecified),
        start,
        size as usize,
    )
    .await?;
    let end = start + page.len();
    let artifacts = req.include_artifacts.unwrap_or(false);
    let tasks = page
        .iter()
        .map(|r| r.to_task(req.history_length, artifacts))
        .collect();
    Ok(ListTasksResponse {
        tasks,
        next_page_token: if (end as u64) < total {
            end.to_string()
        } else {
            String::new()
        },
        page_size: size,
        total_size: i32::try_from(total).unwrap_or(i32::MAX),
    })
}

/// Cancels a task's turn and answers the task once it stopped; a finished task
/// is `TaskNotCancelable`.
pub async fn cancel(
    state: &A2aState,
    agent: &ExposedAgent,
    req: &TaskIdRequest,
) -> Result<Task, A2aError> {
    let (record, mut watcher) = live_or_elsewhere(state, agent, &req.id, "CancelTask").await?;
    if record.state.is_terminal() {
        return Err(not_cancelable(&record));
    }
    // The task is its turn's run, which runs from before the task exists: it
    // is stopped by its run id, so a turn the same context started since is
    // never stopped instead. A run that already ended leaves the task to be
    // marked ended by its driver; its change ends the wait either way.
    ask_to_cancel(state, &record.session_id, &record.id).await?;
    let settled = tokio::time::timeout(CANCEL_WAIT, async {
        loop {
            match state.registry.get(&agent.name, &record.id) {
                Ok(now) if now.state.is_terminal() => return Ok(now),
                Ok(_) => {}
                Err(e) => return Err(e),
            }
            if watcher.changed.changed().await.is_err() {
                return state.registry.get(&agent.name, &record.id);
            }
        }
    })
    .await;
    let now = match settled {
        Ok(r) => r?,
        Err(_) => state.registry.get(&agent.name, &record.id)?,
    };
    if now.state.is_terminal() && now.state != TaskState::Canceled {
        return Err(not_cancelable(&now));
    }
    Ok(now.to_task(None, true))
}

/// Asks the engine to stop the task's run (`task_id` is its run id); a run that
/// no longer runs is no error: its task is about to be marked ended.
async fn ask_to_cancel(
    state: &A2aState,
    session_id: &SessionId,
    task_id: &str,
) -> Result<(), A2aError> {
    let run = RunId::from(task_id.to_string());
    match state
        .engine
        .cancel_run(&state.namespace, session_id, &run)
        .await
    {
        Ok(()) => Ok(()),
        Err(e) if e.error_type == ErrorType::SessionNotRunning => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Starts a task for a new message, or continues the task it names; answers the
/// task's snapshot and a watcher from that point.
async fn start(
    state: &A2aState,
    agent: &ExposedAgent,
    req: SendMessageRequest,
) -> Result<(TaskRecord, Watcher), A2aError> {
    let message = &req.message;
    check_role(message)?;
    if message.message_id.trim().is_empty() {
        return Err(A2aError::InvalidParams(
            "the message has no messageId".into(),
        ));
    }
    let push = req
        .configuration
        .as_ref()
        .and_then(|c| c.task_push_notification_config.clone())
        .map(checked)
        .transpose()?;
    if push.is_some() {
        state.notifier.ready()?;
    }
    if let Some(task_id) = message.task_id.as_deref().filter(|t| !t.is_empty()) {
        return answer(state, agent, &req, task_id, push).await;
    }
    let prompt = prompt_text(&message.parts)?;
    let context_id = message
        .context_id
        .clone()
        .filter(|c| !c.trim().is_empty())
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    let session_id = match stored::context_session(state, &agent.name, &context_id).await? {
        Some(s) => s,
        None => {
            let ws = match workspace(message, req.metadata.as_ref()) {
                Some(w) => w,
                None => state
                    .engine
                    .a2a_tasks()
                    .new_conversation_dir()?
                    .display()
                    .to_string(),
            };
            let session = state
                .engine
                .create_session(&state.namespace, agent.new_session(&context_id, ws))
                .await?;
            stored::bind_context(state, &agent.name, &context_id, session.id).await?
        }
    };
    // Opened before the turn starts, so no approval of it is missed.
    let approvals = state.engine.bus().subscribe(Some(session_id.clone()));
    let turn = state
        .engine
        .send_message(
            &state.namespace,
            &session_id,
            SendMessage {
                content: prompt,
                ..SendMessage::default()
            },
        )
        .await?;
    let task_id = turn.run_id.to_string();
    let mut user = message.clone();
    user.context_id = Some(context_id.clone());
    user.task_id = Some(task_id.clone());
    let (record, watcher) = state.registry.insert(TaskRecord {
        id: task_id.clone(),
        agent: agent.name.clone(),
        context_id,
        session_id: session_id.clone(),
        state: TaskState::Working,
        status_message: None,
        timestamp: now_rfc3339(),
        answer: String::new(),
        files: Vec::new(),
        history: vec![user],
        pending_approval: None,
        order: 0,
        version: 0,
    });
    stored::save(state, Some(record.clone())).await;
    if let Some(config) = push {
        // Before the driver starts, so the webhook sees every event after the
        // task as it is now.
        let kept =
            stored::add_push(state, &agent.name, &task_id, bind(config, &task_id), true).await;
        if let Err(e) = kept {
            tracing::warn!(
                task_id = %task_id,
                error = %e,
                "the send's push notification config was not kept"
            );
        }
    }
    tokio::spawn(drive(state.clone(), session_id, task_id, turn, approvals));
    Ok((record, watcher))
}

/// A message naming task `task_id`: the answer to its pending approval (its
/// inline push notification config, `push`, registered first).
async fn answer(
    state: &A2aState,
    agent: &ExposedAgent,
    req: &SendMessageRequest,
    task_id: &str,
    push: Option<TaskPushNotificationConfig>,
) -> Result<(TaskRecord, Watcher), A2aError> {
    let message = &req.message;
    let record = stored::find(state, &agent.name, task_id).await?;
    if let Some(c) = message.context_id.as_deref().filter(|c| !c.is_empty())
        && c != record.context_id
    {
        return Err(A2aError::InvalidParams(format!(
            "task {task_id} belongs to context {}, not {c}",
            record.context_id
        )));
    }
    let approval = match (record.state, record.pending_approval.clone()) {
        (TaskState::InputRequired, Some(a)) => a,
        (s, _) if s.is_terminal() => {
            return Err(A2aError::InvalidParams(format!(
                "task {task_id} is {} and takes no more messages; send a new message in \
                 context {} (without taskId) to go on",
                s.name(),
                record.context_id
            )));
        }
        _ => {
            return Err(A2aError::UnsupportedOperation(format!(
                "task {task_id} is still working and asks nothing; wait for it, \
                 SubscribeToTask, or CancelTask"
            )));
        }
    };
    if !state.registry.is_live(task_id) {
        return Err(elsewhere(task_id, "answering it"));
    }
    let decision = approval_answer(&message.parts)?;
    if let Some(config) = push {
        stored::add_push(state, &agent.name, task_id, bind(config, task_id), false).await?;
    }
    state
        .engine
        .approvals()
        .resolve(
            &state.namespace,
            &approval,
            decision.decision,
            decision.scope,
        )
        .await?;
    let mut user = message.clone();
    user.context_id = Some(record.context_id.clone());
    user.task_id = Some(task_id.to_string());
    let now = state.registry.update(task_id, |r| {
        r.history.push(user);
        if r.state != TaskState::InputRequired || r.pending_approval.as_ref() != Some(&approval) {
            return Vec::new();
        }
        r.state = TaskState::Working;
        r.pending_approval = None;
        r.status_message = None;
        r.timestamp = now_rfc3339();
        vec![status_event(r)]
    });
    stored::save(state, now).await;
    state.registry.watch(&agent.name, task_id)
}

/// `agent`'s task `id` with a watcher when it is live here; a stored one
/// that ended is answered without one's events to follow (its caller refuses
/// it as ended); one still running elsewhere is `UnsupportedOperation` for
/// `operation`.
async fn live_or_elsewhere(
    state: &A2aState,
    agent: &ExposedAgent,
    id: &str,
    operation: &str,
) -> Result<(TaskRecord, Watcher), A2aError> {
    if state.registry.is_live(id) {
        return state.registry.watch(&agent.name, id);
    }
    let record = stored::find(state, &agent.name, id).await?;
    if record.state.is_terminal() {
        // Nothing will change: a watcher that never ticks.
        return Ok((record, Watcher::idle()));
    }
    Err(elsewhere(id, operation))
}

/// The error for an operation on a task whose turn another server follows.
fn elsewhere(id: &str, operation: &str) -> A2aError {
    A2aError::UnsupportedOperation(format!(
        "task {id} runs on another Hecate server sharing this store; {operation} works on the \
         server that runs it; read it here with GetTask"
    ))
}

/// The events of a task from `record` on, ending when it ends or waits.
fn follow(
    state: A2aState,
    agent: String,
    record: TaskRecord,
    mut watcher: Watcher,
) -> impl Stream<Item = StreamResponse> {
    async_stream::stream! {
        let done = record.state.ends_a_wait();
        yield StreamResponse::Task(Box::new(record.to_task(None, true)));
        if !done {
            loop {
                match watcher.events.recv().await {
                    Ok(ev) => {
                        let end = ev.state().is_some_and(TaskState::ends_a_wait);
                        yield ev;
                        if end {
                            break;
                        }
                    }
                    Err(RecvError::Lagged(_)) => {
                        // Fell behind: the task as it is now replaces what was missed.
                        let Ok(now) = state.registry.get(&agent, &record.id) else {
                            break;
                        };
                        let end = now.state.ends_a_wait();
                        yield StreamResponse::Task(Box::new(now.to_task(None, true)));
                        if end {
                            break;
                        }
                    }
                    Err(RecvError::Closed) => break,
                }
            }
        }
    }
}

/// The error for cancelling a task that already ended.
fn not_cancelable(record: &TaskRecord) -> A2aError {
    A2aError::TaskNotCancelable(format!(
        "task {} is already {} and cannot be cancelled",
        record.id,
        record.state.name()
    ))
}
