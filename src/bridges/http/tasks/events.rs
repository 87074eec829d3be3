//! Task events: the per-run list and SSE stream, and the process-wide feed
//! (`/hecate/v1/events`, its list and stream). The cursor is the event sequence
//! kept in the store, so `after_sequence` or `Last-Event-ID` resumes exactly
//! after the last event a reader saw, on any Hecate process of the store and
//! across restarts. A run's stream ends after the event that ends the run.

use super::super::HttpState;
use super::super::envelope::{ApiError, ErrorEnvelope};
use super::super::extract::{ApiJson, ApiPath, ApiQuery};
use super::super::path_params::TaskRunPath;
use super::super::stream::sse::sse_response;
use super::shared::ids;
use crate::bridges::resources::tasks::{
    AppendTaskEventsRequest, TaskEventDto, TaskEventListResponse, TaskEventsQuery, TaskRunStateDto,
    TaskRunStreamEventData,
};
use crate::domain::HecateError;
use crate::domain::ids::{TaskId, TaskRunId};
use crate::domain::task::{TaskEvent, TaskEventFilter};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::response::sse::Event;
use std::convert::Infallible;
use std::time::Duration;

/// Default and largest page of an event list.
const PAGE: usize = 500;
const MAX_PAGE: usize = 5000;

/// How often a stream looks at the store for events of other processes.
const POLL: Duration = Duration::from_millis(500);

/// The most events a page may hold for every one of its run frames to carry the
/// run's state (a longer replayed page carries it on its last frame).
const STATE_ON_EVERY_FRAME: usize = 20;

/// Event types that end a run.
const RUN_END: [&str; 3] = ["run.finished", "run.failed", "run.cancelled"];

fn filter(
    state: &HttpState,
    q: &TaskEventsQuery,
    task_id: Option<TaskId>,
    run_id: Option<TaskRunId>,
    after: i64,
) -> TaskEventFilter {
    TaskEventFilter {
        namespace: state.namespace.to_string(),
        task_id: task_id.or_else(|| q.task_id.clone().map(TaskId::from)),
        run_id,
        event_types: q
            .event_type
            .as_deref()
            .unwrap_or("")
            .split(',')
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .map(String::from)
            .collect(),
        after_sequence: after,
        limit: q.limit.unwrap_or(PAGE).clamp(1, MAX_PAGE),
        newest_first: false,
    }
}

/// The largest `tail`.
const MAX_TAIL: usize = 500;

/// `tail`, checked: 1 to [`MAX_TAIL`].
fn tail(q: &TaskEventsQuery) -> Result<Option<usize>, ApiError> {
    match q.tail {
        None => Ok(None),
        Some(n) if (1..=MAX_TAIL).contains(&n) => Ok(Some(n)),
        Some(n) => Err(HecateError::invalid(format!(
            "tail must be between 1 and {MAX_TAIL}, got {n}"
        ))
        .with_detail("field", "tail")
        .into()),
    }
}

/// The newest `n` events `f` selects, oldest first.
async fn newest(
    state: &HttpState,
    f: &TaskEventFilter,
    n: usize,
) -> Result<Vec<TaskEvent>, ApiError> {
    let mut newest = state
        .engine
        .tasks()
        .list_events(TaskEventFilter {
            limit: n,
            newest_first: true,
            ..f.clone()
        })
        .await?;
    newest.reverse();
    Ok(newest)
}

/// The list `f` selects, or with `tail` its newest `n`.
async fn listed(
    state: &HttpState,
    f: TaskEventFilter,
    q: &TaskEventsQuery,
) -> Result<Json<TaskEventListResponse>, ApiError> {
    let events = match tail(q)? {
        Some(n) => newest(state, &f, n).await?,
        None => state.engine.tasks().list_events(f).await?,
    };
    Ok(list_response(&events))
}

/// A stream's cursor: `Last-Event-ID` or `after_sequence`, else with `tail` just
/// before the newest `n` events (so they are replayed first).
async fn stream_cursor(
    state: &HttpState,
    headers: &HeaderMap,
    q: &TaskEventsQuery,
    f: &TaskEventFilter,
) -> Result<i64, ApiError> {
    let after = cursor(headers, q)?;
    match tail(q)? {
        Some(n) if headers.get("last-event-id").is_none() => {
            let newest = newest(state, f, n).await?;
            Ok(newest
                .first()
                .map_or(after, |e| (e.sequence - 1).max(after)))
        }
        _ => Ok(after),
    }
}

