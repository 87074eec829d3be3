//! The push notification configs of one task, kept with the task in the
//! registry (so they live and go with it), each with the queue of its delivery
//! worker while the task can still change. A task's events are offered here as
//! they happen; status changes, task snapshots and the last piece of an
//! artifact are posted, the streamed pieces before it are not (one post per
//! streamed word would flood a webhook; the last piece carries the whole
//! answer).

use super::deliver::Queue;
use crate::a2a_wire::{StreamResponse, TaskPushNotificationConfig};
use crate::bridges::a2a::error::A2aError;
use axum::body::Bytes;

/// Most configs one task keeps.
pub const MAX_PER_TASK: usize = 10;

/// One registered webhook.
#[derive(Debug)]
struct Registered {
    config: TaskPushNotificationConfig,
    /// Its worker's feed; `None` once the task ended (or when it was
    /// registered on an ended task).
    queue: Option<Queue>,
}

/// The configs of one task, in the order they were first registered.
#[derive(Debug, Default)]
pub struct PushSet {
    configs: Vec<Registered>,
}

impl PushSet {
    /// Whether `config` can be put: it replaces one already kept, or there is
    /// room; else the error saying the task is full.
    pub fn check_room(&self, config: &TaskPushNotificationConfig) -> Result<(), A2aError> {
        if self.configs.iter().any(|r| r.config.id == config.id)
            || self.configs.len() < MAX_PER_TASK
        {
            return Ok(());
        }
        Err(full(&config.task_id))
    }

    /// The error for task `task_id` having no room for another config.
    pub fn full(task_id: &str) -> A2aError {
        full(task_id)
    }

    /// Keeps `config` (replacing the one with its id, whose worker stops)
    /// delivered through `queue`.
    pub fn put(
        &mut self,
        config: TaskPushNotificationConfig,
        queue: Option<Queue>,
    ) -> Result<(), A2aError> {
        let fresh = Registered { config, queue };
        if let Some(old) = self
            .configs
            .iter_mut()
            .find(|r| r.config.id == fresh.config.id)
        {
            if let Some(q) = old.queue.as_mut() {
                q.stop();
            }
            *old = fresh;
            return Ok(());
        }
        self.check_room(&fresh.config)?;
        self.configs.push(fresh);
        Ok(())
    }

    /// The config `id` (the configs are read from the store; this is the
    /// tests' view of what is live).
    #[cfg(test)]
    pub fn get(&self, id: &str) -> Option<&TaskPushNotificationConfig> {
        self.configs
            .iter()
            .find(|r| r.config.id == id)
            .map(|r| &r.config)
    }

    /// Every config (the tests' view, like [`PushSet::get`]).
    #[cfg(test)]
    pub fn list(&self) -> Vec<TaskPushNotificationConfig> {
        self.configs.iter().map(|r| r.config.clone()).collect()
    }

    /// Forgets config `id` and stops its worker (nothing more is posted to it);
    /// answers whether it was kept.
    pub fn remove(&mut self, id: &str) -> bool {
        let Some(i) = self.configs.iter().position(|r| r.config.id == id) else {
            return false;
        };
        let mut gone = self.configs.remove(i);
        if let Some(q) = gone.queue.as_mut() {
            q.stop();
        }
        true
    }

    /// Queues `event` for every live webhook when it is one that is posted.
    pub fn offer(&self, event: &StreamResponse) {
        if !posted(event) {
            return;
        }
        let live: Vec<&Registered> = self
            .configs
            .iter()
            .filter(|r| r.queue.as_ref().is_some_and(Queue::is_open))
            .collect();
        if live.is_empty() {
            return;
        }
        let Ok(body) = serde_json::to_vec(event).map(Bytes::from) else {
            return;
        };
        for r in live {
            offer(r, body.clone());
        }
    }

    /// Queues `event` for config `id` only (the task as it is when an inline
    /// config is registered).
    pub fn offer_to(&self, id: &str, event: &StreamResponse) {
        let Some(r) = self.configs.iter().find(|r| r.config.id == id) else {
            return;
        };
        if let Ok(body) = serde_json::to_vec(event) {
            offer(r, Bytes::from(body));
        }
    }

    /// The task ended: the workers deliver what is queued and stop.
    pub fn finish(&mut self) {
        for r in &mut self.configs {
            if let Some(q) = r.queue.as_mut() {
                q.close();
            }
        }
    }
}

/// Queues `body` for `r`, logging a notification dropped on a full queue.
fn offer(r: &Registered, body: Bytes) {
    if let Some(q) = &r.queue
        && q.is_open()
        && !q.offer(body)
    {
        tracing::warn!(
            task_id = %r.config.task_id,
            config_id = %r.config.id,
            "A2A push notification dropped: the webhook's queue is full"
        );
    }
}

/// Whether an event is posted to webhooks: everything but the streamed pieces
/// of an artifact before its last.
fn posted(event: &StreamResponse) -> bool {
    match event {
        StreamResponse::ArtifactUpdate(a) => a.last_chunk,
        StreamResponse::Task(_) | StreamResponse::Message(_) | StreamResponse::StatusUpdate(_) => {
            true
        }
    }
}

/// The error for a task with no room for another config.
fn full(task_id: &str) -> A2aError {
    A2aError::InvalidParams(format!(
        "task {task_id} already has {MAX_PER_TASK} push notification configs; delete one or \
         reuse its id"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::a2a_wire::{Artifact, Part, TaskArtifactUpdateEvent};

    fn config(id: &str) -> TaskPushNotificationConfig {
        TaskPushNotificationConfig {
            id: id.into(),
            task_id: "t".into(),
            url: "http://127.0.0.1:9/hook".into(),
            ..TaskPushNotificationConfig::default()
        }
    }

    fn piece(last_chunk: bool) -> StreamResponse {
        StreamResponse::ArtifactUpdate(TaskArtifactUpdateEvent {
            task_id: "t".into(),
            context_id: "c".into(),
            artifact: Artifact {
                artifact_id: "answer".into(),
                name: None,
                description: None,
                parts: vec![Part::text("x")],
                metadata: None,
            },
            append: !last_chunk,
            last_chunk,
        })
    }

    #[test]
    fn configs_are_replaced_by_id_bounded_and_removed() {
        let mut set = PushSet::default();
        for i in 0..MAX_PER_TASK {
            set.put(config(&format!("c{i}")), None).expect("room");
        }
        assert!(set.check_room(&config("another")).is_err());
        assert!(set.check_room(&config("c3")).is_ok(), "a known id replaces");
        let e = set.put(config("another"), None).expect_err("full");
        assert_eq!(e.code(), -32602);
        let mut moved = config("c3");
        moved.url = "http://127.0.0.1:10/other".into();
        set.put(moved, None).expect("replace");
        assert_eq!(
            set.get("c3").map(|c| c.url.as_str()),
            Some("http://127.0.0.1:10/other")
        );
        assert_eq!(set.list().len(), MAX_PER_TASK);
        assert!(set.remove("c3"));
        assert!(!set.remove("c3"), "deleting twice is harmless");
        assert!(set.get("c3").is_none());
    }

    #[test]
    fn only_status_changes_snapshots_and_last_pieces_are_posted() {
        assert!(posted(&piece(true)));
        assert!(!posted(&piece(false)));
    }
}
