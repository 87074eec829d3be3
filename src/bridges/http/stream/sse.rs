//! `GET /hecate/v1/agent-chat/sessions/{id}/stream`: Server-Sent Events.
//!
//! Events: `snapshot` (the session, as `GET …/{id}` renders it, including the live
//! assistant message of a running turn), `done` (the session once a turn that ran
//! after the stream's starting point reached a terminal status; the stream then
//! ends), `approval.requested` and `approval.resolved`. Snapshot and done events
//! carry an `id` (`<run_id>:<seq>` or `<run_id>:<seq>:done`); reconnecting with
//! `Last-Event-ID` (or `?after_sequence=N` for the latest run) resumes after it:
//! nothing is re-sent unless the session moved past that point. Every new
//! subscriber, resuming or not, first gets `approval.requested` for each approval
//! of the session still pending.

use super::super::HttpState;
use super::super::envelope::{ApiError, ErrorEnvelope};
use super::super::extract::{ApiPath, ApiQuery};
use super::super::path_params::SessionPath;
use super::frames::{ApprovalFrame, FeedState, Frame, Position};
use crate::bridges::resources::StreamQuery;
use crate::bridges::resources::events::SseEventDto;
use crate::domain::approval::{ApprovalStatus, scope_choices};
use crate::domain::ids::SessionId;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, header};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::Stream;
use std::collections::HashSet;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast::error::RecvError;

/// Interval of SSE keep-alive comments.
pub const KEEP_ALIVE: Duration = Duration::from_secs(15);

/// Where a client asked to resume.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cursor {
    /// A fresh subscription: an initial snapshot is sent.
    Fresh,
    /// `Last-Event-ID`.
    EventId(String),
    /// `?after_sequence=N` of the latest run.
    AfterSequence(i64),
}

/// What a subscriber sends next.
#[derive(Debug, Clone, PartialEq)]
pub enum Emit {
    /// A `snapshot` event.
    Snapshot(Arc<Frame>),
    /// A `done` event; the stream ends after it.
    Done(Arc<Frame>),
}

/// The per-subscriber rules: which frames become `snapshot` and `done` events.
#[derive(Debug, Clone, Default)]
pub struct Follower {
    baseline: Position,
    last_sent: Position,
    sent_any: bool,
    /// The text of the last frame sent, so a changed render at the same position
    /// (a revert on a finished turn) still reaches the subscriber.
    last_json: Option<Arc<str>>,
}

impl Follower {
    /// Starts following at `state` from `cursor`; returns what to send first.
    pub fn start(state: &FeedState, cursor: &Cursor) -> (Self, Option<Emit>) {
        let resumed = match cursor {
            Cursor::Fresh => None,
            Cursor::EventId(id) => state.locate(id),
            Cursor::AfterSequence(seq) => state.after_sequence(*seq),
        };
        match resumed {
            None => {
                let p = state.latest.position;
                let me = Self {
                    baseline: p,
                    last_sent: p,
                    sent_any: true,
                    last_json: Some(state.latest.json.clone()),
                };
                (me, Some(Emit::Snapshot(state.latest.clone())))
            }
            Some(p) => {
                let mut me = Self {
                    baseline: p,
                    last_sent: p,
                    sent_any: false,
                    last_json: None,
                };
                let first = me.next(state);
                (me, first)
            }
        }
    }

    /// What a new state means for this subscriber.
    pub fn next(&mut self, state: &FeedState) -> Option<Emit> {
        let terminal = if state.latest.position.done {
            Some(&state.latest)
        } else {
            state.last_terminal.as_ref()
        };
        if let Some(done) = terminal.filter(|f| f.position > self.baseline) {
            return Some(Emit::Done(done.clone()));
        }
        let p = state.latest.position;
        let changed = self.last_json.as_deref() != Some(&*state.latest.json);
        let advance =
            p > self.last_sent || (self.sent_any && p == self.last_sent && (!p.done || changed));
        if !advance {
            return None;
        }
        self.last_sent = p;
        self.sent_any = true;
        self.last_json = Some(state.latest.json.clone());
        Some(Emit::Snapshot(state.latest.clone()))
    }
}

