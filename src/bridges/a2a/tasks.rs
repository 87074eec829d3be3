//! The A2A tasks and conversations of this process: each task is one turn of a
//! Hecate session (its id is the turn's run id), each (agent, `contextId`) pair
//! one session, so two agents never share a session. A task's changes are
//! fanned out to its streams as A2A events, and offered to its push
//! notification webhooks, which are kept with it. The registry holds what must
//! be live — the tasks this process runs, their streams, change signals and
//! webhook queues — and caches conversations; what outlives the process is
//! in the store (`stored.rs`), written when a task starts, when its state
//! changes and when it ends.

use super::error::A2aError;
use super::push::{Notifier, PushSet};
use crate::a2a_wire::{
    Artifact, Message, Part, Role, StreamResponse, Task, TaskPushNotificationConfig, TaskState,
    TaskStatus,
};
use crate::domain::ids::{ApprovalId, SessionId};
use crate::domain::run::RunStatus;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use tokio::sync::{broadcast, watch};

/// Most tasks kept; past it the oldest finished ones are forgotten.
const MAX_TASKS: usize = 10_000;
/// Events a stream may fall behind before it is resynchronised with a snapshot.
const EVENT_BUFFER: usize = 1024;
/// The id of the artifact that carries a task's answer.
pub const ANSWER_ARTIFACT: &str = "answer";

/// One task as this server knows it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskRecord {
    /// The task id (the turn's run id).
    pub id: String,
    /// The agent that runs it.
    pub agent: String,
    /// Its conversation.
    pub context_id: String,
    /// The Hecate session of that conversation.
    pub session_id: SessionId,
    /// Where it is.
    pub state: TaskState,
    /// What the agent says about the state.
    pub status_message: Option<Message>,
    /// When the state was reached.
    pub timestamp: String,
    /// The answer so far.
    pub answer: String,
    /// The files the turn changed, one artifact each (set when the turn ends).
    pub files: Vec<Artifact>,
    /// The messages exchanged in it.
    pub history: Vec<Message>,
    /// The approval it waits for, in `input-required`.
    pub pending_approval: Option<ApprovalId>,
    /// Insertion order in this process.
    pub order: u64,
    /// Counts the changes worth storing (a start, a state change, an answer
    /// to an approval, the end); the store keeps the newest.
    pub version: u64,
}

impl TaskRecord {
    /// The task's A2A view, with at most `history_length` history messages (all
    /// when `None`) and its artifacts when `with_artifacts`.
    pub fn to_task(&self, history_length: Option<i32>, with_artifacts: bool) -> Task {
        let keep = history_length.map_or(self.history.len(), |n| n.max(0) as usize);
        let skip = self.history.len().saturating_sub(keep);
        let mut metadata = Map::new();
        metadata.insert(
            "hecateSessionId".into(),
            Value::String(self.session_id.to_string()),
        );
        metadata.insert("hecateAgent".into(), Value::String(self.agent.clone()));
        Task {
            id: self.id.clone(),
            context_id: self.context_id.clone(),
            status: self.status(),
            artifacts: if with_artifacts {
                self.artifact()
                    .into_iter()
                    .chain(self.files.iter().cloned())
                    .collect()
            } else {
                Vec::new()
            },
            history: self.history[skip..].to_vec(),
            metadata: Some(metadata),
        }
    }

    /// The current status.
    pub fn status(&self) -> TaskStatus {
        TaskStatus {
            state: self.state,
            message: self.status_message.clone(),
            timestamp: Some(self.timestamp.clone()),
        }
    }

    /// The answer as an artifact, once there is one (the files the turn
    /// changed follow it in the task's artifacts).
    pub fn artifact(&self) -> Option<Artifact> {
        (!self.answer.is_empty()).then(|| Artifact {
            artifact_id: ANSWER_ARTIFACT.into(),
            name: Some("answer".into()),
            description: Some("The agent's answer".into()),
            parts: vec![Part::text(self.answer.clone())],
            metadata: None,
        })
    }
}

/// The A2A state of a turn's status.
pub fn task_state(status: RunStatus) -> TaskState {
    match status {
        RunStatus::Running => TaskState::Working,
        RunStatus::AwaitingApproval => TaskState::InputRequired,
        RunStatus::Completed => TaskState::Completed,
        RunStatus::Failed => TaskState::Failed,
        RunStatus::Cancelled => TaskState::Canceled,
    }
}

/// A message from the agent in `context_id` / `task_id`.
pub fn agent_message(context_id: &str, task_id: &str, parts: Vec<Part>) -> Message {
    Message::new(
        Role::Agent,
        parts,
        Some(context_id.to_string()),
        Some(task_id.to_string()),
    )
}

