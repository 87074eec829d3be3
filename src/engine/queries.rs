//! Read-only engine queries the bridges need beyond the session lifecycle: a
//! session's run-event logs for rendering, whether a turn runs here, and waiting
//! for one to settle.

use super::Engine;
use crate::domain::ErrorType;
use crate::domain::error::Result;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::run::RunEvent;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// Up to this many selected runs are read one by one rather than by one read of
/// the whole session.
const PER_RUN_READS: usize = 16;

/// How often `wait_turn_settled` re-checks the busy marker between bus events.
const SETTLE_POLL: Duration = Duration::from_millis(20);

impl Engine {
    /// Run-event logs of a session for rendering. `runs` selects runs (every run
    /// of the session when `None`; a selected run that has no events or is not the
    /// session's gets an empty log). Logs are compacted by [`compact_deltas`], which
    /// keeps activities, raw output and last sequences intact; the `full` run (a
    /// turn still running, whose streamed text is rendered) comes complete. A few
    /// runs are read one by one, more in one read of the whole session. The
    /// session must be visible in `namespace`.
    pub async fn render_run_events(
        &self,
        namespace: &str,
        session_id: &SessionId,
        runs: Option<Vec<RunId>>,
        full: Option<RunId>,
    ) -> Result<HashMap<RunId, Vec<RunEvent>>> {
        let (s, sid) = (self.store(), session_id);
        s.get_session(namespace, sid).await?;
        let (compacted, full) = match runs {
            None => (None, full),
            Some(ids) => {
                let full = full.filter(|f| ids.contains(f));
                let rest: Vec<RunId> = ids
                    .into_iter()
                    .filter(|id| Some(id) != full.as_ref())
                    .collect();
                (Some(rest), full)
            }
        };
        let mut out: HashMap<RunId, Vec<RunEvent>> = HashMap::new();
        match &compacted {
            Some(ids) if ids.len() <= PER_RUN_READS => {
                for id in ids {
                    if let Some(events) = run_log(s, sid, id).await? {
                        out.insert(id.clone(), compact_deltas(events));
                    }
                }
            }
            _ => {
                let wanted: Option<HashSet<&RunId>> =
                    compacted.as_ref().map(|v| v.iter().collect());
                let mut logs: HashMap<RunId, Vec<RunEvent>> = HashMap::new();
                for e in s.list_session_run_events(sid, false).await? {
                    let selected = wanted.as_ref().is_none_or(|w| w.contains(&e.run_id));
                    if selected && Some(&e.run_id) != full.as_ref() {
                        logs.entry(e.run_id.clone()).or_default().push(e);
                    }
                }
                out.extend(logs.into_iter().map(|(id, evs)| (id, compact_deltas(evs))));
            }
        }
        if let Some(id) = full
            && let Some(events) = run_log(s, sid, &id).await?
        {
            out.insert(id, events);
        }
        for id in compacted.iter().flatten() {
            out.entry(id.clone()).or_default();
        }
        Ok(out)
    }

    /// Whether this process is running a turn of `session_id` right now.
    pub fn is_turn_running(&self, session_id: &SessionId) -> bool {
        self.active().contains_key(session_id)
    }

    /// Waits until this process runs no turn of `session_id`, at most `timeout`;
    /// returns whether it settled.
    pub async fn wait_turn_settled(&self, session_id: &SessionId, timeout: Duration) -> bool {
        let mut events = self.bus().subscribe(Some(session_id.clone()));
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if !self.is_turn_running(session_id) {
                return true;
            }
            if tokio::time::Instant::now() >= deadline {
                return false;
            }
            if let Ok(None) = tokio::time::timeout(SETTLE_POLL, events.recv()).await {
                tokio::time::sleep(SETTLE_POLL).await;
            }
        }
    }
}