/// The cursor: `Last-Event-ID` (a stream's reconnect) wins over `after_sequence`.
fn cursor(headers: &HeaderMap, q: &TaskEventsQuery) -> Result<i64, ApiError> {
    match headers.get("last-event-id") {
        Some(v) => v
            .to_str()
            .ok()
            .and_then(|s| s.trim().trim_start_matches("tevt_").parse::<i64>().ok())
            .ok_or_else(|| {
                HecateError::invalid("Last-Event-ID must be an event sequence")
                    .with_detail("field", "Last-Event-ID")
                    .into()
            }),
        None => Ok(q.after_sequence.unwrap_or(0).max(0)),
    }
}

fn list_response(events: &[crate::domain::task::TaskEvent]) -> Json<TaskEventListResponse> {
    Json(TaskEventListResponse {
        object: "task_events".into(),
        data: events.iter().map(TaskEventDto::from).collect(),
    })
}

/// The ids of the run at `path`; 404 when the task or the run is unknown.
async fn existing_run(
    state: &HttpState,
    path: TaskRunPath,
) -> Result<(TaskId, TaskRunId), ApiError> {
    let (id, run_id) = ids(path.id, path.run_id);
    let tasks = state.engine.tasks();
    tasks.get_run(&state.namespace, &id, &run_id).await?;
    Ok((id, run_id))
}

/// The events of a run after `after_sequence`, oldest first.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/events",
    operation_id = "list_task_run_events",
    tag = "tasks",
    params(TaskRunPath, TaskEventsQuery),
    responses(
        (status = 200, description = "Events", body = TaskEventListResponse),
        (status = 404, description = "No such task or run", body = ErrorEnvelope)
    )
)]
pub async fn run_events(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<TaskRunPath>,
    ApiQuery(q): ApiQuery<TaskEventsQuery>,
) -> Result<Json<TaskEventListResponse>, ApiError> {
    let (id, run_id) = existing_run(&state, path).await?;
    let after = q.after_sequence.unwrap_or(0);
    let f = filter(&state, &q, Some(id), Some(run_id), after);
    listed(&state, f, &q).await
}

/// Appends a client's events to the run's log: they follow Hecate's on the run's
/// stream and the feed, and change no state.
#[utoipa::path(
    post,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/events",
    operation_id = "append_task_run_events",
    tag = "tasks",
    params(TaskRunPath),
    request_body = AppendTaskEventsRequest,
    responses(
        (status = 201, description = "The events as stored", body = TaskEventListResponse),
        (status = 400, description = "No events, too many, a reserved or malformed type, data not an object", body = ErrorEnvelope),
        (status = 404, description = "No such task or run", body = ErrorEnvelope)
    )
)]
pub async fn append_run_events(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<TaskRunPath>,
    ApiJson(body): ApiJson<AppendTaskEventsRequest>,
) -> Result<(StatusCode, Json<TaskEventListResponse>), ApiError> {
    let (id, run_id) = ids(path.id, path.run_id);
    let events = body
        .events
        .into_iter()
        .map(|e| {
            (
                e.event_type,
                e.data.unwrap_or_else(|| serde_json::json!({})),
            )
        })
        .collect();
    let stored = state
        .engine
        .tasks()
        .append_client_events(&state.namespace, &id, &run_id, events)
        .await?;
    Ok((StatusCode::CREATED, list_response(&stored)))
}

/// The process-wide feed: events of every task, filtered by task and type.
#[utoipa::path(
    get,
    path = "/hecate/v1/events",
    operation_id = "list_events",
    tag = "tasks",
    params(TaskEventsQuery),
    responses((status = 200, description = "Events", body = TaskEventListResponse))
)]
pub async fn feed(
    State(state): State<HttpState>,
    ApiQuery(q): ApiQuery<TaskEventsQuery>,
) -> Result<Json<TaskEventListResponse>, ApiError> {
    let after = q.after_sequence.unwrap_or(0);
    let f = filter(&state, &q, None, None, after);
    listed(&state, f, &q).await
}