/// What a stream or a waiting send holds: the task's events and a signal on
/// every change, both opened with the snapshot they follow.
#[derive(Debug)]
pub struct Watcher {
    /// The task's events from the snapshot on.
    pub events: broadcast::Receiver<StreamResponse>,
    /// Ticks on every change.
    pub changed: watch::Receiver<u64>,
}

impl Watcher {
    /// A watcher of a task that changes no more (one read back from the store
    /// after it ended): no events, and its change signal closed.
    pub fn idle() -> Self {
        let (events, receiver) = broadcast::channel(1);
        drop(events);
        let (changed, signal) = watch::channel(0);
        drop(changed);
        Self {
            events: receiver,
            changed: signal,
        }
    }
}

struct Entry {
    record: TaskRecord,
    events: broadcast::Sender<StreamResponse>,
    changed: watch::Sender<u64>,
    push: PushSet,
}

impl Entry {
    fn watcher(&self) -> Watcher {
        Watcher {
            events: self.events.subscribe(),
            changed: self.changed.subscribe(),
        }
    }
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, Entry>,
    contexts: HashMap<(String, String), SessionId>,
    next: u64,
}

/// The tasks and conversations of this process.
#[derive(Default)]
pub struct Registry {
    inner: Mutex<Inner>,
}

impl Registry {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The session of `agent`'s conversation `context_id`, when it has one.
    pub fn context_session(&self, agent: &str, context_id: &str) -> Option<SessionId> {
        self.lock()
            .contexts
            .get(&(agent.to_string(), context_id.to_string()))
            .cloned()
    }

    /// Records `session_id` as `agent`'s conversation `context_id`; answers the
    /// session already recorded when another request got there first.
    pub fn bind_context(&self, agent: &str, context_id: &str, session_id: SessionId) -> SessionId {
        self.lock()
            .contexts
            .entry((agent.to_string(), context_id.to_string()))
            .or_insert(session_id)
            .clone()
    }

    /// Adds a task and answers its snapshot with a watcher from that point.
    pub fn insert(&self, mut record: TaskRecord) -> (TaskRecord, Watcher) {
        let mut inner = self.lock();
        inner.next += 1;
        record.order = inner.next;
        record.version = 1;
        if inner.tasks.len() >= MAX_TASKS {
            forget_oldest_finished(&mut inner.tasks);
        }
        let (events, _) = broadcast::channel(EVENT_BUFFER);
        let (changed, _) = watch::channel(0);
        let entry = Entry {
            record: record.clone(),
            events,
            changed,
            push: PushSet::default(),
        };
        let watcher = entry.watcher();
        inner.tasks.insert(record.id.clone(), entry);
        (record, watcher)
    }

    /// `agent`'s task `id`; `TaskNotFound` when there is none or it is another
    /// agent's.
    pub fn get(&self, agent: &str, id: &str) -> Result<TaskRecord, A2aError> {
        self.watch_with(agent, id, false).map(|(r, _)| r)
    }

    /// `agent`'s task `id` with a watcher opened at that snapshot.
    pub fn watch(&self, agent: &str, id: &str) -> Result<(TaskRecord, Watcher), A2aError> {
        self.watch_with(agent, id, true)
            .and_then(|(r, w)| w.map(|w| (r, w)).ok_or_else(|| not_found(agent, id)))
    }

    fn watch_with(
        &self,
        agent: &str,
        id: &str,
        watch: bool,
    ) -> Result<(TaskRecord, Option<Watcher>), A2aError> {
        let inner = self.lock();
        match inner.tasks.get(id) {
            Some(e) if e.record.agent == agent => {
                Ok((e.record.clone(), watch.then(|| e.watcher())))
            }
            _ => Err(not_found(agent, id)),
        }
    }

    /// Changes task `id` with `change`, which answers the events telling it;
    /// they are sent to the task's streams and offered to its webhooks in
    /// order (queued, never waited for). Answers the task as it is now when
    /// the change is one to store (its state, its pending approval or its
    /// history changed, or it ended), with its version counted up; `None` for
    /// the rest (a streamed piece of the answer) and for a task not live here.
    pub fn update(
        &self,
        id: &str,
        change: impl FnOnce(&mut TaskRecord) -> Vec<StreamResponse>,
    ) -> Option<TaskRecord> {
        let mut inner = self.lock();
        let entry = inner.tasks.get_mut(id)?;
        let before = (
            entry.record.state,
            entry.record.pending_approval.clone(),
            entry.record.history.len(),
        );
        for ev in change(&mut entry.record) {
            entry.push.offer(&ev);
            // No stream open is not an error.
            let _ = entry.events.send(ev);
        }
        let r = &entry.record;
        let stored = r.state.is_terminal()
            || before != (r.state, r.pending_approval.clone(), r.history.len());
        if r.state.is_terminal() {
            entry.push.finish();
        }
        if stored {
            entry.record.version += 1;
        }
        entry.changed.send_modify(|n| *n += 1);
        stored.then(|| entry.record.clone())
    }

