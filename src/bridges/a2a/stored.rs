//! What the A2A server keeps in the store, through the engine: each (agent,
//! `contextId`) conversation's session, each task (written when it starts,
//! when its state changes and when it ends — never per streamed piece), and
//! the tasks' push notification configs. A task live in this process is read
//! from the registry; any other is read back from the store. One stored as
//! not yet ended whose turn is not followed here ran in a process that
//! stopped, or runs on another replica: it is reported as its run stands in
//! the store (the reconcile of a stopped process closes its runs), and as
//! `failed`, saying the server that ran it stopped, when its run is gone.

use super::error::A2aError;
use super::push::MAX_PER_TASK;
use super::push::PushSet;
use super::state::A2aState;
use super::tasks::{TaskRecord, agent_message, not_found, task_state};
use crate::a2a_wire::{Artifact, Message, Part, TaskPushNotificationConfig, TaskState};
use crate::domain::a2a_task::{A2aPushConfigRow, A2aTaskQuery, A2aTaskRow};
use crate::domain::ids::{ApprovalId, RunId, SessionId};
use crate::domain::run::RunStatus;
use crate::domain::time::now_rfc3339;
use serde::{Deserialize, Serialize};

/// What a stored task's record holds beyond its header.
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Body {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status_message: Option<Message>,
    #[serde(default)]
    timestamp: String,
    #[serde(default)]
    answer: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    files: Vec<Artifact>,
    #[serde(default)]
    history: Vec<Message>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pending_approval: Option<ApprovalId>,
}

/// `record` as the store keeps it in `namespace`.
fn to_row(namespace: &str, record: &TaskRecord) -> A2aTaskRow {
    let body = Body {
        status_message: record.status_message.clone(),
        timestamp: record.timestamp.clone(),
        answer: record.answer.clone(),
        files: record.files.clone(),
        history: record.history.clone(),
        pending_approval: record.pending_approval.clone(),
    };
    let now = now_rfc3339();
    A2aTaskRow {
        namespace: namespace.to_string(),
        id: record.id.clone(),
        agent: record.agent.clone(),
        context_id: record.context_id.clone(),
        session_id: record.session_id.clone(),
        state: record.state.name().to_string(),
        terminal: record.state.is_terminal(),
        record: serde_json::to_value(body).unwrap_or_default(),
        version: i64::try_from(record.version).unwrap_or(i64::MAX),
        // Kept from the first write: a later one changes only the update time.
        created_at: now.clone(),
        updated_at: now,
    }
}

/// The record a stored row holds.
fn from_row(row: A2aTaskRow) -> Result<TaskRecord, A2aError> {
    let body: Body = serde_json::from_value(row.record).map_err(|e| {
        A2aError::Internal(format!(
            "stored A2A task {} does not read back: {e}",
            row.id
        ))
    })?;
    let state: TaskState = serde_json::from_value(serde_json::Value::String(row.state))
        .unwrap_or(TaskState::Unspecified);
    Ok(TaskRecord {
        id: row.id,
        agent: row.agent,
        context_id: row.context_id,
        session_id: row.session_id,
        state,
        status_message: body.status_message,
        timestamp: body.timestamp,
        answer: body.answer,
        files: body.files,
        history: body.history,
        pending_approval: body.pending_approval,
        order: 0,
        version: u64::try_from(row.version).unwrap_or(0),
    })
}

/// Stores `record` as it is now; a failure is logged (the task goes on, and
/// its run stays the truth a later read falls back on).
pub async fn save(state: &A2aState, record: Option<TaskRecord>) {
    let Some(record) = record else {
        return;
    };
    let row = to_row(&state.namespace, &record);
    if let Err(e) = state.engine.a2a_tasks().save(&row).await {
        tracing::warn!(
            task_id = %record.id,
            state = record.state.name(),
            error = %e,
            "an A2A task was not stored"
        );
    }
}