fn sse_event(name: &str, frame: &Frame) -> Event {
    let event = Event::default().event(name).data(&*frame.json);
    match frame.event_id() {
        Some(id) => event.id(id),
        None => event,
    }
}

fn approval_event(frame: &ApprovalFrame) -> Event {
    Event::default().event(frame.event).data(&*frame.json)
}

/// Streams a session's snapshots as SSE.
#[utoipa::path(
    get,
    path = "/hecate/v1/agent-chat/sessions/{id}/stream",
    operation_id = "stream_session",
    tag = "agent-chat",
    params(
        SessionPath,
        ("Last-Event-ID" = Option<String>, Header, description = "Resume after this event id"),
        StreamQuery
    ),
    responses(
        (status = 200, description = "An event stream: snapshot, done, approval.requested (first replayed for every approval still pending), approval.resolved", content_type = "text/event-stream", body = SseEventDto),
        (status = 404, description = "No such session", body = ErrorEnvelope)
    )
)]
pub async fn stream(
    State(state): State<HttpState>,
    ApiPath(SessionPath { id }): ApiPath<SessionPath>,
    ApiQuery(q): ApiQuery<StreamQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let sid = SessionId::from(id);
    state.engine.get_session(&state.namespace, &sid).await?;
    let cursor = match (
        headers
            .get("last-event-id")
            .and_then(|v| v.to_str().ok())
            .filter(|v| !v.trim().is_empty()),
        q.after_sequence,
    ) {
        (Some(id), _) => Cursor::EventId(id.to_string()),
        (None, Some(seq)) => Cursor::AfterSequence(seq),
        (None, None) => Cursor::Fresh,
    };
    let sub = state.hub.subscribe(&sid);
    // Listed after subscribing, so an approval requested in between is either
    // listed here or arrives live (and is then not sent twice).
    let session = state.engine.get_session(&state.namespace, &sid).await?;
    let scopes = scope_choices(session.workspace.is_some(), session.adapter_id.is_some());
    let pending: Vec<ApprovalFrame> = state
        .engine
        .approvals()
        .list(&state.namespace, Some(&sid), Some(ApprovalStatus::Pending))
        .await?
        .iter()
        .map(|a| ApprovalFrame::requested(a, session.adapter_id.as_deref(), &scopes))
        .collect();
    let shutdown = state.shutdown.clone();
    let events = async_stream::stream! {
        let mut rx = sub.state;
        let mut approvals = sub.approvals;
        // Moved in so the stream stays counted until it ends.
        let _count = sub.count;
        let first = loop {
            let current = rx.borrow_and_update().clone();
            if let Some(s) = current {
                break s;
            }
            if rx.changed().await.is_err() {
                return;
            }
        };
        if first.gone {
            return;
        }
        let (mut follower, emit) = Follower::start(&first, &cursor);
        match emit {
            Some(Emit::Done(f)) => {
                yield Ok::<Event, Infallible>(sse_event("done", &f));
                return;
            }
            Some(Emit::Snapshot(f)) => yield Ok(sse_event("snapshot", &f)),
            None => {}
        }
        // Pending approvals are replayed to every new subscriber, so a client that
        // (re)connects while a turn waits can still show the prompt.
        let replayed: HashSet<String> = pending.iter().map(|f| f.approval_id.clone()).collect();
        for frame in &pending {
            yield Ok(approval_event(frame));
        }
        let mut approvals_open = true;
        loop {
            enum Step {
                State,
                Approval(Result<ApprovalFrame, RecvError>),
                End,
            }
            let step = tokio::select! {
                changed = rx.changed() => if changed.is_ok() { Step::State } else { Step::End },
                a = approvals.recv(), if approvals_open => Step::Approval(a),
                _ = shutdown.cancelled() => Step::End,
            };
            match step {
                Step::End => return,
                Step::Approval(Ok(frame)) => {
                    let repeat = frame.event == "approval.requested"
                        && replayed.contains(&frame.approval_id);
                    if !repeat {
                        yield Ok(approval_event(&frame));
                    }
                }
                Step::Approval(Err(RecvError::Lagged(_))) => {}
                Step::Approval(Err(RecvError::Closed)) => approvals_open = false,
                Step::State => {
                    let current = rx.borrow_and_update().clone();
                    let Some(state) = current else { continue };
                    if state.gone {
                        return;
                    }
                    match follower.next(&state) {
                        Some(Emit::Done(f)) => {
                            yield Ok(sse_event("done", &f));
                            return;
                        }
                        Some(Emit::Snapshot(f)) => yield Ok(sse_event("snapshot", &f)),
                        None => {}
                    }
                }
            }
        }
    };
    Ok(sse_response(events))
}

