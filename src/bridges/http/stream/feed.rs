//! A session feed: one task per streamed session that renders the session
//! snapshot (at most every `THROTTLE`, at once for turn starts and ends) and
//! publishes it on a watch channel, so any number of subscribers share one render
//! and a slow one simply skips to the newest snapshot.
//!
//! Every frame has a position `(run ordinal, run-event sequence, done)`; its SSE id
//! is `<run_id>:<sequence>` while the run is live and `<run_id>:<sequence>:done`
//! once it is terminal (see `docs/api.md`).

use super::super::project::{last_sequence, transcript_dto};
use super::frames::{DIRTY_STORE, FeedHandle, FeedState, Frame, Position};
use super::state::HubInner;
use crate::bridges::resources::SessionResponse;
use crate::domain::ErrorType;
use crate::domain::ids::{RunId, SessionId};
use crate::domain::run::RunEvent;
use crate::engine::Transcript;
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio::time::Instant;

/// Minimum spacing of snapshots caused by runtime events.
pub const THROTTLE: Duration = Duration::from_millis(100);
/// How often a feed re-reads the session header to notice changes made by other
/// processes sharing the store.
pub const POLL: Duration = Duration::from_secs(1);

/// The stored part of a render, reloaded only when stored state changes.
#[derive(Default)]
struct Cache {
    transcript: Option<Transcript>,
    events: HashMap<RunId, Vec<RunEvent>>,
    /// A run in `events` whose log was read while it still ran; read again.
    partial: Option<RunId>,
    last_terminal: Option<Arc<Frame>>,
    last_json: Option<Arc<str>>,
}

/// The feed task of one session; ends when its last subscriber leaves.
pub async fn run(hub: Arc<HubInner>, session_id: SessionId, handle: FeedHandle) {
    let mut cache = Cache::default();
    let mut last_render: Option<Instant> = None;
    let mut next_poll = Instant::now() + POLL;
    loop {
        let flags = handle.dirty.load(Ordering::SeqCst);
        if flags != 0 {
            if flags & DIRTY_STORE == 0
                && let Some(at) = last_render
                && at.elapsed() < THROTTLE
            {
                // Runtime events wait out the throttle; a turn's start or end
                // (a store change) cuts the wait short.
                tokio::select! {
                    _ = tokio::time::sleep(THROTTLE - at.elapsed()) => {}
                    _ = handle.wake.notified() => {}
                }
                continue;
            }
            let flags = handle.dirty.swap(0, Ordering::SeqCst);
            last_render = Some(Instant::now());
            match render(&hub, &session_id, &mut cache, flags).await {
                Ok(Some(state)) => {
                    handle.state.send_replace(Some(Arc::new(state)));
                }
                Ok(None) => {}
                Err(gone) => {
                    handle.state.send_replace(Some(Arc::new(gone)));
                    hub.remove_feed(&session_id);
                    return;
                }
            }
        }
        if handle.state.receiver_count() == 0 && hub.retire_feed_if_unused(&session_id) {
            return;
        }
        tokio::select! {
            _ = handle.wake.notified() => {}
            _ = tokio::time::sleep_until(next_poll) => {
                next_poll = Instant::now() + POLL;
                poll_store(&hub, &session_id, &cache, &handle).await;
            }
            _ = handle.state.closed() => {}
        }
    }
}

/// Marks the feed dirty when another process changed the session, or when a turn
/// runs elsewhere (its stored events then drive the snapshots).
async fn poll_store(hub: &HubInner, session_id: &SessionId, cache: &Cache, handle: &FeedHandle) {
    let Some(t) = &cache.transcript else {
        // The first read failed; try again.
        handle.dirty.fetch_or(DIRTY_STORE, Ordering::SeqCst);
        return;
    };
    match hub.engine.get_session(&hub.namespace, session_id).await {
        Ok(s) if s.updated_at != t.session.updated_at || s.status != t.session.status => {
            handle.dirty.fetch_or(DIRTY_STORE, Ordering::SeqCst);
        }
        Ok(_) => {
            let remote_running =
                t.runs.last().is_some_and(|r| !r.status.is_terminal()) && !hub.is_live(session_id);
            if remote_running {
                handle.dirty.fetch_or(DIRTY_STORE, Ordering::SeqCst);
            }
        }
        Err(e) if e.error_type == ErrorType::NotFound => {
            handle.dirty.fetch_or(DIRTY_STORE, Ordering::SeqCst);
        }
        Err(_) => {}
    }
}