/// The session of `agent`'s conversation `context_id`: this process's
/// cache, else the store.
pub async fn context_session(
    state: &A2aState,
    agent: &str,
    context_id: &str,
) -> Result<Option<SessionId>, A2aError> {
    if let Some(s) = state.registry.context_session(agent, context_id) {
        return Ok(Some(s));
    }
    let stored = state
        .engine
        .a2a_tasks()
        .context(&state.namespace, agent, context_id)
        .await?;
    Ok(stored.map(|s| state.registry.bind_context(agent, context_id, s)))
}

/// Binds the conversation to `session_id` in the store unless it is bound
/// there already; answers the session it is bound to.
pub async fn bind_context(
    state: &A2aState,
    agent: &str,
    context_id: &str,
    session_id: SessionId,
) -> Result<SessionId, A2aError> {
    let bound = state
        .engine
        .a2a_tasks()
        .bind_context(&state.namespace, agent, context_id, &session_id)
        .await?;
    Ok(state.registry.bind_context(agent, context_id, bound))
}

/// `agent`'s task `id`: live here, or read back from the store and
/// reported as its run stands.
pub async fn find(state: &A2aState, agent: &str, id: &str) -> Result<TaskRecord, A2aError> {
    if state.registry.is_live(id) {
        return state.registry.get(agent, id);
    }
    let row = state.engine.a2a_tasks().get(&state.namespace, id).await?;
    match row {
        Some(row) if row.agent == agent => settle(state, from_row(row)?).await,
        _ => Err(not_found(agent, id)),
    }
}

/// A stored task as it stands: as stored when it ended or is live here;
/// else as its run stands in the store.
async fn settle(state: &A2aState, mut record: TaskRecord) -> Result<TaskRecord, A2aError> {
    if record.state.is_terminal() || state.registry.is_live(&record.id) {
        return Ok(record);
    }
    let run = state
        .engine
        .a2a_tasks()
        .run(&record.session_id, &RunId::from(record.id.clone()))
        .await?;
    let said = match run {
        // Another replica's turn, still running: its writes will tell.
        Some(r) if matches!(r.status, RunStatus::Running | RunStatus::AwaitingApproval) => {
            return Ok(record);
        }
        Some(r) => {
            record.state = task_state(r.status);
            if let Some(a) = r.answer.filter(|a| !a.is_empty()) {
                record.answer = a;
            }
            match (r.error, record.state) {
                (Some((kind, _)), _) if kind == "interrupted" => stopped(),
                (Some((kind, message)), _) => format!("{message} ({kind})"),
                (None, TaskState::Completed) => record.answer.clone(),
                (None, TaskState::Canceled) => "the turn was cancelled".to_string(),
                (None, _) => stopped(),
            }
        }
        None => {
            record.state = TaskState::Failed;
            stopped()
        }
    };
    record.pending_approval = None;
    record.status_message = (!said.is_empty())
        .then(|| agent_message(&record.context_id, &record.id, vec![Part::text(said)]));
    Ok(record)
}

/// What a task whose server stopped under it says.
fn stopped() -> String {
    "the Hecate server that ran this task stopped before the task ended".to_string()
}

/// A page of `agent`'s tasks, newest first, of `context_id` and in `task_state`
/// when given; and how many there are in all.
pub async fn list(
    state: &A2aState,
    agent: &str,
    context_id: Option<&str>,
    wanted: Option<TaskState>,
    offset: usize,
    limit: usize,
) -> Result<(Vec<TaskRecord>, u64), A2aError> {
    let page = state
        .engine
        .a2a_tasks()
        .list(&A2aTaskQuery {
            namespace: state.namespace.to_string(),
            agent: agent.to_string(),
            context_id: context_id.map(str::to_string),
            state: wanted.map(|s| s.name().to_string()),
            offset,
            limit,
        })
        .await?;
    let mut out = Vec::with_capacity(page.tasks.len());
    for row in page.tasks {
        let live = state.registry.get(agent, &row.id).ok();
        out.push(match live {
            Some(r) => r,
            None => settle(state, from_row(row)?).await?,
        });
    }
    Ok((out, page.total))
}

