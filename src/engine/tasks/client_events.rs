//! Events a client appends to a run's log (`POST …/runs/{run_id}/events`): its
//! own progress notes, shown on the run's stream and the public feed beside
//! Hecate's. They change no state, and the names Hecate's own events use are
//! refused, so a client cannot forge a run's lifecycle.

use super::TaskRuntime;
use crate::domain::error::{HecateError, Result};
use crate::domain::ids::{TaskId, TaskRunId};
use crate::domain::task::TaskEvent;
use crate::store::tasks::NewTaskEvent;
use serde_json::Value;

/// Most events one request appends.
pub const MAX_CLIENT_EVENTS: usize = 100;

/// The type prefixes of Hecate's own events, which a client may not use.
const RESERVED_PREFIXES: [&str; 8] = [
    "run.",
    "step.",
    "approval.",
    "artifact.",
    "tool.",
    "agent.",
    "patch.",
    "turn.",
];

/// Longest event type a client may name.
const MAX_TYPE_LEN: usize = 128;

/// Why `event_type` cannot name a client event, if it cannot.
fn type_problem(event_type: &str) -> Option<String> {
    let well_formed = !event_type.is_empty()
        && event_type.len() <= MAX_TYPE_LEN
        && event_type
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
        && event_type.as_bytes()[0].is_ascii_lowercase();
    if !well_formed {
        return Some(format!(
            "an event type is 1 to {MAX_TYPE_LEN} characters of a-z, 0-9, '.', '_' and '-', starting with a letter, got {event_type:?}"
        ));
    }
    RESERVED_PREFIXES
        .iter()
        .find(|p| event_type.starts_with(*p))
        .map(|p| format!("event types starting with {p:?} are Hecate's own, got {event_type:?}"))
}

impl TaskRuntime {
    /// Appends the client's `events` (type, data) to run `run_id` of task `id`, in
    /// order, after checking every one; answers them as stored.
    pub async fn append_client_events(
        &self,
        namespace: &str,
        id: &TaskId,
        run_id: &TaskRunId,
        events: Vec<(String, Value)>,
    ) -> Result<Vec<TaskEvent>> {
        if events.is_empty() || events.len() > MAX_CLIENT_EVENTS {
            return Err(HecateError::invalid(format!(
                "events must hold 1 to {MAX_CLIENT_EVENTS} events, got {}",
                events.len()
            ))
            .with_detail("field", "events"));
        }
        for (i, (event_type, data)) in events.iter().enumerate() {
            if let Some(problem) = type_problem(event_type) {
                return Err(
                    HecateError::invalid(problem).with_detail("field", format!("events[{i}].type"))
                );
            }
            if !data.is_object() {
                return Err(
                    HecateError::invalid(format!("events[{i}].data must be an object"))
                        .with_detail("field", format!("events[{i}].data")),
                );
            }
        }
        self.store().get_task(namespace, id).await?;
        let new = events
            .into_iter()
            .map(|(event_type, data)| NewTaskEvent { event_type, data })
            .collect();
        let stored = self.store().append_task_events(id, run_id, new).await?;
        self.publish(stored.clone());
        Ok(stored)
    }
}

#[cfg(test)]
mod tests {
    use super::type_problem;

    #[test]
    fn clients_name_their_own_event_types_only() {
        for ok in ["client.note", "ci.build-finished", "deploy_done", "x"] {
            assert_eq!(type_problem(ok), None, "{ok}");
        }
        for bad in [
            "",
            "Run.Started",
            "1st",
            "has space",
            "run.completed",
            "tool.call.started",
            "agent.plan",
            &"a".repeat(129),
        ] {
            assert!(type_problem(bad).is_some(), "{bad}");
        }
    }
}