/// `events` as an SSE response with keep-alive comments, uncached and unbuffered
/// by proxies.
pub fn sse_response<S>(events: S) -> Response
where
    S: Stream<Item = Result<Event, Infallible>> + Send + 'static,
{
    let mut response = Sse::new(events)
        .keep_alive(KeepAlive::new().interval(KEEP_ALIVE))
        .into_response();
    let h = response.headers_mut();
    h.insert("x-accel-buffering", HeaderValue::from_static("no"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::ids::RunId;

    fn frame(run: usize, seq: i64, done: bool) -> Arc<Frame> {
        Arc::new(Frame {
            position: Position { run, seq, done },
            run_id: (run > 0).then(|| RunId::from(format!("run_{run}").as_str())),
            json: Arc::from(format!("{run}:{seq}:{done}")),
        })
    }

    fn state(latest: Arc<Frame>, last_terminal: Option<Arc<Frame>>, runs: usize) -> FeedState {
        FeedState {
            latest,
            last_terminal,
            runs: Arc::new(
                (1..=runs)
                    .map(|i| RunId::from(format!("run_{i}").as_str()))
                    .collect(),
            ),
            gone: false,
        }
    }

    #[test]
    fn fresh_subscriber_gets_a_snapshot_then_done_of_the_running_turn() {
        let (mut f, first) = Follower::start(&state(frame(1, 2, false), None, 1), &Cursor::Fresh);
        assert!(matches!(first, Some(Emit::Snapshot(_))));
        assert!(matches!(
            f.next(&state(frame(1, 5, false), None, 1)),
            Some(Emit::Snapshot(_))
        ));
        let end = frame(1, 6, true);
        assert_eq!(
            f.next(&state(end.clone(), Some(end.clone()), 1)),
            Some(Emit::Done(end))
        );
    }

    #[test]
    fn an_idle_session_stays_open_until_a_new_turn_ends() {
        let old = frame(1, 4, true);
        let (mut f, first) =
            Follower::start(&state(old.clone(), Some(old.clone()), 1), &Cursor::Fresh);
        assert_eq!(first, Some(Emit::Snapshot(old.clone())));
        assert!(matches!(
            f.next(&state(frame(2, 1, false), Some(old), 2)),
            Some(Emit::Snapshot(_))
        ));
        let end = frame(2, 3, true);
        assert_eq!(
            f.next(&state(end.clone(), Some(end.clone()), 2)),
            Some(Emit::Done(end))
        );
    }

    #[test]
    fn resuming_sends_nothing_already_seen_and_catches_up_a_missed_done() {
        let s = state(frame(1, 5, false), None, 1);
        let (mut f, first) = Follower::start(&s, &Cursor::EventId("run_1:5".into()));
        assert_eq!(first, None);
        assert_eq!(f.next(&s), None);
        let end = frame(1, 7, true);
        let (_, first) = Follower::start(
            &state(end.clone(), Some(end.clone()), 1),
            &Cursor::EventId("run_1:5".into()),
        );
        assert_eq!(first, Some(Emit::Done(end.clone())));
        let (_, first) = Follower::start(
            &state(end.clone(), Some(end), 1),
            &Cursor::EventId("run_1:7:done".into()),
        );
        assert_eq!(first, None);
    }

    #[test]
    fn a_slow_subscriber_that_skipped_the_terminal_frame_still_gets_done() {
        let (mut f, _) = Follower::start(&state(frame(1, 1, false), None, 1), &Cursor::Fresh);
        let end = frame(1, 9, true);
        assert_eq!(
            f.next(&state(frame(2, 1, false), Some(end.clone()), 2)),
            Some(Emit::Done(end))
        );
    }
}