/// Keeps push notification `config` (checked and bound) for `agent`'s task
/// `id` in the store and, when the task is live here, with its delivery
/// worker (posting the task as it is now first when `announce`). Answers the
/// config as kept.
pub async fn add_push(
    state: &A2aState,
    agent: &str,
    id: &str,
    config: TaskPushNotificationConfig,
    announce: bool,
) -> Result<TaskPushNotificationConfig, A2aError> {
    find(state, agent, id).await?;
    let kept = stored_configs(state, id).await?;
    if !kept.iter().any(|c| c.id == config.id) && kept.len() >= MAX_PER_TASK {
        return Err(PushSet::full(id));
    }
    if state.registry.is_live(id) {
        state
            .registry
            .add_push(agent, id, config.clone(), &state.notifier, announce)?;
    }
    let row = A2aPushConfigRow {
        namespace: state.namespace.to_string(),
        task_id: id.to_string(),
        config_id: config.id.clone(),
        config: serde_json::to_value(&config)
            .map_err(|e| A2aError::Internal(format!("a push notification config: {e}")))?,
        created_at: now_rfc3339(),
    };
    if let Err(e) = state.engine.a2a_tasks().put_push_config(&row).await {
        let _ = state.registry.remove_push(agent, id, &config.id);
        return Err(e.into());
    }
    Ok(config)
}

/// The push notification configs of `agent`'s task `id`, in the order
/// registered.
pub async fn push_configs(
    state: &A2aState,
    agent: &str,
    id: &str,
) -> Result<Vec<TaskPushNotificationConfig>, A2aError> {
    find(state, agent, id).await?;
    stored_configs(state, id).await
}

/// Forgets push notification config `config_id` of `agent`'s task `id`
/// (nothing when it has none of that id); nothing more is posted to it.
pub async fn remove_push(
    state: &A2aState,
    agent: &str,
    id: &str,
    config_id: &str,
) -> Result<(), A2aError> {
    find(state, agent, id).await?;
    if state.registry.is_live(id) {
        state.registry.remove_push(agent, id, config_id)?;
    }
    state
        .engine
        .a2a_tasks()
        .delete_push_config(&state.namespace, id, config_id)
        .await?;
    Ok(())
}

/// The stored configs of task `id`.
async fn stored_configs(
    state: &A2aState,
    id: &str,
) -> Result<Vec<TaskPushNotificationConfig>, A2aError> {
    let rows = state
        .engine
        .a2a_tasks()
        .push_configs(&state.namespace, id)
        .await?;
    rows.into_iter()
        .map(|r| {
            serde_json::from_value(r.config).map_err(|e| {
                A2aError::Internal(format!(
                    "stored push notification config {} does not read back: {e}",
                    r.config_id
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_as_it_was_stored() {
        let record = TaskRecord {
            id: "t".into(),
            agent: "hecate".into(),
            context_id: "c".into(),
            session_id: SessionId::from("s"),
            state: TaskState::InputRequired,
            status_message: Some(agent_message("c", "t", vec![Part::text("asks")])),
            timestamp: "now".into(),
            answer: "so far".into(),
            files: Vec::new(),
            history: vec![agent_message("c", "t", vec![Part::text("hi")])],
            pending_approval: Some(ApprovalId::from("ap")),
            order: 7,
            version: 3,
        };
        let row = to_row("default", &record);
        assert_eq!(row.state, "TASK_STATE_INPUT_REQUIRED");
        assert!(!row.terminal);
        assert_eq!(row.version, 3);
        let back = from_row(row).expect("reads back");
        assert_eq!(back, TaskRecord { order: 0, ..record });
    }
}