/// The whole stored log of `run_id` when it is a run of `session_id`.
async fn run_log(
    s: &dyn crate::store::Store,
    session_id: &SessionId,
    run_id: &RunId,
) -> Result<Option<Vec<RunEvent>>> {
    match s.get_run(run_id).await {
        Ok(run) if &run.session_id == session_id => {
            Ok(Some(s.list_run_events(run_id, None).await?))
        }
        Ok(_) => Ok(None),
        Err(e) if e.error_type == ErrorType::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Drops from one run's log each `text_delta` / `thought_delta` that directly
/// follows one of the same type, except the last event: activities and raw output
/// project the same and the last sequence stays exact, without the bulk of a long
/// streamed answer.
pub fn compact_deltas(events: Vec<RunEvent>) -> Vec<RunEvent> {
    let n = events.len();
    let mut out = Vec::new();
    let mut previous: Option<String> = None;
    for (i, e) in events.into_iter().enumerate() {
        let delta = matches!(e.event_type.as_str(), "text_delta" | "thought_delta");
        let repeat = delta && previous.as_deref() == Some(e.event_type.as_str());
        if !repeat {
            previous = Some(e.event_type.clone());
        }
        if !repeat || i + 1 == n {
            out.push(e);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::run::{Run, RunStatus};
    use crate::domain::session::{RuntimeKind, Session};
    use crate::domain::time::now_rfc3339;
    use crate::store::NewRunEvent;
    use serde_json::json;

    fn session(id: &SessionId) -> Session {
        Session::new_idle("ns", id.clone(), "t", RuntimeKind::Model)
    }

    fn run(id: &str, session_id: &SessionId) -> Run {
        Run {
            id: RunId::from(id),
            session_id: session_id.clone(),
            status: RunStatus::Running,
            error_type: None,
            error_message: None,
            request_id: "req".into(),
            trace_id: None,
            span_id: None,
            started_at: now_rfc3339(),
            completed_at: None,
            duration_ms: None,
        }
    }

    fn types(events: &[RunEvent]) -> Vec<(i64, &str)> {
        events
            .iter()
            .map(|e| (e.sequence, e.event_type.as_str()))
            .collect()
    }

    #[tokio::test]
    async fn render_logs_drop_repeated_deltas_except_for_the_full_run() {
        let engine = Engine::in_memory(crate::engine::Runtimes::default())
            .await
            .expect("engine");
        let sid = SessionId::from("s1");
        let (s, a, b) = (session(&sid), run("run_a", &sid), run("run_b", &sid));
        let kinds = [
            "thought_delta",
            "thought_delta",
            "tool_call_started",
            "thought_delta",
            "text_delta",
            "text_delta",
            "raw",
            "text_delta",
            "text_delta",
        ];
        let events: Vec<NewRunEvent> = kinds
            .iter()
            .zip(1..)
            .map(|(k, sequence)| NewRunEvent {
                sequence,
                event_type: k.to_string(),
                data: json!({"text": "x"}),
                occurred_at: now_rfc3339(),
            })
            .collect();
        let st = engine.store();
        st.create_session(&s).await.expect("session");
        for r in [&a, &b] {
            st.create_run(r).await.expect("run");
            st.append_run_events(&r.id, &events).await.expect("events");
        }

        let all = engine
            .render_run_events("ns", &sid, None, Some(RunId::from("run_b")))
            .await
            .expect("events");
        assert_eq!(
            types(&all[&RunId::from("run_a")]),
            vec![
                (1, "thought_delta"),
                (3, "tool_call_started"),
                (4, "thought_delta"),
                (5, "text_delta"),
                (7, "raw"),
                (8, "text_delta"),
                (9, "text_delta"),
            ]
        );
        assert_eq!(all[&RunId::from("run_b")].len(), kinds.len());

        let one = engine
            .render_run_events(
                "ns",
                &sid,
                Some(vec![RunId::from("run_b"), RunId::from("run_none")]),
                None,
            )
            .await
            .expect("events");
        assert_eq!(one.len(), 2);
        assert_eq!(one[&RunId::from("run_b")].len(), 7);
        assert!(one[&RunId::from("run_none")].is_empty());
        let err = engine
            .render_run_events("other", &sid, None, None)
            .await
            .expect_err("another namespace");
        assert_eq!(err.error_type, ErrorType::NotFound);
    }
}