/// Streams the events of a run as SSE (`id` = sequence, `event` = type, `data` =
/// the v1 envelope with the run's state: `TaskRunStreamEventData`); replays from
/// the cursor and ends after the run's last event.
#[utoipa::path(
    get,
    path = "/hecate/v1/tasks/{id}/runs/{run_id}/stream",
    operation_id = "stream_task_run",
    tag = "tasks",
    params(TaskRunPath, TaskEventsQuery,
           ("Last-Event-ID" = Option<String>, Header, description = "Resume after this event sequence")),
    responses(
        (status = 200, description = "An SSE stream of the run's events, each frame's data a TaskRunStreamEventData", content_type = "text/event-stream"),
        (status = 404, description = "No such task or run", body = ErrorEnvelope)
    )
)]
pub async fn run_stream(
    State(state): State<HttpState>,
    ApiPath(path): ApiPath<TaskRunPath>,
    ApiQuery(q): ApiQuery<TaskEventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (id, run_id) = existing_run(&state, path).await?;
    let mut f = filter(&state, &q, Some(id.clone()), Some(run_id.clone()), 0);
    f.after_sequence = stream_cursor(&state, &headers, &q, &f).await?;
    Ok(sse(state, f, Some((id, run_id))))
}

/// Streams the process-wide feed as SSE; replays from the cursor, then follows.
#[utoipa::path(
    get,
    path = "/hecate/v1/events/stream",
    operation_id = "stream_events",
    tag = "tasks",
    params(TaskEventsQuery, ("Last-Event-ID" = Option<String>, Header, description = "Resume after this event sequence")),
    responses((status = 200, description = "An SSE stream of task events", content_type = "text/event-stream"))
)]
pub async fn feed_stream(
    State(state): State<HttpState>,
    ApiQuery(q): ApiQuery<TaskEventsQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let mut f = filter(&state, &q, None, None, 0);
    f.after_sequence = stream_cursor(&state, &headers, &q, &f).await?;
    Ok(sse(state, f, None))
}

/// Replays and follows `f` as SSE; with a run, ends once the run has ended and
/// its last event was sent.
fn sse(state: HttpState, mut f: TaskEventFilter, run: Option<(TaskId, TaskRunId)>) -> Response {
    let shutdown = state.shutdown.clone();
    let tasks = state.engine.tasks().clone();
    let namespace = state.namespace.to_string();
    let mut wake = tasks.subscribe();
    let events = async_stream::stream! {
        loop {
            // Read before the page: a run already over has all its events (its
            // end and its state are written together) in what follows.
            let over = match &run {
                Some((id, run_id)) => match tasks.get_run(&namespace, id, run_id).await {
                    Ok(r) => r.status.is_terminal(),
                    Err(_) => return,
                },
                None => false,
            };
            let page = match tasks.list_events(f.clone()).await {
                Ok(page) => page,
                Err(e) => {
                    tracing::warn!(error = %e, "task event stream could not read the store");
                    return;
                }
            };
            // A run's frames carry the run as it is after the page: read once.
            let state = match (&run, page.is_empty()) {
                (Some((id, run_id)), false) => match tasks.run_view(&namespace, id, run_id).await {
                    Ok(view) => Some(TaskRunStateDto::from(&view)),
                    Err(e) => {
                        tracing::warn!(error = %e, "task run stream could not read the run");
                        return;
                    }
                },
                _ => None,
            };
            let mut ended = false;
            let last = page.len().saturating_sub(1);
            for (i, e) in page.iter().enumerate() {
                f.after_sequence = e.sequence;
                ended |= run.is_some() && RUN_END.contains(&e.event_type.as_str());
                let event = TaskEventDto::from(e);
                // Live pages are a few events: each frame carries the state. A
                // replayed page of many carries it on its last frame only, so a
                // long run's replay is not its state times its events.
                let carries = i == last || page.len() <= STATE_ON_EVERY_FRAME;
                let data = match state.as_ref().filter(|_| carries) {
                    Some(state) => serde_json::to_string(&TaskRunStreamEventData {
                        event_type: event.event_type.clone(),
                        event,
                        state: state.clone(),
                    }),
                    None => serde_json::to_string(&event),
                }
                .unwrap_or_default();
                yield Ok::<Event, Infallible>(
                    Event::default()
                        .id(e.sequence.to_string())
                        .event(e.event_type.clone())
                        .data(data),
                );
            }
            if page.len() == f.limit {
                continue;
            }
            if ended || over {
                return;
            }
            tokio::select! {
                _ = wake.recv() => {}
                _ = tokio::time::sleep(POLL) => {}
                _ = shutdown.cancelled() => return,
            }
        }
    };
    sse_response(events)
}