/// Renders the session; `Ok(None)` when nothing changed, `Err(state)` when the
/// session is gone.
async fn render(
    hub: &HubInner,
    session_id: &SessionId,
    cache: &mut Cache,
    flags: u8,
) -> Result<Option<FeedState>, FeedState> {
    let engine = &hub.engine;
    if flags & DIRTY_STORE != 0 || cache.transcript.is_none() {
        // A finished run can gain events (a revert appends `files_reverted`):
        // take every log from the hub's cache again, which drops stale ones.
        cache.events.clear();
        // The newest page, as `GET …/{id}` answers it: a snapshot's size does
        // not grow with the session.
        let window = crate::bridges::resources::TranscriptQuery::newest_page();
        match engine
            .transcript_window(&hub.namespace, session_id, window)
            .await
        {
            Ok(t) => cache.transcript = Some(t),
            Err(e) if e.error_type == ErrorType::NotFound => return Err(gone_state(cache)),
            Err(e) => {
                tracing::warn!(error = %e, "session feed could not read the transcript");
                if cache.transcript.is_none() {
                    return Ok(None);
                }
            }
        }
    }
    let Some(t) = cache.transcript.as_ref() else {
        return Ok(None);
    };
    let latest = t.runs.last();
    let running = latest
        .filter(|r| !r.status.is_terminal())
        .map(|r| r.id.clone());
    let live = running
        .as_ref()
        .and_then(|id| hub.live_events(session_id, id));
    // Stored logs: terminal runs once, a running turn every time unless live.
    if let Some(id) = cache.partial.take() {
        cache.events.remove(&id);
    }
    let full = running.clone().filter(|_| live.is_none());
    let (cached, mut missing) =
        hub.cached_logs(t.runs.iter().filter(|r| !cache.events.contains_key(&r.id)));
    cache.events.extend(cached);
    missing.extend(full.clone());
    if !missing.is_empty() {
        match engine
            .render_run_events(&hub.namespace, session_id, Some(missing), full.clone())
            .await
        {
            Ok(found) => {
                hub.remember_logs(&t.runs, &found);
                cache.events.extend(found);
                cache.partial = full;
            }
            Err(e) if e.error_type == ErrorType::NotFound => return Err(gone_state(cache)),
            Err(e) => tracing::warn!(error = %e, "session feed could not read run events"),
        }
    }
    let live_ref = match (&running, &live) {
        (Some(id), Some(evs)) => Some((id, evs.as_slice())),
        _ => None,
    };
    let data = transcript_dto(t, &cache.events, live_ref);
    let json: Arc<str> = Arc::from(
        serde_json::to_string(&SessionResponse {
            object: "agent_chat_session".to_string(),
            data,
        })
        .unwrap_or_default(),
    );
    if cache.last_json.as_deref() == Some(&*json) {
        return Ok(None);
    }
    cache.last_json = Some(json.clone());
    let seq = match (&live, latest) {
        (Some(evs), _) => last_sequence(evs),
        (None, Some(r)) => cache.events.get(&r.id).map_or(0, |e| last_sequence(e)),
        (None, None) => 0,
    };
    let frame = Arc::new(Frame {
        position: Position {
            run: t.runs.len(),
            seq,
            done: latest.is_some_and(|r| r.status.is_terminal()),
        },
        run_id: latest.map(|r| r.id.clone()),
        json,
    });
    if frame.position.done {
        cache.last_terminal = Some(frame.clone());
    }
    Ok(Some(FeedState {
        latest: frame,
        last_terminal: cache.last_terminal.clone(),
        runs: Arc::new(t.runs.iter().map(|r| r.id.clone()).collect()),
        gone: false,
    }))
}

fn gone_state(cache: &Cache) -> FeedState {
    FeedState {
        latest: Arc::new(Frame {
            position: Position::default(),
            run_id: None,
            json: Arc::from(""),
        }),
        last_terminal: cache.last_terminal.clone(),
        runs: Arc::new(Vec::new()),
        gone: true,
    }
}