    /// Whether task `id` is live in this process (its turn is followed here).
    pub fn is_live(&self, id: &str) -> bool {
        self.lock().tasks.contains_key(id)
    }

    /// Registers push notification `config` (checked and bound to the task)
    /// for `agent`'s task `id`, replacing the one with its id; its webhook
    /// gets the task's later events, and first the task as it is now when
    /// `announce`. A task that already ended keeps the config but posts
    /// nothing more. Answers the config as kept.
    pub fn add_push(
        &self,
        agent: &str,
        id: &str,
        config: TaskPushNotificationConfig,
        notifier: &Notifier,
        announce: bool,
    ) -> Result<TaskPushNotificationConfig, A2aError> {
        let mut inner = self.lock();
        let entry = match inner.tasks.get_mut(id) {
            Some(e) if e.record.agent == agent => e,
            _ => return Err(not_found(agent, id)),
        };
        entry.push.check_room(&config)?;
        let queue = if entry.record.state.is_terminal() {
            None
        } else {
            Some(notifier.start(&config)?)
        };
        entry.push.put(config.clone(), queue)?;
        if announce {
            let now = StreamResponse::Task(Box::new(entry.record.to_task(None, true)));
            entry.push.offer_to(&config.id, &now);
        }
        Ok(config)
    }

    /// Forgets push notification config `config_id` of `agent`'s task `id`
    /// (nothing when it has none of that id).
    pub fn remove_push(&self, agent: &str, id: &str, config_id: &str) -> Result<(), A2aError> {
        match self.lock().tasks.get_mut(id) {
            Some(e) if e.record.agent == agent => {
                e.push.remove(config_id);
                Ok(())
            }
            _ => Err(not_found(agent, id)),
        }
    }
}

/// Drops the oldest tenth of the finished tasks.
fn forget_oldest_finished(tasks: &mut HashMap<String, Entry>) {
    let mut finished: Vec<(u64, String)> = tasks
        .values()
        .filter(|e| e.record.state.is_terminal())
        .map(|e| (e.record.order, e.record.id.clone()))
        .collect();
    finished.sort();
    for (_, id) in finished.into_iter().take(MAX_TASKS / 10) {
        tasks.remove(&id);
    }
}

/// The error for a task id `agent` does not have.
pub(super) fn not_found(agent: &str, id: &str) -> A2aError {
    A2aError::TaskNotFound(format!("agent {agent} has no task {id}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, agent: &str, ctx: &str) -> TaskRecord {
        TaskRecord {
            id: id.into(),
            agent: agent.into(),
            context_id: ctx.into(),
            session_id: SessionId::from("s"),
            state: TaskState::Working,
            status_message: None,
            timestamp: "t".into(),
            answer: String::new(),
            files: Vec::new(),
            history: Vec::new(),
            pending_approval: None,
            order: 0,
            version: 0,
        }
    }

    #[test]
    fn a_task_of_another_agent_is_not_found() {
        let r = Registry::default();
        r.insert(record("t1", "hecate", "c"));
        assert!(r.get("hecate", "t1").is_ok());
        let e = r.get("agent:codex", "t1").expect_err("other agent");
        assert_eq!(e.code(), -32001);
        assert!(e.to_string().contains("agent:codex"), "{e}");
    }

    #[test]
    fn contexts_are_per_agent() {
        let r = Registry::default();
        let first = r.bind_context("a", "ctx", SessionId::from("s1"));
        assert_eq!(first, SessionId::from("s1"));
        assert_eq!(
            r.bind_context("a", "ctx", SessionId::from("s2")),
            SessionId::from("s1"),
            "the first binding wins"
        );
        assert_eq!(r.context_session("b", "ctx"), None);
    }

    #[tokio::test]
    async fn updates_reach_watchers_in_order_and_only_state_changes_are_stored() {
        let r = Registry::default();
        let (first, mut w) = r.insert(record("t1", "a", "c"));
        assert_eq!(first.version, 1);
        assert!(r.is_live("t1"));
        assert!(!r.is_live("t2"));
        let piece = r.update("t1", |rec| {
            rec.answer.push_str("do");
            Vec::new()
        });
        assert!(piece.is_none(), "a streamed piece is not stored");
        let ended = r
            .update("t1", |rec| {
                rec.state = TaskState::Completed;
                rec.answer = "done".into();
                vec![StreamResponse::Task(Box::new(rec.to_task(None, true)))]
            })
            .expect("the end is stored");
        assert_eq!(ended.version, 2);
        let ev = w.events.recv().await.expect("event");
        assert_eq!(ev.state(), Some(TaskState::Completed));
        assert!(w.changed.has_changed().expect("open"));
        let task = r.get("a", "t1").expect("t1").to_task(Some(0), true);
        assert_eq!(task.artifacts[0].parts[0].text.as_deref(), Some("done"));
        assert!(task.history.is_empty());
    }
}
