//! The shared vocabulary of session streams: a frame's position and SSE id, the
//! state subscribers watch, approval frames, and a feed's handle with its dirty
//! flags. A leaf: the hub, the feed task and the SSE handler all build on it.

use crate::bridges::resources::events::{ApprovalRequestedDto, ApprovalResolvedDto};
use crate::domain::approval::{Approval, Scope};
use crate::domain::event::EngineEvent;
use crate::domain::ids::RunId;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use tokio::sync::{Notify, broadcast, watch};

/// Dirty flag: new runtime events (render within the throttle).
pub const DIRTY_EVENTS: u8 = 1;
/// Dirty flag: stored state changed (reload the transcript, render now).
pub const DIRTY_STORE: u8 = 2;

/// Where a frame stands in a session's history; ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Position {
    /// 1-based index of the run in the session's runs (0: no run yet).
    pub run: usize,
    /// Run-event sequence reflected.
    pub seq: i64,
    /// Whether the run is terminal.
    pub done: bool,
}

/// One rendered session snapshot.
#[derive(Debug, Clone, PartialEq)]
pub struct Frame {
    /// Its position.
    pub position: Position,
    /// The latest run, if any.
    pub run_id: Option<RunId>,
    /// `{"object":"agent_chat_session","data":…}` as JSON text.
    pub json: Arc<str>,
}

impl Frame {
    /// The SSE id: `<run_id>:<seq>` or `<run_id>:<seq>:done`; `None` before any run.
    pub fn event_id(&self) -> Option<String> {
        let run = self.run_id.as_ref()?;
        Some(if self.position.done {
            format!("{run}:{}:done", self.position.seq)
        } else {
            format!("{run}:{}", self.position.seq)
        })
    }
}

/// What subscribers watch.
#[derive(Debug, Clone)]
pub struct FeedState {
    /// The newest frame.
    pub latest: Arc<Frame>,
    /// The newest terminal frame, so a slow subscriber never misses a `done`.
    pub last_terminal: Option<Arc<Frame>>,
    /// The session's run ids in order, to place a client's cursor.
    pub runs: Arc<Vec<RunId>>,
    /// The session was deleted; streams end.
    pub gone: bool,
}

impl FeedState {
    /// Places a `Last-Event-ID` value; `None` when it names no run of the session.
    pub fn locate(&self, event_id: &str) -> Option<Position> {
        let mut parts = event_id.trim().split(':');
        let run = parts.next()?;
        let seq = parts.next()?.parse::<i64>().ok()?;
        let done = match parts.next() {
            None => false,
            Some("done") => true,
            Some(_) => return None,
        };
        let ordinal = self.runs.iter().position(|r| r.as_str() == run)? + 1;
        Some(Position {
            run: ordinal,
            seq,
            done,
        })
    }

    /// The position `after_sequence` names: that sequence of the latest run.
    pub fn after_sequence(&self, seq: i64) -> Option<Position> {
        (!self.runs.is_empty()).then(|| Position {
            run: self.runs.len(),
            seq,
            done: false,
        })
    }
}

/// A discrete approval event (`approval.requested` / `approval.resolved`).
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalFrame {
    /// The SSE event name.
    pub event: &'static str,
    /// The approval it is about.
    pub approval_id: String,
    /// Its JSON payload.
    pub json: Arc<str>,
}

impl ApprovalFrame {
    /// `approval.requested` for a pending approval of a session run by
    /// `adapter_id`, decidable at `scopes`.
    pub fn requested(a: &Approval, adapter_id: Option<&str>, scopes: &[Scope]) -> Self {
        Self {
            event: "approval.requested",
            approval_id: a.id.to_string(),
            json: json_text(&ApprovalRequestedDto::new(a, adapter_id, scopes)),
        }
    }

    /// `approval.resolved` for a decided approval.
    pub fn resolved(a: &Approval) -> Self {
        Self {
            event: "approval.resolved",
            approval_id: a.id.to_string(),
            json: json_text(&ApprovalResolvedDto::from(a)),
        }
    }

    /// The frame of an approval event (requested or resolved); `None` for any
    /// other event.
    pub fn of_event(event: &EngineEvent) -> Option<Self> {
        match event {
            EngineEvent::ApprovalRequested {
                approval,
                adapter_id,
                scope_choices,
                ..
            } => Some(Self::requested(
                approval,
                adapter_id.as_deref(),
                scope_choices,
            )),
            EngineEvent::ApprovalResolved { approval, .. } => Some(Self::resolved(approval)),
            _ => None,
        }
    }
}

fn json_text<T: serde::Serialize>(v: &T) -> Arc<str> {
    Arc::from(serde_json::to_string(v).unwrap_or_default())
}

/// A session feed's shared parts, held by the hub and by the feed task.
#[derive(Debug, Clone)]
pub struct FeedHandle {
    /// Latest rendered state (`None` until the first render).
    pub state: watch::Sender<Option<Arc<FeedState>>>,
    /// Discrete approval events.
    pub approvals: broadcast::Sender<ApprovalFrame>,
    /// Wakes the feed task.
    pub wake: Arc<Notify>,
    /// Pending `DIRTY_*` flags.
    pub dirty: Arc<AtomicU8>,
}

impl FeedHandle {
    /// Sets `flags` and wakes the feed task.
    pub fn mark(&self, flags: u8) {
        self.dirty.fetch_or(flags, Ordering::SeqCst);
        self.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(status: &str) -> Approval {
        let decided = status != "pending";
        serde_json::from_value(serde_json::json!({
            "id": "appr_1",
            "session_id": "agent_chat_1",
            "run_id": "run_1",
            "status": status,
            "tool_kind": "edit",
            "tool_name": "Edit src/a.rs",
            "options": [{"optionId": "allow", "kind": "allow_once"}],
            "decision": decided.then_some("approve"),
            "path": decided.then_some("operator"),
            "created_at": "2026-01-01T00:00:00Z"
        }))
        .expect("an approval")
    }

    #[test]
    fn approval_frames_carry_the_seed_field_names() {
        let f = ApprovalFrame::requested(&approval("pending"), Some("codex"), &[Scope::Once]);
        assert_eq!(f.event, "approval.requested");
        let v: serde_json::Value = serde_json::from_str(&f.json).expect("json");
        assert_eq!(v["approval_id"], "appr_1");
        assert_eq!(v["session_id"], "agent_chat_1");
        assert_eq!(v["tool_kind"], "edit");
        let f = ApprovalFrame::resolved(&approval("approved"));
        assert_eq!(f.event, "approval.resolved");
        let v: serde_json::Value = serde_json::from_str(&f.json).expect("json");
        assert_eq!(v["status"], "approved");
        assert_eq!(v["path"], "operator");
    }

    #[test]
    fn cursors_place_known_runs_only() {
        let state = FeedState {
            latest: Arc::new(Frame {
                position: Position::default(),
                run_id: None,
                json: Arc::from(""),
            }),
            last_terminal: None,
            runs: Arc::new(vec![RunId::from("run_a"), RunId::from("run_b")]),
            gone: false,
        };
        let p = state.locate("run_b:7:done").expect("known");
        assert_eq!((p.run, p.seq, p.done), (2, 7, true));
        assert!(
            state
                .locate("run_a:3")
                .is_some_and(|p| p.run == 1 && !p.done)
        );
        assert_eq!(state.locate("run_zzz:1"), None);
        assert_eq!(state.locate("garbage"), None);
        assert_eq!(state.locate("run_a:x"), None);
        assert_eq!(
            state.after_sequence(4).map(|p| (p.run, p.seq)),
            Some((2, 4))
        );
    }
}
